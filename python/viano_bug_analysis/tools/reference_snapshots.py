"""The case's own snapshots in ``vba references --package``: where they use an ID.

The package is read the way a batch reads it (``InvestigationToolRouter.
read_snapshots``: every attachment and member verified, nothing written), and
the same two rules as the live search apply:

* source files: lines naming the ID's digits as a whole word (a literal
  search, then ``text_search.contains_word`` on each hit line);
* database snapshots: for each map entry holding the type on the snapshot's
  table, the rows the snapshot's typed lookup finds for the ID (and for its
  negative where the sign picks or carries a meaning), kept where
  ``references.names`` and ``references.when_holds`` say the row names it.

Counts are over the whole snapshot; what a snapshot does not hold (its
coverage) is stated with it, so an absence here proves nothing about the
live project.
"""

from __future__ import annotations

import os
from typing import Any

from viano_bug_analysis.enrichment import references
from viano_bug_analysis.enrichment.profile import EnrichmentProfile, Reference
from viano_bug_analysis.snapshot.text_search import LineQuery, contains_word, search_lines
from viano_bug_analysis.tools.database_query import LoadedTable
from viano_bug_analysis.tools.router import InvestigationToolRouter

# Every hit of a member is checked; pages of this size keep line text bounded per call.
PAGE = 1000


def snapshot_references(
    router: InvestigationToolRouter,
    package_path: str | os.PathLike[str],
    profile: EnrichmentProfile,
    entity_type: str,
    value: int,
    *,
    shown: int = 20,
) -> dict[str, Any]:
    """The ``snapshots`` part of a ``references-v2`` document."""
    package, texts, tables = router.read_snapshots(package_path)
    digits = str(value)
    sources = []
    for source_ref, text in texts.items():
        entry = package.context_entries[source_ref]
        lines, undecided, offset = [], 0, 0
        while True:
            page = search_lines([text], [LineQuery("literal", digits, offset, PAGE)])[0]
            for hit in page.hits:
                if contains_word(hit.text, digits):
                    lines.append({"line": hit.line_number, "text": hit.text})
                elif hit.text_truncated:
                    undecided += 1
            if page.next_offset is None:
                break
            offset = page.next_offset
        if lines or undecided:
            sources.append(
                {
                    "source_ref": source_ref,
                    "member": entry.member,
                    "sha256": entry.sha256,
                    "count": len(lines),
                    "count_exact": undecided == 0,
                    "lines": lines[:shown],
                }
            )
    rows = []
    for source_ref, table in tables.items():
        for ref in references.holders(profile, entity_type):
            if ref.table == table.table and ref.column in table.known_columns():
                found = _rows(table, ref, entity_type, value)
                if found:
                    rows.append(
                        {
                            "source_ref": source_ref,
                            "sha256": table.sha256,
                            "table": table.table,
                            "coverage": table.coverage,
                            "reference": ref.name,
                            "column": ref.column,
                            "count": len(found),
                            "rows": found[:shown],
                        }
                    )
    return {
        "package_id": package.package_id,
        "analysis_revision": package.analysis_revision,
        "sources_searched": len(texts),
        "tables_searched": len(tables),
        "sources": sources,
        "tables": rows,
    }


def _rows(table: LoadedTable, ref: Reference, entity_type: str, value: int) -> list[Any]:
    wanted = references.reverse_filter(ref, entity_type, value)
    if wanted.operator == "contains":
        return []  # a list column holds text; a typed snapshot lookup cannot ask into it
    candidates = wanted.value if wanted.operator == "in" else [wanted.value]
    found: dict[str, Any] = {}
    for candidate in candidates:
        offset: int | None = 0
        while offset is not None:
            page = table.find_references(candidate, [ref.column], offset=offset, limit=PAGE)
            for hit in page["rows"]:
                row = hit["row"]
                if references.when_holds(ref, row) and references.names(
                    ref, row, entity_type, value
                ):
                    found.setdefault(hit["pointer"], hit)
            offset = page["next_offset"]
    return [{"pointer": p, "row": found[p]["row"]} for p in sorted(found, key=_row_order)]


def _row_order(pointer: str) -> tuple[int, str]:
    last = pointer.rsplit("/", 1)[-1]
    return (int(last), pointer) if last.isdigit() else (0, pointer)


__all__ = ["snapshot_references"]
