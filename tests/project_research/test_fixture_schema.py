"""The fixture world databases keep the real TrinityCore 4.3.4 schema.

tests/fixtures/trinitycore-434-world-columns.json lists, for every table the
fixture has, the real columns in order with type and nullability, and the real
keys. These tests read the live fixture's information_schema (as the
read-only reader, like ProjectResearch) and compare, so a fixture edit that
invents a column, changes a type or a key, or adds a table the real world
database does not have fails here instead of silently fitting our profile.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pymysql
import pytest

from tests.project_research.conftest import (
    DEFAULT_NAME_DATABASE,
    NOQUEST_DATABASE,
    WORLD_DATABASE,
    TestDatabase,
)

COLUMNS_FILE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "trinitycore-434-world-columns.json"
)
# MariaDB reports integer types with a display width (int(10) unsigned); the
# reference is written without it, and the width carries no schema fact.
DISPLAY_WIDTH = re.compile(r"^(tinyint|smallint|mediumint|int|bigint)\(\d+\)")
ABSENT_FROM_NOQUEST = "quest_template"


def reference() -> dict[str, Any]:
    tables: dict[str, Any] = json.loads(COLUMNS_FILE.read_text(encoding="utf-8"))["tables"]
    return tables


def expected_tables(database: str) -> dict[str, Any]:
    tables = reference()
    if database == NOQUEST_DATABASE:
        tables.pop(ABSENT_FROM_NOQUEST)
    return tables


def live_schema(mariadb: TestDatabase, database: str) -> dict[str, Any]:
    """{table: {"columns": [...], "keys": [...]}} as information_schema reports it."""
    connection = pymysql.connect(
        host=mariadb.host,
        port=mariadb.port,
        user=mariadb.user,
        password=mariadb.password,
        charset="utf8mb4",
    )
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE"
                " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s"
                " ORDER BY TABLE_NAME, ORDINAL_POSITION",
                (database,),
            )
            columns = cursor.fetchall()
            cursor.execute(
                "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME"
                " FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s"
                " ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
                (database,),
            )
            statistics = cursor.fetchall()
    finally:
        connection.close()
    schema: dict[str, Any] = {}
    for table, column, column_type, nullable in columns:
        schema.setdefault(table, {"columns": [], "keys": []})["columns"].append(
            {
                "name": column,
                "type": DISPLAY_WIDTH.sub(r"\1", column_type),
                "nullable": nullable == "YES",
            }
        )
    keys: dict[tuple[str, str], dict[str, Any]] = {}
    for table, index, non_unique, column in statistics:
        key = keys.setdefault(
            (table, index), {"name": index, "unique": not non_unique, "columns": []}
        )
        key["columns"].append(column)
    for (table, _), key in keys.items():
        schema[table]["keys"].append(key)
    return schema


def by_name(keys: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {key["name"]: key for key in keys}


def drift(expected: dict[str, Any], live: dict[str, Any]) -> list[str]:
    """Every difference, named by table and column, so one run shows them all."""
    problems = [f"{table}: not in the real schema" for table in sorted(set(live) - set(expected))]
    problems += [
        f"{table}: missing from the fixture" for table in sorted(set(expected) - set(live))
    ]
    for table in sorted(set(expected) & set(live)):
        want, have = expected[table], live[table]
        if want["columns"] != have["columns"]:
            wanted = {c["name"]: c for c in want["columns"]}
            had = {c["name"]: c for c in have["columns"]}
            changed = [
                name for name in sorted(set(wanted) | set(had)) if wanted.get(name) != had.get(name)
            ]
            problems += [
                f"{table}.{name}: real {wanted.get(name)}, fixture {had.get(name)}"
                for name in changed
            ]
            if not changed:
                problems.append(f"{table}: columns in another order than the real table")
        if by_name(want["keys"]) != by_name(have["keys"]):
            problems.append(f"{table}: keys {have['keys']} instead of the real {want['keys']}")
    return problems


@pytest.mark.parametrize("database", [WORLD_DATABASE, NOQUEST_DATABASE, DEFAULT_NAME_DATABASE])
def test_fixture_matches_the_real_column_lists(mariadb: TestDatabase, database: str) -> None:
    assert drift(expected_tables(database), live_schema(mariadb, database)) == []


def test_the_second_database_lacks_only_quest_template(mariadb: TestDatabase) -> None:
    world = live_schema(mariadb, WORLD_DATABASE)
    noquest = live_schema(mariadb, NOQUEST_DATABASE)
    assert ABSENT_FROM_NOQUEST in world
    assert set(world) - set(noquest) == {ABSENT_FROM_NOQUEST}
    assert set(noquest) - set(world) == set()


def test_the_default_name_database_is_the_same_world(mariadb: TestDatabase) -> None:
    # The bundled profile must work on `world` exactly as on `cata_world`: the
    # copy holds every table and every row.
    assert live_schema(mariadb, DEFAULT_NAME_DATABASE) == live_schema(mariadb, WORLD_DATABASE)
    connection = pymysql.connect(
        host=mariadb.host,
        port=mariadb.port,
        user=mariadb.user,
        password=mariadb.password,
        charset="utf8mb4",
    )
    try:
        with connection.cursor() as cursor:
            counts = []
            for database in (WORLD_DATABASE, DEFAULT_NAME_DATABASE):
                cursor.execute(
                    f"SELECT (SELECT COUNT(*) FROM `{database}`.creature_template),"
                    f" (SELECT COUNT(*) FROM `{database}`.quest_template),"
                    f" (SELECT COUNT(*) FROM `{database}`.creature)"
                )
                counts.append(cursor.fetchone())
    finally:
        connection.close()
    assert counts[0] == counts[1]


def test_the_real_schema_has_no_item_template() -> None:
    # The lineage keeps item data in client DB2 files; a fixture item_template
    # would let a profile pass here and find nothing on a real server.
    assert "item_template" not in reference()
    assert {"item_script_names", "item_template_addon"} <= set(reference())


def test_drift_names_a_changed_type_a_new_column_and_an_invented_table() -> None:
    expected = {"spell_area": reference()["spell_area"]}
    live = json.loads(json.dumps(expected))
    live["spell_area"]["columns"][0]["type"] = "int"
    live["spell_area"]["columns"].append({"name": "extra", "type": "int", "nullable": True})
    live["item_template"] = {"columns": [], "keys": []}
    assert drift(expected, live) == [
        "item_template: not in the real schema",
        "spell_area.extra: real None, fixture {'name': 'extra', 'type': 'int', 'nullable': True}",
        "spell_area.spell: real {'name': 'spell', 'type': 'int unsigned', 'nullable': False},"
        " fixture {'name': 'spell', 'type': 'int', 'nullable': False}",
    ]


def test_drift_names_a_reordering_and_a_changed_key() -> None:
    expected = {"gossip_menu": reference()["gossip_menu"]}
    live = json.loads(json.dumps(expected))
    live["gossip_menu"]["columns"].reverse()
    live["gossip_menu"]["keys"][0]["columns"] = ["MenuID"]
    problems = drift(expected, live)
    assert problems[0] == "gossip_menu: columns in another order than the real table"
    assert problems[1].startswith("gossip_menu: keys ")
