"""The case-wide evidence ledger (investigation_v3 / investigation_project_v4): every
record one line in every prompt, the newest answers in full, and a conclusion of one
hypothesis may cite evidence another hypothesis took; the verdict keeps the citation."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.case.builder.conftest import case_spec
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import CONCLUDE, FIND, SETTINGS, answer, scripted_client
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.errors import ContextBudgetError
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.investigation.token_budget import TokenBudget


def _two_hypotheses(tmp_path: Path) -> Path:
    spec_path = case_spec(tmp_path / "inputs")
    spec = orjson.loads(spec_path.read_bytes())
    spec["hypotheses"].append({"id": "H2", "statement": "The log names another quest."})
    spec_path.write_bytes(orjson.dumps(spec))
    root = tmp_path / "package"
    CaseBuilder(spec_path, root).build()
    return root


def _concluding(hid: str, cited: list[dict[str, str]]) -> str:
    return orjson.dumps(
        {
            "hypothesis_id": hid,
            "assessment": "refuted",
            "confidence": 0.7,
            "evidence": cited,
            "next": {"kind": "conclusion", "summary": "The log names quest 90001 only."},
        }
    ).decode()


def test_a_conclusion_cites_evidence_another_hypothesis_took(tmp_path: Path) -> None:
    root = _two_hypotheses(tmp_path)
    cite = [{"evidence_id": "E1", "role": "contradicts", "reference": "/result/matches/0"}]
    script = [answer(FIND), answer(CONCLUDE), _concluding("H2", cite)]
    with ScriptedLlmServer(script) as server:
        outcome = InvestigationController(
            root,
            model=scripted_client(server),
            settings=SETTINGS,
            token_budget=TokenBudget(8192, "config", 1024),
        ).run()
        h2_prompt = server.requests[2].messages[-1]["content"]
    assert outcome.state == "concluded"
    # H2's first prompt lists H1's evidence in the ledger and shows it in full.
    assert "E1 (H1) source.find_text QuestID: 1 matches" in h2_prompt
    assert "E1 (H1) source.find_text QuestID: 1 matches\n  answer: " in h2_prompt
    stored = StepLog(root).outcome("H2")
    assert stored is not None and stored["reason"] == "concluded"
    assert stored["citations"][0]["evidence_id"] == "E1"
    assert stored["citations"][0]["provenance"]["source_ref"] == "diag-001"


def test_a_refused_request_is_explained_with_what_was_wrong(tmp_path: Path) -> None:
    root = _two_hypotheses(tmp_path)
    bad = {
        "kind": "tool",
        "operation": "source.read_context",
        "arguments": {"source_ref": "diag-001", "start_line": 900000, "end_line": 900010},
    }
    with ScriptedLlmServer([answer(bad), answer(CONCLUDE), answer(CONCLUDE, hid="H2")]) as server:
        InvestigationController(root, model=scripted_client(server), settings=SETTINGS).run()
        retry = server.requests[1].messages[-1]["content"]
    dispatch = StepLog(root).get("H1", 1, 1, "dispatch")
    assert dispatch is not None and dispatch["refusal"]["code"] == dispatch["rejected"]
    # What was wrong, as the CLI words it (tools/refusals.py), not the bare code.
    assert f"refused ({dispatch['rejected']}): line range ends after the last line" in retry


def test_a_case_whose_least_prompt_does_not_fit_is_refused_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    root = _two_hypotheses(tmp_path)
    with ScriptedLlmServer([answer(CONCLUDE)]) as server:
        with pytest.raises(ContextBudgetError) as caught:
            InvestigationController(
                root,
                model=scripted_client(server),
                settings=SETTINGS,
                token_budget=TokenBudget(2048, "config", 1024),
            ).run()
        assert server.requests == []
    assert caught.value.code == "context_budget_exceeded"
    assert caught.value.details["context_tokens"] == 2048
    assert "context_tokens" in caught.value.message
