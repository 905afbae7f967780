"""How one tool answer is shown to the model: compact text within a budget.

``answer_view`` renders the answer of a snapshot operation (``source.find_text``,
...) or of a ``project.query`` (by its query kind) as plain lines instead of
JSON: no hashes, rows as small tables (the column names once, then one line per
row, led by the row's index), source hits as ``path:line: text``, a read as
numbered lines under its path. Whatever does not fit ``max_chars`` is left out
whole (whole rows, whole lines) and the view says so, with the exact arguments
that fetch it (``continuation``). Every line number shown stands next to the
path of its file, or under it, so a line citation never names a line of a file
the model was not shown. What a search could not look at is only counted here:
the paths are listed once per case (``unsearched_note``).

The stored answer is unchanged; citations resolve against it, so the hints a
view gives (``/rows/<#>/<column>``, ``L<line>``) point into the stored answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from viano_bug_analysis.errors import ToolError
from viano_bug_analysis.project_research.git_coverage import COVERAGE_GAPS
from viano_bug_analysis.tools.answer_layout import (
    FOOTER_CHARS,
    cell,
    counts,
    fit,
    line_limit,
    name_list,
    one_line,
    row_columns,
    shorten,
    table,
)
from viano_bug_analysis.tools.refusals import refusal_record, refusal_text

PROJECT_QUERY: Final = "project.query"
PROJECT_RESULT_FORMAT: Final = "viano-project-result"
# Distinct unsearched paths the case-wide note lists before it only counts.
MAX_UNSEARCHED_PATHS: Final = 30


@dataclass(frozen=True)
class AnswerView:
    """``text``: the compact rendering; ``complete``: False when something of the
    answer was left out for room; ``continuation``: the arguments (same operation,
    same kind) that fetch what comes next, left out or on the next page, else None."""

    text: str
    complete: bool
    continuation: Mapping[str, Any] | None


@dataclass(frozen=True)
class _Ctx:
    """What a renderer needs besides the answer body."""

    request: Mapping[str, Any]
    max_chars: int
    pointer: str  # where the answer body sits inside the stored payload ("" or "/result")

    @property
    def limit(self) -> int:
        return line_limit(self.max_chars)


def answer_view(
    operation: str, request: Mapping[str, Any], payload: Mapping[str, Any], *, max_chars: int
) -> AnswerView:
    """The view of one answer. ``request``: the query (with ``kind``) for
    ``project.query``, the arguments of a snapshot operation (a router request
    element with ``arguments`` is accepted too). ``payload``: the stored
    evidence payload (the provider result, or the router's result element; a
    whole project-result document is accepted too)."""
    if operation == PROJECT_QUERY:
        kind = request.get("kind")
        body = _project_body(payload)
        ctx = _Ctx(request, max_chars, "")
    else:
        kind = operation
        arguments = request.get("arguments")
        if isinstance(arguments, Mapping) and "operation" in request:
            request = arguments
        inner = payload.get("result")
        body = inner if isinstance(inner, Mapping) and "operation" in payload else payload
        ctx = _Ctx(request, max_chars, "/result" if body is not payload else "")
    renderer = _RENDERERS.get(kind) if isinstance(kind, str) else None
    if renderer is None:
        raise ToolError(
            "unknown_operation",
            "no answer view for this operation or query kind",
            {"operation": operation, "allowed": sorted(_RENDERERS)},
        )
    return renderer(body, ctx)


def unsearched_note(payloads: Iterable[Mapping[str, Any]]) -> str | None:
    """One note for a whole case: the distinct files its searches could not look
    at for a reason that may hide a hit (too large, not UTF-8, missing, ...),
    at most ``MAX_UNSEARCHED_PATHS`` named, the rest counted. None when there are
    none. ``payloads``: stored evidence payloads of any kind (others are ignored)."""
    found: dict[str, str] = {}
    uncounted = 0
    for payload in payloads:
        body = _project_body(payload) if isinstance(payload, Mapping) else {}
        skipped = body.get("skipped") if isinstance(body, Mapping) else None
        if not isinstance(skipped, Mapping):
            continue
        for item in skipped.get("paths") or ():
            if isinstance(item, Mapping) and item.get("reason") in COVERAGE_GAPS:
                found.setdefault(str(item.get("path")), str(item["reason"]))
        if skipped.get("paths_truncated"):
            uncounted += 1
    if not found:
        return None
    names = sorted(found)
    listed = ", ".join(f"{path} ({found[path]})" for path in names[:MAX_UNSEARCHED_PATHS])
    more = len(names) - MAX_UNSEARCHED_PATHS
    text = (
        f"Files the source searches could not read ({len(names)}; a hit there would be "
        f"missed, so no absence follows for them): {listed}"
    )
    if more > 0:
        text += f"; and {more} more"
    if uncounted:
        text += f"; {uncounted} searches listed only part of their skipped files"
    return text


# -- the answer body ----------------------------------------------------------------


def _project_body(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    if payload.get("format") != PROJECT_RESULT_FORMAT:
        return payload
    body: Mapping[str, Any] = payload.get("result") or {}
    if payload.get("query", {}).get("kind") == "references":
        return {k: v for k, v in body.items() if k != "captures"}
    return body


# -- paging -------------------------------------------------------------------------


def _paged(
    ctx: _Ctx,
    body: Mapping[str, Any],
    head: Sequence[str],
    items: Sequence[str],
    tail: Sequence[str] = (),
    *,
    noun: str,
) -> AnswerView:
    """A view of one page of items (the page ``body`` names by ``offset`` and
    ``next_offset``): those that fit, then what was left out or what the next
    page is, with the offset that fetches it."""
    offset, next_offset = _int(body, "offset"), _next(body)
    room = ctx.max_chars - FOOTER_CHARS - sum(len(line) + 1 for line in tail)
    fitted = fit(head, items, room)
    lines = [*fitted.lines, *tail]
    if fitted.shown < fitted.total:
        after = offset + fitted.shown
        continuation = {**ctx.request, "offset": after}
        lines.append(
            f"left out for room: {noun} {after + 1}-{offset + fitted.total} of this answer;"
            f" ask the same query with offset {after} for them"
        )
        return AnswerView("\n".join(lines), False, continuation)
    if next_offset is not None:
        lines.append(f"more {noun} after this page: ask the same query with offset {next_offset}")
        return AnswerView("\n".join(lines), True, {**ctx.request, "offset": next_offset})
    return AnswerView("\n".join(lines), True, None)


def _whole(ctx: _Ctx, head: Sequence[str], items: Sequence[str], noun: str) -> AnswerView:
    """An answer without paging: what does not fit is named and counted."""
    fitted = fit(head, items, ctx.max_chars - FOOTER_CHARS)
    lines = list(fitted.lines)
    if fitted.shown == fitted.total:
        return AnswerView("\n".join(lines), True, None)
    lines.append(f"left out for room: {fitted.total - fitted.shown} more {noun}")
    return AnswerView("\n".join(lines), False, None)


def _int(body: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = body.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _next(body: Mapping[str, Any]) -> int | None:
    value = body.get("next_offset")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# -- source -------------------------------------------------------------------------


def _text(item: Mapping[str, Any], limit: int) -> str:
    return shorten(one_line(str(item.get("text", ""))), limit, cut_before=_cut(item))


def _hit(path: Any, line: Any, item: Mapping[str, Any], limit: int) -> str:
    return f"{path}:{line}: {_text(item, limit)}"


def _cut(item: Mapping[str, Any]) -> bool:
    return item.get("text_truncated") is True


def _line_hint(ctx: _Ctx, array: str) -> str:
    return (
        f"cite a line as L<number> where its number is shown once, "
        f"else by pointer {ctx.pointer}/{array}/<index from 0>"
    )


def _skipped_lines(body: Mapping[str, Any]) -> list[str]:
    skipped = body.get("skipped")
    if not isinstance(skipped, Mapping):
        return []
    by_reason = skipped.get("by_reason") or {}
    gaps = {r: n for r, n in by_reason.items() if r in COVERAGE_GAPS}
    other = {r: n for r, n in by_reason.items() if r not in COVERAGE_GAPS}
    lines = []
    if gaps:
        lines.append(
            f"not searched: {sum(gaps.values())} files that could hold a hit ({counts(gaps)});"
            " listed once in the case brief"
        )
    if other:
        lines.append(f"skipped, not text: {sum(other.values())} files ({counts(other)})")
    return lines


def _source_search(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    matches = body.get("matches") or []
    head = [
        f"{_int(body, 'total')} matching lines; {_int(body, 'files_searched')} files searched",
        _line_hint(ctx, "matches"),
    ]
    if isinstance(body.get("note"), str):
        head.insert(1, one_line(body["note"]))
    items = [_hit(m.get("path"), m.get("line"), m, ctx.limit) for m in matches]
    return _paged(ctx, body, head, items, _skipped_lines(body), noun="lines")


def _source_files(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    items = []
    for item in body.get("files") or []:
        size = item.get("size")
        state = f"{size} bytes" if isinstance(size, int) else "absent from this clone"
        items.append(f"{item.get('path')} ({state})")
    head = [f"{_int(body, 'total')} files"]
    return _paged(ctx, body, head, items, _skipped_lines(body), noun="files")


def _read(path: Any, body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    lines = body.get("lines") or []
    first = _int(body, "start_line", 1)
    last = _int(body, "end_line", first)
    head = [f"{path} lines {first}-{last} (cite as L<number>):"]
    items = [f"{item.get('line')}: {_text(item, ctx.limit)}" for item in lines]
    fitted = fit(head, items, ctx.max_chars - FOOTER_CHARS)
    text = list(fitted.lines)
    if fitted.shown == fitted.total:
        return AnswerView("\n".join(text), True, None)
    resume = lines[fitted.shown].get("line", first + fitted.shown)
    continuation = {**ctx.request, "start_line": resume}
    text.append(
        f"left out for room: lines {resume}-{last} of {path}; ask again with start_line {resume}"
    )
    return AnswerView("\n".join(text), False, continuation)


def _source_read(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    return _read(body.get("path"), body, ctx)


def _source_revision(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    lines = [
        f"revision {body.get('revision')}: {body.get('resolution')}"
        + (f" as {body['commit']}" if body.get("commit") else ""),
        f"relation to the pinned commit {body.get('pinned_commit')}: {body.get('relation')}",
    ]
    if body.get("pinned_only") is not None or body.get("reported_only") is not None:
        lines.append(
            f"commits only in the pinned history: {body.get('pinned_only')};"
            f" only in the reported one: {body.get('reported_only')}"
        )
    stopped = body.get("walk_stopped_by") or body.get("incomplete_reason")
    if stopped:
        lines.append(f"the history walk stopped ({stopped}) after {body.get('commits_visited')}")
    candidates = body.get("candidates") or []
    if candidates:
        shown = ", ".join(candidates[:5])
        lines.append(f"{_int(body, 'candidate_count')} candidate commits: {shown}")
    return _whole(ctx, lines, [], "lines")


def _source_changes(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    gaps = body.get("examination_gaps", body.get("incomplete_reasons")) or []
    head = [
        f"{_int(body, 'total')} commits of {_short(body.get('since'))}.."
        f"{_short(body.get('pinned_commit'))} ({body.get('relation')}) add or remove a line naming "
        + ", ".join(str(t) for t in body.get("terms") or []),
        f"{_int(body, 'commits_examined')} commits examined"
        + (f"; not examined in full: {', '.join(map(str, gaps))}" if gaps else ""),
    ]
    items = []
    for commit in body.get("commits") or []:
        rows = [
            f"{_short(commit.get('commit'))} {commit.get('author_time')} {commit.get('summary')}"
        ]
        for c in commit.get("changes") or []:
            side = "+" if c.get("side") == "added" else "-"
            rows.append(f"  {side} {_hit(c.get('path'), c.get('line'), c, ctx.limit)}")
        if commit.get("changes_truncated"):
            rows.append(f"  ({_int(commit, 'changes_total')} changed lines in all; read the files)")
        items.append("\n".join(rows))
    return _paged(ctx, body, head, items, _skipped_lines(body), noun="commits")


def _short(commit: Any) -> str:
    return str(commit)[:12]


# -- database -----------------------------------------------------------------------


def _database_tables(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    items = [f"{t.get('database')}.{t.get('table')}" for t in body.get("tables") or []]
    tail = []
    if body.get("missing"):
        missing = [str(name) for name in body["missing"]]
        tail.append(name_list("allowlisted but absent", missing, ctx.max_chars // 4))
    head = [f"{_int(body, 'total')} readable tables:"]
    return _paged(ctx, body, head, items, tail, noun="tables")


def _column_line(column: Mapping[str, Any]) -> str:
    parts = [str(column.get("name")), str(column.get("type"))]
    if column.get("nullable") is False:
        parts.append("NOT NULL")
    if column.get("default") is not None:
        parts.append(f"default {cell(column['default'])}")
    parts += [str(column[k]) for k in ("key", "extra") if column.get(k)]
    return " ".join(parts)


def _database_schema(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    columns = body.get("columns") or []
    head = [
        f"{body.get('database')}.{body.get('table')}: {len(columns)} columns;"
        f" primary key ({', '.join(body.get('primary_key') or [])})"
    ]
    indexes = [
        f"index {i.get('name')}{' unique' if i.get('unique') else ''}"
        f" ({', '.join(i.get('columns') or [])})"
        for i in body.get("indexes") or []
        if isinstance(i, Mapping)
    ]
    items = [_column_line(c) for c in columns if isinstance(c, Mapping)]
    room = ctx.max_chars - FOOTER_CHARS - sum(len(i) + 1 for i in indexes)
    # Room kept for the names of the columns whose lines do not fit.
    fitted = fit(head, items, room * 2 // 3)
    lines = list(fitted.lines)
    if fitted.shown < fitted.total:
        rest = [str(c.get("name")) for c in columns[fitted.shown :] if isinstance(c, Mapping)]
        left = room - sum(len(line) + 1 for line in lines)
        lines.append(name_list("more columns (names only)", rest, left))
    return AnswerView("\n".join([*lines, *indexes]), fitted.shown == fitted.total, None)


def _rows_view(
    ctx: _Ctx,
    head: list[str],
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    body: Mapping[str, Any],
    cite: str,
) -> AnswerView:
    lines = table(columns, rows)
    head = [*head, f"cite a value by pointer {cite}", lines[0]]
    return _paged(ctx, body, head, lines[1:], noun="rows")


def _database_rows(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    rows = body.get("rows") or []
    complete = "all" if body.get("complete_filtered_rows") else "a page of the"
    head = [
        f"{body.get('database')}.{body.get('table')}: {_int(body, 'returned')} rows"
        f" from offset {_int(body, 'offset')} ({complete} matching rows)"
    ]
    columns = row_columns(rows, body.get("columns"))
    return _rows_view(ctx, head, rows, columns, body, f"{ctx.pointer}/rows/<#>/<column>")


def _database_count(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    filters = len(body.get("filters") or [])
    where = f"{body.get('database')}.{body.get('table')}"
    text = f"{where}: {body.get('count')} rows match {filters} filters"
    return AnswerView(text, True, None)


# -- snapshots ----------------------------------------------------------------------


def _snapshot_search(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    head = [
        f"{_int(body, 'total')} matching lines;"
        f" {_int(body, 'sources_searched')} snapshot sources searched",
        _line_hint(ctx, "matches"),
    ]
    items = [
        _hit(m.get("source_ref"), m.get("line"), m, ctx.limit) for m in body.get("matches") or []
    ]
    return _paged(ctx, body, head, items, noun="lines")


def _snapshot_read(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    return _read(body.get("source_ref"), body, ctx)


def _snapshot_describe(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    head = [
        f"{body.get('source_ref')}: table {body.get('table')} ({body.get('kind')},"
        f" coverage {body.get('coverage')}), {body.get('row_count')} rows"
    ]
    if isinstance(body.get("note"), str):
        head.append(one_line(body["note"]))
    items = [
        f"{c.get('name')} {c.get('type')}" if isinstance(c, Mapping) else str(c)
        for c in body.get("columns") or []
    ]
    return _whole(ctx, head, items, "columns")


def _snapshot_row(found: Mapping[str, Any]) -> dict[str, Any]:
    row = dict(found.get("row") or {})
    if "matched_columns" in found:
        row["matched"] = found["matched_columns"]
    return row


def _snapshot_rows(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    found = [r for r in body.get("rows") or [] if isinstance(r, Mapping)]
    rows = [_snapshot_row(r) for r in found]
    head = [
        f"{body.get('source_ref')}: table {body.get('table')} (coverage {body.get('coverage')}):"
        f" {_int(body, 'total')} rows match"
    ]
    columns = row_columns(rows, None)
    return _rows_view(ctx, head, rows, columns, body, f"{ctx.pointer}/rows/<#>/row/<column>")


def _references(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    from viano_bug_analysis.tools.answer_references import references_view

    text, complete, continuation = references_view(body, ctx.request, ctx.max_chars)
    return AnswerView(text, complete, continuation)


_Renderer = Callable[[Mapping[str, Any], _Ctx], AnswerView]


def _client_records(body: Mapping[str, Any], ctx: _Ctx) -> AnswerView:
    """One line per record (its fields as name=value), a spell's effects indented under
    it; the origin (file and record index, or the override row) in the stored answer."""
    records = [r for r in body.get("records") or () if isinstance(r, Mapping)]
    head = [
        f"client data {body.get('table')} ({body.get('file')}): {_int(body, 'returned')} records"
        f" from offset {_int(body, 'offset')}",
        f"cite a field by pointer {ctx.pointer}/records/<#>/fields/<name>",
    ]
    missing = body.get("missing_ids") or []
    if missing:
        head.append(f"no record for IDs: {', '.join(str(m) for m in missing[:40])}")
    items = []
    for number, record in enumerate(records):
        fields = record.get("fields") or {}
        shown = " ".join(f"{name}={cell(value)}" for name, value in fields.items())
        lines = [f"{number}: {shown}"]
        for effect in record.get("effects") or ():
            effect_fields = effect.get("fields") if isinstance(effect, Mapping) else None
            if isinstance(effect_fields, Mapping):
                lines.append(
                    "   effect " + " ".join(f"{k}={cell(v)}" for k, v in effect_fields.items())
                )
        items.append("\n".join(lines))
    return _paged(ctx, body, head, items, noun="records")


_RENDERERS: Final[Mapping[str, _Renderer]] = {
    "source.find_text": _snapshot_search,
    "source.find_symbol": _snapshot_search,
    "source.read_context": _snapshot_read,
    "database.describe": _snapshot_describe,
    "database.lookup": _snapshot_rows,
    "database.find_references": _snapshot_rows,
    "source.files": _source_files,
    "source.search": _source_search,
    "source.symbol": _source_search,
    "source.registration": _source_search,
    "source.schema": _source_search,
    "source.read": _source_read,
    "source.revision": _source_revision,
    "source.changes": _source_changes,
    "database.tables": _database_tables,
    "database.schema": _database_schema,
    "database.rows": _database_rows,
    "database.count": _database_count,
    "references": _references,
    "client.records": _client_records,
}
VIEW_KINDS: Final = frozenset(_RENDERERS)
"""Every snapshot operation and project query kind a view exists for."""

__all__ = [
    "VIEW_KINDS",
    "AnswerView",
    "answer_view",
    "refusal_record",
    "refusal_text",
    "unsearched_note",
]
