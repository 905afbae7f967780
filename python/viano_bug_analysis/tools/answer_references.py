"""The view of a ``references`` answer: its database part and its source part,
each within its own share of the budget (``tools/answer_view.py``).

A references answer has a large database part (one entry per map entry that
holds the type, most of them refused or empty) and a source part (the lines
naming the ID). Cut as one text, the source part was the one lost; here each
part is fitted on its own, the database part first to at most half the room
when there are source lines, and whatever either leaves out is named with the
query that fetches it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from viano_bug_analysis.tools.answer_layout import (
    FOOTER_CHARS,
    compact,
    line_limit,
    name_list,
    one_line,
    shorten,
    table,
)

_Lines = list[str]
# Room the database part keeps for the line that names the rows it left out.
LEFT_OUT_CHARS = 450


def references_view(
    body: Mapping[str, Any], request: Mapping[str, Any], max_chars: int
) -> tuple[str, bool, Mapping[str, Any] | None]:
    """(text, complete, continuation) of one references answer."""
    head = [f"references of {body.get('entity_type')} {body.get('id')}"]
    database = body.get("database") or {}
    source = body.get("source") or {}
    room = max_chars - FOOTER_CHARS - len(head[0])
    # The source part is short and is what citations of lines need: it gets
    # what it needs up to half the room, the database part the rest.
    whole_source, _ = _source_part(source, max_chars * 64, request, max_chars)
    source_need = sum(len(line) + 1 for line in whole_source)
    db_lines, db_left = _database_part(database, room - min(source_need, room // 2), request)
    used = sum(len(line) + 1 for line in db_lines)
    src_lines, src_left = _source_part(source, room - used, request, max_chars)
    text = "\n".join([*head, *db_lines, *src_lines])
    continuation = src_left or db_left
    complete = src_left is None and db_left is None
    return text, complete, continuation


# -- database -----------------------------------------------------------------------


def _database_part(
    database: Mapping[str, Any], room: int, request: Mapping[str, Any]
) -> tuple[_Lines, Mapping[str, Any] | None]:
    if not database.get("available"):
        return [f"database: not available ({database.get('reason')})"], None
    entries = [e for e in database.get("entries") or [] if isinstance(e, Mapping)]
    exact = "exact" if database.get("total_exact") else "a lower bound"
    with_rows = [i for i, e in enumerate(entries) if e.get("rows")]
    lines = [
        f"database: {database.get('total')} rows ({exact}) in {len(with_rows)} of"
        f" {len(entries)} map entries; {database.get('refused')} entries refused",
        *_refused_lines(entries, room // 4),
    ]
    empty = [_place(e) for e in entries if not e.get("rows") and not e.get("refused")]
    if empty:
        lines.append(name_list("no rows", list(dict.fromkeys(empty)), room // 4))
    if with_rows:
        lines.append("cite a row value by pointer /database/entries/<entry>/rows/<#>/row/<column>")
    used = sum(len(line) + 1 for line in lines)
    rows_room = room - LEFT_OUT_CHARS  # kept for the line naming what is left out
    left: list[str] = []
    continuation: Mapping[str, Any] | None = None
    for index in with_rows:
        entry = entries[index]
        rows = [r.get("row") or {} for r in entry["rows"]]
        columns = list(dict.fromkeys(c for row in rows for c in row))
        block = table(columns, rows, indent="  ")
        heading = f"entry {index}: {_place(entry)}{_when(entry)}: {entry.get('count')} rows"
        shown = 0
        cost = len(heading) + len(block[0]) + len(block[1]) + 3
        if used + cost <= rows_room:
            lines += [heading, block[0]]
            used += len(heading) + len(block[0]) + 2
            for line in block[1:]:
                if used + len(line) + 1 > rows_room:
                    break
                lines.append(line)
                used += len(line) + 1
                shown += 1
        more = _int(entry.get("count")) - shown
        if more > 0:
            query = _rows_query(entry, request, shown)
            if shown < len(rows):
                left.append(f"entry {index} {_place(entry)} ({more} rows from offset {shown})")
                continuation = continuation or query
            else:
                lines.append(f"  {more} more rows beyond this answer: {compact(query)}")
    if continuation is not None:
        ask = f"; ask database.rows with the entry's filters, e.g. {compact(continuation)}"
        lines.append(name_list("left out for room", left, LEFT_OUT_CHARS - len(ask)) + ask)
    return lines, continuation


def _refused_lines(entries: Sequence[Mapping[str, Any]], room: int) -> _Lines:
    by_reason: dict[str, dict[str, None]] = {}
    for entry in entries:
        if entry.get("refused"):
            by_reason.setdefault(str(entry["refused"]), {})[_place(entry)] = None
    share = room // max(1, len(by_reason))
    return [name_list(f"refused ({why})", list(places), share) for why, places in by_reason.items()]


def _place(entry: Mapping[str, Any]) -> str:
    return f"{entry.get('table')}.{entry.get('column')}"


def _when(entry: Mapping[str, Any]) -> str:
    conditions = [
        f"{c.get('column')} {c.get('operator')} {c.get('value')}"
        for c in entry.get("when") or []
        if isinstance(c, Mapping)
    ]
    return f" when {' and '.join(conditions)}" if conditions else ""


def _rows_query(
    entry: Mapping[str, Any], request: Mapping[str, Any], offset: int
) -> dict[str, Any]:
    operator = "contains" if entry.get("list") else "eq"
    value: Any = str(request.get("id")) if entry.get("list") else request.get("id")
    filters = [{"column": entry.get("column"), "operator": operator, "value": value}]
    filters += [dict(c) for c in entry.get("when") or [] if isinstance(c, Mapping)]
    return {
        "kind": "database.rows",
        "table": entry.get("table"),
        "filters": filters,
        "offset": offset,
        "limit": 20,
    }


# -- source -------------------------------------------------------------------------


def _source_has_lines(source: Mapping[str, Any]) -> bool:
    literal = source.get("literal") or {}
    return bool(literal.get("lines")) or any(
        c.get("lines") or c.get("defined_at") for c in source.get("constants") or []
    )


def _source_part(
    source: Mapping[str, Any], room: int, request: Mapping[str, Any], max_chars: int
) -> tuple[_Lines, Mapping[str, Any] | None]:
    if not source.get("available"):
        return [f"source: not available ({source.get('reason')})"], None
    literal = source.get("literal") or {}
    limit = line_limit(max_chars)
    unsearched = literal.get("files_unsearched")
    if unsearched is None:  # a version 1 answer: complete instead of a count
        unsearched = 0 if literal.get("complete", True) else "some"
    exact = "exact" if literal.get("count_exact") else "at least"
    commit = str((source.get("origin") or {}).get("commit", ""))[:12]
    lines = [
        f"source at commit {commit}: {literal.get('count')} lines name {literal.get('text')}"
        f" as a whole word ({exact})"
        + (
            f"; {unsearched} files not searched, listed once in the case brief"
            if unsearched
            else ""
        ),
        "cite a line as L<number> where its number is shown once, else by pointer"
        " /source/literal/lines/<#>",
    ]
    used = sum(len(line) + 1 for line in lines)
    hits = literal.get("lines") or []
    shown = 0
    for hit in hits:
        line = "  " + _hit(hit, limit)
        if used + len(line) + 1 > room and shown:
            break
        lines.append(line)
        used += len(line) + 1
        shown += 1
    continuation: Mapping[str, Any] | None = None
    total = _int(literal.get("count"))
    if shown < total:
        query = {
            "kind": "source.search",
            "text": str(literal.get("text")),
            "case_sensitive": True,
            "whole_word": True,
            "offset": shown,
            "limit": 50,
        }
        why = "left out for room" if shown < len(hits) else "beyond this answer"
        lines.append(f"{why}: {total - shown} lines naming it; ask {compact(query)}")
        continuation = query if shown < len(hits) else None
    const_lines, const_left = _constants(source.get("constants") or [], room - used, limit)
    lines += const_lines
    return lines, continuation or const_left


def _constants(
    constants: Sequence[Mapping[str, Any]], room: int, limit: int
) -> tuple[_Lines, Mapping[str, Any] | None]:
    lines: _Lines = []
    used = 0
    left: Mapping[str, Any] | None = None
    for constant in constants:
        name = constant.get("name")
        defined = "; ".join(_hit(d, limit) for d in constant.get("defined_at") or [])
        heading = f"constant {name} = the ID at {defined}; named on {constant.get('count')} lines:"
        lines.append(heading)
        used += len(heading) + 1
        hits = constant.get("lines") or []
        shown = 0
        for hit in hits:
            line = "  " + _hit(hit, limit)
            if used + len(line) + 1 > room:
                break
            lines.append(line)
            used += len(line) + 1
            shown += 1
        if shown < _int(constant.get("count")):
            query = {"kind": "source.symbol", "symbol": name, "offset": shown, "limit": 50}
            lines.append(f"  {_int(constant.get('count')) - shown} more: ask {compact(query)}")
            if shown < len(hits) and left is None:
                left = query
    return lines, left


def _hit(hit: Mapping[str, Any], limit: int) -> str:
    text = shorten(
        one_line(str(hit.get("text", ""))), limit, cut_before=hit.get("text_truncated") is True
    )
    return f"{hit.get('path')}:{hit.get('line')}: {text}"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


__all__ = ["references_view"]
