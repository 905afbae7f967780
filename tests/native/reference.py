"""Few-line pure-Python references for the native hot paths (differential tests)."""

from __future__ import annotations

import re

BOM = b"\xef\xbb\xbf"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_IDENT = "A-Za-z0-9_"


def decode_error_offset(raw: bytes) -> tuple[str, int] | None:
    """('text_nul_byte' | 'text_invalid_utf8', offset) of the first bad byte, or None."""
    start = 3 if raw.startswith(BOM) else 0
    body = raw[start:]
    nul = body.find(b"\0")
    try:
        body.decode("utf-8")
        bad = -1
    except UnicodeDecodeError as err:
        bad = err.start
    candidates = [(pos, code) for pos, code in ((nul, "text_nul_byte"), (bad, "text_invalid_utf8"))]
    found = sorted((pos, code) for pos, code in candidates if pos >= 0)
    return (found[0][1], found[0][0] + start) if found else None


def split_lines(raw: bytes) -> list[str]:
    body = raw[3:] if raw.startswith(BOM) else raw
    parts = _LINE_BREAK.split(body.decode("utf-8"))
    if parts[-1] == "":
        parts.pop()
    return parts


def fold(s: str) -> str:
    return "".join(c.lower() for c in s)


def line_matches(mode: str, pattern: str, line: str) -> bool:
    if mode == "literal":
        return pattern in line
    if mode == "literal_ignore_case":
        return fold(pattern) in fold(line)
    if mode == "word_ignore_case":  # boundaries judged in the folded line
        return _whole_word(fold(pattern), fold(line))
    return _whole_word(pattern, line)  # symbol, word


def _whole_word(pattern: str, line: str) -> bool:
    word = rf"(?<![{_IDENT}]){re.escape(pattern)}(?![{_IDENT}])"
    return re.search(word, line) is not None


def search(texts: list[list[str]], mode: str, pattern: str, offset: int, limit: int):
    found = [
        (t, n + 1, line)
        for t, lines in enumerate(texts)
        for n, line in enumerate(lines)
        if line_matches(mode, pattern, line)
    ]
    return len(found), found[offset : offset + limit]


def cut(line: str, max_chars: int) -> tuple[str, bool]:
    return line[:max_chars], len(line) > max_chars
