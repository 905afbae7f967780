"""Validation of database-snapshot-v1 members (see docs/row-snapshots.md).

A member is either a neutral ``viano-database-snapshot`` document or a raw
JSON array of row objects. The document's header (every member except
``rows``) is checked against the bundled JSON Schema; the rows themselves are
parsed and checked by the native core, so no Python loop ever walks them.
A raw array invents nothing: no table name, coverage ``unknown``, and only
the keys that occur in its stored rows count as columns.

Errors are ``ToolError``s whose details name JSON Pointers, indexes and
counts, never a value from the member.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from viano_bug_analysis.errors import RowSnapshotError
from viano_bug_analysis.schema_errors import check
from viano_bug_analysis.snapshot.rows import RowTable
from viano_bug_analysis.tools.errors import ToolError, wrap_core_error

FORMAT = "viano-database-snapshot"
FORMAT_VERSION = 1
COVERAGES = ("partial", "complete_snapshot", "unknown", "schema_only")
SCHEMA_NAME = "database-snapshot-v1"
SCHEMA_FILE = SCHEMA_NAME + ".schema.json"


@dataclass(frozen=True, slots=True)
class SnapshotShape:
    """What a validated member says about itself.

    ``declared_columns`` is ``None`` for a raw array, which declares nothing;
    ``known_columns`` are the names a query may use: the declared names of a
    document, or the keys that occur in the stored rows of a raw array.
    """

    table: str | None
    coverage: str
    declared_columns: tuple[dict[str, Any], ...] | None
    known_columns: tuple[str, ...]


def snapshot_schema() -> dict[str, Any]:
    """The bundled database-snapshot-v1 JSON Schema (a fresh copy)."""
    return copy.deepcopy(_schema())


def parse_snapshot(data: bytes) -> RowTable:
    """Parse a member once; JSON-level problems become ``snapshot_invalid``."""
    try:
        return RowTable.parse(data)
    except RowSnapshotError as err:
        raise wrap_core_error(
            err, "snapshot_invalid", "the member is not a valid row snapshot"
        ) from err


def validate_snapshot(rows: RowTable) -> SnapshotShape:
    """Check a parsed member against database-snapshot-v1 and describe it."""
    if rows.kind == "array":
        return SnapshotShape(None, "unknown", None, tuple(rows.observed_columns()))
    return _validate_document(rows)


def _validate_document(rows: RowTable) -> SnapshotShape:
    header = rows.header
    has_rows = rows.snapshot.has_rows
    # Checked before the schema so this case gets its own, clearer code.
    if header.get("coverage") == "schema_only" and has_rows:
        raise ToolError(
            "snapshot_schema_only_has_rows",
            "a schema_only snapshot must not contain a rows member",
            {"pointer": "/rows"},
        )
    # The rows are already known to be an array of objects; a stand-in keeps
    # the schema's "rows is required unless schema_only" rule checkable.
    instance = {**header, "rows": []} if has_rows else dict(header)
    # Keys of a packaged member may be data: an unknown one is never named.
    if (found := check(SCHEMA_NAME, instance, name_unknown=False)) is not None:
        details: dict[str, Any] = {"pointer": found.pointer, "keyword": found.rule}
        if found.allowed is not None:
            details["allowed"] = list(found.allowed)
        raise ToolError("snapshot_invalid", f"the snapshot header: {found.message}", details)

    declared = tuple(dict(column) for column in header["columns"])
    names: set[str] = set()
    for index, column in enumerate(declared):
        if column["name"] in names:
            raise ToolError(
                "snapshot_duplicate_column",
                "a column name is declared more than once",
                {"pointer": f"/columns/{index}/name", "index": index},
            )
        names.add(column["name"])

    # observed_columns() comes from the core: one pass over the rows in Rust.
    undeclared = [name for name in rows.observed_columns() if name not in names]
    if undeclared:
        raise ToolError(
            "snapshot_undeclared_column",
            "a stored row uses a column that is not declared",
            {"pointer": "/rows", "count": len(undeclared)},
        )
    return SnapshotShape(
        header["table"],
        header["coverage"],
        declared,
        tuple(column["name"] for column in declared),
    )


@cache
def _schema() -> dict[str, Any]:
    resource = files("viano_bug_analysis") / "schemas" / SCHEMA_FILE
    schema: dict[str, Any] = json.loads(resource.read_text(encoding="utf-8"))
    return schema
