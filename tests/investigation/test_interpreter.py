"""The CaseInterpreter against a scripted OpenAI-compatible server (no research).

A case built with no hypotheses is interpreted into a new revision whose
hypotheses carry their origin; a rejected answer (an unknown label, a first
query the router's preflight refuses, a schema error) is told what was wrong
in the next attempt; the invalid-response limit blocks the case and an
operator resume continues with the last feedback; operator hypotheses keep
their IDs and text; the prompt never shows an investigation's answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.case.builder.conftest import case_spec
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import FIND_QUERY, scripted_client
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import InterpretationError
from viano_bug_analysis.investigation.budget import BudgetManager
from viano_bug_analysis.investigation.checkpoints import CheckpointStore
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.interpretation_prompt import (
    build_messages,
    example_hypothesis,
)
from viano_bug_analysis.investigation.interpreter import CaseInterpreter
from viano_bug_analysis.investigation.recovery import CallRecordStore
from viano_bug_analysis.investigation.recovery.repair import contract_errors
from viano_bug_analysis.schema_errors import check
from viano_bug_analysis.schemas import load_schema

SETTINGS = InvestigationSettings(response_recovery_version=1, invalid_response_limit=3)

READ: dict[str, Any] = {
    "operation": "source.read_context",
    "arguments": {"source_ref": "diag-001", "start_line": 1, "end_line": 4},
}


def hypothesis(statement: str, query: dict[str, Any], rests_on: list[str] | None = None) -> Any:
    return {
        "statement": statement,
        "refuted_if": "The log shows the credit.",
        "rests_on": rests_on or ["report", "diag-001"],
        "first_query": query,
    }


def answer(*items: Any) -> str:
    return orjson.dumps({"hypotheses": list(items)}).decode()


GOOD = answer(
    hypothesis("The spell hit gives no quest credit.", FIND_QUERY),
    hypothesis("The quest objective counts another creature.", READ),
)


def built(tmp_path: Path, hypotheses: list[dict[str, str]] | None = None) -> Path:
    spec_path = case_spec(tmp_path / "inputs")
    spec = orjson.loads(spec_path.read_bytes())
    spec["hypotheses"] = hypotheses or []
    spec_path.write_bytes(orjson.dumps(spec))
    root = tmp_path / "package"
    CaseBuilder(spec_path, root).build()
    return root


def interpreter(root: Path, server: ScriptedLlmServer, **kwargs: Any) -> CaseInterpreter:
    client = scripted_client(server)
    return CaseInterpreter(root, model=client, settings=kwargs.pop("settings", SETTINGS), **kwargs)


def user_prompt(server: ScriptedLlmServer, index: int) -> str:
    return str(server.requests[index].messages[-1]["content"])


def test_a_case_without_hypotheses_gets_a_revision_with_proposed_ones(tmp_path: Path) -> None:
    root = built(tmp_path)
    assert load_package(root).case["hypotheses"] == []
    with ScriptedLlmServer([GOOD]) as server:
        outcome = interpreter(root, server).run()
        assert len(server.requests) == 1
    assert (outcome.state, outcome.revision, outcome.new) == ("interpreted", 2, True)
    package = load_package(root)
    assert package.analysis_revision == 2
    hypotheses = package.case["hypotheses"]
    assert [h["id"] for h in hypotheses] == ["H1", "H2"]
    assert hypotheses[0]["statement"] == "The spell hit gives no quest credit."
    origin = hypotheses[0]["origin"]
    records = CallRecordStore(root).list()
    assert origin["by"] == "case_interpreter"
    assert origin["prompt_version"] == "case_interpretation_v2"
    assert origin["call_record_sha256"] == records[-1].sha256
    assert records[-1].document["prompt_id"] == "case_interpretation_v2"
    assert origin["interpreted_revision"] == 1
    assert origin["first_query"] == FIND_QUERY
    assert origin["rests_on"] == ["report", "diag-001"]
    # The budget account was charged what the server billed, and closed.
    account = BudgetManager(root).account("interpretation-r0001")
    assert (account.spent, account.status) == (18, "concluded")
    events = [c.payload.get("event") for c in CheckpointStore(root).history()]
    assert events == ["interpretation_started", "interpreted"]
    # The router can query for the new hypotheses at once.
    assert package.hypothesis_ids == {"H1", "H2"}


def test_a_second_run_asks_nothing(tmp_path: Path) -> None:
    root = built(tmp_path)
    with ScriptedLlmServer([GOOD]) as server:
        interpreter(root, server).run()
        again = interpreter(root, server).run()
        assert len(server.requests) == 1
    assert (again.state, again.new, again.revision) == ("interpreted", False, 2)


def test_the_prompt_holds_the_report_the_labels_and_exact_operations(tmp_path: Path) -> None:
    root = built(tmp_path)
    with ScriptedLlmServer([GOOD]) as server:
        interpreter(root, server).run()
        system = server.requests[0].messages[0]["content"]
        user = user_prompt(server, 0)
    assert "I threw the net at a wolpertinger" in user
    assert '- "report": the report above' in user
    assert '- "diag-001": snapshot source_file session.log' in user
    assert '"case_sensitive": boolean' in system  # generated from the request schema
    assert "project.query" not in system  # research is not enabled


def test_the_prompt_example_holds_the_whole_contract(tmp_path: Path) -> None:
    """The one example the prompt shows passes the schema, the labels and the preflight."""
    root = built(tmp_path)
    example = example_hypothesis(
        {
            "facts": [
                {"label": "report", "kind": "report"},
                {"label": "diag-001", "kind": "source_file"},
            ]
        }
    )
    assert check("case-interpretation-v1", {"hypotheses": [example]}) is None
    with ScriptedLlmServer([answer(example)]) as server:
        outcome = interpreter(root, server).run()
    assert outcome.state == "interpreted"


@pytest.mark.parametrize(
    "facts",
    [
        [{"label": "diag-001", "kind": "source_file"}],
        [{"label": "db-001", "kind": "database_snapshot"}],
        [{"label": "P1", "kind": "project_fact", "fact": {}}],
    ],
)
def test_every_form_of_the_example_is_a_valid_next_step(facts: list[dict[str, Any]]) -> None:
    example = example_hypothesis({"facts": [{"label": "report", "kind": "report"}, *facts]})
    assert check("case-interpretation-v1", {"hypotheses": [example]}) is None
    step = {
        "hypothesis_id": "H1",
        "assessment": "undetermined",
        "confidence": 0.5,
        "evidence": [],
        "next": {"kind": "tool", **example["first_query"]},
    }
    assert contract_errors(step) == []
    labels = {"report", *(f["label"] for f in facts)}
    assert set(example["rests_on"]) <= labels


def test_operator_hypotheses_keep_precedence_and_are_never_rewritten(tmp_path: Path) -> None:
    kept = [{"id": "H1", "statement": "The net's spell hit gives no quest credit."}]
    root = built(tmp_path, kept)
    repeat = hypothesis("The net's spell hit gives NO quest credit.", FIND_QUERY)
    with ScriptedLlmServer([answer(repeat), GOOD]) as server:
        outcome = interpreter(root, server).run()
        assert "H1: The net's spell hit gives no quest credit." in user_prompt(server, 0)
        feedback = user_prompt(server, 1)
    assert "/hypotheses/0/statement repeats another hypothesis" in feedback
    hypotheses = load_package(root).case["hypotheses"]
    assert hypotheses[0] == kept[0]  # byte for byte: no origin added, nothing changed
    assert [h["id"] for h in hypotheses] == ["H1", "H2", "H3"]
    assert outcome.hypotheses == hypotheses[1:]


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        (
            answer(hypothesis("A.", FIND_QUERY, ["report", "P7"])),
            "/hypotheses/0/rests_on: 1 label(s) were not shown; use only the labels of the "
            "facts list: report, diag-001",
        ),
        (
            answer(
                hypothesis(
                    "A.",
                    {
                        **FIND_QUERY,
                        "arguments": {**FIND_QUERY["arguments"], "source_refs": ["nope"]},
                    },
                )
            ),
            "/hypotheses/0/first_query: the tool refuses it (unknown_source_ref",
        ),
        (
            answer(
                hypothesis(
                    "A.",
                    {
                        "operation": "source.find_text",
                        "arguments": {"source_refs": ["diag-001"], "text": "x"},
                    },
                )
            ),
            "missing required property 'case_sensitive' at /hypotheses/0/first_query/arguments",
        ),
        (
            answer(
                hypothesis(
                    "A.", {"operation": "project.query", "arguments": {"kind": "source.files"}}
                )
            ),
            "/hypotheses/0/first_query/operation: project.query is not available",
        ),
        (
            answer(hypothesis("A.", {"operation": "shell.run", "arguments": {}})),
            "/hypotheses/0/first_query/operation is not an operation; allowed: source.find_text",
        ),
        (
            orjson.dumps({"hypotheses": [{"statement": "A."}]}).decode(),
            "missing required property 'refuted_if' at /hypotheses/0",
        ),
        ("I think the quest is broken.", "refused before its content was read (syntax_error)"),
        (answer(), "/hypotheses"),
    ],
)
def test_a_rejected_answer_is_told_what_was_wrong(tmp_path: Path, bad: str, expected: str) -> None:
    root = built(tmp_path)
    with ScriptedLlmServer([bad, GOOD]) as server:
        outcome = interpreter(root, server).run()
        feedback = user_prompt(server, 1)
    assert outcome.state == "interpreted"
    assert "Feedback on your previous answer" in feedback
    assert expected in feedback
    # The answer text itself is never repeated to the model or kept in the decision.
    assert "I think the quest" not in feedback


def test_a_fenced_answer_is_normalized_not_charged(tmp_path: Path) -> None:
    root = built(tmp_path)
    with ScriptedLlmServer(["```json\n" + GOOD + "\n```"]) as server:
        outcome = interpreter(root, server).run()
    assert outcome.state == "interpreted"
    record = CallRecordStore(root).list()[-1].document
    assert [r["rule"] for r in record["applied_rules"]] == ["strip_outer_fence"]
    decision = orjson.loads((root / "analysis/interpretation/r0001/01-decision.json").read_bytes())
    assert (decision["status"], decision["invalid_responses"]) == ("accepted", 0)


def test_the_limit_blocks_and_an_operator_resume_carries_the_last_feedback(tmp_path: Path) -> None:
    root = built(tmp_path)
    bad = answer(hypothesis("A.", FIND_QUERY, ["P9"]))
    with ScriptedLlmServer([bad, bad, bad]) as server:
        outcome = interpreter(root, server).run()
        assert len(server.requests) == 3
    assert (outcome.state, outcome.code) == ("blocked", "INVALID_LLM_RESPONSES")
    assert load_package(root).manifest["status"]["state"] == "blocked"
    with ScriptedLlmServer([]) as server:  # blocked: nothing is asked
        assert interpreter(root, server).run().state == "blocked"
        assert server.requests == []
    CheckpointStore(root).resume("operator-1")
    with ScriptedLlmServer([GOOD]) as server:
        outcome = interpreter(root, server).run()
        assert "rests_on: 1 label(s) were not shown" in user_prompt(server, 0)
    assert outcome.state == "interpreted"
    assert load_package(root).manifest["status"]["state"] == "active"


def test_the_interpreter_never_sees_an_investigation(tmp_path: Path) -> None:
    root = built(tmp_path)
    with ScriptedLlmServer([GOOD]) as server:
        interpreter(root, server).run()
        system, user = (m["content"] for m in server.requests[0].messages)
    for word in ("evidence", "assessment", "E1", "supported", "refuted"):
        assert word not in user
    assert "E-ID" not in system


def test_a_concluded_case_is_not_interpreted(tmp_path: Path) -> None:
    root = built(tmp_path, [{"id": "H1", "statement": "Something."}])
    store = CheckpointStore(root)
    store.advance("investigation", event="started")
    store.advance("concluded", event="all hypotheses done")
    with ScriptedLlmServer([]) as server, pytest.raises(InterpretationError) as caught:
        interpreter(root, server).run()
    assert caught.value.code == "interpretation_after_conclusion"


def test_the_schema_is_bundled_with_the_recovery_marker() -> None:
    schema = load_schema("case-interpretation-v1")
    assert schema["x-viano-response-recovery"] == 1
    assert schema["properties"]["hypotheses"]["maxItems"] == 8


def test_stored_prompts_are_rebuilt_byte_for_byte(tmp_path: Path) -> None:
    root = built(tmp_path)
    with ScriptedLlmServer([answer(hypothesis("A.", FIND_QUERY, ["P9"])), GOOD]) as server:
        interpreter(root, server).run()
        sent = [r.messages for r in server.requests]
    folder = root / "analysis" / "interpretation" / "r0001"
    for attempt, messages in enumerate(sent, start=1):
        call = orjson.loads((folder / f"{attempt:02d}-call.json").read_bytes())
        assert build_messages(call["context"], call["prompt_version"]) == messages


def test_max_hypotheses_narrows_the_prompt_the_schema_and_the_check(tmp_path: Path) -> None:
    root = built(tmp_path)
    one = InvestigationSettings(
        response_recovery_version=1, invalid_response_limit=3, max_hypotheses=1
    )
    single = answer(hypothesis("The spell hit gives no quest credit.", FIND_QUERY))
    with ScriptedLlmServer([GOOD, single]) as server:
        outcome = interpreter(root, server, settings=one).run()
        systems = [r.messages[0]["content"] for r in server.requests]
        feedback = user_prompt(server, 1)
        schema = server.requests[0].body["response_format"]["json_schema"]["schema"]  # type: ignore[index]
    assert outcome.state == "interpreted"
    assert [h["id"] for h in load_package(root).case["hypotheses"]] == ["H1"]
    assert all("- 1 to 1 hypotheses, the most plausible first" in s for s in systems)
    assert schema["properties"]["hypotheses"]["maxItems"] == 1
    # Two hypotheses where one is allowed: refused, and told why.
    assert "/hypotheses has 2 items; propose at most 1" in feedback
    decision = PackageLayout(root).files.read_document(
        PackageLayout.INTERPRETATION / "r0001" / "01-decision.json"
    )
    assert decision is not None and "too_many_hypotheses" in decision["violations"]


def test_the_default_context_and_prompt_are_as_before_the_setting(tmp_path: Path) -> None:
    root = built(tmp_path)
    with ScriptedLlmServer([GOOD]) as server:
        interpreter(root, server).run()
        system = server.requests[0].messages[0]["content"]
    call = PackageLayout(root).files.read_document(
        PackageLayout.INTERPRETATION / "r0001" / "01-call.json"
    )
    assert call is not None and "max_hypotheses" not in str(call)
    assert "- 1 to 8 hypotheses, the most plausible first" in system
