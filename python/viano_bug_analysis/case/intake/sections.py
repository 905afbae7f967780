"""The sections of a tracker template, read from a report body by their headings.

Two layouts are read, one pass over the lines each (linear in the body):

* headings: an issue form renders each field as ``### Label`` followed by
  the answer (``_No response_`` when the field was left empty); any ATX
  heading (``#`` to ``######``) starts a section, as older Markdown templates
  use other levels (``##### CURRENT BEHAVIOUR:``);
* labels, only when the body has no heading at all: older TrinityCore
  templates write ``**Label:**`` (or ``**Label**:``) at the start of a line,
  the answer after it on the same line or below.

Nothing inside a fenced code block (```` ``` ```` or ``~~~``) starts a
section: it is part of the answer it appears in. HTML comments (the
template's instructions, ``<!-- ... -->``) are dropped from the answers, so
a field that holds only them is unanswered. A section maps its heading
(trailing colon and wrapping emphasis removed) to its text, stripped of
surrounding blank space with line ends as ``\\n``, or to ``None`` when empty
or ``_No response_``. Text before the first section belongs to none. A
heading seen again is kept as ``Heading (2)``, ``Heading (3)`` ...
"""

from __future__ import annotations

from dataclasses import dataclass, field

NO_RESPONSE = "_No response_"
MAX_HEADING_CHARS = 200
"""A longer heading line is text: a section name is a label, not a paragraph."""
MAX_LABEL_CHARS = 100
_FENCE_CHARS = "`~"


def parse_sections(body: str) -> dict[str, str | None]:
    """Heading -> answer (or None), in document order."""
    found = _Scan(labels=False).run(body)
    if found.headings:
        return found.sections()
    return _Scan(labels=True).run(body).sections()


@dataclass
class _Scan:
    labels: bool
    headings: int = 0
    fence: tuple[str, int] | None = None
    in_comment: bool = False
    order: list[tuple[str, list[str]]] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)

    def run(self, body: str) -> _Scan:
        for raw in body.split("\n"):
            self._line(raw.removesuffix("\r"))
        return self

    def sections(self) -> dict[str, str | None]:
        result: dict[str, str | None] = {}
        for key, lines in self.order:
            value = "\n".join(lines).strip()
            result[key] = None if not value or value == NO_RESPONSE else value
        return result

    def _line(self, line: str) -> None:
        if self.fence is not None:
            if _closes(line, self.fence):
                self.fence = None
            self._add(line)
            return
        visible = self._without_comments(line)
        if visible is None:
            return
        opened = _opens_fence(visible)
        if opened is not None:
            self.fence = opened
            self._add(visible)
            return
        heading = _heading(visible)
        if heading is not None:
            self.headings += 1
            if not self.labels:
                self._start(heading, "")
                return
        if self.labels:
            label = _label(visible)
            if label is not None:
                self._start(*label)
                return
        self._add(visible)

    def _without_comments(self, line: str) -> str | None:
        """The line without HTML comment text; None when the line was only comment."""
        if not self.in_comment and "<!--" not in line:
            return line
        kept: list[str] = []
        position = 0
        while position <= len(line):
            if self.in_comment:
                end = line.find("-->", position)
                if end < 0:
                    break
                self.in_comment = False
                position = end + 3
            else:
                start = line.find("<!--", position)
                if start < 0:
                    kept.append(line[position:])
                    break
                kept.append(line[position:start])
                self.in_comment = True
                position = start + 4
        visible = "".join(kept)
        return visible if visible.strip() else None

    def _start(self, heading: str, first: str) -> None:
        count = self.seen.get(heading, 0) + 1
        self.seen[heading] = count
        key = heading if count == 1 else f"{heading} ({count})"
        self.order.append((key, [first] if first else []))

    def _add(self, line: str) -> None:
        if self.order:
            self.order[-1][1].append(line)


def _indent_ok(line: str) -> str | None:
    """The line without up to three leading spaces, or None when indented more (code)."""
    stripped = line.lstrip(" ")
    return stripped if len(line) - len(stripped) <= 3 else None


def _opens_fence(line: str) -> tuple[str, int] | None:
    stripped = _indent_ok(line)
    if not stripped or stripped[0] not in _FENCE_CHARS:
        return None
    char = stripped[0]
    run = len(stripped) - len(stripped.lstrip(char))
    if run < 3 or (char == "`" and "`" in stripped[run:]):
        return None
    return char, run


def _closes(line: str, fence: tuple[str, int]) -> bool:
    char, run = fence
    stripped = _indent_ok(line)
    if stripped is None:
        return False
    length = len(stripped) - len(stripped.lstrip(char))
    return length >= run and not stripped[length:].strip()


def _heading(line: str) -> str | None:
    """The section name an ATX heading line gives, or None."""
    if len(line) > MAX_HEADING_CHARS:
        return None
    inner = atx_heading(line)
    return (_clean(inner) or None) if inner is not None else None


def atx_heading(line: str) -> str | None:
    """The text of an ATX heading line (``## Name ##`` -> ``Name``), or None for other lines."""
    stripped = _indent_ok(line)
    if stripped is None or not stripped.startswith("#"):
        return None
    hashes = len(stripped) - len(stripped.lstrip("#"))
    if hashes > 6 or (len(stripped) > hashes and stripped[hashes] not in " \t"):
        return None
    inner = stripped[hashes:].strip()
    closing = inner.rstrip("#")
    if closing != inner and (not closing or closing[-1] in " \t"):
        inner = closing.strip()
    return inner


def _label(line: str) -> tuple[str, str] | None:
    """``**Label:** rest`` or ``**Label**: rest`` -> (label, rest), else None."""
    stripped = _indent_ok(line)
    if stripped is None or not stripped.startswith("**"):
        return None
    close = stripped.find("**", 2, MAX_LABEL_CHARS + 4)
    if close < 0:
        return None
    inner, after = stripped[2:close], stripped[close + 2 :]
    if "*" in inner:
        return None
    if inner.rstrip().endswith(":"):
        label = inner.rstrip()[:-1].strip()
    elif after.startswith(":"):
        label, after = inner.strip(), after[1:]
    else:
        return None
    return (label, after.strip()) if label else None


def _clean(name: str) -> str:
    """A heading's name without a trailing colon or emphasis wrapping all of it."""
    name = name.strip()
    for mark in ("**", "__", "*", "_"):
        if len(name) > 2 * len(mark) and name.startswith(mark) and name.endswith(mark):
            name = name[len(mark) : -len(mark)].strip()
            break
    return name.removesuffix(":").strip()


__all__ = ["NO_RESPONSE", "atx_heading", "parse_sections"]
