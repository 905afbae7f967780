"""A seasonal-quest case against the fixture world DB on the real TrinityCore 4.3.4 schema.

The report names quest 91001 (its givers exist only in the game-event
tables), spell 91100 (a condition, a linked spell, a script name) and item
91200 (only in item_script_names). The build must reach each of them, with
pointers that resolve to the real values in the captures, and still reach the
link tables when ``quest_template`` is absent (cata_world_noquest).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.case.builder.conftest import (
    CountingResearch,
    case_spec,
    resolve_pointer,
    write_config,
)
from tests.project_research.conftest import TestDatabase
from viano_bug_analysis.case.builder import BuildResult, CaseBuilder
from viano_bug_analysis.cli import main
from viano_bug_analysis.enrichment import parse_profile, research_origin
from viano_bug_analysis.enrichment.profile import EnrichmentProfile
from viano_bug_analysis.exit_codes import ExitCode
from viano_bug_analysis.project_research import ProjectResearch, load_config

PROFILE = Path(__file__).parents[3] / "python/viano_bug_analysis/profiles/vcore/enrichment.toml"
TEXT = (
    "Keg Run of the Fixture Fair (https://db.example.invalid/?quest=91001): throwing the keg "
    "(?spell=91100) with ?item=91200 in the bags does nothing. It happens at the fair gate "
    "(zone=5001), right after areatrigger 9001."
)


def _profile(database: str) -> EnrichmentProfile:
    text = PROFILE.read_text().replace('database = "cata_world"', f'database = "{database}"')
    return parse_profile(text.encode())


def _config(tmp_path: Path, db: TestDatabase, repo: tuple[Path, str], database: str) -> Path:
    directory = tmp_path / f"config-{database}"
    directory.mkdir()
    return write_config(directory, db, repo[0], repo[1], database=database)


def _build(tmp_path: Path, config: Path, database: str) -> tuple[BuildResult, CountingResearch]:
    profile = _profile(database)
    with ProjectResearch(load_config(config)) as inner:
        research = CountingResearch(inner)
        built = CaseBuilder(
            case_spec(tmp_path / "inputs", text=TEXT),
            tmp_path / "package",
            profile=profile,
            project_research=research,
            research_origin=research_origin(load_config(config)),
        ).build()
    return built, research


def _rows(facts: list[dict[str, Any]], table: str) -> list[dict[str, Any]]:
    return [f for f in facts if f["kind"] == "project_rows" and f["table"] == table]


def _resolved_rows(package: Path, fact: dict[str, Any]) -> Any:
    provenance = fact["provenance"]
    document = orjson.loads((package / provenance["capture_path"]).read_bytes())
    return resolve_pointer(document, provenance["pointer"])


def _expect_link_facts(package: Path, facts: list[dict[str, Any]]) -> None:
    expected: dict[str, dict[str, Any]] = {
        "game_event_creature_quest": {"eventEntry": 24, "id": 91010, "quest": 91001},
        "game_event_gameobject_quest": {"eventEntry": 24, "id": 91020, "quest": 91001},
        "spell_linked_spell": {"spell_trigger": 91100, "spell_effect": 91101, "type": 0},
        "spell_script_names": {"spell_id": 91100, "ScriptName": "spell_fixture_keg_toss"},
        "item_script_names": {"Id": 91200, "ScriptName": "item_fixture_keg"},
    }
    for table, row in expected.items():
        found = _rows(facts, table)
        assert found, table
        real = [r for fact in found for r in _resolved_rows(package, fact)]
        assert any(all(r.get(k) == v for k, v in row.items()) for r in real), (table, real)
    conditions = [r for fact in _rows(facts, "conditions") for r in _resolved_rows(package, fact)]
    assert any(
        (c["SourceTypeOrReferenceId"], c["SourceEntry"], c["ConditionTypeOrReference"])
        == (17, 91100, 9)
        and c["ConditionValue1"] == 91001
        for c in conditions
    )
    entities = {(f["entity_type"], f["entity_id"]) for f in facts if f["kind"] == "project_entity"}
    assert {("creature", 91010), ("gameobject", 91020)} <= entities


def _related_rows(package: Path, facts: list[dict[str, Any]], relation: str) -> list[Any]:
    """The rows a relation's relationship facts reached, read back from their captures."""
    by_id = {f["fact_id"]: f for f in facts}
    found = []
    for fact in facts:
        if fact["kind"] != "project_relationship" or fact["relation"] != relation:
            continue
        target = by_id.get(fact["to"].get("fact", ""))
        if target is not None and target["kind"] == "project_rows":
            found.extend(_resolved_rows(package, target))
    return found


def _has(rows: list[Any], **expected: Any) -> bool:
    return any(all(row.get(k) == v for k, v in expected.items()) for row in rows)


# relation -> one row it must reach (keyed by the creature, gameobject, area or
# area trigger itself, so the same in both databases).
SIDE_TABLES: dict[str, dict[str, Any]] = {
    "gossip_menu_rows": {"MenuID": 91010, "TextID": 91010},
    "gossip_menu_options": {"MenuId": 91010, "OptionIndex": 0},
    "creature_movement": {"CreatureId": 91010, "Rooted": 1, "InteractionPauseTimer": 180000},
    "condition_near_creature": {
        "SourceEntry": 91101, "ConditionTypeOrReference": 29, "ConditionValue1": 91010
    },
    "condition_near_gameobject": {
        "SourceEntry": 91100, "ConditionTypeOrReference": 30, "ConditionValue1": 91020
    },
    "area_phase": {"AreaId": 5001, "PhaseId": 169},
    "spell_area_area": {"spell": 91102, "area": 5001},
    "condition_area_source": {"SourceTypeOrReferenceId": 26, "SourceGroup": 169},
    "condition_area_target": {"SourceEntry": 91102, "ConditionTypeOrReference": 23},
    "areatrigger_script_names_link": {"entry": 9001, "ScriptName": "at_fixture_glade_entrance"},
    "areatrigger_smart_scripts": {"entryorguid": 9001, "source_type": 2, "event_type": 46},
}  # fmt: skip

# Reached through the quest's own row (slots 2 and 3): only with quest_template.
QUEST_SLOTS: dict[str, dict[str, Any]] = {
    "creature_spellclick": {"npc_entry": 91011, "spell_id": 91100},
    "condition_creature_vehicle": {"SourceTypeOrReferenceId": 16, "SourceEntry": 91011},
    "condition_object_entry_creature": {"ConditionValue1": 3, "ConditionValue2": 91011},
    "item_script_names_link": {"Id": 91201, "ScriptName": "item_fixture_keg_tap"},
}  # fmt: skip


def test_the_side_tables_where_fixes_land_are_reached(
    tmp_path: Path, mariadb: TestDatabase, source_repo: tuple[Path, str]
) -> None:
    config = _config(tmp_path, mariadb, source_repo, "cata_world")
    built, _ = _build(tmp_path, config, "cata_world")
    package = tmp_path / "package"
    for relation, row in {**SIDE_TABLES, **QUEST_SLOTS}.items():
        assert _has(_related_rows(package, built.facts, relation), **row), relation
    # Slot 2 of RequiredNpcOrGo is a creature entity of its own.
    slot = [
        f
        for f in built.facts
        if f["kind"] == "project_relationship"
        and f["relation"].startswith("quest_required_creature_")
        and f["from"].get("column") == "RequiredNpcOrGo2"
    ]
    assert [(f["from"]["value"], f["to"]["entity_type"]) for f in slot] == [(91011, "creature")]
    assert not [f for f in built.facts if f.get("reason") in ("max_queries", "max_relationships")]
    # The creature's constant is written without spaces round '='.
    constants = {
        (f["entity_type"], f["entity_id"], f["constant"])
        for f in built.facts
        if f["kind"] == "project_source_constant"
    }
    assert ("creature", 91010, "NPC_KEG_MASTER_BRUNI") in constants


def test_without_quest_template_the_side_tables_keyed_by_their_own_ids_stay(
    tmp_path: Path, mariadb: TestDatabase, source_repo: tuple[Path, str]
) -> None:
    config = _config(tmp_path, mariadb, source_repo, "cata_world_noquest")
    built, _ = _build(tmp_path, config, "cata_world_noquest")
    for relation, row in SIDE_TABLES.items():
        assert _has(_related_rows(tmp_path / "package", built.facts, relation), **row), relation


def test_the_seasonal_quest_case_reaches_givers_conditions_links_and_scripts(
    tmp_path: Path, mariadb: TestDatabase, source_repo: tuple[Path, str]
) -> None:
    config = _config(tmp_path, mariadb, source_repo, "cata_world")
    built, _ = _build(tmp_path, config, "cata_world")
    _expect_link_facts(tmp_path / "package", built.facts)
    entities = {
        (f["entity_type"], f["entity_id"]) for f in built.facts if f["kind"] == "project_entity"
    }
    assert ("quest", 91001) in entities
    # The sample tree has none of the engine files the rules cite: their anchor
    # searches are refused (path_not_found), the database answered everything.
    assert not [f for f in built.facts if f.get("reason") == "query_refused" and "table" in f]


def test_without_quest_template_the_links_stay_and_one_fact_names_the_table(
    tmp_path: Path, mariadb: TestDatabase, source_repo: tuple[Path, str]
) -> None:
    config = _config(tmp_path, mariadb, source_repo, "cata_world_noquest")
    built, _ = _build(tmp_path, config, "cata_world_noquest")
    _expect_link_facts(tmp_path / "package", built.facts)
    refused = [f for f in built.facts if f.get("reason") == "query_refused"]
    refused = [f for f in refused if "table" in f]
    assert [(f["table"], f["code"]) for f in refused] == [("quest_template", "table_not_found")]


def test_a_second_build_asks_nothing_and_adds_no_revision(
    tmp_path: Path, mariadb: TestDatabase, source_repo: tuple[Path, str]
) -> None:
    config = _config(tmp_path, mariadb, source_repo, "cata_world_noquest")
    first, _ = _build(tmp_path, config, "cata_world_noquest")
    again, research = _build(tmp_path, config, "cata_world_noquest")
    assert not again.new_revision and research.asked == []
    assert again.facts == first.facts


@pytest.mark.parametrize(("database", "exit_code"), [("cata_world", 0), ("cata_world_noquest", 8)])
def test_profile_check_exits_by_what_the_database_offers(
    tmp_path: Path,
    mariadb: TestDatabase,
    source_repo: tuple[Path, str],
    capsys: pytest.CaptureFixture[str],
    database: str,
    exit_code: int,
) -> None:
    config = _config(tmp_path, mariadb, source_repo, database)
    profile = tmp_path / "enrichment.toml"
    profile.write_text(
        PROFILE.read_text().replace('database = "cata_world"', f'database = "{database}"')
    )
    code = main(
        ["profile", "check", "--project-config", str(config), "--profile", str(profile), "--json"]
    )
    assert code == exit_code == (ExitCode.OK if database == "cata_world" else ExitCode.PROFILE_GAPS)
    report = orjson.loads(capsys.readouterr().out)
    missing = [t["table"] for t in report["tables"] if t["status"] != "present"]
    assert missing == ([] if database == "cata_world" else ["quest_template"])


def test_a_name_without_an_id_is_asked_exactly_and_an_exact_one_is_followed(
    tmp_path: Path, mariadb: TestDatabase, source_repo: tuple[Path, str]
) -> None:
    config = _config(tmp_path, mariadb, source_repo, "cata_world")
    with ProjectResearch(load_config(config)) as inner:
        built = CaseBuilder(
            case_spec(
                tmp_path / "inputs",
                text='"Keg Run" does not start at Keg Master Bruni, nor at [keg master bruni].',
            ),
            tmp_path / "package",
            profile=_profile("cata_world"),
            project_research=CountingResearch(inner),
            research_origin=research_origin(load_config(config)),
        ).build()
    matches = {f["name"].casefold(): f for f in built.facts if f["kind"] == "project_name_match"}
    # "Keg Run" is only part of a title: no exact name, no candidate.
    assert "keg run" not in matches
    creature = matches["keg master bruni"]
    assert [(m["entity_type"], m["entity_id"]) for m in creature["matches"]] == [
        ("creature", 91010)
    ]
    assert creature["followed"] is True and creature["candidate"] is True
    provenance = creature["matches"][0]["provenance"]
    document = orjson.loads((tmp_path / "package" / provenance["capture_path"]).read_bytes())
    assert resolve_pointer(document, provenance["pointer"]) == "Keg Master Bruni"
    # An exact name of one entity is enriched like a mention of it.
    entities = {
        (f["entity_type"], f["entity_id"]) for f in built.facts if f["kind"] == "project_entity"
    }
    assert ("creature", 91010) in entities
    [summary] = [f for f in built.facts if f["kind"] == "case_name_candidates"]
    assert "Keg Run" in summary["not_found"]


def test_an_id_in_cpp_counts_only_as_a_constant_of_its_type_prefix(
    tmp_path: Path, mariadb: TestDatabase, source_repo: tuple[Path, str]
) -> None:
    config = _config(tmp_path, mariadb, source_repo, "cata_world")
    built, _ = _build(tmp_path, config, "cata_world")
    constants = [
        f for f in built.facts if f["kind"] == "project_source_constant" and f["entity_id"] == 91001
    ]
    assert [(f["entity_type"], f["constant"]) for f in constants] == [("quest", "QUEST_KEG_RUN")]
    match = constants[0]["match"]
    assert match["text"].strip() == "QUEST_KEG_RUN = 91001,"
    document = orjson.loads(
        (tmp_path / "package" / constants[0]["provenance"]["capture_path"]).read_bytes()
    )
    assert resolve_pointer(document, constants[0]["provenance"]["pointer"])["line"] == match["line"]
    assert "MAX_THINGS" not in orjson.dumps([f for f in built.facts if "match" in f]).decode()


def test_a_negative_required_npc_or_go_reaches_the_gameobject(
    tmp_path: Path, mariadb: TestDatabase, source_repo: tuple[Path, str]
) -> None:
    config = _config(tmp_path, mariadb, source_repo, "cata_world")
    built, _ = _build(tmp_path, config, "cata_world")
    required = [
        f
        for f in built.facts
        if f["kind"] == "project_relationship"
        and f["relation"].startswith("quest_required_creature_")
        and f["from"].get("id") == 91001
        and f["from"]["column"] == "RequiredNpcOrGo1"
    ]
    assert [(f["from"]["value"], f["to"]) for f in required] == [
        (
            -91020,
            required[0]["to"]
            | {"table": "gameobject_template", "value": 91020, "entity_type": "gameobject"},
        )
    ]


ERA_PROFILE = b"""
format = "viano-enrichment-profile"
format_version = 1
profile = "older_era"
database = "cata_world"

# Written for an older world DB (creature_text.entry); the live table says CreatureID.
[column_alternatives]
"creature_text.entry" = ["CreatureID"]

[[extract]]
entity_type = "creature"
in = "report.text"
pattern = '\\bnpc=(\\d{1,9})\\b'

[entities.creature]

[tables.creature_text]
columns = ["entry", "Text"]

[[references]]
name = "creature_text_link"
table = "creature_text"
column = "entry"
holds = "creature"
part_of = true
"""


def test_a_directly_constructed_builder_resolves_column_alternatives(
    tmp_path: Path, mariadb: TestDatabase, source_repo: tuple[Path, str]
) -> None:
    config = _config(tmp_path, mariadb, source_repo, "cata_world")
    with ProjectResearch(load_config(config)) as inner:
        research = CountingResearch(inner)
        built = CaseBuilder(
            case_spec(tmp_path / "inputs", text="Bruni (npc=91010) never speaks."),
            tmp_path / "package",
            profile=parse_profile(ERA_PROFILE),
            project_research=research,
            research_origin=research_origin(load_config(config)),
        ).build()
    texts = [r for fact in _rows(built.facts, "creature_text") for r in fact["rows"]]
    assert texts == [{"CreatureID": 91010, "Text": "Kegs won't roll themselves, $n!"}]
    # The schema answer that chose the name is a journaled step of the revision.
    purposes = [q["purpose"] for q in built.queries]
    assert purposes[0] == {"kind": "column_resolution", "table": "creature_text"}
    assert len(research.asked) == len(built.queries)


def test_vba_case_build_warns_once_and_its_summary_names_the_missing_table(
    tmp_path: Path,
    mariadb: TestDatabase,
    source_repo: tuple[Path, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, mariadb, source_repo, "cata_world_noquest")
    profile = tmp_path / "enrichment.toml"
    profile.write_text(
        PROFILE.read_text().replace('database = "cata_world"', 'database = "cata_world_noquest"')
    )
    spec = case_spec(tmp_path / "inputs", text=TEXT)
    argv = ["case", "build", str(spec), str(tmp_path / "package")]
    code = main([*argv, "--project-config", str(config), "--profile", str(profile)])
    out, err = capsys.readouterr()
    assert code == ExitCode.OK
    warned = [line for line in err.splitlines() if line.startswith("profile check: ")]
    assert warned.count("profile check: table quest_template: missing (table_not_found)") == 1
    assert not [line for line in warned if "cannot follow reference quest_next" in line]
    lines = out.splitlines()
    (_, _, after) = "\n".join(lines).partition("\nnot read:\n")
    unread = after.split("\ncoverage:\n")[0].split("\nfacts:\n")[0].splitlines()
    refused_tables = [
        line for line in unread if "table_not_found)" in line and "query_refused" in line
    ]
    assert len(refused_tables) == 1
    assert re.search(
        r"\] query_refused: quest_template: \d+ queries refused \(table_not_found\)$",
        refused_tables[0],
    )
    # The lookups the refusal stopped: one line per origin, naming the table once.
    stopped = [line for line in unread if " not read (table_not_found, see P" in line]
    texts = [line.split("] ", 1)[1] for line in stopped]
    named = [text.split(": ", 1)[1].split(" not read")[0] for text in texts]
    assert named and all(re.fullmatch(r"quest_template( \(\d+ lookups\))?", n) for n in named)
    origins = [text.split(": ", 1)[0] for text in texts]
    assert len(origins) == len(set(origins))
    # Values meaning "no reference": one line per table, each column with its row count,
    # said to be ignore_values, not a gap; never worded as a coverage gap.
    assert not [line for line in lines if "value_not_followed" in line]
    ignored = [line for line in out.splitlines() if "no reference: " in line]
    shape = re.compile(
        r"no reference: in (\w+), \w+ \(\d+ rows?\)(, \w+ \(\d+ rows?\))* (is|are) "
        r"NULL/empty/0 \(ignore_values\), nothing to follow$"
    )
    tables = [shape.search(line) for line in ignored]
    assert ignored and all(tables)
    assert "quest_template_addon" in [t.group(1) for t in tables if t]
    assert len({t.group(1) for t in tables if t}) == len(tables)
    # The head line counts the refused target.
    # quest_template, and the engine files the rules cite (not in the sample tree)
    assert re.search(r"\d+ refused targets \(quest_template, source\.search\)", out)
