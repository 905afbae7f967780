"""The rule and script-file phases against the throwaway MariaDB and a real git repository.

tests/fixtures/world_db_rules.sql holds creature 94501: the spellclick npcflag
without npc_spellclick_spells rows and a ScriptName no script registers,
spawned in zone 9459 beside creature 94502, whose script the zone's file
registers. The repository has the engine's log lines and those script files.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.case.builder.conftest import write_config
from tests.project_research.conftest import TestDatabase, mariadb
from tests.project_research.git_fixtures import git
from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.engine import Enricher
from viano_bug_analysis.enrichment.extract import Mention
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.enrichment.rule_phase import rules_phase
from viano_bug_analysis.enrichment.script_files import script_file_phase
from viano_bug_analysis.project_research import (
    Capture,
    ProjectResearch,
    ResearchError,
    load_config,
    query_sha256,
)

__all__ = ["mariadb"]

ENGINE = {
    "src/server/game/Globals/ObjectMgr.cpp": (
        "void ObjectMgr::LoadNPCSpellClickSpells()\n{\n"
        '    LOG_ERROR("sql.sql", "npc_spellclick_spells: Creature template %u has '
        'UNIT_NPC_FLAG_SPELLCLICK but no data in spellclick table! Removing flag", entry);\n}\n'
    ),
    "src/server/game/Scripting/ScriptMgr.cpp": (
        "void ScriptMgr::Initialize()\n{\n"
        '    LOG_ERROR("sql.sql", "ScriptName \'%s\' exists in database, "\n'
        '        "but no core script found!", scriptName.c_str());\n}\n'
    ),
    "src/server/scripts/Events/rules_fixture.cpp": (
        "struct npc_rules_fixture_master : public ScriptedAI { };\n"
        "void AddSC_rules_fixture()\n{\n    RegisterCreatureAI(npc_rules_fixture_master);\n}\n"
    ),
    "src/server/scripts/EasternKingdoms/zone_rules_fixture.cpp": (
        "void AddSC_zone_rules_fixture()\n{\n    RegisterCreatureAI(npc_rules_fixture_vendor);\n}\n"
    ),
}


@pytest.fixture
def research(tmp_path: Path, mariadb: TestDatabase) -> ProjectResearch:
    repo = tmp_path / "src"
    for path, text in ENGINE.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "engine and scripts")
    commit = git(repo, "rev-parse", "HEAD").strip()
    config = tmp_path / "config"
    config.mkdir()
    return ProjectResearch(load_config(write_config(config, mariadb, repo, commit)))


def _runner(research: ProjectResearch) -> Any:
    steps = [0]

    def run(query: Mapping[str, Any]) -> StepOutcome:
        steps[0] += 1
        try:
            result = research.query(query)
        except ResearchError as err:
            return StepOutcome(steps[0], query_sha256(query), None, err.code, False)
        return StepOutcome(
            steps[0], result["query_sha256"], Capture.from_result(result), None, False
        )

    return run


def test_a_build_states_an_engine_rule_hit_with_its_line_and_where_the_script_would_live(
    research: ProjectResearch,
) -> None:
    with research:
        enricher = Enricher(
            vcore_profile().in_database("cata_world"),
            _runner(research),
            capture_path=lambda sha: f"captures/{sha}.json",
            phases=[rules_phase, script_file_phase],
        )
        run = enricher.run([Mention("creature", 94501, {"pointer": "/report/text", "offset": 0})])
    hits = {f["rule"]: f for f in run.facts if f["kind"] == "project_rule_hit"}
    spellclick = hits["spellclick_flag_without_spells"]
    assert spellclick["rule_kind"] == "engine"
    assert (spellclick["entity_type"], spellclick["entity_id"]) == ("creature", 94501)
    assert spellclick["engine_source"]["path"] == "src/server/game/Globals/ObjectMgr.cpp"
    assert spellclick["engine_source"]["line"] == 3
    assert len(spellclick["engine_source"]["sha256"]) == 64
    assert spellclick["rows"][0]["key"] == {"entry": 94501}
    unregistered = hits["script_name_without_script"]
    assert unregistered["symbol"] == "npc_rules_fixture_runner"
    assert unregistered["engine_source"]["line"] == 4  # the literal's second line
    candidates = {f["reason"]: f for f in run.facts if f["kind"] == "project_script_file_candidate"}
    assert candidates["sibling_prefix"]["path"] == "src/server/scripts/Events/rules_fixture.cpp"
    assert candidates["zone"]["path"] == (
        "src/server/scripts/EasternKingdoms/zone_rules_fixture.cpp"
    )
    assert candidates["zone"]["zone"]["value"] == 9459
    assert len(run.queries) <= vcore_profile().limits.max_queries
