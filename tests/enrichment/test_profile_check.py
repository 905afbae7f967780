"""``vba profile check`` on answers shaped like ProjectResearch's ``database.schema``.

Each table and column the profile uses is reported present, missing, not
allowlisted or type-mismatched; the references that therefore cannot be
followed are named, and a table refused by the allowlist gives the line to add.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from viano_bug_analysis.enrichment import parse_profile
from viano_bug_analysis.enrichment.profile_check import check_profile, resolved_columns, warnings
from viano_bug_analysis.errors import ResearchError, ResearchUnavailable

PROFILE = b"""
format = "viano-enrichment-profile"
format_version = 1
profile = "p"
database = "world"

[entities.quest]
table = "quest_template"
column = "ID"
columns = ["ID", "LogTitle"]
name_column = "LogTitle"

[tables.game_event_creature_quest]
columns = ["eventEntry", "id", "quest"]

[tables.conditions]
columns = ["SourceEntry", "ConditionValue1", "ConditionTypeOrReference"]

[[references]]
name = "quest_event_giver"
table = "game_event_creature_quest"
column = "quest"
holds = "quest"
part_of = true

[[references]]
name = "quest_condition"
table = "conditions"
column = "ConditionValue1"
holds = "quest"
part_of = true
when = [{ column = "ConditionTypeOrReference", operator = "eq", value = 9 }]
"""

TABLES: dict[str, dict[str, str]] = {
    "quest_template": {"ID": "int(10) unsigned", "LogTitle": "text"},
    "game_event_creature_quest": {"eventEntry": "tinyint(3)", "id": "int(10)", "quest": "int(10)"},
    "conditions": {
        "SourceEntry": "int(11)",
        "ConditionValue1": "varchar(10)",
        "ConditionTypeOrReference": "int(11)",
    },
}


def _schema(refused: Mapping[str, str]) -> Any:
    def schema(query: Mapping[str, Any]) -> Mapping[str, Any]:
        assert query["kind"] == "database.schema" and query["database"] == "world"
        table = query["table"]
        if table in refused:
            raise ResearchError(refused[table], "refused", {})
        columns = [{"name": n, "type": t} for n, t in TABLES[table].items()]
        return {"result": {"columns": columns}}

    return schema


def _check(refused: Mapping[str, str]) -> dict[str, Any]:
    return check_profile(parse_profile(PROFILE), _schema(refused))


def test_every_table_is_reported_with_its_status_and_what_it_blocks() -> None:
    report = _check({"quest_template": "table_not_found", "conditions": "table_not_allowed"})
    status = {t["table"]: t["status"] for t in report["tables"]}
    assert status == {
        "quest_template": "missing",
        "game_event_creature_quest": "present",
        "conditions": "not_allowlisted",
    }
    assert not report["ok"]
    blocked = {item["user"] for item in report["blocked"]}
    assert blocked == {"entities.quest", "reference quest_condition"}
    assert report["allowlist_lines"] == [
        "[database.allow]",
        "world = [",
        '    "conditions",  # added: the profile reads it',
        "]",
    ]
    text = "\n".join(warnings(report))
    assert "table quest_template: missing (table_not_found)" in text


def test_an_integer_key_of_text_type_is_a_type_mismatch() -> None:
    report = _check({})
    conditions = next(t for t in report["tables"] if t["table"] == "conditions")
    by_column = {c["column"]: c["status"] for c in conditions["columns"]}
    assert by_column["ConditionValue1"] == "type_mismatch"
    assert by_column["SourceEntry"] == "present"
    assert not report["ok"]


def test_a_profile_that_fits_is_ok_and_has_no_warnings() -> None:
    TABLES["conditions"]["ConditionValue1"] = "int(10) unsigned"
    try:
        report = _check({})
    finally:
        TABLES["conditions"]["ConditionValue1"] = "varchar(10)"
    assert report["ok"] and warnings(report) == []


def test_an_unavailable_service_is_not_a_finding() -> None:
    def down(_query: Mapping[str, Any]) -> Mapping[str, Any]:
        raise ResearchUnavailable("database", "connection_refused")

    with pytest.raises(ResearchUnavailable):
        check_profile(parse_profile(PROFILE), down)


ERA = b"""
[column_alternatives]
"quest_template.ID" = ["entry"]
"quest_template.LogTitle" = ["Title"]
"""


def test_a_column_of_another_schema_era_resolves_to_its_alternative_once() -> None:
    profile = parse_profile(PROFILE + ERA)
    TABLES["old_quest_template"] = {"entry": "int(10) unsigned", "Title": "text"}

    def schema(query: Mapping[str, Any]) -> Mapping[str, Any]:
        table = "old_quest_template" if query["table"] == "quest_template" else query["table"]
        columns = [{"name": n, "type": t} for n, t in TABLES[table].items()]
        return {"result": {"columns": columns}}

    try:
        report = check_profile(profile, schema)
    finally:
        del TABLES["old_quest_template"]
    quest = next(t for t in report["tables"] if t["table"] == "quest_template")
    assert quest["status"] == "present"
    assert resolved_columns(report) == {
        ("quest_template", "ID"): "entry",
        ("quest_template", "LogTitle"): "Title",
    }
    lookup = profile.with_columns(resolved_columns(report)).entities["quest"]
    assert (lookup.column, lookup.columns, lookup.name_column) == (
        "entry",
        ("entry", "Title"),
        "Title",
    )


CHAIN = b"""
[[references]]
name = "quest_next"
table = "game_event_creature_quest"
column = "id"
holds = "quest"

[[references]]
name = "quest_text"
table = "quest_template"
column = "LogTitle"
symbol = true
"""


def test_a_relation_that_only_reaches_a_missing_entity_table_is_not_blocked() -> None:
    report = check_profile(
        parse_profile(PROFILE + CHAIN), _schema({"quest_template": "table_not_found"})
    )
    blocked = {item["user"]: item["because"] for item in report["blocked"]}
    # quest_next's quest IDs still reach the event givers and conditions.
    assert "reference quest_next" not in blocked
    assert blocked["reference quest_text"] == [
        "starts from quest_template.LogTitle, and quest_template is missing (table_not_found)"
    ]
    assert blocked["entities.quest"] == [
        "looks up quest_template, and quest_template is missing (table_not_found)"
    ]
    text = "\n".join(warnings(report))
    assert (
        "partly followed reference quest_next: it reaches quest IDs: their quest_template "
        "rows are not read because quest_template is missing (table_not_found); their part_of "
        "references are still asked: quest_event_giver, quest_condition"
    ) in text
    assert "cannot follow reference quest_next" not in text
    assert not report["ok"]


def test_a_missing_column_names_the_relation_table_and_column() -> None:
    del TABLES["conditions"]["ConditionTypeOrReference"]
    try:
        report = _check({})
    finally:
        TABLES["conditions"]["ConditionTypeOrReference"] = "int(11)"
    blocked = {item["user"]: item["because"] for item in report["blocked"]}
    assert (
        "reads conditions.ConditionTypeOrReference: column missing"
        in (blocked["reference quest_condition"])
    )


def test_the_verdict_and_the_fix_come_first() -> None:
    # Issue 34: the 25 tables to add came at the end of 445 lines.
    import tomllib

    from viano_bug_analysis.enrichment.profile_check import lines

    report = check_profile(
        parse_profile(PROFILE),
        _schema({"conditions": "table_not_allowed", "quest_template": "table_not_found"}),
        allowed=["quest_template", "game_event_creature_quest"],
    )
    out = lines(report)
    assert out[0].startswith("profile ") and ": does not fit: " in out[0]
    assert "1 table(s) missing" in out[0] and "1 table(s) not allowlisted" in out[0]
    assert out[1].startswith("the fix: ")
    pasted = "\n".join(out[2 : 2 + len(report["allowlist_lines"])])
    assert tomllib.loads(pasted)["database"]["allow"]["world"] == [
        "quest_template",
        "game_event_creature_quest",
        "conditions",
    ]
    # Then the tables with a problem, each with who uses it; the rest on one line.
    rest = out[2 + len(report["allowlist_lines"]) :]
    assert rest[0] == "table conditions: not allowlisted (table_not_allowed)"
    assert rest[1].startswith("  used by: ")
    assert sum(line.startswith("tables there (") for line in rest) == 1


def test_a_profile_that_fits_says_so_in_one_line() -> None:
    from viano_bug_analysis.enrichment.profile_check import lines

    report = _check({})
    report["ok"] = True  # the fixture's text-typed column aside
    assert lines(report)[0].endswith("fits; all 3 tables and their columns are there")
