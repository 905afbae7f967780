"""Line search and line reads over decoded text members.

Semantics (identical in every reader of this package):

* Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``; a final terminator starts
  no extra line; line numbers are 1-based.
* ``literal``: the pattern occurs in the line byte for byte.
* ``literal_ignore_case``: the pattern occurs after both sides are folded by
  mapping every code point to its Unicode lowercase mapping (no context
  rules; ``"STRASSE"`` does not match ``"straße"``, the Kelvin sign matches
  ``k``).
* ``symbol``: the pattern is an identifier ``[A-Za-z_][A-Za-z0-9_]*`` and an
  occurrence counts only with a non-identifier character or the line edge
  on both sides.

Each query reports the total number of matching lines over all texts (in the
order given), then one page of them. Line text is built only for the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from viano_bug_analysis import _native
from viano_bug_analysis._native import SourceText
from viano_bug_analysis._validate import require_non_negative
from viano_bug_analysis.snapshot.paging import PageMixin

SearchMode = Literal["literal", "literal_ignore_case", "symbol", "word", "word_ignore_case"]

DEFAULT_MAX_LINE_CHARS = 4096


@dataclass(frozen=True, slots=True)
class LineQuery:
    mode: SearchMode
    pattern: str
    offset: int = 0
    limit: int = 100


@dataclass(frozen=True, slots=True)
class LineHit:
    text_index: int
    line_number: int
    text: str
    text_truncated: bool


@dataclass(frozen=True, slots=True)
class LinePage(PageMixin):
    total: int
    per_text_totals: tuple[int, ...]
    hits: tuple[LineHit, ...]
    offset: int


def search_lines(
    texts: Sequence[SourceText],
    queries: Sequence[LineQuery],
    *,
    max_chars: int = DEFAULT_MAX_LINE_CHARS,
    threads: int = 0,
) -> list[LinePage]:
    """Runs all queries over all texts in one pass per text; one page per query."""
    for query in queries:
        require_non_negative(offset=query.offset, limit=query.limit)
    require_non_negative(max_chars=max_chars, threads=threads)
    raw = _native.search_lines(
        list(texts),
        [(q.mode, q.pattern, q.offset, q.limit) for q in queries],
        max_chars=max_chars,
        threads=threads,
    )
    return [
        LinePage(
            total=total,
            per_text_totals=tuple(per_text),
            hits=tuple(LineHit(*hit) for hit in hits),
            offset=query.offset,
        )
        for query, (total, per_text, hits) in zip(queries, raw, strict=True)
    ]


def read_lines(
    text: SourceText, first: int, last: int, *, max_chars: int = DEFAULT_MAX_LINE_CHARS
) -> list[LineHit]:
    """Lines ``first..=last`` (1-based, inclusive) of one text."""
    require_non_negative(first=first, last=last, max_chars=max_chars)
    return [
        LineHit(0, number, line, truncated)
        for number, line, truncated in text.lines(first, last, max_chars)
    ]


def contains_word(line: str, word: str) -> bool:
    """Whether ``word`` (identifier characters only, digits first allowed) stands in
    ``line`` as a whole word: the ``symbol`` boundary rule, which is ``git grep -w``'s.

    ``symbol`` refuses a pattern starting with a digit, so a numeric ID is
    searched literally and each hit line is checked here. Linear: an occurrence
    starting inside a rejected one follows an identifier character, so the
    scan resumes at the rejected occurrence's end.
    """
    if not is_word(word):
        raise ValueError("word must be a non-empty run of ASCII letters, digits and _")
    start = line.find(word)
    while start != -1:
        end = start + len(word)
        before = start == 0 or not _is_word_char(line[start - 1])
        after = end == len(line) or not _is_word_char(line[end])
        if before and after:
            return True
        start = line.find(word, end)
    return False


def is_word(text: str) -> bool:
    """True for ``[A-Za-z0-9_]+``: a text the whole-word modes (``word``,
    ``word_ignore_case``) and ``contains_word`` accept."""
    return bool(text) and all(_is_word_char(c) for c in text)


def _is_word_char(char: str) -> bool:
    return char == "_" or (char.isascii() and char.isalnum())


def is_identifier(name: str) -> bool:
    """True for ``[A-Za-z_][A-Za-z0-9_]*``, the only accepted symbol form."""
    return _native.is_identifier(name)
