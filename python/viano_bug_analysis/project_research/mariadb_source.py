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

The module's jobs are split by one job each: :mod:`.mariadb_sql` checks a
request and builds its statement (pure, tested without a server),
:mod:`.mariadb_catalog` reads a table's columns and keys,
:mod:`.mariadb_values` gives the JSON forms above and :mod:`.mariadb_errno`
maps PyMySQL errors. This module holds the API, the allowlist and the
reader connections.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import pymysql
from pymysql.constants import SERVER_STATUS

from viano_bug_analysis.errors import ResearchError
from viano_bug_analysis.project_research import mariadb_errno, mariadb_sql
from viano_bug_analysis.project_research.mariadb_catalog import (
    Table,
    catalog_statements,
    check_columns,
    schema_document,
    table_from_rows,
)
from viano_bug_analysis.project_research.mariadb_values import CONVERSIONS, json_rows
from viano_bug_analysis.vocabulary import is_identifier

SYSTEM_SCHEMAS = frozenset({"information_schema", "mysql", "performance_schema", "sys"})
MAX_POOLED_CONNECTIONS = 4
READ_TIMEOUT_SLACK_S = 5.0


def _config_error(key: str, what: str) -> ResearchError:
    return ResearchError(
        "config_invalid", f"invalid configuration: {key} ({what})", {"key": key, "what": what}
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
        self._tables: dict[tuple[str, str], Table] = {}

    @staticmethod
    def _validate_allow(allow: Mapping[str, Sequence[str]]) -> dict[str, frozenset[str]]:
        if not isinstance(allow, Mapping) or not allow:
            raise _config_error("database.allow", "empty")
        validated: dict[str, frozenset[str]] = {}
        for database, tables in allow.items():
            if not is_identifier(database):
                raise _config_error("database.allow", "database_not_an_identifier")
            key = f"database.allow.{database}"
            if database.lower() in SYSTEM_SCHEMAS:
                raise _config_error(key, "system_schema")
            if isinstance(tables, str | bytes) or not isinstance(tables, Sequence) or not tables:
                raise _config_error(key, "not_a_list_of_tables")
            if not all(is_identifier(table) for table in tables):
                raise _config_error(key, "table_not_an_identifier")
            validated[database] = frozenset(tables)
        return validated

    def __repr__(self) -> str:
        return f"MariaDbSource(snapshot_id={self.snapshot_id!r}, databases={sorted(self._allow)!r})"

    # --- public operations ---------------------------------------------------------------

    def origin(self, database: str) -> dict[str, Any]:
        """Where an answer came from: never the host, user or password."""
        database = mariadb_sql.identifier(database, "database")
        if database not in self._allow:
            raise self._not_allowed(database, None)
        return {"kind": "database", "database": database, "snapshot_id": self.snapshot_id}

    def tables(
        self, *, name_contains: str | None, database: str | None, offset: int, limit: int
    ) -> dict[str, Any]:
        """Allowlisted tables that exist on the server, by (database, table)."""
        offset, limit = mariadb_sql.page(offset, limit, self.max_page)
        if name_contains is not None and not isinstance(name_contains, str):
            raise mariadb_sql.request_error("name_contains", "not_a_string")
        if database is not None:
            database = mariadb_sql.identifier(database, "database")
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
        [(_, rows)] = self._run([mariadb_sql.tables_statement(databases)])
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

    def databases(self) -> list[str]:
        """The databases the reader account can see, system schemas left out
        (``preflight``: whether the configured ones exist, and what is there instead)."""
        [(_, rows)] = self._run(
            [("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME", ())]
        )
        return [str(row[0]) for row in rows if str(row[0]).lower() not in SYSTEM_SCHEMAS]

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
        return schema_document(self._table(database, table))

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
        offset, limit = mariadb_sql.row_window(offset, limit, self.max_page, self.max_rows)
        wanted = mariadb_sql.column_names(columns)
        parsed = mariadb_sql.parse_filters(filters)
        info = self._table(database, table)
        check_columns(info, wanted, [item.column for item in parsed])
        statement = mariadb_sql.rows_statement(info, wanted, parsed, offset=offset, limit=limit)
        [(_, fetched)] = self._run([(statement.sql, statement.params)])
        truncated = len(fetched) > limit
        page = fetched[:limit]
        return {
            "database": info.database,
            "table": info.table,
            "columns": list(wanted),
            "filters": [item.echo() for item in parsed],
            "offset": offset,
            "limit": limit,
            "rows": json_rows(info, wanted, page),
            "returned": len(page),
            "truncated": truncated,
            "next_offset": offset + len(page) if truncated else None,
            "order": statement.order,
            # Every row matching exactly this predicate: only a first page with no next one.
            "complete_filtered_rows": offset == 0 and not truncated,
        }

    def count(
        self, *, database: str | None, table: str, filters: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """The full number of rows matching the same filters ``rows`` accepts."""
        parsed = mariadb_sql.parse_filters(filters)
        info = self._table(database, table)
        check_columns(info, (), [item.column for item in parsed])
        [(_, fetched)] = self._run([mariadb_sql.count_statement(info, parsed)])
        return {
            "database": info.database,
            "table": info.table,
            "filters": [item.echo() for item in parsed],
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
                conv=CONVERSIONS,
                connect_timeout=self.connect_timeout_s,
                read_timeout=self.statement_timeout_s + READ_TIMEOUT_SLACK_S,
                write_timeout=self.statement_timeout_s + READ_TIMEOUT_SLACK_S,
                local_infile=False,
            )
        except pymysql.Error as exc:
            raise mariadb_errno.unavailable(exc, connecting=True) from None
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
                if reused and not started and attempt == 0 and mariadb_errno.is_stale(exc):
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
        # (server_status is untyped in the PyMySQL stubs)
        status = int(getattr(connection, "server_status", 0) or 0)
        no_backslash = bool(status & SERVER_STATUS.SERVER_STATUS_NO_BACKSLASH_ESCAPES)
        return mariadb_sql.for_connection(sql, no_backslash_escapes=no_backslash)

    def _map_error(self, exc: pymysql.Error) -> ResearchError:
        return mariadb_errno.map_error(exc, statement_timeout_s=self.statement_timeout_s)

    # --- validation ----------------------------------------------------------------------

    def _not_allowed(self, database: str | None, table: str | None) -> ResearchError:
        details: dict[str, Any] = {}
        if database is not None:
            details["database"] = database
        if table is not None:
            details["table"] = table
        # A refused database has no table to name: saying "the table" sends
        # the operator looking at a table list that is not the problem.
        what = "database" if table is None else "table"
        return ResearchError(
            "table_not_allowed", f"the {what} is not in the operator's allowlist", details
        )

    def _resolve(self, database: str | None, table: str) -> tuple[str, str]:
        table = mariadb_sql.identifier(table, "table")
        if database is not None:
            database = mariadb_sql.identifier(database, "database")
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

    # --- metadata ------------------------------------------------------------------------

    def _table(self, database: str | None, table: str) -> Table:
        key = self._resolve(database, table)
        with self._lock:
            cached = self._tables.get(key)
        if cached is not None:
            return cached
        info = self._load_table(*key)
        with self._lock:
            self._tables[key] = info
        return info

    def _load_table(self, database: str, table: str) -> Table:
        (_, column_rows), (_, index_rows) = self._run(catalog_statements(database, table))
        return table_from_rows(database, table, column_rows, index_rows)
