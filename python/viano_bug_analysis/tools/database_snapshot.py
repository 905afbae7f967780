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
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import jsonschema  # type: ignore[import-untyped, unused-ignore]

from viano_bug_analysis.errors import RowSnapshotError
from viano_bug_analysis.snapshot.rows import RowTable
from viano_bug_analysis.tools.errors import ToolError, wrap_core_error

FORMAT = "viano-database-snapshot"
FORMAT_VERSION = 1
COVERAGES = ("partial", "complete_snapshot", "unknown", "schema_only")
SCHEMA_FILE = "database-snapshot-v1.schema.json"


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
    error = jsonschema.exceptions.best_match(_validator().iter_errors(instance))
    if error is not None:
        raise ToolError(
            "snapshot_invalid",
            "the snapshot header does not match database-snapshot-v1",
            {"pointer": _error_pointer(error), "keyword": str(error.validator)},
        )

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


def _error_pointer(error: Any) -> str:
    """The JSON Pointer of the failing header part.

    Path segments come from the schema (property names) or are array
    indexes, so the pointer never repeats a key or value from the member.
    An additional property is reported at its parent object.
    """
    path = list(error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, Mapping):
        missing = [name for name in error.validator_value if name not in error.instance]
        path.extend(missing[:1])
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


@cache
def _schema() -> dict[str, Any]:
    resource = files("viano_bug_analysis") / "schemas" / SCHEMA_FILE
    schema: dict[str, Any] = json.loads(resource.read_text(encoding="utf-8"))
    return schema


@cache
def _validator() -> Any:
    return jsonschema.Draft202012Validator(_schema())
