"""Where a missing script would live, and the query bounds of the build phases.

The world is in memory (``world_fakes``): creature 94001 names the script
``npc_keg_runner`` that nothing registers, while a sibling of the same chain,
a constant naming the creature and a scripted neighbour spawned in the same
zone each point at a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.enrichment.world_fakes import FakeWorld, creature, spawn
from viano_bug_analysis.enrichment import parse_profile
from viano_bug_analysis.enrichment.engine import Enricher
from viano_bug_analysis.enrichment.extract import Mention
from viano_bug_analysis.enrichment.rule_phase import rules_phase
from viano_bug_analysis.enrichment.script_files import script_file_phase

PROFILE = Path(__file__).parents[2] / "python/viano_bug_analysis/profiles/vcore/enrichment.toml"
C = 94001
TABLES = {
    "creature_template": [
        creature(C, ScriptName="npc_keg_runner"),
        creature(94020, ScriptName="npc_fair_vendor"),
    ],
    "creature": [spawn(700001, C, zoneId=5001), spawn(700020, 94020, zoneId=5001)],
}
FILES = {
    "src/server/scripts/Events/fair.cpp": "struct npc_keg_master : public ScriptedAI {};\n"
    "void AddSC_fair()\n{\n    RegisterCreatureAI(npc_keg_master);\n}\n",
    "src/server/scripts/Events/fair.h": "enum FairCreatures\n{\n    NPC_KEG_RUNNER = 94001,\n};\n",
    "src/server/scripts/EasternKingdoms/zone_fair.cpp": "void AddSC_zone_fair()\n{\n"
    "    RegisterCreatureAI(npc_fair_vendor);\n}\n",
}


def _run(limits: str = "", tables: Any = None) -> tuple[list[dict[str, Any]], Enricher, FakeWorld]:
    text = PROFILE.read_bytes().replace(
        b"max_queries = 512\n", b"max_queries = 512\n" + limits.encode()
    )
    world = FakeWorld(TABLES if tables is None else tables, FILES)
    enricher = Enricher(
        parse_profile(text),
        world,
        capture_path=lambda sha: f"captures/{sha}.json",
        phases=[rules_phase, script_file_phase],
    )
    run = enricher.run([Mention("creature", C, {"pointer": "/report/text", "offset": 0})])
    return run.facts, enricher, world


def _candidates(facts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {f["reason"]: f for f in facts if f["kind"] == "project_script_file_candidate"}


def test_an_unregistered_script_name_points_at_the_file_of_its_chain_siblings() -> None:
    sibling = _candidates(_run()[0])["sibling_prefix"]
    assert sibling["path"] == "src/server/scripts/Events/fair.cpp"
    assert (sibling["entity_type"], sibling["entity_id"]) == ("creature", C)
    assert sibling["script_name"] == "npc_keg_runner"
    assert sibling["prefix"] == "npc_keg_"
    assert [m["text"].strip() for m in sibling["evidence"]] == [
        "RegisterCreatureAI(npc_keg_master);"
    ]
    assert sibling["provenance"]["pointer"] == "/result/result/matches"


def test_the_file_whose_constants_name_the_creature_is_a_candidate() -> None:
    constants = _candidates(_run()[0])["constants"]
    assert constants["path"] == "src/server/scripts/Events/fair.h"
    assert constants["constant"] == "NPC_KEG_RUNNER"
    assert constants["evidence"][0]["line"] == 3


def test_the_zone_file_is_where_the_scripted_neighbours_of_the_spawn_are_registered() -> None:
    zone = _candidates(_run()[0])["zone"]
    assert zone["path"] == "src/server/scripts/EasternKingdoms/zone_fair.cpp"
    assert zone["zone"]["value"] == 5001 and zone["zone"]["column"] == "zoneId"
    assert zone["neighbour_script"] == "npc_fair_vendor"
    assert zone["zone"]["spawn"]["key"] == {"guid": 700001}


def test_a_registered_script_gets_no_candidate() -> None:
    files_registered = dict(FILES)
    files_registered["src/server/scripts/Events/fair.cpp"] += (
        "RegisterCreatureAI(npc_keg_runner);\n"
    )
    world = FakeWorld(TABLES, files_registered)
    enricher = Enricher(
        parse_profile(PROFILE.read_bytes()),
        world,
        capture_path=lambda s: s,
        phases=[script_file_phase],
    )
    facts = enricher.run([Mention("creature", C, {"pointer": "/report/text", "offset": 0})]).facts
    reasons = {f["reason"] for f in facts if f["kind"] == "project_script_file_candidate"}
    assert "sibling_prefix" not in reasons


def test_a_creature_without_any_script_name_still_gets_its_constants_and_zone_files() -> None:
    tables = {**TABLES, "creature_template": [creature(C), TABLES["creature_template"][1]]}
    candidates = _candidates(_run(tables=tables)[0])
    assert set(candidates) == {"constants", "zone"}
    assert candidates["zone"]["script_name"] is None


def _phase_queries(enricher: Enricher, kinds: set[str]) -> list[dict[str, Any]]:
    return [q for q in enricher._queries if q["purpose"]["kind"] in kinds]


def test_the_phases_ask_nothing_new_past_their_own_bounds_and_say_so() -> None:
    facts, enricher, _ = _run("rule_queries = 0\nscript_file_queries = 0\n")
    assert not _phase_queries(
        enricher, {"rule_check", "rule_anchor", "script_siblings", "script_zone"}
    )
    reasons = {f.get("reason") for f in facts if f["kind"] == "project_context_coverage"}
    assert {"rule_queries", "script_file_queries"} <= reasons
    # What the build had asked already costs nothing: the script-name rule still hits.
    hits = {f["rule"] for f in facts if f["kind"] == "project_rule_hit"}
    assert "script_name_without_script" in hits
    assert all(f["engine_source"] is None for f in facts if f["kind"] == "project_rule_hit")


def test_the_phases_share_max_queries_with_the_build() -> None:
    for cap in (5, 12, 20):
        text = PROFILE.read_bytes().replace(b"max_queries = 512", f"max_queries = {cap}".encode())
        enricher = Enricher(
            parse_profile(text),
            FakeWorld(TABLES, FILES),
            capture_path=lambda s: s,
            phases=[rules_phase, script_file_phase],
        )
        run = enricher.run([Mention("creature", C, {"pointer": "/report/text", "offset": 0})])
        assert len(run.queries) <= cap
        assert any(f.get("reason") == "max_queries" for f in run.facts)
