"""The budget mechanics of an answer view: fixed lines, item lines while they
fit, and the line that says what was left out (see ``tools/answer_view.py``).

An item is one whole line (a source line, a table row, a file): it is shown
or left out, never cut in the middle without a mark. Long texts inside an item
are shortened with an explicit ``…[+N chars]`` mark; the stored answer keeps
them whole, and citations resolve against the stored answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.jsonio import canonical_bytes

# Room kept for the "left out" line and the continuation it names.
FOOTER_CHARS = 200
# Longest cell of a table row and smallest line text limit shown.
CELL_CHARS = 120
MIN_LINE_CHARS = 80


@dataclass(frozen=True)
class Fitted:
    """The lines of one view part and how many of its items it holds."""

    lines: tuple[str, ...]
    shown: int
    total: int

    @property
    def chars(self) -> int:
        return sum(len(line) + 1 for line in self.lines)


def fit(head: Sequence[str], items: Sequence[str], room: int) -> Fitted:
    """``head`` always, then the leading ``items`` that fit into ``room`` characters.

    At least one item is kept when there is one, so that a continuation
    always moves on (a view can then pass ``room`` by at most that item).
    """
    used = sum(len(line) + 1 for line in head)
    shown = 0
    for item in items:
        cost = len(item) + 1
        if shown and used + cost > room:
            break
        used += cost
        shown += 1
    return Fitted((*head, *items[:shown]), shown, len(items))


def line_limit(max_chars: int) -> int:
    """The longest text one item line may show at this view size."""
    return max(MIN_LINE_CHARS, max_chars // 6)


def shorten(text: str, limit: int, *, cut_before: bool = False) -> str:
    """``text`` within ``limit`` characters, with a mark saying how much is not shown;
    ``cut_before``: the source already cut it (a provider's line limit)."""
    if len(text) > limit:
        return f"{text[:limit]}…[+{len(text) - limit} chars]"
    return f"{text}…[cut by the tool]" if cut_before else text


def one_line(text: str) -> str:
    """A text that cannot break the view's line structure."""
    if "\n" in text or "\r" in text:
        return json.dumps(text, ensure_ascii=False)
    return text


def cell(value: Any) -> str:
    """One table cell: SQL-like for scalars, quoted where the bare text would mislead."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        bare = value and value.strip() == value and value != "NULL"
        text = value if bare and not any(c in value for c in "|\r\n") else json.dumps(value)
    else:
        text = canonical_bytes(value).decode()
    return shorten(text, CELL_CHARS)


def table(columns: Sequence[str], rows: Sequence[Mapping[str, Any]], indent: str = "") -> list[str]:
    """A header of column names once, then one line per row, led by its index."""
    head = indent + " | ".join(["#", *columns])
    body = [
        indent + " | ".join([str(i), *(cell(row.get(c)) for c in columns)])
        for i, row in enumerate(rows)
    ]
    return [head, *body]


def row_columns(rows: Sequence[Mapping[str, Any]], declared: Sequence[str] | None) -> list[str]:
    """The columns a table shows: the declared projection, else every row's keys in order."""
    if declared:
        return list(declared)
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def name_list(prefix: str, names: Sequence[str], room: int) -> str:
    """``prefix`` and as many of ``names`` as fit in ``room`` characters (at least
    one), the rest counted: ``prefix: a, b, … and 12 more``."""
    shown: list[str] = []
    used = len(prefix) + 2
    for index, name in enumerate(names):
        rest = len(names) - index - 1
        tail = len(f", … and {rest} more") if rest else 0
        if shown and used + len(name) + 2 + tail > room:
            break
        shown.append(name)
        used += len(name) + 2
    text = f"{prefix}: {', '.join(shown)}"
    if len(shown) < len(names):
        text += f", … and {len(names) - len(shown)} more"
    return text


def compact(value: Any) -> str:
    """A request or argument set as the model sends it."""
    return canonical_bytes(value).decode()


def counts(by_reason: Mapping[str, int]) -> str:
    return ", ".join(f"{reason} {n}" for reason, n in sorted(by_reason.items()))


__all__ = [
    "CELL_CHARS",
    "FOOTER_CHARS",
    "Fitted",
    "cell",
    "compact",
    "counts",
    "fit",
    "line_limit",
    "name_list",
    "one_line",
    "row_columns",
    "shorten",
    "table",
]
