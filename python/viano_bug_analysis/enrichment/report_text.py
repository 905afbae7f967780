"""How a report's text is cut up before any rule reads it: lines, code, links and URLs.

Every rule sees one line at a time, so no pattern can reach across a line
break ("Take the quest ↵ 2. Go to …" is no quest 2). Besides the lines, the
scanner marks the spans that are never a *name*: fenced and inline code,
URLs, Markdown link and image targets, and image descriptions (a screenshot's
file name). IDs are still read there: GM commands are often written as
code, and a wowhead URL carries an entity ID.

Everything here is one pass over the text with patterns that cannot
backtrack more than a bounded distance, so a hostile report stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# A URL (with its scheme, or a bare www. host) runs to the first blank,
# quote, angle bracket or closing bracket; a trailing sentence mark is not
# part of it.
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'`()\[\]{}|]+")
_URL_TRAILER = ".,;:!?*_~"
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"`[^`\n]{1,4096}`")
# ![description](target) and [text](target): the target never names
# anything, nor does an image's description.
_IMAGE = re.compile(r"!\[[^\]\n]{0,1024}\]\([^)\n]{0,4096}\)")
_LINK_TARGET = re.compile(r"\]\([^)\n]{0,4096}\)")
# "**Current behaviour:**" labels the answer after it.
_BOLD_LABEL = re.compile(r"\*\*[^*\n]{1,100}:\*\*")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a report field: its text and where it starts in the field."""

    start: int
    text: str
    in_code_block: bool


def lines(text: str) -> Iterator[Line]:
    """The lines of ``text`` (``\\n``, ``\\r\\n`` or a lone ``\\r``), with offsets.

    Lines inside a fenced code block (and the fences themselves) are marked.
    """
    fence: str | None = None
    position = 0
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        opener = _FENCE.match(body)
        if fence is None and opener:
            fence = opener.group(1)[0] * 3
            yield Line(position, body, True)
        elif fence is not None:
            yield Line(position, body, True)
            if body.lstrip(" \t").startswith(fence):
                fence = None
        else:
            yield Line(position, body, False)
        position += len(raw)


def urls(line: str) -> Iterator[tuple[int, str]]:
    """Each URL of the line with its offset, without trailing sentence marks."""
    for match in _URL.finditer(line):
        url = match.group(0).rstrip(_URL_TRAILER)
        if len(url) > len("https://"):
            yield match.start(), url


def not_a_name(line: Line) -> list[tuple[int, int]]:
    """The spans of ``line.text`` that never hold a name, sorted, possibly overlapping."""
    if line.in_code_block:
        return [(0, len(line.text))]
    text = line.text
    spans = [(m.start(), m.end()) for m in _INLINE_CODE.finditer(text)]
    spans += [(m.start(), m.end()) for m in _IMAGE.finditer(text)]
    spans += [(m.start(), m.end()) for m in _LINK_TARGET.finditer(text)]
    spans += [(m.start(), m.end()) for m in _BOLD_LABEL.finditer(text)]
    spans += [(start, start + len(url)) for start, url in urls(text)]
    spans.sort()
    return spans


def blank_out(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every span replaced by blanks of the same length (offsets kept)."""
    if not spans:
        return text
    pieces: list[str] = []
    done = 0
    for start, end in spans:
        start = max(start, done)
        if end <= start:
            continue
        pieces.append(text[done:start])
        pieces.append(" " * (end - start))
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


__all__ = ["Line", "blank_out", "lines", "not_a_name", "urls"]
