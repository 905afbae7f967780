"""The text content of an answer: what a client that shows only text gets to read.

Many MCP clients hand the model the text content of a tool result and not
its ``structuredContent``. So the text is the answer itself in a compact,
line-oriented form (a search hit as ``src-001:42: text``, a row as
``/rows/3 {...}``), one header per request with its paging, and the
provenance references that cite it (SHA-256 prefixes, line numbers, row
pointers). It is bounded: past ``MAX_TEXT_LINES`` lines or ``MAX_TEXT_CHARS``
characters the rest is left to the structured content, and the text says so.
The structured content stays the document of record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from viano_bug_analysis.jsonio import canonical_bytes

MAX_TEXT_LINES = 400
MAX_TEXT_CHARS = 64 * 1024


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.chars = 0
        self.left_out = 0

    def add(self, line: str) -> None:
        if self.left_out or len(self.lines) >= MAX_TEXT_LINES:
            self.left_out += 1
            return
        if self.chars + len(line) > MAX_TEXT_CHARS:
            self.left_out += 1
            return
        self.lines.append(line)
        self.chars += len(line) + 1

    def text(self) -> str:
        if self.left_out:
            self.lines.append(f"… {self.left_out} more line(s): see the structured content")
        return "\n".join(self.lines)


def _json(value: Any) -> str:
    return canonical_bytes(value).decode("utf-8")


def _cut(line: Mapping[str, Any]) -> str:
    return " [line cut]" if line.get("text_truncated") else ""


def _paging(body: Mapping[str, Any]) -> str:
    returned = body.get("returned")
    if returned is None:
        items = body.get("matches", body.get("rows", ()))
        returned = len(items) if isinstance(items, Sequence) else 0
    page = f"{returned} of {body.get('total')}"
    if body.get("next_offset") is not None:
        page += f", more from offset {body['next_offset']}"
    return page


def render_case_query(result: Mapping[str, Any]) -> str:
    out = _Lines()
    out.add(
        f"case {result['case_id']} revision {result['analysis_revision']}: "
        f"{len(result['results'])} result(s), batch_sha256 {result['batch_sha256'][:16]}"
    )
    for item in result["results"]:
        body = item["result"]
        head = f"{item['request_id']} {item['operation']}"
        if "matches" in body:
            out.add(f"{head}: {_paging(body)} matching line(s)")
            for match in body["matches"]:
                out.add(f"  {match['source_ref']}:{match['line']}: {match['text']}{_cut(match)}")
        elif "lines" in body:
            out.add(
                f"{head}: {body['source_ref']} lines {body['start_line']}-{body['end_line']} "
                f"of {body['line_count']} (sha256 {body['sha256'][:16]})"
            )
            for line in body["lines"]:
                out.add(f"  {line['line']}: {line['text']}{_cut(line)}")
        elif "rows" in body:
            out.add(
                f"{head}: {body['table']} ({body['coverage']}), {_paging(body)} row(s) "
                f"(sha256 {body['sha256'][:16]})"
            )
            for row in body["rows"]:
                out.add(f"  {row['pointer']} {_json(row['row'])}")
        else:
            columns = ", ".join(str(c.get("name")) for c in body.get("columns", ()))
            out.add(
                f"{head}: table {body.get('table')} ({body.get('coverage')}), "
                f"{body.get('row_count')} row(s); columns: {columns}"
            )
    return out.text()


def render_project_query(result: Mapping[str, Any], capture_sha256: str) -> str:
    query, body, coverage = result["query"], result["result"], result["coverage"]
    origin = result["origin"]
    out = _Lines()
    complete = "complete" if coverage.get("complete") else "partial"
    if query["kind"] == "references":
        # The human form of vba references: the same document, the same lines.
        from viano_bug_analysis.tools.references_command import text_lines

        out.add(f"references: {complete}; capture {capture_sha256[:16]}")
        for line in text_lines(body):
            out.add(line)
        return out.text()
    where = (
        f"commit {origin['commit'][:12]}"
        if origin.get("kind") == "git"
        else f"database {origin.get('database')} snapshot {origin.get('snapshot_id')}"
    )
    out.add(f"{query['kind']} at {where}: {complete}; capture {capture_sha256[:16]}")
    if "total" in body:
        out.add(f"{_paging(body)} item(s)")
    for match in body.get("matches", ()):
        out.add(f"  {match['path']}:{match['line']}: {match['text']}{_cut(match)}")
    for line in body.get("lines", ()):
        out.add(f"  {line['line']}: {line['text']}{_cut(line)}")
    for found in body.get("files", ()):
        size = "not in this clone" if found.get("absent") else f"{found['size']} bytes"
        out.add(f"  {found['path']} ({size})")
    for table in body.get("tables", ()):
        out.add(f"  {table['database']}.{table['table']}")
    if "rows" in body:
        for row in body["rows"]:
            out.add(f"  {_json(row)}")
    elif "columns" in body:
        for column in body["columns"]:
            out.add(f"  {_json(column)}")
    if "count" in body:
        out.add(f"  count: {body['count']}")
    return out.text()


__all__ = ["MAX_TEXT_CHARS", "MAX_TEXT_LINES", "render_case_query", "render_project_query"]
