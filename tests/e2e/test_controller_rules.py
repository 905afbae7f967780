"""Controller rules without live research: invalid-response blocking and operator
resume, a case generation change between dispatch and persistence, and the
default recovery policy 0 (strict parse only)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.case.builder.conftest import case_spec
from tests.e2e.crash import KillAtCommit, Killed
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import CONCLUDE, FIND, answer, scripted_client
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.errors import CaseError
from viano_bug_analysis.investigation.budget import BudgetManager
from viano_bug_analysis.investigation.checkpoints import CheckpointStore
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.evidence import EvidenceStore
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.tools.router import InvestigationToolRouter


def package(tmp_path: Path, **spec: Any) -> Path:
    root = tmp_path / "package"
    CaseBuilder(case_spec(tmp_path / "inputs", **spec), root).build()
    return root


def run(root: Path, server: ScriptedLlmServer, settings: InvestigationSettings, **kw: Any) -> Any:
    return InvestigationController(
        root, model=scripted_client(server), settings=settings, **kw
    ).run()


def test_invalid_responses_block_and_an_operator_resume_continues(tmp_path: Path) -> None:
    root = package(tmp_path)
    settings = InvestigationSettings(invalid_response_limit=2, response_recovery_version=1)
    with ScriptedLlmServer(["I think the quest is broken.", "{not json"]) as server:
        outcome = run(root, server, settings)
        assert (outcome.state, outcome.code) == ("blocked", "INVALID_LLM_RESPONSES")
        assert load_package(root).manifest["status"]["code"] == "INVALID_LLM_RESPONSES"
        # The rejection feedback reached the second call; no hypothesis was ended.
        assert "rejected (syntax_error)" in server.requests[1].messages[-1]["content"]
        assert StepLog(root).outcome("H1") is None
        CheckpointStore(root).resume("operator")
        server.add(answer(CONCLUDE))
        final = run(root, server, settings)
        assert final.state == "concluded" and len(server.requests) == 3


def test_a_generation_change_between_dispatch_and_persistence_takes_no_evidence(
    tmp_path: Path,
) -> None:
    root = package(tmp_path)

    class ChangingRouter(InvestigationToolRouter):
        def query(self, package_path: Any, request: Any) -> dict[str, Any]:
            result = super().query(package_path, request)
            # A new revision lands while the dispatch is in flight.
            CaseBuilder(case_spec(tmp_path / "inputs2", text="New report text."), root).build()
            return result

    settings = InvestigationSettings(response_recovery_version=1)
    with ScriptedLlmServer([answer(FIND), answer(CONCLUDE)]) as server:
        final = run(root, server, settings, router=ChangingRouter())
    assert final.state == "concluded"
    assert EvidenceStore(root).records() == []
    rejections = [c.rejection for c in CheckpointStore(root).history() if c.rejection]
    assert [r.code for r in rejections] == ["case_changed"]
    assert (
        "refused (case_changed): the case generation changed"
        in (server.requests[1].messages[-1]["content"])
    )


def test_policy_zero_parses_strictly_and_keeps_prompts_without_notes(tmp_path: Path) -> None:
    root = package(tmp_path)
    fenced = "```json\n" + answer(CONCLUDE) + "\n```"
    settings = InvestigationSettings(invalid_response_limit=3)  # recovery version 0
    with ScriptedLlmServer([fenced, answer(CONCLUDE)]) as server:
        final = run(root, server, settings)
        assert final.state == "concluded"
        decision = StepLog(root).get("H1", 1, 1, "decision")
        assert decision is not None and decision["status"] == "rejected"
        assert decision["applied_rules"] == []
        assert "Format note" not in server.requests[1].messages[-1]["content"]
    # The stored policy stays 0 even when a later run asks for 1.
    with ScriptedLlmServer([]) as server:
        run(root, server, InvestigationSettings(response_recovery_version=1))
    assert orjson.loads((root / "analysis/investigation/policy.json").read_bytes()) == {
        "response_recovery_version": 0
    }


def test_a_case_concluded_past_an_unfinished_conclusion_gets_the_account_closed(
    tmp_path: Path,
) -> None:
    root = package(tmp_path)
    settings = InvestigationSettings(response_recovery_version=1)
    probe = tmp_path / "probe"
    shutil.copytree(root, probe)
    with ScriptedLlmServer([answer(CONCLUDE)]) as server, KillAtCommit(None) as count:
        run(probe, server, settings)
    outcome_commit = count.points.index("link H1.json") + 1
    with ScriptedLlmServer([answer(CONCLUDE)]) as server:
        with KillAtCommit(outcome_commit), pytest.raises(Killed):
            run(root, server, settings)
        # What an earlier version's rerun did: skip the hypothesis with an
        # outcome and conclude the case, leaving its account open.
        CheckpointStore(root).advance("concluded", event="all hypotheses done")
        assert BudgetManager(root).account("H1").status == "open"
        final = run(root, server, settings)
        assert len(server.requests) == 1
    assert final.state == "concluded"
    assert BudgetManager(root).account("H1").status == "concluded"


def test_a_stored_reply_whose_usage_is_damaged_is_a_typed_corruption(tmp_path: Path) -> None:
    root = package(tmp_path)
    settings = InvestigationSettings(response_recovery_version=1)
    probe = tmp_path / "probe"
    shutil.copytree(root, probe)
    with ScriptedLlmServer([answer(CONCLUDE)]) as server, KillAtCommit(None) as count:
        run(probe, server, settings)
    reply_commit = count.points.index("link H1-001-01-reply.json") + 1
    killed = KillAtCommit(reply_commit)
    with ScriptedLlmServer([answer(CONCLUDE)]) as server, killed, pytest.raises(Killed):
        run(root, server, settings)
    path = root / "analysis/investigation/steps/H1-001-01-reply.json"
    record = orjson.loads(path.read_bytes())
    record["chat"]["usage"] = {"total_tokens": "18"}  # readable, but not a token count
    path.unlink()
    path.write_bytes(orjson.dumps(record, option=orjson.OPT_SORT_KEYS))
    with ScriptedLlmServer([]) as server:
        with pytest.raises(CaseError) as damaged:
            run(root, server, settings)
        assert len(server.requests) == 0
    assert damaged.value.code == "package_corrupt"
    assert damaged.value.details["path"] == "analysis/investigation/steps/H1-001-01-reply.json"
