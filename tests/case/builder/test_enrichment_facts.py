"""The Wolpertinger-style fixture case, enriched against the real MariaDB and a real git repo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tests.case.builder.conftest import (
    CountingResearch,
    ResearchSetup,
    case_spec,
    resolve_pointer,
)
from viano_bug_analysis.case import load_package
from viano_bug_analysis.case.builder import BuildResult, CaseBuilder
from viano_bug_analysis.enrichment import research_origin, vcore_profile
from viano_bug_analysis.investigation.project_context import project_prompt_context
from viano_bug_analysis.project_research import load_config


def build(
    tmp_path: Path, research: CountingResearch, setup: ResearchSetup, **spec: Any
) -> BuildResult:
    return CaseBuilder(
        case_spec(tmp_path / "inputs", **spec),
        tmp_path / "package",
        profile=vcore_profile(),
        project_research=research,
        research_origin=research_origin(load_config(setup.config_path)),
    ).build()


def of_kind(facts: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [fact for fact in facts if fact["kind"] == kind]


def captured(package: Path, provenance: dict[str, Any]) -> Any:
    document = orjson.loads((package / provenance["capture_path"]).read_bytes())
    return resolve_pointer(document, provenance["pointer"])


def test_fixture_case_facts_with_provenance(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    built = build(tmp_path, counting, research_setup)
    package = tmp_path / "package"
    facts = built.facts
    by_id = {fact["fact_id"]: fact for fact in facts}
    entities = {(f["entity_type"], f["entity_id"]): f for f in of_kind(facts, "project_entity")}

    # Mentions come from the wowdiag log, with the line they stand on.
    mentions = {
        (f["entity_type"], f["entity_id"]): f["where"] for f in of_kind(facts, "case_mention")
    }
    assert mentions == {
        ("area", 5001): {"source_ref": "diag-001", "line": 1},  # "zone=5001"
        ("quest", 90001): {"source_ref": "diag-001", "line": 2},
        ("creature", 90002): {"source_ref": "diag-001", "line": 3},
        ("spell", 90004): {"source_ref": "diag-001", "line": 3},
    }

    # The quest title, read from its name column, with a pointer to the value.
    quest = entities[("quest", 90001)]
    assert quest["name"] == "Catch the Wolpertinger"
    assert captured(package, quest["name_provenance"]) == "Catch the Wolpertinger"
    assert captured(package, quest["provenance"]) == 90001

    # Quest texts are separate description facts; the row keeps only a reference.
    # (quest 90001's own row: the chain also reaches quest 90000 and its texts)
    texts = {
        f["source_column"]: f
        for f in of_kind(facts, "project_description")
        if f["provenance"]["capture_sha256"] == quest["provenance"]["capture_sha256"]
    }
    log = texts["LogDescription"]
    assert log["role"] == "quest_objective_text" and "Brewfest" in log["text"]
    assert captured(package, log["provenance"]) == log["text"]
    assert texts["QuestDescription"]["role"] == "quest_story_text"
    quest_rows = by_id[log["row_fact"]]
    assert quest_rows["rows"][0]["LogDescription"] == {"text_ref": log["fact_id"]}
    assert quest_rows["rows"][0]["QuestDescription"] == {
        "text_ref": texts["QuestDescription"]["fact_id"]
    }

    # The start item (a net), followed from the StartItem column. The real world
    # DB has no item_template: the item is reached as an entity without a table,
    # whose part_of rows (script name, addon) are read; it has no name fact.
    start = next(
        f for f in of_kind(facts, "project_relationship") if f["relation"] == "quest_start_item"
    )
    assert start["from"]["value"] == 90003
    assert start["to"] == {"entity_type": "item", "value": 90003}
    assert captured(package, start["from"]) == 90003
    assert ("item", 90003) not in entities
    addon = next(f for f in of_kind(facts, "project_rows") if f["table"] == "item_template_addon")
    assert captured(package, addon["provenance"])[0]["Id"] == 90003

    # The quest starter NPC, through creature_queststarter.
    starter = next(
        f
        for f in of_kind(facts, "project_relationship")
        if f["relation"] == "quest_creature_starter" and f["direction"] == "forward"
    )
    assert starter["from"]["table"] == "creature_queststarter" and starter["to"]["value"] == 90000
    assert entities[("creature", 90000)]["name"] == "Wendelin Jäger"

    # The creature's own SmartAI rows (source_type 0 only) and its script name.
    smart = next(
        f
        for f in of_kind(facts, "project_rows")
        if f["table"] == "smart_scripts" and f["filters"][0]["value"] == 90002
    )
    assert [(r["source_type"], r["id"]) for r in smart["rows"]] == [(0, 0), (0, 1)]
    assert smart["filters"][1] == {"column": "source_type", "operator": "eq", "value": 0}
    script = next(
        f for f in of_kind(facts, "project_source_hits") if f["symbol"] == "npc_wild_wolpertinger"
    )
    first = script["matches"][0]
    assert first["path"].endswith("zone_wolpertinger_glade.cpp") and first["line"] == 19
    assert len(first["blob"]) == 40 and len(first["sha256"]) == 64
    origin = script["provenance"]["origin"]
    assert origin == {
        "kind": "git",
        "url": "https://git.example.invalid/vcore.git",
        "commit": research_setup.commit,
    }
    spell = next(
        f
        for f in of_kind(facts, "project_source_hits")
        if f["symbol"] == "spell_wolpertinger_throw_net"
    )
    assert spell["matches"][0]["path"] == "src/server/scripts/Spells/spell_wolpertinger.cpp"

    # Everything was there before any LLM call: in the package, under research/project/.
    loaded = load_package(package)
    index_path = loaded.case["project_research"]["index"]["path"]
    assert index_path == "research/project/r0001/index.json"
    assert orjson.loads((package / index_path).read_bytes())["facts"] == facts
    assert len(built.queries) == len(counting.asked) == built.asked


def test_nothing_is_marked_observed_or_a_cause(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    facts = build(tmp_path, counting, research_setup).facts

    def keys(value: Any) -> set[str]:
        if isinstance(value, dict):
            return set(value) | {k for v in value.values() for k in keys(v)}
        if isinstance(value, list):
            return {k for v in value for k in keys(v)}
        return set()

    for fact in facts:
        assert fact.get("runtime_observed", False) is False
        assert not {k for k in keys(fact) if "cause" in k or "observed_at" in k}
    for fact in of_kind(facts, "project_relationship"):
        assert fact["referenced_only"] is True and fact["runtime_observed"] is False


def test_a_bare_numeric_id_is_never_a_name(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    # 999999 exists nowhere; 90002 exists. Only the name column ever gives a name.
    built = build(tmp_path, counting, research_setup, metadata={"creature_entry": 999999})
    entities = of_kind(built.facts, "project_entity")
    assert all(isinstance(f.get("name", ""), str) for f in entities)
    assert all(not str(f.get("name", "x")).isdigit() for f in entities)
    assert not any(f["entity_id"] == 999999 for f in entities)
    missing = [
        f
        for f in of_kind(built.facts, "project_empty_result")
        if f.get("table") == "creature_template"
        and f["filters"][0] == {"column": "entry", "operator": "eq", "value": 999999}
    ]
    assert len(missing) == 1 and missing[0]["statement"].startswith("none in this table")


def test_empty_item_script_result_is_none_in_this_table(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    # Item 90003 has an item_template_addon row but no item_script_names row.
    built = build(tmp_path, counting, research_setup, metadata={"item_entry": 90003})
    addon = next(
        f for f in of_kind(built.facts, "project_rows") if f["table"] == "item_template_addon"
    )
    assert addon["rows"][0]["Id"] == 90003  # the item is there ...
    empty = next(
        f
        for f in of_kind(built.facts, "project_empty_result")
        if f.get("table") == "item_script_names" and f["filters"][0]["value"] == 90003
    )
    # ... and the empty result speaks about that table only.
    assert empty["filters"][0] == {"column": "Id", "operator": "eq", "value": 90003}
    assert "none in this table" in empty["statement"]
    assert "not proof that the entity is missing" in empty["statement"]


def test_prompt_context_is_deterministic_and_labelled(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    built = build(tmp_path, counting, research_setup)
    context = project_prompt_context(built.package)
    assert context is not None
    assert context == project_prompt_context(load_package(tmp_path / "package"))
    assert context["prompt"] == "investigation_project_v1"
    assert context["left_out"]["input_inventory"] is True
    text = orjson.dumps(context).decode()
    assert '"inputs"' not in text and "attachments/" not in text
    assert all(fact["label"] for fact in context["facts"])
    # Leads first, in rank order; every other fact in fact-ID order.
    ids = [fact["fact_id"] for fact in context["facts"] if fact["kind"] != "project_lead"]
    assert ids == sorted(ids, key=lambda i: int(i[1:]))
    # Provenance stays citable in short form.
    entity = next(f for f in context["facts"] if f["kind"] == "project_entity")
    assert entity["source"].startswith("capture:") and "#/result/result/rows/" in entity["source"]
