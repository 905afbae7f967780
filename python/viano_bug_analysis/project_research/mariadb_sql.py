"""The statements of the MariaDB source, built from validated parts.

Pure functions: a request (identifiers, filters, page) is checked here and
turned into SQL text plus PyMySQL parameters, without a server. The text
holds only backtick-quoted identifiers that matched
``vocabulary.IDENTIFIER`` (so they cannot contain a backtick) and fixed
keywords; every value, LIMIT and OFFSET is a ``%s`` parameter. The filter
semantics are documented in :mod:`.mariadb_source`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.errors import ResearchError
from viano_bug_analysis.project_research.mariadb_catalog import TEXT_TYPES, Table
from viano_bug_analysis.vocabulary import (
    EQUALITY_OPERATORS,
    FILTER_OPERATORS,
    IDENTIFIER,
    IDENTIFIER_PATTERN,
)

MAX_IN_VALUES = 100
MAX_FILTERS = 32

_COMPARISONS = {"eq": "=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
# The LIKE escape character, one backslash, as SQL text: `'\\'` normally,
# `'\'` when the server runs with NO_BACKSLASH_ESCAPES (see for_connection).
_LIKE_ESCAPE = "ESCAPE '\\\\'"
_LIKE_ESCAPE_NO_BACKSLASH = "ESCAPE '\\'"


@dataclass(frozen=True, slots=True)
class Filter:
    column: str
    operator: str
    value: Any

    def echo(self) -> dict[str, Any]:
        """The filter as the answer repeats it."""
        return {"column": self.column, "operator": self.operator, "value": self.value}


@dataclass(frozen=True, slots=True)
class RowsStatement:
    """A ``database.rows`` page: one row more than ``limit`` is fetched, so that
    ``truncated`` needs no second query; ``order`` is what the answer reports."""

    sql: str
    params: tuple[Any, ...]
    order: list[str] | str


def request_error(argument: str, what: str, **details: Any) -> ResearchError:
    return ResearchError(
        "request_invalid",
        f"invalid request: {argument} ({what})",
        {"argument": argument, "what": what, **details},
    )


def identifier(value: object, argument: str, index: int | None = None) -> str:
    if not isinstance(value, str) or IDENTIFIER.fullmatch(value) is None:
        details: dict[str, Any] = {"argument": argument}
        if index is not None:
            details["index"] = index
        raise ResearchError(
            "identifier_invalid",
            f"{argument} is not a plain identifier ({IDENTIFIER_PATTERN})",
            details,
        )
    return value


def quote(name: str) -> str:
    # Only ever called on validated identifiers, which cannot contain a backtick.
    return f"`{name}`"


def _escape_like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def page(offset: object, limit: object, max_page: int) -> tuple[int, int]:
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise request_error("offset", "not_a_non_negative_integer")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise request_error("limit", "not_a_positive_integer")
    if limit > max_page:
        raise ResearchError(
            "limit_exceeded",
            f"limit is larger than the page size limit {max_page}",
            {"argument": "limit", "limit": max_page, "maximum": max_page},
        )
    return offset, limit


def row_window(offset: object, limit: object, max_page: int, max_rows: int) -> tuple[int, int]:
    """A page of ``rows``: ``offset + limit`` may not pass ``max_rows``, because a
    deep OFFSET costs the server as much as reading every skipped row."""
    offset, limit = page(offset, limit, max_page)
    if offset + limit > max_rows:
        raise ResearchError(
            "limit_exceeded",
            f"offset + limit goes past the row window of {max_rows};"
            " narrow the filters instead of paging deeper",
            {"argument": "offset", "limit": max_rows, "maximum": max_rows},
        )
    return offset, limit


def column_names(columns: Sequence[str]) -> tuple[str, ...]:
    if isinstance(columns, str | bytes) or not isinstance(columns, Sequence):
        raise request_error("columns", "not_a_list")
    if not columns:
        raise request_error("columns", "empty")
    names = tuple(identifier(name, "columns", i) for i, name in enumerate(columns))
    if len(set(names)) != len(names):
        raise request_error("columns", "duplicate_column")
    return names


def parse_filters(filters: Sequence[Mapping[str, Any]]) -> list[Filter]:
    if isinstance(filters, str | bytes) or not isinstance(filters, Sequence):
        raise request_error("filters", "not_a_list")
    if len(filters) > MAX_FILTERS:
        raise ResearchError(
            "limit_exceeded",
            f"more than {MAX_FILTERS} filters",
            {"argument": "filters", "limit": MAX_FILTERS, "maximum": MAX_FILTERS},
        )
    return [_parse_filter(item, index) for index, item in enumerate(filters)]


def _parse_filter(item: Mapping[str, Any], index: int) -> Filter:
    if not isinstance(item, Mapping) or set(item) != {"column", "operator", "value"}:
        raise request_error("filters", "needs_exactly_column_operator_value", index=index)
    column = identifier(item["column"], "filters", index)
    operator = item["operator"]
    if operator not in FILTER_OPERATORS:
        raise ResearchError(
            "operator_unknown",
            f"unknown filter operator; use one of {', '.join(FILTER_OPERATORS)}",
            {"index": index, "allowed": list(FILTER_OPERATORS)},
        )
    value = item["value"]

    def bad(what: str) -> ResearchError:
        return ResearchError(
            "invalid_filter_value",
            f"filter {index}: {what.replace('_', ' ')}",
            {"index": index, "operator": operator, "what": what},
        )

    def check_scalar(candidate: object) -> None:
        if isinstance(candidate, bool):
            raise bad("boolean_not_supported_use_0_or_1")
        if isinstance(candidate, float) and not math.isfinite(candidate):
            raise bad("float_not_finite")
        if not isinstance(candidate, str | int | float):
            raise bad("not_a_scalar")

    if operator == "in":
        if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value:
            raise bad("in_needs_a_non_empty_list")
        if len(value) > MAX_IN_VALUES:
            raise ResearchError(
                "limit_exceeded",
                f"filter {index}: more than {MAX_IN_VALUES} values for in",
                {
                    "argument": "filters",
                    "index": index,
                    "limit": MAX_IN_VALUES,
                    "maximum": MAX_IN_VALUES,
                },
            )
        for candidate in value:
            if candidate is None:
                raise bad("null_in_list_use_eq_null")
            check_scalar(candidate)
        return Filter(column, operator, list(value))
    if value is None:
        if operator not in EQUALITY_OPERATORS:
            raise bad("null_only_with_eq_or_ne")
        return Filter(column, operator, None)
    check_scalar(value)
    if operator == "contains" and not isinstance(value, str):
        raise bad("contains_needs_a_string")
    return Filter(column, operator, value)


def where(filters: Sequence[Filter]) -> tuple[str, list[Any]]:
    """The WHERE clause (empty without filters) and its parameters, in order."""
    clauses: list[str] = []
    params: list[Any] = []
    for item in filters:
        column = quote(item.column)
        if item.value is None:
            clauses.append(
                f"{column} IS NULL" if item.operator == "eq" else f"{column} IS NOT NULL"
            )
        elif item.operator == "ne":
            # The exact complement of eq: NULL rows match (plain <> would drop them).
            clauses.append(f"NOT ({column} <=> %s)")
            params.append(item.value)
        elif item.operator == "contains":
            # The ESCAPE literal is rewritten per connection if the server
            # runs with NO_BACKSLASH_ESCAPES (see for_connection).
            clauses.append(f"{column} LIKE CONCAT('%%', %s, '%%') {_LIKE_ESCAPE}")
            params.append(_escape_like(item.value))
        elif item.operator == "in":
            clauses.append(f"{column} IN ({', '.join(['%s'] * len(item.value))})")
            params.extend(item.value)
        else:
            clauses.append(f"{column} {_COMPARISONS[item.operator]} %s")
            params.append(item.value)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def order_by(info: Table, columns: Sequence[str]) -> tuple[str, list[str] | str]:
    """The ORDER BY list and how the answer names it: the primary key, or for a
    table without one every selected column, text columns also by their bytes,
    so rows equal under a case-insensitive collation still come in one fixed order."""
    if info.primary_key:
        return ", ".join(quote(name) for name in info.primary_key), list(info.primary_key)
    parts: list[str] = []
    for name in columns:
        parts.append(quote(name))
        if info.by_name[name].data_type in TEXT_TYPES:
            parts.append(f"CAST({quote(name)} AS BINARY)")
    return ", ".join(parts), "all_columns"


def _from(info: Table) -> str:
    return f" FROM {quote(info.database)}.{quote(info.table)}"


def rows_statement(
    info: Table, columns: Sequence[str], filters: Sequence[Filter], *, offset: int, limit: int
) -> RowsStatement:
    clause, params = where(filters)
    order_sql, order = order_by(info, columns)
    sql = (
        f"SELECT {', '.join(quote(name) for name in columns)}{_from(info)}{clause}"
        f" ORDER BY {order_sql} LIMIT %s OFFSET %s"
    )
    return RowsStatement(sql, (*params, limit + 1, offset), order)


def count_statement(info: Table, filters: Sequence[Filter]) -> tuple[str, tuple[Any, ...]]:
    clause, params = where(filters)
    return f"SELECT COUNT(*){_from(info)}{clause}", tuple(params)


def tables_statement(databases: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """Which of the tables of these databases exist (the allowlist is filtered
    against it; the names never enter the text)."""
    placeholders = ", ".join(["%s"] * len(databases))
    return (
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"
        f" WHERE TABLE_SCHEMA IN ({placeholders})",
        tuple(databases),
    )


def for_connection(sql: str, *, no_backslash_escapes: bool) -> str:
    """The SQL text for a connection's quoting rules. Only the fixed ESCAPE
    literal can differ: identifiers hold no quotes and values are not in the
    text (PyMySQL escapes them by the same server flag)."""
    if no_backslash_escapes:
        return sql.replace(_LIKE_ESCAPE, _LIKE_ESCAPE_NO_BACKSLASH)
    return sql
