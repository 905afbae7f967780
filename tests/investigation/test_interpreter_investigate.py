"""The interpretation in the investigation's life: ``vba investigate`` interprets a case
without hypotheses first, the controller refuses an empty list instead of concluding it,
and a hypothesis added by a later revision after the others concluded is investigated."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.case.builder.conftest import case_spec
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import (
    CONCLUDE,
    SCRIPT,
    SETTINGS,
    answer,
    run_vba,
    scripted_client,
    write_config,
)
from tests.investigation.test_interpreter import GOOD, built
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.errors import CaseError, InterpretationError
from viano_bug_analysis.investigation.checkpoints import CheckpointStore
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.interpreter import CaseInterpreter
from viano_bug_analysis.investigation.steps import StepLog


def run_controller(root: Path, server: ScriptedLlmServer) -> str:
    return (
        InvestigationController(root, model=scripted_client(server), settings=SETTINGS).run().state
    )


def test_the_controller_refuses_a_case_without_hypotheses(tmp_path: Path) -> None:
    root = built(tmp_path)
    with ScriptedLlmServer([]) as server, pytest.raises(InterpretationError) as caught:
        run_controller(root, server)
        assert server.requests == []
    assert caught.value.code == "case_has_no_hypotheses"
    assert CheckpointStore(root).history() == []  # nothing written


def test_a_hypothesis_added_after_the_others_concluded_is_investigated(tmp_path: Path) -> None:
    spec_path = case_spec(tmp_path / "inputs")
    root = tmp_path / "package"
    CaseBuilder(spec_path, root).build()
    with ScriptedLlmServer(SCRIPT) as server:
        assert run_controller(root, server) == "concluded"
    # The operator adds H2 in a new case revision.
    spec = orjson.loads(spec_path.read_bytes())
    spec["hypotheses"].append({"id": "H2", "statement": "The log names another quest."})
    spec_path.write_bytes(orjson.dumps(spec))
    assert CaseBuilder(spec_path, root).build().new_revision
    with ScriptedLlmServer([answer(CONCLUDE, hid="H2")]) as server:
        assert run_controller(root, server) == "concluded"
        assert len(server.requests) == 1
        assert "Hypothesis H2:" in server.requests[0].messages[-1]["content"]
    log = StepLog(root)
    assert log.outcome("H2") is not None
    assert log.outcome("H1") is not None
    events = [
        (c.state, c.payload.get("event"), c.payload.get("hypotheses"))
        for c in CheckpointStore(root).history()
    ]
    assert ("investigation", "reopened", ["H2"]) in events
    assert events[-1][0] == "concluded"
    # A third run finds nothing open and asks nothing.
    with ScriptedLlmServer([]) as server:
        assert run_controller(root, server) == "concluded"
        assert server.requests == []


def test_a_reopened_investigation_starts_a_fresh_invalid_response_count(tmp_path: Path) -> None:
    spec_path = case_spec(tmp_path / "inputs")
    root = tmp_path / "package"
    CaseBuilder(spec_path, root).build()
    wrong = answer({"kind": "tool", "operation": "source.grep", "arguments": {}})
    # H1 concludes after two rejected answers (the limit is 3).
    with ScriptedLlmServer([wrong, wrong, *SCRIPT]) as server:
        assert run_controller(root, server) == "concluded"
    spec = orjson.loads(spec_path.read_bytes())
    spec["hypotheses"].append({"id": "H2", "statement": "The log names another quest."})
    spec_path.write_bytes(orjson.dumps(spec))
    assert CaseBuilder(spec_path, root).build().new_revision
    # One rejected answer of H2 is its first, not the case's third: H2 goes on.
    wrong_h2 = answer({"kind": "tool", "operation": "source.grep", "arguments": {}}, hid="H2")
    with ScriptedLlmServer([wrong_h2, answer(CONCLUDE, hid="H2")]) as server:
        assert run_controller(root, server) == "concluded"
        assert len(server.requests) == 2
        # The retry is told what was wrong, not that an operator resumed anything.
        retry = server.requests[1].messages[-1]["content"]
        assert "/next/operation" in retry and "An operator resumed" not in retry
    assert StepLog(root).outcome("H2") is not None


def test_vba_investigate_interprets_a_case_without_hypotheses_first(tmp_path: Path) -> None:
    root = built(tmp_path)
    script = [GOOD, answer(CONCLUDE), answer(CONCLUDE, hid="H2")]
    with ScriptedLlmServer(script) as server:
        config = write_config(tmp_path, server)
        done = run_vba("investigate", str(root), "--config", str(config))
        assert len(server.requests) == 3
    assert done.returncode == 0, done.stderr
    assert "interpreted: H1, H2 (revision 2)" in done.stdout
    assert "H1: undetermined (concluded)" in done.stdout
    package = load_package(root)
    assert [h["origin"]["by"] for h in package.case["hypotheses"]] == ["case_interpreter"] * 2


def test_vba_interpret_prints_the_hypotheses_and_is_idempotent(tmp_path: Path) -> None:
    root = built(tmp_path)
    with ScriptedLlmServer([GOOD]) as server:
        config = write_config(tmp_path, server)
        first = run_vba("interpret", str(root), "--config", str(config))
        again = run_vba("interpret", str(root), "--config", str(config))
        assert len(server.requests) == 1
    assert first.returncode == 0, first.stderr
    assert "H1: The spell hit gives no quest credit." in first.stdout
    assert "first query: source.find_text" in first.stdout
    assert again.returncode == 0, again.stderr
    assert "already interpreted" in again.stdout


def test_a_rebuild_with_an_operator_hypothesis_keeps_the_interpreted_ones(tmp_path: Path) -> None:
    root = built(tmp_path)
    with ScriptedLlmServer([GOOD]) as server:
        assert interpret(root, server) == "interpreted"
    proposed = load_package(root).case["hypotheses"]
    spec_path = tmp_path / "inputs" / "case-spec.json"
    spec = orjson.loads(spec_path.read_bytes())
    # The operator repeats H2 word for word and adds H3: a new revision with all three,
    # the interpreter's kept byte for byte (origin included).
    spec["hypotheses"] = [
        {"id": "H2", "statement": proposed[1]["statement"]},
        {"id": "H3", "statement": "The quest log is not saved."},
    ]
    spec_path.write_bytes(orjson.dumps(spec))
    assert CaseBuilder(spec_path, root).build().revision == 3
    hypotheses = load_package(root).case["hypotheses"]
    assert hypotheses == [*proposed, {"id": "H3", "statement": "The quest log is not saved."}]
    # An ID the interpreter gave another statement is refused, naming it.
    spec["hypotheses"] = [{"id": "H1", "statement": "Something else."}]
    spec_path.write_bytes(orjson.dumps(spec))
    with pytest.raises(CaseError) as caught:
        CaseBuilder(spec_path, root).build()
    assert caught.value.code == "spec_invalid"
    assert caught.value.details["pointer"] == "/hypotheses/0/id"
    assert caught.value.details["hypothesis_id"] == "H1"
    assert load_package(root).analysis_revision == 3
    assert not (root / "revisions" / "r0004").exists()  # refused before anything was written


def interpret(root: Path, server: ScriptedLlmServer) -> str:
    client = scripted_client(server)
    return CaseInterpreter(root, model=client, settings=SETTINGS).run().state
