"""The Vcore profile's schema descriptor adapter (see docs/row-snapshots.md).

wowsrc exports one JSON descriptor per table, shaped like MySQL's
``information_schema.columns``::

    {"table": "quest_template",
     "columns": [{"column_name": "ID", "column_type": "int(10) unsigned",
                  "is_nullable": "NO", "column_key": "PRI"}, ...],
     ...}

``normalize_schema_descriptor`` maps it to a neutral
``viano-database-snapshot`` document with coverage ``schema_only``. This
module is the only place that knows wowsrc's shape; plug it in with
``DatabaseQueryTool(normalize_schema_descriptor)``.

The table name is exactly the descriptor's own ``table`` member. Nothing else
may choose it: not the member's file name, numeric IDs, artifact rankings,
nor wowsrc's ``schema_table_matches`` guess list, which can name other
tables. Every other top-level member is ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from viano_bug_analysis.tools.database_snapshot import FORMAT, FORMAT_VERSION
from viano_bug_analysis.tools.errors import ToolError

_NULLABLE = {"YES": True, "NO": False}


def normalize_schema_descriptor(descriptor: Mapping[str, Any]) -> dict[str, Any]:
    """A wowsrc-native schema descriptor as a neutral ``schema_only`` document.

    ``is_nullable`` (``"YES"``/``"NO"``) becomes ``nullable``; a non-empty
    ``column_key`` becomes ``key`` (MySQL reports ``""`` for "no key", which
    is left out). Raises ``ToolError("descriptor_invalid")`` with the JSON
    Pointer of the offending member when the shape is wrong.
    """
    if not isinstance(descriptor, Mapping):
        _invalid("", "the descriptor is not a JSON object")
    table = descriptor.get("table")
    if not isinstance(table, str) or not table:
        _invalid("/table", "table must be a non-empty string")
    columns = descriptor.get("columns")
    if not isinstance(columns, list) or not columns:
        _invalid("/columns", "columns must be a non-empty array")
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "table": table,
        "columns": [_column(index, column) for index, column in enumerate(columns)],
        "coverage": "schema_only",
    }


def _column(index: int, column: object) -> dict[str, Any]:
    where = f"/columns/{index}"
    if not isinstance(column, Mapping):
        _invalid(where, "a column must be a JSON object")
    name = column.get("column_name")
    if not isinstance(name, str) or not name:
        _invalid(f"{where}/column_name", "column_name must be a non-empty string")
    column_type = column.get("column_type")
    if not isinstance(column_type, str) or not column_type:
        _invalid(f"{where}/column_type", "column_type must be a non-empty string")
    neutral: dict[str, Any] = {"name": name, "type": column_type}
    if "is_nullable" in column:
        nullable = column["is_nullable"]
        if not isinstance(nullable, str) or nullable not in _NULLABLE:
            _invalid(f"{where}/is_nullable", 'is_nullable must be "YES" or "NO"')
        neutral["nullable"] = _NULLABLE[nullable]
    if "column_key" in column:
        key = column["column_key"]
        if not isinstance(key, str):
            _invalid(f"{where}/column_key", "column_key must be a string")
        if key:
            neutral["key"] = key
    return neutral


def _invalid(pointer: str, what: str) -> NoReturn:
    raise ToolError(
        "descriptor_invalid",
        f"the schema descriptor is invalid: {what}",
        {"pointer": pointer, "what": what},
    )
