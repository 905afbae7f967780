"""MariaDbSource security against the real server: injection attempts in
every string field, the allowlist, system schemas, the reader's missing
write rights, read-only transactions, the session time limit and outages."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import pymysql
import pymysql.cursors
import pytest

from tests.project_research.conftest import ALLOW, TestDatabase
from viano_bug_analysis.errors import ResearchError, ResearchUnavailable
from viano_bug_analysis.project_research.mariadb_source import MariaDbSource

pytestmark = pytest.mark.integration

MARKER_PASSWORD = "MARKER-pw-7f3a9c'\"`;--"


def f(column: str, operator: str, value: Any) -> dict[str, Any]:
    return {"column": column, "operator": operator, "value": value}


def rows(source: MariaDbSource, **request: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "database": None,
        "table": "creature_template",
        "columns": ["entry", "name"],
        "filters": [],
        "offset": 0,
        "limit": 100,
    }
    arguments.update(request)
    return source.rows(**arguments)


def creature_count(source: MariaDbSource) -> int:
    return int(source.count(database=None, table="creature_template", filters=[])["count"])


def assert_error_is_clean(err: ResearchError, *secrets: str) -> None:
    text = f"{err} {err!r} {err.details}"
    for secret in secrets:
        assert secret not in text


# --- injection attempts are plain data or typed rejections ----------------------------------

VALUE_ATTACKS = [
    "x' OR '1'='1",
    "x\\' OR 1=1 -- ",
    "'; DROP TABLE creature_template; --",
    '" OR ""="',
    "%' OR 1=1 #",
    "\\",
    "x') UNION SELECT username, email FROM cata_private.account -- ",
    "1 OR 1=1",
    "\x00",
    "é' /*",
]


@pytest.mark.parametrize("value", VALUE_ATTACKS)
@pytest.mark.parametrize("operator", ["eq", "ne", "lt", "ge", "contains", "in"])
def test_values_are_never_sql(source: MariaDbSource, value: str, operator: str) -> None:
    before = creature_count(source)
    filter_value: Any = [value, value + "2"] if operator == "in" else value
    result = rows(source, filters=[f("name", operator, filter_value)])
    names = [row["name"] for row in result["rows"]]
    if operator in ("eq", "in", "contains"):
        assert all(value in name for name in names)  # only rows that really hold the text
    assert not any("PRIVATE" in str(row) for row in result["rows"])
    assert creature_count(source) == before


def test_a_stored_injection_string_is_found_as_data(source: MariaDbSource) -> None:
    name = "Robert'); DROP TABLE creature_template; --"
    result = rows(source, filters=[f("name", "eq", name)])
    assert result["rows"] == [{"entry": 90030, "name": name}]


def test_numeric_column_with_injection_value(source: MariaDbSource) -> None:
    # The server compares '90002 OR 1=1' with an int column as the number 90002.
    result = rows(source, filters=[f("entry", "eq", "90002 OR 1=1")])
    assert [row["entry"] for row in result["rows"]] == [90002]


IDENTIFIER_ATTACKS = [
    "name`",
    "`name`",
    "name` FROM mysql.user -- ",
    "name'",
    'name"',
    "name;",
    "name; DROP TABLE x",
    "name -- ",
    "name/**/",
    "name#",
    "cata_world.creature_template.name",
    "creature_template.name",
    "na me",
    "name\n",
    "name\x00",
    "",
    "1name",
    "*",
    "COUNT(*)",
    "name)",
    "näme",
    "a" * 65,
    "@@version",
    "$name",
]


@pytest.mark.parametrize("bad", IDENTIFIER_ATTACKS)
def test_column_names_are_validated(source: MariaDbSource, bad: str) -> None:
    for request in (
        {"columns": ["entry", bad]},
        {"filters": [f(bad, "eq", 1)]},
    ):
        with pytest.raises(ResearchError) as info:
            rows(source, **request)
        assert info.value.code == "identifier_invalid"
        if len(bad) > 1:  # a one-character name may occur in any message
            assert_error_is_clean(info.value, bad)
    with pytest.raises(ResearchError) as info:
        source.count(database=None, table="creature_template", filters=[f(bad, "ne", 1)])
    assert info.value.code == "identifier_invalid"


@pytest.mark.parametrize("bad", IDENTIFIER_ATTACKS)
def test_table_and_database_names_are_validated(source: MariaDbSource, bad: str) -> None:
    calls: list[Callable[[], object]] = [
        lambda: rows(source, table=bad),
        lambda: rows(source, database=bad),
        lambda: source.count(database=None, table=bad, filters=[]),
        lambda: source.schema(database=None, table=bad),
        lambda: source.schema(database=bad, table="creature_template"),
        lambda: source.tables(name_contains=None, database=bad, offset=0, limit=10),
        lambda: source.origin(bad),
    ]
    for call in calls:
        with pytest.raises(ResearchError) as info:
            call()
        assert info.value.code == "identifier_invalid"


def test_name_contains_is_plain_text(source: MariaDbSource) -> None:
    for needle in ("' OR 1=1 --", "%", "_", "`", "information_schema"):
        result = source.tables(name_contains=needle, database=None, offset=0, limit=50)
        expected = [
            t for database in sorted(ALLOW) for t in sorted(ALLOW[database]) if needle.lower() in t
        ]
        assert [t["table"] for t in result["tables"]] == expected


def test_unknown_column(source: MariaDbSource) -> None:
    with pytest.raises(ResearchError) as info:
        rows(source, columns=["entry", "Entry"])
    assert info.value.code == "unknown_column"
    allowed = info.value.details.pop("allowed")
    assert allowed[0] == "entry" and len(allowed) <= 40  # the table's columns, bounded
    assert info.value.details.pop("allowed_total", len(allowed)) >= len(allowed)
    assert info.value.details == {
        "argument": "columns",
        "index": 1,
        "column": "Entry",
        "table": "creature_template",
        "did_you_mean": "entry",
    }
    with pytest.raises(ResearchError) as info:
        rows(source, filters=[f("entry", "gt", 1), f("password", "eq", "x")])
    assert info.value.code == "unknown_column"
    assert info.value.details["argument"] == "filters" and info.value.details["index"] == 1
    assert "did_you_mean" not in info.value.details


# --- the allowlist --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("database", "table"),
    [
        (None, "version"),  # exists in cata_world, not allowlisted
        ("cata_world", "version"),
        (None, "account"),
        ("cata_private", "account"),
        ("cata_private", "creature_template"),  # same name as an allowed table
        (None, "user"),
        ("mysql", "user"),
        ("mysql", "creature_template"),
        ("information_schema", "COLUMNS"),
        ("information_schema", "TABLES"),
        ("INFORMATION_SCHEMA", "creature_template"),
        ("performance_schema", "threads"),
        ("sys", "version"),
        (None, "COLUMNS"),
        ("cata_world", "CREATURE_TEMPLATE"),
        ("Cata_World", "creature_template"),
    ],
)
def test_tables_outside_the_allowlist(
    source: MariaDbSource, database: str | None, table: str
) -> None:
    calls: list[Callable[[], object]] = [
        lambda: rows(source, database=database, table=table, columns=["name"]),
        lambda: source.count(database=database, table=table, filters=[]),
        lambda: source.schema(database=database, table=table),
    ]
    for call in calls:
        with pytest.raises(ResearchError) as info:
            call()
        assert info.value.code == "table_not_allowed"


def test_databases_outside_the_allowlist(source: MariaDbSource) -> None:
    for database in ("cata_private", "mysql", "information_schema"):
        with pytest.raises(ResearchError) as info:
            source.tables(name_contains=None, database=database, offset=0, limit=10)
        assert info.value.code == "table_not_allowed"
        with pytest.raises(ResearchError):
            source.origin(database)


def test_system_schemas_are_refused_even_if_configured(mariadb: TestDatabase) -> None:
    for database in (
        "mysql",
        "information_schema",
        "Information_Schema",
        "performance_schema",
        "sys",
    ):
        with pytest.raises(ResearchError) as info:
            mariadb.source(
                allow={"cata_world": ["creature_template"], database: ["user", "COLUMNS"]}
            )
        assert info.value.code == "config_invalid"
        assert info.value.details == {"key": f"database.allow.{database}", "what": "system_schema"}


def test_the_allowlist_is_the_only_barrier_for_granted_data(mariadb: TestDatabase) -> None:
    """The test reader may SELECT on cata_private (see scripts/test_services.sh),
    so only the allowlist keeps `account` out; allowlisted, it would be readable."""
    with mariadb.source(allow={"cata_private": ["account"]}) as wide:
        assert wide.count(database=None, table="account", filters=[])["count"] == 2


# --- the reader cannot write, whatever gets through ------------------------------------------

WRITES = [
    "INSERT INTO cata_world.creature_template (entry, name) VALUES (1, 'x')",
    "UPDATE cata_world.creature_template SET name = 'x' WHERE entry = 90002",
    "DELETE FROM cata_world.creature_template WHERE entry = 90002",
    "REPLACE INTO cata_world.version VALUES ('a', 'b', 'c', 7)",
    "CREATE TABLE cata_world.injected (a int)",
    "DROP TABLE cata_world.creature_template",
    "ALTER TABLE cata_world.creature_template ADD COLUMN injected int",
    "TRUNCATE TABLE cata_world.world_meta",
    "CREATE TEMPORARY TABLE cata_world.scratch (a int)",
    "CREATE DATABASE injected",
    "GRANT SELECT ON mysql.* TO 'viano_reader'@'127.0.0.1'",
    "SET GLOBAL read_only = OFF",
    "SELECT * FROM cata_world.creature_template INTO OUTFILE '/tmp/vba_outfile.txt'",
]


@contextlib.contextmanager
def read_only_off(mariadb: TestDatabase) -> Iterator[None]:
    admin = mariadb.admin()
    try:
        with admin.cursor() as cursor:
            cursor.execute("SET GLOBAL read_only = OFF")
        yield
    finally:
        with admin.cursor() as cursor:
            cursor.execute("SET GLOBAL read_only = ON")
        admin.close()


@pytest.mark.parametrize("statement", WRITES)
def test_reader_cannot_write(source: MariaDbSource, mariadb: TestDatabase, statement: str) -> None:
    before = creature_count(source)
    connection = source.connect()
    try:
        # Barrier 1: the read-only session of every provider connection.
        with connection.cursor() as cursor, pytest.raises(pymysql.Error):
            cursor.execute(statement)
        connection.rollback()
    finally:
        connection.close()
    # Barrier 2: the account's grants, with read_only=ON and the session
    # characteristic out of the way (a fresh plain connection, server writable).
    with read_only_off(mariadb):
        plain = pymysql.connect(
            host=mariadb.host, port=mariadb.port, user=mariadb.user, password=mariadb.password
        )
        try:
            with plain.cursor() as cursor, pytest.raises(pymysql.Error) as info:
                cursor.execute(statement)
            assert info.value.args[0] in (1044, 1045, 1142, 1227, 1044, 1133, 1410)
        finally:
            plain.close()
    # Barrier 3: the server's read_only=ON, for the same plain connection.
    plain = pymysql.connect(
        host=mariadb.host, port=mariadb.port, user=mariadb.user, password=mariadb.password
    )
    try:
        with plain.cursor() as cursor, pytest.raises(pymysql.Error):
            cursor.execute(statement)
    finally:
        plain.close()
    assert creature_count(source) == before


def test_reader_grants_are_select_only(source: MariaDbSource) -> None:
    connection = source.connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW GRANTS")
            grants = [str(row[0]) for row in cursor.fetchall()]
    finally:
        connection.close()
    assert grants, "no grants shown"
    for grant in grants:
        assert "WITH GRANT OPTION" not in grant
        privileges = grant.split(" ON ")[0].removeprefix("GRANT ")
        assert privileges in ("USAGE", "SELECT"), grant
        if privileges == "USAGE":
            assert " ON *.* " in grant


def test_read_only_transaction_refuses_writes(mariadb: TestDatabase) -> None:
    """Barrier 4: even the admin, who may write, cannot inside START TRANSACTION READ ONLY."""
    admin = mariadb.admin()
    try:
        with admin.cursor() as cursor:
            cursor.execute("START TRANSACTION READ ONLY")
            with pytest.raises(pymysql.Error) as info:
                cursor.execute(
                    "UPDATE cata_world.creature_template SET name = 'x' WHERE entry = 90002"
                )
            assert info.value.args[0] == 1792  # ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
            cursor.execute("ROLLBACK")
    finally:
        admin.close()


def test_reader_session_settings(mariadb: TestDatabase) -> None:
    with mariadb.source(statement_timeout_s=0.75) as src:
        connection = src.connect()
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT @@max_statement_time, @@tx_read_only, @@time_zone, @@autocommit"
                )
                timeout, read_only, zone, autocommit = cursor.fetchone()
        finally:
            connection.close()
    assert float(timeout) == 0.75
    assert (read_only, zone, autocommit) == (1, "+00:00", 0)


class RecordingCursor(pymysql.cursors.Cursor):
    statements: ClassVar[list[tuple[str, Any]]] = []

    def execute(self, query: str, args: Any = None) -> int:
        RecordingCursor.statements.append((query, args))
        return super().execute(query, args)


def test_executed_statements(mariadb: TestDatabase, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact statement sequence: session setup once per connection, then
    START TRANSACTION READ ONLY, one parameterized SELECT, ROLLBACK."""
    RecordingCursor.statements = []
    rollbacks: list[int] = []
    original_connect = pymysql.connect

    def recording_connect(*args: Any, **kwargs: Any) -> Any:
        connection = original_connect(*args, **kwargs, cursorclass=RecordingCursor)
        original_rollback = connection.rollback

        def rollback() -> None:
            rollbacks.append(1)
            original_rollback()

        connection.rollback = rollback  # type: ignore[method-assign]
        return connection

    monkeypatch.setattr(pymysql, "connect", recording_connect)
    value = "Wolpertinger' OR '1'='1"
    with mariadb.source(statement_timeout_s=2.5) as src:
        src.schema(database=None, table="creature_template")  # warm the column cache
        RecordingCursor.statements.clear()
        rollbacks.clear()
        rows(src, filters=[f("name", "contains", value), f("entry", "ne", 5)], limit=3)
    assert [sql for sql, _ in RecordingCursor.statements] == [
        "START TRANSACTION READ ONLY",
        "SELECT `entry`, `name` FROM `cata_world`.`creature_template`"
        " WHERE `name` LIKE CONCAT('%%', %s, '%%') ESCAPE '\\\\' AND NOT (`entry` <=> %s)"
        " ORDER BY `entry` LIMIT %s OFFSET %s",
    ]
    assert RecordingCursor.statements[1][1] == (value, 5, 4, 0)  # values only as parameters
    assert rollbacks == [1]


def test_session_setup_runs_on_every_new_connection(
    mariadb: TestDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    RecordingCursor.statements = []
    original_connect = pymysql.connect
    monkeypatch.setattr(
        pymysql, "connect", lambda *a, **k: original_connect(*a, **k, cursorclass=RecordingCursor)
    )
    with mariadb.source(statement_timeout_s=2.5) as src:
        src.count(database=None, table="world_meta", filters=[])
    setup = [(sql, args) for sql, args in RecordingCursor.statements if sql.startswith("SET")]
    assert setup == [
        ("SET SESSION max_statement_time = %s, time_zone = '+00:00'", (2.5,)),
        ("SET SESSION TRANSACTION READ ONLY", None),
    ]


def test_statement_time_limit_is_a_query_timeout(mariadb: TestDatabase) -> None:
    with mariadb.source(statement_timeout_s=0.2) as src:
        with pytest.raises(ResearchError) as info:
            src._run([("SELECT SLEEP(3)", ())])  # test-only path: no API query is this slow
        assert type(info.value) is ResearchError
        assert info.value.code == "query_timeout" and info.value.details == {"limit_s": 0.2}
        # The source stays usable.
        assert src.count(database=None, table="world_meta", filters=[])["count"] == 4


def test_contains_with_no_backslash_escapes(mariadb: TestDatabase) -> None:
    """With NO_BACKSLASH_ESCAPES the ESCAPE literal and PyMySQL's quoting both change."""

    class Strict(MariaDbSource):
        def connect(self) -> Any:
            connection = super().connect()
            with connection.cursor() as cursor:
                cursor.execute("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
            return connection

    cases = [("\\", [90014]), ("\\%", [90014]), ("%", [90010, 90014]), ("'", [90013, 90030, 92103])]
    with Strict(**plain_settings(mariadb)) as strict:
        for needle, expected in cases:
            result = rows(strict, columns=["entry"], filters=[f("name", "contains", needle)])
            assert [row["entry"] for row in result["rows"]] == expected, needle
        assert rows(strict, filters=[f("name", "eq", "x\\' OR 1=1 -- ")])["rows"] == []


def plain_settings(mariadb: TestDatabase) -> dict[str, Any]:
    return {
        "host": mariadb.host,
        "port": mariadb.port,
        "user": mariadb.user,
        "password": mariadb.password,
        "allow": ALLOW,
        "snapshot_id": "s",
    }


# --- outages --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_connection_refused(mariadb: TestDatabase) -> None:
    with (
        mariadb.source(port=free_port(), password=MARKER_PASSWORD) as src,
        pytest.raises(ResearchUnavailable) as info,
    ):
        src.count(database=None, table="creature_template", filters=[])
    err = info.value
    assert err.code == "research_unavailable"
    assert err.details["provider"] == "database" and err.details["reason"] == "connection_refused"
    assert_error_is_clean(err, MARKER_PASSWORD, "MARKER", "127.0.0.1", "viano_reader")


def test_wrong_password(mariadb: TestDatabase) -> None:
    with (
        mariadb.source(password=MARKER_PASSWORD) as src,
        pytest.raises(ResearchUnavailable) as info,
    ):
        src.rows(
            database=None,
            table="creature_template",
            columns=["entry"],
            filters=[f("name", "eq", "value-marker")],
            offset=0,
            limit=1,
        )
    err = info.value
    assert err.reason == "auth_failed" and err.provider == "database"
    assert_error_is_clean(
        err, MARKER_PASSWORD, "MARKER", "127.0.0.1", "viano_reader", "value-marker"
    )
    assert err.__cause__ is None and err.__suppress_context__


def test_wrong_user(mariadb: TestDatabase) -> None:
    with mariadb.source(user="root") as src, pytest.raises(ResearchUnavailable) as info:
        src.schema(database=None, table="creature_template")
    assert info.value.reason == "auth_failed"
    assert_error_is_clean(info.value, "root", mariadb.password)


def test_handshake_timeout(mariadb: TestDatabase) -> None:
    """A port that accepts TCP but never greets: the connect timeout ends it."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        with (
            mariadb.source(port=port, connect_timeout_s=0.3) as src,
            pytest.raises(ResearchUnavailable) as info,
        ):
            src.count(database=None, table="creature_template", filters=[])
    assert info.value.reason == "timeout"


def test_dead_pooled_connection_is_replaced(mariadb: TestDatabase) -> None:
    with mariadb.source() as src:
        assert src.count(database=None, table="world_meta", filters=[])["count"] == 4
        [pooled] = src._pool
        admin = mariadb.admin()
        try:
            with admin.cursor() as cursor:
                thread_id = pooled.thread_id()  # type: ignore[no-untyped-call]
                cursor.execute("KILL CONNECTION %s", (thread_id,))
        finally:
            admin.close()
        assert src.count(database=None, table="world_meta", filters=[])["count"] == 4
        assert src._pool and src._pool[0] is not pooled


def test_concurrent_queries_share_the_pool(mariadb: TestDatabase) -> None:
    errors: list[BaseException] = []
    with mariadb.source() as src:

        def work() -> None:
            try:
                for _ in range(10):
                    page = rows(
                        src, columns=["entry"], filters=[f("entry", "ge", 200000)], limit=50
                    )
                    assert page["returned"] == 50
            except BaseException as err:  # collected for the main thread
                errors.append(err)

        threads = [threading.Thread(target=work) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(src._pool) <= 4
    assert errors == []
