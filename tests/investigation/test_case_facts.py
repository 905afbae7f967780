"""Facts on demand: a brief scaled to a small budget leaves facts out and says so;
a model that needs one asks case.facts, sees it, and cites the answer. Needs the
test services (real MariaDB, real git repository: scripts/with_test_services.sh)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import orjson

from tests.case.builder.conftest import (  # noqa: F401 (fixtures)
    ResearchSetup,
    case_spec,
    mariadb,
    research_setup,
    source_repo,
)
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import (
    SETTINGS,
    Stopped,
    answer,
    built_with_research,
    scripted_client,
)
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.evidence import EvidenceStore
from viano_bug_analysis.investigation.project_context import load_index
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.investigation.token_budget import TokenBudget
from viano_bug_analysis.investigation.verdict import VerdictStore
from viano_bug_analysis.report import build_report

SMALL = TokenBudget(6144, "config", 512)  # some facts fit, most are left out


def test_a_fact_left_out_of_the_brief_is_read_with_case_facts(
    tmp_path: Path,
    research_setup: ResearchSetup,  # noqa: F811 (the imported fixture)
) -> None:
    root = built_with_research(case_spec(tmp_path / "inputs"), tmp_path / "package", research_setup)
    index = load_index(load_package(root))
    assert index is not None
    # The first call is stored before it is sent: stop there to learn what its
    # brief leaves out (nothing is asked).

    def stop(point: str) -> None:
        if point == "H1-1-1-call":
            raise Stopped(point)

    with ScriptedLlmServer([]) as probe, contextlib.suppress(Stopped):
        InvestigationController(
            root,
            model=scripted_client(probe),
            settings=SETTINGS,
            research=research_setup.research(),
            token_budget=SMALL,
            after_step=stop,
        ).run()
    call = StepLog(root).get("H1", 1, 1, "call")
    assert call is not None
    brief = call["context"]["brief"]
    assert brief["left_out"], "the small budget leaves facts out"
    wanted = brief["left_out"][-1]
    assert "case.facts" in call["context"]["operations"]
    ask = {
        "kind": "tool",
        "operation": "case.facts",
        "arguments": {"ids": [wanted], "offset": 0, "limit": 5},
    }
    cite = [{"evidence_id": "E1", "role": "context", "reference": "/facts/0/view"}]
    conclude = orjson.dumps(
        {
            "hypothesis_id": "H1",
            "assessment": "undetermined",
            "confidence": 0.3,
            "evidence": cite,
            "next": {"kind": "conclusion", "summary": "The fact read on demand says it."},
        }
    ).decode()
    with ScriptedLlmServer([answer(ask), conclude]) as server:
        outcome = InvestigationController(
            root,
            model=scripted_client(server),
            settings=SETTINGS,
            research=research_setup.research(),
            token_budget=SMALL,
        ).run()
        first_prompt = server.requests[0].messages[-1]["content"]
        second_prompt = server.requests[1].messages[-1]["content"]
        system = server.requests[0].messages[0]["content"]
    assert outcome.state == "concluded"
    assert "Left out for room: " in first_prompt and "ask case.facts" in first_prompt
    assert 'operation "case.facts"' in system
    (record,) = EvidenceStore(root).records()
    assert record["kind"] == "case_facts"
    # The answer's view: the page's range, then the fact's compact line under its ID.
    assert "  answer: facts 1-1 of 1:" in second_prompt and f"\n{wanted} " in second_prompt
    stored = StepLog(root).outcome("H1")
    assert stored is not None and stored["citations"][0]["provenance"]["kind"] == "case_facts"
    for message in (first_prompt, second_prompt):
        assert "sha256" not in message and "capture:" not in message


def test_a_conclusion_cites_another_hypothesis_evidence_and_a_fact_and_the_report_verifies_both(
    tmp_path: Path,
    research_setup: ResearchSetup,  # noqa: F811 (the imported fixture)
) -> None:
    spec_path = case_spec(tmp_path / "inputs")
    spec = orjson.loads(spec_path.read_bytes())
    spec["hypotheses"].append({"id": "H2", "statement": "The quest needs another creature."})
    spec_path.write_bytes(orjson.dumps(spec))
    root = built_with_research(spec_path, tmp_path / "package", research_setup)
    index = load_index(load_package(root))
    assert index is not None
    entity = next(f for f in index["facts"] if f["kind"] == "project_entity")
    cites = [
        {"evidence_id": "E1", "role": "context", "reference": "/matches/0/line"},
        {"evidence_id": entity["fact_id"], "role": "supports", "reference": "/entity_id"},
    ]
    search = {
        "kind": "source.search",
        "text": "90002",
        "case_sensitive": True,
        "path_prefix": "src/",
        "offset": 0,
        "limit": 5,
    }
    h2 = orjson.dumps(
        {
            "hypothesis_id": "H2",
            "assessment": "refuted",
            "confidence": 0.6,
            "evidence": cites,
            "next": {"kind": "conclusion", "summary": "H1's search and the entity fact say so."},
        }
    ).decode()
    script = [
        answer({"kind": "tool", "operation": "project.query", "arguments": search}),
        answer({"kind": "conclusion", "summary": "-"}),
        h2,
    ]
    with ScriptedLlmServer(script) as server:
        outcome = InvestigationController(
            root,
            model=scripted_client(server),
            settings=SETTINGS,
            research=research_setup.research(),
            token_budget=TokenBudget(16384, "config", 2048),
        ).run()
    assert outcome.state == "concluded"
    stored = StepLog(root).outcome("H2")
    assert stored is not None and stored["reason"] == "concluded"
    kinds = [c["provenance"]["kind"] for c in stored["citations"]]
    assert kinds == ["project_git", "case_fact"]
    report = build_report(root)
    (h2_report,) = [h for h in report["hypotheses"] if h["id"] == "H2"]
    assert [c["verification"] for c in h2_report["citations"]] == ["verified", "verified"]
    assert h2_report["citations"][1]["evidence"]["kind"] == "case_fact"
    # Version 3 (facts as tables) allows P-citations as version 2 did.
    assert report["format_version"] == 3
    verdict = VerdictStore(root).current()
    assert verdict is not None and verdict["format_version"] == 2
