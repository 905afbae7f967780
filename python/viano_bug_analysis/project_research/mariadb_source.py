"""Read-only queries against allowlisted tables of a MariaDB/MySQL database.

``MariaDbSource`` answers ``database.tables``, ``database.schema``,
``database.rows`` and ``database.count`` (see SPEC §6). It builds every
statement itself from validated parts: no free SQL, no joins, no writes.

Safety, in the order a request meets it:

1. Identifiers (database, table, column) must match
   ``[A-Za-z_][A-Za-z0-9_$]{0,63}``; they are then quoted with backticks
   (which can no longer occur in them). The system schemas
   ``information_schema``, ``mysql``, ``performance_schema`` and ``sys`` are
   refused, in requests and in the configuration.
2. Tables must be in the operator's allowlist; columns must exist in
   ``information_schema`` (cached per table for the life of the source).
3. Filter values travel only as PyMySQL parameters, never inside SQL text.
4. Every query runs on a reader connection whose session is read-only with
   a server-side statement time limit (MariaDB ``max_statement_time``,
   MySQL ``max_execution_time``), inside ``START TRANSACTION READ ONLY`` and
   ends with ``ROLLBACK``. The account itself should hold ``SELECT`` only
   and the server should run with ``read_only=ON`` (scripts/dev_world_db.py).

Filters (``{"column", "operator", "value"}``, AND-combined):

* ``eq``/``ne``/``lt``/``le``/``gt``/``ge`` compare with the server's rules,
  so strings compare under the column's collation (usually case- and
  accent-insensitive, trailing spaces ignored) and a string compared with a
  number column is converted by the server.
* ``ne`` is the exact complement of ``eq``: ``NOT (column <=> value)``, so
  rows whose column is NULL *do* match ``ne 5`` (plain SQL ``<>`` would drop
  them). ``count(eq v) + count(ne v)`` is always the table's row count.
* ``value: null`` is allowed with ``eq`` (``IS NULL``) and ``ne``
  (``IS NOT NULL``) only.
* ``contains`` is ``column LIKE CONCAT('%', value, '%') ESCAPE '\\'`` with
  ``\\``, ``%`` and ``_`` in the value escaped first, so they match
  literally; it follows the column's collation like ``eq`` and never
  matches NULL.
* ``in`` takes 1 to 100 scalars (no null; use ``eq null``).
* Values are strings, integers or finite floats; booleans are refused
  (write 0 or 1), ``contains`` needs a string.

JSON form of values in ``rows``:

==========================  ==========================================================
DECIMAL / NUMERIC           exact string, as the server prints it: ``"1.2500"``
integer types, YEAR         int (BIGINT UNSIGNED included)
FLOAT / DOUBLE              float (FLOAT as the server rounds it: ``0.1``)
BIT(n)                      int (the bits as an unsigned big-endian number)
DATE                        ``"YYYY-MM-DD"``
DATETIME / TIMESTAMP        ``"YYYY-MM-DDTHH:MM:SS[.ffffff]"``, no time zone; the
                            fraction has the column's precision; TIMESTAMP in UTC
TIME                        ``"[-]HH:MM:SS[.ffffff]"``; hours may exceed 24 (to 838)
zero dates                  passed through in the same shape: ``"0000-00-00"``,
                            ``"0000-00-00T00:00:00"`` (not valid ISO dates)
BINARY/VARBINARY/BLOB/      ``{"base64": "..."}``
geometry
CHAR/VARCHAR/TEXT/ENUM/     str (utf8mb4)
SET/JSON
NULL                        null
==========================  ==========================================================

Errors are :class:`ResearchError` with a stable code (``identifier_invalid``,
``table_not_allowed``, ``database_ambiguous``, ``unknown_column``,
``operator_unknown``, ``invalid_filter_value``, ``request_invalid``,
``limit_exceeded``, ``table_not_found``, ``permission_denied``,
``query_timeout``, ``database_error``, ``config_invalid``) or
:class:`ResearchUnavailable` (``research_unavailable``; reasons
``connection_refused``, ``timeout``, ``auth_failed``, ``server_gone``,
``host_not_found``, ``too_many_connections``, ``connection_failed``).
Messages and details never hold hosts, user names, passwords or values.
"""

from __future__ import annotations

import base64
import contextlib
import math
import re
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pymysql
import pymysql.converters
from pymysql.constants import FIELD_TYPE, SERVER_STATUS

from viano_bug_analysis.project_research.errors import ResearchError, ResearchUnavailable

OPERATORS = ("eq", "ne", "lt", "le", "gt", "ge", "contains", "in")
SYSTEM_SCHEMAS = frozenset({"information_schema", "mysql", "performance_schema", "sys"})
MAX_IN_VALUES = 100
MAX_FILTERS = 32
MAX_POOLED_CONNECTIONS = 4
READ_TIMEOUT_SLACK_S = 5.0

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$]{0,63}")
_COMPARISONS = {"eq": "=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_BINARY_TYPES = frozenset(
    {
        "binary",
        "varbinary",
        "tinyblob",
        "blob",
        "mediumblob",
        "longblob",
        "geometry",
        "point",
        "linestring",
        "polygon",
        "multipoint",
        "multilinestring",
        "multipolygon",
        "geometrycollection",
    }
)
_TEXT_TYPES = frozenset(
    {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set"}
)
# Lost connection (client side), killed (MariaDB 1927), idle disconnect (MySQL 4031).
_STALE_CONNECTION_ERRNOS = frozenset({0, 1927, 2006, 2013, 2055, 4031})
# The LIKE escape character, one backslash, as SQL text: `'\\'` normally,
# `'\'` when the server runs with NO_BACKSLASH_ESCAPES (see _for_connection).
_LIKE_ESCAPE = "ESCAPE '\\\\'"
_LIKE_ESCAPE_NO_BACKSLASH = "ESCAPE '\\'"


def _iso_datetime(value: str) -> str:
    return value.replace(" ", "T", 1)


def _bit_to_int(value: bytes) -> int:
    return int.from_bytes(value, "big")


def _conversions() -> dict[int | type[Any], Callable[..., Any]]:
    """PyMySQL's conversions, except that exact and temporal values stay the
    server's text (cheaper than Decimal/datetime objects and exact by
    construction) and BIT becomes an int."""
    conv: dict[int | type[Any], Callable[..., Any]] = dict(pymysql.converters.conversions)
    through = pymysql.converters.through
    for field_type in (FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL, FIELD_TYPE.DATE):
        conv[field_type] = through
    conv[FIELD_TYPE.TIME] = through
    conv[FIELD_TYPE.DATETIME] = _iso_datetime
    conv[FIELD_TYPE.TIMESTAMP] = _iso_datetime
    conv[FIELD_TYPE.BIT] = _bit_to_int
    return conv


_CONVERSIONS = _conversions()


@dataclass(frozen=True, slots=True)
class _Column:
    name: str
    ordinal: int
    column_type: str
    data_type: str
    nullable: bool
    key: str
    default: str | None
    extra: str


@dataclass(frozen=True, slots=True)
class _Table:
    database: str
    table: str
    columns: tuple[_Column, ...]
    by_name: Mapping[str, _Column]
    primary_key: tuple[str, ...]
    indexes: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class _Filter:
    column: str
    operator: str
    value: Any


def _config_error(key: str, what: str) -> ResearchError:
    return ResearchError(
        "config_invalid", f"invalid configuration: {key} ({what})", {"key": key, "what": what}
    )


def _request_error(argument: str, what: str, **details: Any) -> ResearchError:
    return ResearchError(
        "request_invalid",
        f"invalid request: {argument} ({what})",
        {"argument": argument, "what": what, **details},
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_identifier(value: object) -> bool:
    return isinstance(value, str) and _IDENTIFIER.fullmatch(value) is not None


def _identifier(value: object, argument: str, index: int | None = None) -> str:
    if not isinstance(value, str) or _IDENTIFIER.fullmatch(value) is None:
        details: dict[str, Any] = {"argument": argument}
        if index is not None:
            details["index"] = index
        raise ResearchError(
            "identifier_invalid",
            f"{argument} is not a plain identifier ([A-Za-z_][A-Za-z0-9_$]{{0,63}})",
            details,
        )
    return value


def _quote(identifier: str) -> str:
    # Only ever called on validated identifiers, which cannot contain a backtick.
    return f"`{identifier}`"


def _escape_like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _page(offset: object, limit: object, max_page: int) -> tuple[int, int]:
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise _request_error("offset", "not_a_non_negative_integer")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise _request_error("limit", "not_a_positive_integer")
    if limit > max_page:
        raise ResearchError(
            "limit_exceeded",
            f"limit is larger than the page size limit {max_page}",
            {"argument": "limit", "limit": max_page},
        )
    return offset, limit


class MariaDbSource:
    """The database provider of ProjectResearch; thread-safe, pools reader connections.

    Limits: a page holds at most ``max_page`` rows (``limit_exceeded``), and
    ``offset + limit`` may not pass ``max_rows``: deep OFFSET scans cost the
    server as much as reading every skipped row, so callers narrow the
    filters instead. At most 32 filters, at most 100 values per ``in``.
    ``statement_timeout_s`` is the server-side limit of every statement (set
    once per connection as a session variable; ``query_timeout`` when hit);
    the client read timeout is that plus 5 s, for a server that stops
    answering at all.
    """

    def __init__(
        self,
        *,
        host: str,
        port: int,
        user: str,
        password: str,
        allow: Mapping[str, Sequence[str]],
        snapshot_id: str,
        max_rows: int = 1000,
        max_page: int = 100,
        statement_timeout_s: float = 5.0,
        connect_timeout_s: float = 5.0,
    ) -> None:
        if not isinstance(host, str) or not host:
            raise _config_error("database.host", "missing")
        if not _is_int(port) or not 0 < port < 65536:
            raise _config_error("database.port", "not_a_port")
        if not isinstance(user, str) or not user:
            raise _config_error("database.user", "missing")
        if not isinstance(password, str):
            raise _config_error("database.password", "not_a_string")
        if not isinstance(snapshot_id, str) or not snapshot_id.strip():
            raise _config_error("database.snapshot_id", "missing")
        if not _is_int(max_page) or max_page < 1:
            raise _config_error("limits.max_page", "not_a_positive_integer")
        if not _is_int(max_rows) or max_rows < max_page:
            raise _config_error("limits.max_rows", "smaller_than_max_page")
        for key, seconds in (
            ("limits.statement_timeout_s", statement_timeout_s),
            ("limits.connect_timeout_s", connect_timeout_s),
        ):
            if not isinstance(seconds, int | float) or not math.isfinite(seconds) or seconds <= 0:
                raise _config_error(key, "not_a_positive_number")
        self._allow = self._validate_allow(allow)
        self._host = host
        self._port = port
        self._user = user
        self._password = password
        self.snapshot_id = snapshot_id
        self.max_rows = max_rows
        self.max_page = max_page
        self.statement_timeout_s = float(statement_timeout_s)
        self.connect_timeout_s = float(connect_timeout_s)
        self._pool: list[pymysql.connections.Connection[Any]] = []
        self._lock = threading.Lock()
        self._tables: dict[tuple[str, str], _Table] = {}

    @staticmethod
    def _validate_allow(allow: Mapping[str, Sequence[str]]) -> dict[str, frozenset[str]]:
        if not isinstance(allow, Mapping) or not allow:
            raise _config_error("database.allow", "empty")
        validated: dict[str, frozenset[str]] = {}
        for database, tables in allow.items():
            if not _is_identifier(database):
                raise _config_error("database.allow", "database_not_an_identifier")
            key = f"database.allow.{database}"
            if database.lower() in SYSTEM_SCHEMAS:
                raise _config_error(key, "system_schema")
            if isinstance(tables, str | bytes) or not isinstance(tables, Sequence) or not tables:
                raise _config_error(key, "not_a_list_of_tables")
            if not all(_is_identifier(table) for table in tables):
                raise _config_error(key, "table_not_an_identifier")
            validated[database] = frozenset(tables)
        return validated

    def __repr__(self) -> str:
        return f"MariaDbSource(snapshot_id={self.snapshot_id!r}, databases={sorted(self._allow)!r})"

    # --- public operations ---------------------------------------------------------------

    def origin(self, database: str) -> dict[str, Any]:
        """Where an answer came from: never the host, user or password."""
        database = _identifier(database, "database")
        if database not in self._allow:
            raise self._not_allowed(database, None)
        return {"kind": "database", "database": database, "snapshot_id": self.snapshot_id}

    def tables(
        self, *, name_contains: str | None, database: str | None, offset: int, limit: int
    ) -> dict[str, Any]:
        """Allowlisted tables that exist on the server, by (database, table)."""
        offset, limit = _page(offset, limit, self.max_page)
        if name_contains is not None and not isinstance(name_contains, str):
            raise _request_error("name_contains", "not_a_string")
        if database is not None:
            database = _identifier(database, "database")
            if database not in self._allow:
                raise self._not_allowed(database, None)
        databases = [database] if database is not None else sorted(self._allow)
        needle = name_contains.casefold() if name_contains else None
        wanted = [
            (db, table)
            for db in databases
            for table in sorted(self._allow[db])
            if needle is None or needle in table.casefold()
        ]
        placeholders = ", ".join(["%s"] * len(databases))
        [(_, rows)] = self._run(
            [
                (
                    "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"
                    f" WHERE TABLE_SCHEMA IN ({placeholders})",
                    tuple(databases),
                )
            ]
        )
        existing = {(str(row[0]), str(row[1])) for row in rows}
        present = [pair for pair in wanted if pair in existing]
        page = present[offset : offset + limit]
        truncated = offset + len(page) < len(present)
        return {
            "database": database,
            "name_contains": name_contains,
            "offset": offset,
            "limit": limit,
            "tables": [{"database": db, "table": table} for db, table in page],
            "returned": len(page),
            "total": len(present),
            "truncated": truncated,
            "next_offset": offset + len(page) if truncated else None,
            "missing": [
                {"database": db, "table": t} for db, t in wanted if (db, t) not in existing
            ],
        }

    def schema(self, *, database: str | None, table: str) -> dict[str, Any]:
        """The real columns, types, nullability and keys of one allowlisted table.

        ``type`` is COLUMN_TYPE, ``key`` COLUMN_KEY and ``default``
        COLUMN_DEFAULT of information_schema as the server reports them
        (MariaDB: ``default`` is a SQL literal such as ``"0"``, ``"'abc'"`` or
        ``"NULL"``, and null when the column has no default; a table without
        primary key may show ``key: "PRI"`` on a unique NOT NULL key).
        ``primary_key`` lists the real PRIMARY KEY only, which is also the
        order of ``rows``.
        """
        info = self._table(database, table)
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

    def rows(
        self,
        *,
        database: str | None,
        table: str,
        columns: Sequence[str],
        filters: Sequence[Mapping[str, Any]],
        offset: int,
        limit: int,
    ) -> dict[str, Any]:
        """One page of chosen columns for AND-combined filters, in a deterministic order."""
        offset, limit = _page(offset, limit, self.max_page)
        if offset + limit > self.max_rows:
            raise ResearchError(
                "limit_exceeded",
                f"offset + limit goes past the row window of {self.max_rows};"
                " narrow the filters instead of paging deeper",
                {"argument": "offset", "limit": self.max_rows},
            )
        wanted = self._column_names(columns)
        parsed = self._parse_filters(filters)
        info = self._table(database, table)
        self._check_columns(info, wanted, parsed)
        where, params = self._where(parsed)
        if info.primary_key:
            order_sql = ", ".join(_quote(name) for name in info.primary_key)
            order: list[str] | str = list(info.primary_key)
        else:
            order_sql = self._order_all(info, wanted)
            order = "all_columns"
        sql = (
            f"SELECT {', '.join(_quote(name) for name in wanted)}"
            f" FROM {_quote(info.database)}.{_quote(info.table)}{where}"
            f" ORDER BY {order_sql} LIMIT %s OFFSET %s"
        )
        [(_, fetched)] = self._run([(sql, (*params, limit + 1, offset))])
        truncated = len(fetched) > limit
        page: Sequence[tuple[Any, ...]] = fetched[:limit]
        binary = [
            i for i, name in enumerate(wanted) if info.by_name[name].data_type in _BINARY_TYPES
        ]
        if binary:
            page = [self._wrap_binary(row, binary) for row in page]
        return {
            "database": info.database,
            "table": info.table,
            "columns": list(wanted),
            "filters": [self._echo(item) for item in parsed],
            "offset": offset,
            "limit": limit,
            "rows": [dict(zip(wanted, row, strict=True)) for row in page],
            "returned": len(page),
            "truncated": truncated,
            "next_offset": offset + len(page) if truncated else None,
            "order": order,
            # Every row matching exactly this predicate: only a first page with no next one.
            "complete_filtered_rows": offset == 0 and not truncated,
        }

    def count(
        self, *, database: str | None, table: str, filters: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """The full number of rows matching the same filters ``rows`` accepts."""
        parsed = self._parse_filters(filters)
        info = self._table(database, table)
        self._check_columns(info, (), parsed)
        where, params = self._where(parsed)
        sql = f"SELECT COUNT(*) FROM {_quote(info.database)}.{_quote(info.table)}{where}"
        [(_, fetched)] = self._run([(sql, params)])
        return {
            "database": info.database,
            "table": info.table,
            "filters": [self._echo(item) for item in parsed],
            "count": int(fetched[0][0]),
        }

    def close(self) -> None:
        """Closes the idle pooled connections; later calls connect again."""
        with self._lock:
            pool, self._pool = self._pool, []
        for connection in pool:
            with contextlib.suppress(Exception):
                connection.close()

    def __enter__(self) -> MariaDbSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- connections ---------------------------------------------------------------------

    def connect(self) -> pymysql.connections.Connection[Any]:
        """A new reader connection, configured as every query needs it: utf8mb4,
        no autocommit, a read-only session with the statement time limit and
        UTC for TIMESTAMP values. Also what the tests use to prove what the
        reader account can and cannot do."""
        try:
            connection: pymysql.connections.Connection[Any] = pymysql.connect(
                host=self._host,
                port=self._port,
                user=self._user,
                password=self._password,
                charset="utf8mb4",
                use_unicode=True,
                autocommit=False,
                conv=_CONVERSIONS,
                connect_timeout=self.connect_timeout_s,
                read_timeout=self.statement_timeout_s + READ_TIMEOUT_SLACK_S,
                write_timeout=self.statement_timeout_s + READ_TIMEOUT_SLACK_S,
                local_infile=False,
            )
        except pymysql.Error as exc:
            raise self._unavailable(exc, connecting=True) from None
        try:
            with connection.cursor() as cursor:
                # (server_version and server_status are untyped in the PyMySQL stubs)
                if "mariadb" in str(getattr(connection, "server_version", "")).lower():
                    cursor.execute(
                        "SET SESSION max_statement_time = %s, time_zone = '+00:00'",
                        (self.statement_timeout_s,),
                    )
                else:  # MySQL: milliseconds, SELECT only (all we run)
                    cursor.execute(
                        "SET SESSION max_execution_time = %s, time_zone = '+00:00'",
                        (max(1, round(self.statement_timeout_s * 1000)),),
                    )
                cursor.execute("SET SESSION TRANSACTION READ ONLY")
        except pymysql.Error as exc:
            with contextlib.suppress(Exception):
                connection.close()
            raise self._map_error(exc) from None
        return connection

    def _acquire(self) -> tuple[pymysql.connections.Connection[Any], bool]:
        with self._lock:
            if self._pool:
                return self._pool.pop(), True
        return self.connect(), False

    def _release(self, connection: pymysql.connections.Connection[Any]) -> None:
        with self._lock:
            if len(self._pool) < MAX_POOLED_CONNECTIONS:
                self._pool.append(connection)
                return
        connection.close()

    def _run(
        self, statements: Sequence[tuple[str, Sequence[Any]]]
    ) -> list[tuple[tuple[Any, ...] | None, tuple[tuple[Any, ...], ...]]]:
        """Runs the statements in one read-only transaction, then rolls back.

        A pooled connection that turns out to be dead at ``START TRANSACTION``
        (server restarted, idle timeout) is replaced once; any other failure is
        mapped to a ResearchError and the connection is dropped.
        """
        for attempt in range(2):
            connection, reused = self._acquire()
            started = False
            try:
                results = []
                with connection.cursor() as cursor:
                    cursor.execute("START TRANSACTION READ ONLY")
                    started = True
                    for sql, params in statements:
                        cursor.execute(self._for_connection(connection, sql), tuple(params))
                        results.append((cursor.description, tuple(cursor.fetchall())))
                connection.rollback()
            except pymysql.Error as exc:
                with contextlib.suppress(Exception):
                    connection.close()
                stale = reused and not started and self._errno(exc) in _STALE_CONNECTION_ERRNOS
                if stale and attempt == 0:
                    continue
                raise self._map_error(exc) from None
            except BaseException:
                connection.close()
                raise
            self._release(connection)
            return results
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _for_connection(connection: pymysql.connections.Connection[Any], sql: str) -> str:
        """The SQL text for this connection's quoting rules. Only the fixed
        ESCAPE literal can differ: identifiers hold no quotes and values are
        not in the text (PyMySQL escapes them by the same server flag)."""
        status = int(getattr(connection, "server_status", 0) or 0)
        if status & SERVER_STATUS.SERVER_STATUS_NO_BACKSLASH_ESCAPES:
            return sql.replace(_LIKE_ESCAPE, _LIKE_ESCAPE_NO_BACKSLASH)
        return sql

    # --- validation ----------------------------------------------------------------------

    def _not_allowed(self, database: str | None, table: str | None) -> ResearchError:
        details: dict[str, Any] = {}
        if database is not None:
            details["database"] = database
        if table is not None:
            details["table"] = table
        return ResearchError(
            "table_not_allowed", "the table is not in the operator's allowlist", details
        )

    def _resolve(self, database: str | None, table: str) -> tuple[str, str]:
        table = _identifier(table, "table")
        if database is not None:
            database = _identifier(database, "database")
            if database.lower() in SYSTEM_SCHEMAS or table not in self._allow.get(database, ()):
                raise self._not_allowed(database, table)
            return database, table
        candidates = sorted(db for db, tables in self._allow.items() if table in tables)
        if not candidates:
            raise self._not_allowed(None, table)
        if len(candidates) > 1:
            raise ResearchError(
                "database_ambiguous",
                "the table is allowed in several databases; name the database",
                {"table": table, "databases": candidates},
            )
        return candidates[0], table

    def _column_names(self, columns: Sequence[str]) -> tuple[str, ...]:
        if isinstance(columns, str | bytes) or not isinstance(columns, Sequence):
            raise _request_error("columns", "not_a_list")
        if not columns:
            raise _request_error("columns", "empty")
        names = tuple(_identifier(name, "columns", i) for i, name in enumerate(columns))
        if len(set(names)) != len(names):
            raise _request_error("columns", "duplicate_column")
        return names

    def _parse_filters(self, filters: Sequence[Mapping[str, Any]]) -> list[_Filter]:
        if isinstance(filters, str | bytes) or not isinstance(filters, Sequence):
            raise _request_error("filters", "not_a_list")
        if len(filters) > MAX_FILTERS:
            raise ResearchError(
                "limit_exceeded",
                f"more than {MAX_FILTERS} filters",
                {"argument": "filters", "limit": MAX_FILTERS},
            )
        return [self._parse_filter(item, index) for index, item in enumerate(filters)]

    @staticmethod
    def _parse_filter(item: Mapping[str, Any], index: int) -> _Filter:
        if not isinstance(item, Mapping) or set(item) != {"column", "operator", "value"}:
            raise _request_error("filters", "needs_exactly_column_operator_value", index=index)
        column = _identifier(item["column"], "filters", index)
        operator = item["operator"]
        if operator not in OPERATORS:
            raise ResearchError(
                "operator_unknown",
                f"unknown filter operator; use one of {', '.join(OPERATORS)}",
                {"index": index, "allowed": list(OPERATORS)},
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
                    {"argument": "filters", "index": index, "limit": MAX_IN_VALUES},
                )
            for candidate in value:
                if candidate is None:
                    raise bad("null_in_list_use_eq_null")
                check_scalar(candidate)
            return _Filter(column, operator, list(value))
        if value is None:
            if operator not in ("eq", "ne"):
                raise bad("null_only_with_eq_or_ne")
            return _Filter(column, operator, None)
        check_scalar(value)
        if operator == "contains" and not isinstance(value, str):
            raise bad("contains_needs_a_string")
        return _Filter(column, operator, value)

    @staticmethod
    def _check_columns(info: _Table, columns: Sequence[str], filters: Sequence[_Filter]) -> None:
        references = [("columns", i, name) for i, name in enumerate(columns)]
        references += [("filters", i, item.column) for i, item in enumerate(filters)]
        for argument, index, name in references:
            if name in info.by_name:
                continue
            details: dict[str, Any] = {
                "argument": argument,
                "index": index,
                "column": name,
                "table": info.table,
            }
            folded = [c.name for c in info.columns if c.name.lower() == name.lower()]
            if folded:
                details["did_you_mean"] = folded[0]
            raise ResearchError("unknown_column", "the table has no such column", details)

    @staticmethod
    def _echo(item: _Filter) -> dict[str, Any]:
        return {"column": item.column, "operator": item.operator, "value": item.value}

    # --- SQL -----------------------------------------------------------------------------

    @staticmethod
    def _where(filters: Sequence[_Filter]) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        for item in filters:
            column = _quote(item.column)
            if item.value is None:
                clauses.append(
                    f"{column} IS NULL" if item.operator == "eq" else f"{column} IS NOT NULL"
                )
            elif item.operator == "ne":
                clauses.append(f"NOT ({column} <=> %s)")
                params.append(item.value)
            elif item.operator == "contains":
                # The ESCAPE literal is rewritten per connection if the server
                # runs with NO_BACKSLASH_ESCAPES (see _for_connection).
                clauses.append(f"{column} LIKE CONCAT('%%', %s, '%%') {_LIKE_ESCAPE}")
                params.append(_escape_like(item.value))
            elif item.operator == "in":
                clauses.append(f"{column} IN ({', '.join(['%s'] * len(item.value))})")
                params.extend(item.value)
            else:
                clauses.append(f"{column} {_COMPARISONS[item.operator]} %s")
                params.append(item.value)
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), params

    @staticmethod
    def _order_all(info: _Table, columns: Sequence[str]) -> str:
        """Order for a table without a primary key: every selected column, text
        columns also by their bytes, so rows equal under a case-insensitive
        collation still come in one fixed order."""
        parts: list[str] = []
        for name in columns:
            parts.append(_quote(name))
            if info.by_name[name].data_type in _TEXT_TYPES:
                parts.append(f"CAST({_quote(name)} AS BINARY)")
        return ", ".join(parts)

    @staticmethod
    def _wrap_binary(row: tuple[Any, ...], positions: Sequence[int]) -> tuple[Any, ...]:
        cells = list(row)
        for position in positions:
            cell = cells[position]
            if isinstance(cell, bytes | bytearray):
                cells[position] = {"base64": base64.b64encode(cell).decode("ascii")}
        return tuple(cells)

    # --- metadata ------------------------------------------------------------------------

    def _table(self, database: str | None, table: str) -> _Table:
        key = self._resolve(database, table)
        with self._lock:
            cached = self._tables.get(key)
        if cached is not None:
            return cached
        info = self._load_table(*key)
        with self._lock:
            self._tables[key] = info
        return info

    def _load_table(self, database: str, table: str) -> _Table:
        (_, column_rows), (_, index_rows) = self._run(
            [
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
        )
        if not column_rows:
            raise ResearchError(
                "table_not_found",
                "the allowlisted table does not exist or the reader cannot see it",
                {"database": database, "table": table},
            )
        columns = tuple(
            _Column(
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
        return _Table(
            database=database,
            table=table,
            columns=columns,
            by_name={column.name: column for column in columns},
            primary_key=tuple(primary["columns"]) if primary else (),
            indexes=tuple(indexes.values()),
        )

    # --- errors --------------------------------------------------------------------------

    @staticmethod
    def _errno(exc: BaseException) -> int | None:
        if isinstance(exc, pymysql.err.InterfaceError):
            return 0
        code = exc.args[0] if exc.args else None
        return code if _is_int(code) else None

    def _unavailable(self, exc: pymysql.Error, *, connecting: bool) -> ResearchUnavailable:
        errno = self._errno(exc)
        reason = "connection_failed" if connecting else "server_gone"
        if errno in (1045, 1698):
            reason = "auth_failed"
        elif errno in (1040, 1203, 1226):
            reason = "too_many_connections"
        elif errno == 2003:
            original = getattr(exc, "original_exception", None)
            if isinstance(original, ConnectionRefusedError):
                reason = "connection_refused"
            elif isinstance(original, TimeoutError):
                reason = "timeout"
            elif isinstance(original, socket.gaierror):
                reason = "host_not_found"
        elif errno in _STALE_CONNECTION_ERRNOS:
            reason = "timeout" if self._caused_by_timeout(exc) else "server_gone"
        return ResearchUnavailable("database", reason, details={"errno": errno})

    @staticmethod
    def _caused_by_timeout(exc: BaseException) -> bool:
        seen: BaseException | None = exc
        for _ in range(5):
            if seen is None:
                return False
            if isinstance(seen, TimeoutError):
                return True
            seen = seen.__cause__ or seen.__context__
        return False

    def _map_error(self, exc: pymysql.Error) -> ResearchError:
        errno = self._errno(exc)
        if errno in (1969, 3024):
            return ResearchError(
                "query_timeout",
                "the query exceeded the server-side statement time limit",
                {"limit_s": self.statement_timeout_s},
            )
        if errno in (1044, 1142, 1143, 1227):
            return ResearchError(
                "permission_denied",
                "the reader account may not read this; check the grants",
                {"provider": "database", "errno": errno},
            )
        if errno in (1049, 1146):
            return ResearchError(
                "table_not_found", "the database or table does not exist", {"errno": errno}
            )
        if isinstance(exc, pymysql.err.OperationalError | pymysql.err.InterfaceError) and (
            errno is None or errno >= 2000 or errno in (0, 1040, 1045, 1203, 1226, 1698, 1927, 4031)
        ):
            return self._unavailable(exc, connecting=False)
        return ResearchError(
            "database_error",
            "the database refused the query",
            {"provider": "database", "errno": errno},
        )
