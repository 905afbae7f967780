"""MariaDbSource against the fixture world DB: rows, count, tables, schema,
filters, JSON value forms, order, paging and complete_filtered_rows."""

from __future__ import annotations

from typing import Any

import pytest

from tests.project_research.conftest import SNAPSHOT_ID, TestDatabase
from viano_bug_analysis.errors import ResearchError
from viano_bug_analysis.project_research.mariadb_source import MariaDbSource

pytestmark = pytest.mark.integration

GENERATED = 1500  # creature_template entries 200000-201499
HANDWRITTEN = 32  # entries 90000-90031 (90003/90004 are not creatures), 91010, 91011
CORPUS = 20  # the corpus world: entries 92100-92118 and 92500 (tests/corpus)
REFMAP = 4  # the reference map cases: entries 93001-93004 (tests/enrichment/reference_map_cases.py)
RULES = 2  # the consistency rules' entries 94501, 94502 (tests/fixtures/world_db_rules.sql)


def rows(
    source: MariaDbSource, table: str, columns: list[str], *filters: Any, **page: Any
) -> dict[str, Any]:
    return source.rows(
        database=page.pop("database", None),
        table=table,
        columns=columns,
        filters=list(filters),
        offset=page.pop("offset", 0),
        limit=page.pop("limit", 100),
    )


def f(column: str, operator: str, value: Any) -> dict[str, Any]:
    return {"column": column, "operator": operator, "value": value}


def entries(result: dict[str, Any]) -> list[int]:
    return [row["entry"] for row in result["rows"]]


def count(source: MariaDbSource, table: str, *filters: Any) -> int:
    return int(source.count(database=None, table=table, filters=list(filters))["count"])


# --- the sample story -----------------------------------------------------------------------


def test_seed_example_query(source: MariaDbSource) -> None:
    result = rows(
        source,
        "creature_template",
        ["entry", "name"],
        f("name", "contains", "Wolpertinger"),
        limit=10,
    )
    assert result == {
        "database": "cata_world",
        "table": "creature_template",
        "columns": ["entry", "name"],
        "filters": [f("name", "contains", "Wolpertinger")],
        "offset": 0,
        "limit": 10,
        "rows": [
            {"entry": 90002, "name": "Wild Wolpertinger"},
            {"entry": 90005, "name": "Wolpertinger Caught Credit"},
            {"entry": 90023, "name": "Wolpertinger Kit"},
            {"entry": 90024, "name": "Sleepy Wolpertinger"},
            {"entry": 90031, "name": "Wolpertinger Hunter"},
        ],
        "returned": 5,
        "truncated": False,
        "next_offset": None,
        "order": ["entry"],
        "complete_filtered_rows": True,
    }


def test_sample_ids_are_in_the_fixture(source: MariaDbSource) -> None:
    quest = rows(
        source,
        "quest_template",
        ["ID", "LogTitle", "StartItem", "RequiredNpcOrGo1", "RequiredNpcOrGoCount1"],
        f("ID", "eq", 90001),
    )["rows"]
    assert quest == [
        {
            "ID": 90001,
            "LogTitle": "Catch the Wolpertinger",
            "StartItem": 90003,
            "RequiredNpcOrGo1": 90005,
            "RequiredNpcOrGoCount1": 1,
        }
    ]
    creature = rows(source, "creature_template", ["name", "ScriptName"], f("entry", "eq", 90002))
    assert creature["rows"] == [
        {"name": "Wild Wolpertinger", "ScriptName": "npc_wild_wolpertinger"}
    ]
    # The real world database has no item_template: an item is only its
    # server-side extras and its script name.
    item = rows(source, "item_template_addon", ["Id", "FlagsCu"], f("Id", "eq", 90003))
    assert item["rows"] == [{"Id": 90003, "FlagsCu": 0}]
    keg = rows(source, "item_script_names", ["Id", "ScriptName"], f("Id", "eq", 91200))
    assert keg["rows"] == [{"Id": 91200, "ScriptName": "item_fixture_keg"}]
    starters = rows(source, "creature_queststarter", ["id", "quest"], f("quest", "eq", 90001))
    assert starters["rows"] == [{"id": 90000, "quest": 90001}]
    assert starters["order"] == ["id", "quest"]


def test_smart_scripts_source_type_keeps_entities_apart(source: MariaDbSource) -> None:
    any_type = rows(
        source, "smart_scripts", ["entryorguid", "source_type"], f("entryorguid", "eq", 90002)
    )
    assert [row["source_type"] for row in any_type["rows"]] == [0, 0, 1]
    creature_only = rows(
        source,
        "smart_scripts",
        ["id", "source_type"],
        f("entryorguid", "eq", 90002),
        f("source_type", "eq", 0),
    )
    assert creature_only["rows"] == [{"id": 0, "source_type": 0}, {"id": 1, "source_type": 0}]
    assert creature_only["complete_filtered_rows"] is True


# --- operators ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operator", "value", "expected"),
    [
        ("eq", 90010, [90010]),
        ("lt", 90002, [90000, 90001]),
        ("le", 90002, [90000, 90001, 90002]),
        ("gt", 201497, [201498, 201499]),
        ("ge", 201498, [201498, 201499]),
        ("in", [90013, 90002, 424242], [90002, 90013]),
        ("in", [90002], [90002]),
    ],
)
def test_comparison_operators(
    source: MariaDbSource, operator: str, value: Any, expected: list[int]
) -> None:
    result = rows(source, "creature_template", ["entry"], f("entry", operator, value))
    assert entries(result) == expected
    assert count(source, "creature_template", f("entry", operator, value)) == len(expected)


def test_ne_includes_null_and_complements_eq(source: MariaDbSource) -> None:
    total = count(source, "creature_template")
    assert total == GENERATED + HANDWRITTEN + CORPUS + REFMAP + RULES
    eq = count(source, "creature_template", f("subname", "eq", "Innkeeper"))
    ne = count(source, "creature_template", f("subname", "ne", "Innkeeper"))
    nulls = count(source, "creature_template", f("subname", "eq", None))
    assert eq == 1 and nulls > 0
    assert eq + ne == total  # NULL subnames are "not equal" too


def test_null_filters(source: MariaDbSource) -> None:
    is_null = rows(source, "world_meta", ["id"], f("note", "eq", None))
    assert is_null["rows"] == [{"id": 3}]
    not_null = rows(source, "world_meta", ["id"], f("note", "ne", None))
    assert not_null["rows"] == [{"id": 1}, {"id": 2}, {"id": 4}]
    # An empty string is not NULL.
    assert rows(source, "world_meta", ["id"], f("note", "eq", ""))["rows"] == [{"id": 4}]


def test_filters_are_and_combined(source: MariaDbSource) -> None:
    result = rows(
        source,
        "creature_template",
        ["entry"],
        f("name", "contains", "Wolpertinger"),
        f("ScriptName", "eq", "npc_wild_wolpertinger"),
        f("entry", "gt", 90002),
    )
    assert entries(result) == [90024]


def test_string_comparison_follows_the_column_collation(source: MariaDbSource) -> None:
    # utf8mb4_unicode_ci: case-insensitive, documented in the module docstring.
    assert entries(
        rows(source, "creature_template", ["entry"], f("name", "eq", "wild wolpertinger"))
    ) == [90002]
    assert entries(
        rows(source, "creature_template", ["entry"], f("name", "contains", "jäger"))
    ) == [90000]


# --- contains matches wildcards and escapes literally ---------------------------------------


@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        ("%", [90010, 90014]),
        ("100%", [90010]),
        ("_", [90011, 90030]),  # 90030: "creature_template" in its name
        ("Sir_", [90011]),  # not "Sir Reginald": `_` is no wildcard
        ("\\", [90014]),
        ("\\%", [90014]),
        ("'", [90013, 90030, 92103]),
        ('"', [90013]),
        ("O'Malley's \"Big\"", [90013]),
        ("'); DROP TABLE creature_template; --", [90030]),
        ("`", []),
        ("狼兔", [90016]),
        ("🐇", [90016]),
        ("~Dash-", [90029]),
        ("%%", []),
        ("_ _", []),
    ],
)
def test_contains_is_literal(source: MariaDbSource, needle: str, expected: list[int]) -> None:
    result = rows(source, "creature_template", ["entry", "name"], f("name", "contains", needle))
    assert entries(result) == expected
    assert all(needle.lower() in row["name"].lower() for row in result["rows"])


@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        ("\\", [90012]),
        ("C:\\Quests\\Glade", [90012]),
        ("_of_", [90011]),
        ("`", [90031]),
        ("[", [90029]),
    ],
)
def test_contains_on_subname(source: MariaDbSource, needle: str, expected: list[int]) -> None:
    assert (
        entries(rows(source, "creature_template", ["entry"], f("subname", "contains", needle)))
        == expected
    )


def test_eq_treats_wildcards_as_text(source: MariaDbSource) -> None:
    assert rows(source, "creature_template", ["entry"], f("name", "eq", "%"))["rows"] == []
    assert entries(
        rows(source, "creature_template", ["entry"], f("name", "eq", "Escaped \\% Literal"))
    ) == [90014]


# --- JSON value forms -----------------------------------------------------------------------

WORLD_META_COLUMNS = [
    "id", "label", "precise", "money", "ratio", "ratio32", "big", "signed_big", "release_date",
    "imported_at", "changed_at", "plain_time", "duration", "payload", "digest", "token", "flags",
    "state", "release_year", "note",
]  # fmt: skip


def test_value_forms(source: MariaDbSource) -> None:
    result = rows(source, "world_meta", WORLD_META_COLUMNS)
    first, second, empty, zero = result["rows"]
    assert first == {
        "id": 1,
        "label": "all set",
        "precise": "123456789012345678.123456789012",
        "money": "19.99",
        "ratio": 0.1,
        "ratio32": 0.1,
        "big": 18446744073709551615,
        "signed_big": -9223372036854775808,
        "release_date": "2010-12-07",
        "imported_at": "2026-11-01T12:34:56.123456",
        "changed_at": "2026-11-01T12:34:56",
        "plain_time": "23:59:59",
        "duration": "100:00:00.500000",
        "payload": {"base64": "AP8Q"},
        "digest": {"base64": "3q2+7w=="},
        "token": {"base64": "AQ=="},
        "flags": 0b1000000001,
        "state": "live",
        "release_year": 2010,
        "note": "Wolpertinger – Jäger's Fang",
    }
    assert second["precise"] == "-0.000000000001" and second["money"] == "-5.00"
    assert second["plain_time"] == "-01:30:00" and second["duration"] == "-838:59:59.000000"
    assert second["payload"] == {"base64": ""} and second["flags"] == 0
    assert second["note"] == '100% sure_thing \\ with "quotes"'
    assert empty == {
        column: (3 if column == "id" else "all null" if column == "label" else None)
        for column in WORLD_META_COLUMNS
    }
    assert zero["release_date"] == "0000-00-00"
    assert zero["imported_at"] == "0000-00-00T00:00:00.000000"
    assert zero["precise"] == "0.000000000000" and zero["flags"] == 1023
    assert zero["payload"] == {"base64": "dGV4dCBieXRlcw=="}  # text bytes in a BLOB stay binary
    for row in result["rows"]:
        for value in row.values():
            assert value is None or type(value) in (int, float, str, dict)


def test_decimal_is_an_exact_string(source: MariaDbSource) -> None:
    # The world schema has no DECIMAL column (modifiers are floats): the
    # awkward-types table carries them.
    result = rows(source, "world_meta", ["id", "precise", "money"], f("id", "in", [1, 2, 4]))
    assert result["rows"] == [
        {"id": 1, "precise": "123456789012345678.123456789012", "money": "19.99"},
        {"id": 2, "precise": "-0.000000000001", "money": "-5.00"},
        {"id": 4, "precise": "0.000000000000", "money": "0.00"},
    ]
    # A decimal can be filtered by its exact text.
    assert rows(source, "world_meta", ["id"], f("money", "eq", "-5.00"))["rows"] == [{"id": 2}]


def test_timestamps_are_utc(source: MariaDbSource, mariadb: TestDatabase) -> None:
    # The fixture stored '2001-09-09 01:46:40' with time_zone '+00:00'; the server's
    # own default zone must not shift it.
    assert rows(source, "world_meta", ["changed_at"], f("id", "eq", 2))["rows"] == [
        {"changed_at": "2001-09-09T01:46:40"}
    ]


def test_float_columns_are_floats(source: MariaDbSource) -> None:
    result = rows(source, "creature_template", ["speed_run", "scale"], f("entry", "eq", 90002))
    assert result["rows"] == [{"speed_run": 1.71429, "scale": 0.8}]


# --- order, paging, completeness ------------------------------------------------------------


def test_paging_is_stable_and_ordered(source: MariaDbSource) -> None:
    seen: list[int] = []
    offset: int | None = 0
    pages = 0
    while offset is not None and offset + 100 <= source.max_rows:
        page = rows(
            source,
            "creature_template",
            ["entry"],
            f("entry", "ge", 200000),
            offset=offset,
            limit=100,
        )
        assert page == rows(
            source,
            "creature_template",
            ["entry"],
            f("entry", "ge", 200000),
            offset=offset,
            limit=100,
        )
        assert page["returned"] == len(page["rows"]) <= 100
        assert page["complete_filtered_rows"] is False
        seen += entries(page)
        offset = page["next_offset"]
        pages += 1
    assert pages == 10 and offset == 1000
    assert seen == list(range(200000, 201000))


def test_row_window_is_limited(source: MariaDbSource) -> None:
    with pytest.raises(ResearchError) as info:
        rows(source, "creature_template", ["entry"], offset=1000, limit=1)
    assert info.value.code == "limit_exceeded"
    assert info.value.details == {"argument": "offset", "limit": 1000, "maximum": 1000}
    assert rows(source, "creature_template", ["entry"], offset=999, limit=1)["returned"] == 1


def test_page_never_exceeds_limit(source: MariaDbSource, mariadb: TestDatabase) -> None:
    with pytest.raises(ResearchError) as info:
        rows(source, "creature_template", ["entry"], limit=101)
    assert info.value.code == "limit_exceeded" and info.value.details["limit"] == 100
    with mariadb.source(max_page=7, max_rows=50) as small:
        page = rows(small, "creature_template", ["entry"], limit=7)
        assert page["returned"] == 7 and page["truncated"] is True and page["next_offset"] == 7
        with pytest.raises(ResearchError):
            rows(small, "creature_template", ["entry"], limit=8)


@pytest.mark.parametrize(
    ("offset", "limit", "truncated", "complete"),
    [
        (0, 5, False, True),  # exactly every match, limit == matches
        (0, 6, False, True),
        (0, 4, True, False),  # first page, more exist
        (4, 4, False, False),  # last page, but not from offset 0
        (5, 4, False, False),  # past the end: empty, still not complete
    ],
)
def test_complete_filtered_rows(
    source: MariaDbSource, offset: int, limit: int, truncated: bool, complete: bool
) -> None:
    result = rows(
        source,
        "creature_template",
        ["entry"],
        f("name", "contains", "Wolpertinger"),
        offset=offset,
        limit=limit,
    )
    assert result["truncated"] is truncated
    assert result["complete_filtered_rows"] is complete
    assert result["next_offset"] == (offset + limit if truncated else None)


def test_empty_first_page_is_a_complete_absence(source: MariaDbSource) -> None:
    result = rows(source, "creature_template", ["entry"], f("name", "eq", "Nobody at all"))
    assert result["rows"] == [] and result["returned"] == 0
    assert result["complete_filtered_rows"] is True and result["truncated"] is False
    assert count(source, "creature_template", f("name", "eq", "Nobody at all")) == 0


def test_order_by_primary_key_not_by_selected_columns(source: MariaDbSource) -> None:
    result = rows(source, "conditions", ["Comment"], f("SourceEntry", "eq", 90004))
    assert result["order"] == [
        "SourceTypeOrReferenceId", "SourceGroup", "SourceEntry", "SourceId", "ElseGroup",
        "ConditionTypeOrReference", "ConditionTarget", "ConditionValue1", "ConditionValue2",
        "ConditionValue3",
    ]  # fmt: skip
    assert [row["Comment"] for row in result["rows"]] == [
        "Throw Net - only targets Wild Wolpertinger",
        "Throw Net - or Sleepy Wolpertinger",
        "Throw Net - requires quest 'Catch the Wolpertinger' taken",
        "Npc spellclick - quest_%_active \\ legacy",
        None,
        None,
    ]


def test_table_without_primary_key_orders_by_all_columns(source: MariaDbSource) -> None:
    result = rows(source, "spell_script_names", ["ScriptName", "spell_id"])
    assert result["order"] == "all_columns"
    pairs = [(row["ScriptName"], row["spell_id"]) for row in result["rows"]]
    assert pairs == sorted(pairs, key=lambda pair: (pair[0].lower(), pair[1]))
    assert len(pairs) == 17  # 2 of them the reference map's (93301, -93302)
    # Paging over it is stable too.
    first = rows(source, "spell_script_names", ["ScriptName", "spell_id"], limit=5)
    second = rows(source, "spell_script_names", ["ScriptName", "spell_id"], offset=5, limit=100)
    assert first["rows"] + second["rows"] == result["rows"]


def test_count_matches_rows(source: MariaDbSource) -> None:
    assert count(source, "creature_template", f("entry", "ge", 200000)) == GENERATED
    assert count(source, "creature_template", f("name", "contains", "Wolpertinger")) == 5
    assert source.count(database="cata_world", table="quest_template", filters=[]) == {
        "database": "cata_world",
        "table": "quest_template",
        "filters": [],
        "count": 42,  # 3 of them the reference map's (93201-93203)
    }


# --- tables, schema, origin -----------------------------------------------------------------


def test_tables(source: MariaDbSource) -> None:
    everything = source.tables(name_contains=None, database=None, offset=0, limit=100)
    assert everything["total"] == 16 and everything["missing"] == []
    assert [t["table"] for t in everything["tables"]] == sorted(
        ["creature_template", "quest_template", "quest_template_addon", "item_script_names",
         "item_template_addon", "creature_queststarter", "creature_questender", "smart_scripts",
         "spell_script_names", "conditions", "creature", "gameobject", "quest_template_locale",
         "creature_template_locale", "gameobject_template_locale", "world_meta"]
    )  # fmt: skip
    quests = source.tables(name_contains="QUEST", database="cata_world", offset=1, limit=2)
    assert quests["tables"] == [
        {"database": "cata_world", "table": "creature_queststarter"},
        {"database": "cata_world", "table": "quest_template"},
    ]
    assert quests["total"] == 5 and quests["truncated"] is True and quests["next_offset"] == 3
    assert source.tables(name_contains="nothing", database=None, offset=0, limit=5)["tables"] == []


def test_tables_reports_allowlisted_but_missing(mariadb: TestDatabase) -> None:
    # item_template: an operator's allowlist from an older schema era.
    with mariadb.source(allow={"cata_world": ["creature_template", "item_template"]}) as src:
        result = src.tables(name_contains=None, database=None, offset=0, limit=10)
        assert result["tables"] == [{"database": "cata_world", "table": "creature_template"}]
        assert result["missing"] == [{"database": "cata_world", "table": "item_template"}]
        with pytest.raises(ResearchError) as info:
            src.schema(database=None, table="item_template")
        assert info.value.code == "table_not_found"


def test_schema(source: MariaDbSource, mariadb: TestDatabase) -> None:
    schema = source.schema(database=None, table="creature_template")
    assert schema["database"] == "cata_world" and schema["primary_key"] == ["entry"]
    columns = {column["name"]: column for column in schema["columns"]}
    assert columns["entry"] == {
        "name": "entry",
        "type": "int(10) unsigned",
        "nullable": False,
        "key": "PRI",
        "default": "0",
        "extra": "",
        "ordinal": 1,
    }
    assert columns["subname"]["nullable"] is True and columns["subname"]["default"] == "NULL"
    assert columns["HealthModifier"]["type"] == "float"
    assert [c["ordinal"] for c in schema["columns"]] == list(range(1, len(schema["columns"]) + 1))
    with mariadb.source(allow={"cata_world": ["gameobject_template"]}) as objects:
        gameobject = objects.schema(database=None, table="gameobject_template")
    assert {c["name"]: c for c in gameobject["columns"]}["name"]["key"] == "MUL"
    assert {"name": "idx_name", "unique": False, "columns": ["name"]} in gameobject["indexes"]
    meta = {
        c["name"]: c["type"]
        for c in source.schema(database="vba_fixture_types", table="world_meta")["columns"]
    }
    assert meta["imported_at"] == "datetime(6)" and meta["flags"] == "bit(10)"
    assert meta["state"] == "enum('draft','live','retired')"


def test_schema_of_table_without_primary_key(source: MariaDbSource) -> None:
    schema = source.schema(database=None, table="spell_script_names")
    assert schema["primary_key"] == []
    assert schema["indexes"] == [
        {"name": "spell_id", "unique": True, "columns": ["spell_id", "ScriptName"]}
    ]


def test_origin_names_database_and_snapshot_only(source: MariaDbSource) -> None:
    assert source.origin("cata_world") == {
        "kind": "database",
        "database": "cata_world",
        "snapshot_id": SNAPSHOT_ID,
    }


def test_database_may_be_named_or_omitted(source: MariaDbSource) -> None:
    named = rows(
        source, "creature_template", ["entry"], f("entry", "eq", 90002), database="cata_world"
    )
    assert named == rows(source, "creature_template", ["entry"], f("entry", "eq", 90002))


def test_database_ambiguous(mariadb: TestDatabase) -> None:
    allow = {"cata_world": ["creature_template"], "cata_private": ["creature_template"]}
    with mariadb.source(allow=allow) as src:
        with pytest.raises(ResearchError) as info:
            rows(src, "creature_template", ["entry"])
        assert info.value.code == "database_ambiguous"
        assert info.value.details == {
            "table": "creature_template",
            "databases": ["cata_private", "cata_world"],
        }
        private = rows(src, "creature_template", ["name"], database="cata_private")
        assert private["rows"] == [{"name": "PRIVATE copy of Wild Wolpertinger"}]
