"""Which functions a commit changed in a file: the headers of its changed sections.

A report's crash log names functions; a fix changes lines *inside* one, which
seldom name it. ``git diff`` shows the function of a hunk in its header, found by
its funcname rule: the nearest line above that starts with a letter, ``_`` or
``$`` (the default rule, and C++'s: a definition at the top level, or the class
or struct line around methods defined in its body). The same rule cuts a file
into sections, each a header line and the lines up to the next header.

A commit changed a section when the section (header and body) is not in the
other side of the change: compared as multisets of section texts, like the term
lines of ``source.changes`` (``core::git::changes``), so the answer does not
depend on a diff heuristic. The changed sections' headers say which functions
(or classes) the commit changed. Linear in the two texts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

_HEADER = re.compile(r"[A-Za-z_$]")
_CLASS = re.compile(r"^(?:template\s*<[^>]*>\s*)?(?:class|struct)\s+(?P<name>[A-Za-z_]\w*)")


def sections(lines: Iterable[str]) -> list[tuple[str, str]]:
    """``(header, text)`` of each section: the lines before the first header form a
    section with the header ``""``. Blank lines at a section's end belong to no
    function: left out, so a function moved with its spacing is no change."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in lines:
        if _HEADER.match(line):
            out.append((line.rstrip(), [line]))
        else:
            out[-1][1].append(line)
    return [(header, "\n".join(body).rstrip()) for header, body in out]


def changed_headers(old: Sequence[str], new: Sequence[str]) -> tuple[str, ...]:
    """The headers of the sections a change from ``old`` to ``new`` added, removed or
    altered (each once, in the new text's order, then the removed ones)."""
    before = Counter(sections(old))
    after = Counter(sections(new))
    found: dict[str, None] = {}
    for header, text in after:
        if after[(header, text)] > before[(header, text)] and header:
            found.setdefault(header, None)
    for header, text in before:
        if before[(header, text)] > after[(header, text)] and header:
            found.setdefault(header, None)
    return tuple(found)


def names_function(header: str, function: str, scopes: frozenset[str] = frozenset()) -> bool:
    """Whether a section header is the function's (``Map::Update(`` or ``Update(``),
    or the class or struct around a method of one of ``scopes``."""
    if re.search(rf"(?<!\w){re.escape(function)}\s*\(", header):
        return True
    declared = _CLASS.match(header)
    return declared is not None and declared["name"] in scopes


__all__ = ["changed_headers", "names_function", "sections"]
