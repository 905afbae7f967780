"""What the MariaDB source knows about one table: its columns and indexes.

Read from ``information_schema`` with the two statements of
:func:`catalog_statements` and turned into a :class:`Table` by
:func:`table_from_rows`; both are pure (the source runs the statements),
so the shape of a table is testable without a server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.errors import ResearchError
from viano_bug_analysis.schema_errors import allowed_names

# Column types whose collation may call different byte strings equal; an
# order over them alone would not be one fixed order (see mariadb_sql.order_by).
TEXT_TYPES = frozenset(
    {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set"}
)


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    ordinal: int
    column_type: str
    data_type: str
    nullable: bool
    key: str
    default: str | None
    extra: str


@dataclass(frozen=True, slots=True)
class Table:
    database: str
    table: str
    columns: tuple[Column, ...]
    by_name: Mapping[str, Column]
    primary_key: tuple[str, ...]
    indexes: tuple[dict[str, Any], ...]


def catalog_statements(database: str, table: str) -> list[tuple[str, tuple[str, str]]]:
    """The columns, then the index entries of one table (PRIMARY first)."""
    return [
        (
            "SELECT COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, DATA_TYPE,"
            " COLUMN_TYPE, COLUMN_KEY, EXTRA FROM information_schema.COLUMNS"
            " WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
            (database, table),
        ),
        (
            "SELECT INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME"
            " FROM information_schema.STATISTICS"
            " WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s"
            " ORDER BY INDEX_NAME = 'PRIMARY' DESC, INDEX_NAME, SEQ_IN_INDEX",
            (database, table),
        ),
    ]


def table_from_rows(
    database: str,
    table: str,
    column_rows: Sequence[Sequence[Any]],
    index_rows: Sequence[Sequence[Any]],
) -> Table:
    """The table described by the rows of :func:`catalog_statements`.

    No column rows means the reader cannot see the table (or it does not
    exist): ``table_not_found``.
    """
    if not column_rows:
        raise ResearchError(
            "table_not_found",
            "the allowlisted table does not exist or the reader cannot see it",
            {"database": database, "table": table},
        )
    columns = tuple(
        Column(
            name=str(row[0]),
            ordinal=int(row[1]),
            default=None if row[2] is None else str(row[2]),
            nullable=row[3] == "YES",
            data_type=str(row[4]).lower(),
            column_type=str(row[5]),
            key=str(row[6]),
            extra=str(row[7]),
        )
        for row in column_rows
    )
    indexes: dict[str, dict[str, Any]] = {}
    for name, non_unique, _, column in index_rows:
        entry = indexes.setdefault(
            str(name), {"name": str(name), "unique": not int(non_unique), "columns": []}
        )
        entry["columns"].append(str(column))
    primary = indexes.get("PRIMARY")
    return Table(
        database=database,
        table=table,
        columns=columns,
        by_name={column.name: column for column in columns},
        primary_key=tuple(primary["columns"]) if primary else (),
        indexes=tuple(indexes.values()),
    )


def check_columns(info: Table, columns: Sequence[str], filter_columns: Sequence[str]) -> None:
    """Every selected and filtered column exists (``unknown_column`` names the
    first that does not, with the column of another case if there is one)."""
    references = [("columns", i, name) for i, name in enumerate(columns)]
    references += [("filters", i, name) for i, name in enumerate(filter_columns)]
    for argument, index, name in references:
        if name in info.by_name:
            continue
        details: dict[str, Any] = {
            "argument": argument,
            "index": index,
            "column": name,
            "table": info.table,
            **allowed_names([c.name for c in info.columns]),
        }
        folded = [c.name for c in info.columns if c.name.lower() == name.lower()]
        if folded:
            details["did_you_mean"] = folded[0]
        raise ResearchError("unknown_column", "the table has no such column", details)


def schema_document(info: Table) -> dict[str, Any]:
    """The ``database.schema`` answer for one table."""
    return {
        "database": info.database,
        "table": info.table,
        "columns": [
            {
                "name": column.name,
                "type": column.column_type,
                "nullable": column.nullable,
                "key": column.key,
                "default": column.default,
                "extra": column.extra,
                "ordinal": column.ordinal,
            }
            for column in info.columns
        ],
        "primary_key": list(info.primary_key),
        "indexes": [dict(index) for index in info.indexes],
    }
