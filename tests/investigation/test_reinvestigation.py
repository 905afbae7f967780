"""An edited report, re-investigated: one mechanism for ``vba interpret --reinterpret``,
``vba investigate --reinvestigate`` and ``vba triage --reinvestigate``.

The case is interpreted (H1, H2) and investigated to a verdict; then the report's text
is edited and the case rebuilt, so its current revision carries the new text and the
old hypotheses. Before this mechanism the controller "concluded" that revision at once
and issued a verdict for it from outcomes reached on the earlier text. Now the package
says its interpretation is behind its report: the controller and the interpreter refuse
it (``report_changed_since_interpretation``) unless asked to reinvestigate; then the
current revision gets a new interpretation (new IDs H3, H4: the old ones keep their
outcomes and steps), the new hypotheses are investigated and a second verdict version
is issued; the first stays. A rerun asks nothing. ``vba investigate --reinvestigate``
killed with SIGKILL after every one of its file commits ends as the clean run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e.crash import sigkill_after_each_commit, sigkill_vba
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import (
    CONCLUDE,
    FIND_QUERY,
    SETTINGS,
    answer,
    run_vba,
    scripted_client,
    write_config,
)
from tests.investigation.test_interpreter import GOOD, READ, built, hypothesis, interpreter
from tests.investigation.test_interpreter import answer as proposals
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.errors import CaseError, InterpretationError
from viano_bug_analysis.investigation.budget import BudgetManager
from viano_bug_analysis.investigation.checkpoints import CheckpointStore
from viano_bug_analysis.investigation.commands import status_document
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.interpretation_state import interpretation_state
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.investigation.verdict import VerdictStore
from viano_bug_analysis.report.build import build_report

EDITED = "Edited: the net hits, the wolpertinger vanishes, and the quest log stays at 0/1."
# The new interpretation: two hypotheses about the edited text (one may say what an
# old one said: the old ones are replaced, not kept beside them).
REGOOD = proposals(
    hypothesis("The spell hit gives no quest credit.", FIND_QUERY),
    hypothesis("The despawn happens before the credit is given.", READ),
)
FIRST = [GOOD, answer(CONCLUDE), answer(CONCLUDE, hid="H2")]
AGAIN = [REGOOD, answer(CONCLUDE, hid="H3"), answer(CONCLUDE, hid="H4")]


def controller(root: Path, server: ScriptedLlmServer) -> InvestigationController:
    return InvestigationController(root, model=scripted_client(server), settings=SETTINGS)


def investigated_then_edited(tmp_path: Path) -> Path:
    """Interpreted (H1, H2 at revision 2), concluded (verdict v1), then the report's
    text edited and rebuilt: revision 3 carries the new text and H1, H2."""
    root = built(tmp_path)
    with ScriptedLlmServer(FIRST) as server:
        assert interpreter(root, server).run().state == "interpreted"
        assert controller(root, server).run().state == "concluded"
        assert len(server.requests) == 3
    spec_path = tmp_path / "inputs" / "case-spec.json"
    spec = orjson.loads(spec_path.read_bytes())
    spec["report"]["text"] = EDITED
    spec_path.write_bytes(orjson.dumps(spec))
    assert CaseBuilder(spec_path, root).build().revision == 3
    return root


def test_an_edited_report_is_never_concluded_from_the_earlier_texts_outcomes(
    tmp_path: Path,
) -> None:
    # The regression: the controller concluded revision 3 at once and issued a
    # verdict for it from the outcomes reached on the text of revision 2.
    root = investigated_then_edited(tmp_path)
    assert [h["id"] for h in load_package(root).case["hypotheses"]] == ["H1", "H2"]
    state = interpretation_state(load_package(root))
    assert (state.interpreted_revision, state.report_changed) == (1, True)
    history = CheckpointStore(root).history()
    manifest = (root / "manifest.json").read_bytes()
    with ScriptedLlmServer([]) as server:
        with pytest.raises(InterpretationError) as caught:
            controller(root, server).run()
        assert caught.value.code == "report_changed_since_interpretation"
        assert caught.value.details == {"analysis_revision": 3, "interpreted_revision": 1}
        with pytest.raises(InterpretationError) as caught:
            interpreter(root, server).run()
        assert caught.value.code == "report_changed_since_interpretation"
        assert server.requests == []
    assert CheckpointStore(root).history() == history  # nothing written
    assert (root / "manifest.json").read_bytes() == manifest
    assert [v["analysis_revision"] for v in VerdictStore(root).versions()] == [2]
    # vba status and the report say so.
    status = status_document(root)
    assert status["interpretation"] == {"interpreted_revision": 1, "report_changed": True}
    assert status["verdict"] == {
        "version": 1,
        "analysis_revision": 2,
        "complete": True,
        "current": False,
    }
    report = build_report(root)
    assert report["verdict"]["analysis_revision"] == 2
    assert "edited after revision 1 was interpreted" in report["state"]["notice"]


def test_reinvestigation_interprets_the_new_text_and_keeps_the_old_verdict(
    tmp_path: Path,
) -> None:
    root = investigated_then_edited(tmp_path)
    with ScriptedLlmServer([REGOOD]) as server:
        outcome = interpreter(root, server, reinterpret=True).run()
        prompt = server.requests[0].messages[-1]["content"]
    assert (outcome.state, outcome.revision, outcome.new) == ("interpreted", 4, True)
    # The model read the edited text, and was not shown the replaced hypotheses.
    assert "the quest log stays at 0/1" in prompt
    assert "The quest objective counts another creature." not in prompt
    package = load_package(root)
    hypotheses = package.case["hypotheses"]
    assert [h["id"] for h in hypotheses] == ["H3", "H4"]
    assert {h["origin"]["interpreted_revision"] for h in hypotheses} == {3}
    assert package.case["report"]["text"] == EDITED
    with ScriptedLlmServer(AGAIN[1:]) as server:
        run = controller(root, server).run()
        assert len(server.requests) == 2
    assert (run.state, sorted(run.outcomes)) == ("concluded", ["H3", "H4"])
    # The history: the old outcomes under their own IDs, both verdicts, the moves.
    log = StepLog(root)
    assert all(log.outcome(h) is not None for h in ("H1", "H2", "H3", "H4"))
    first, second = VerdictStore(root).versions()
    assert (first["analysis_revision"], [h["id"] for h in first["hypotheses"]]) == (
        2,
        ["H1", "H2"],
    )
    assert (second["analysis_revision"], [h["id"] for h in second["hypotheses"]]) == (
        4,
        ["H3", "H4"],
    )
    assert second["supersedes"]["version"] == 1
    events = [(c.state, dict(c.payload)) for c in CheckpointStore(root).history()]
    reopened = [p for s, p in events if p.get("event") == "reopened"]
    assert reopened == [
        {
            "event": "reopened",
            "analysis_revision": 3,
            "reason": "report_changed_since_interpretation",
            "interpreted_revision": 1,
        }
    ]
    interpreted = [p for s, p in events if p.get("event") == "interpreted"]
    assert interpreted[-1]["superseded"] == ["H1", "H2"]
    assert interpreted[-1]["hypotheses"] == ["H3", "H4"]
    assert events[-1][0] == "concluded"
    assert BudgetManager(root).account("interpretation-r0003").status == "concluded"
    # The current verdict is the current revision's, in status and the report.
    status = status_document(root)
    assert status["interpretation"] == {"interpreted_revision": 3, "report_changed": False}
    assert status["verdict"]["version"] == 2 and status["verdict"]["current"]
    assert list(status["hypotheses"]) == ["H3", "H4"]
    report = build_report(root)
    assert report["verdict"]["analysis_revision"] == 4 and report["verdict"]["current"]
    assert report["state"]["notice"] is None
    # A rerun, with or without the option, asks nothing and writes nothing.
    history = CheckpointStore(root).history()
    with ScriptedLlmServer([]) as server:
        assert interpreter(root, server, reinterpret=True).run().new is False
        assert interpreter(root, server).run().new is False
        assert controller(root, server).run().state == "concluded"
        assert server.requests == []
    assert CheckpointStore(root).history() == history
    assert len(VerdictStore(root).versions()) == 2
    verified = run_vba("case", "verify", str(root))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_an_operator_hypothesis_is_kept_and_a_retired_id_is_not_given_again(
    tmp_path: Path,
) -> None:
    root = built(tmp_path, [{"id": "H1", "statement": "The operator's own idea."}])
    first = [GOOD, answer(CONCLUDE), answer(CONCLUDE, hid="H2"), answer(CONCLUDE, hid="H3")]
    with ScriptedLlmServer(first) as server:
        assert interpreter(root, server).run().state == "interpreted"
        assert controller(root, server).run().state == "concluded"
    spec_path = tmp_path / "inputs" / "case-spec.json"
    spec = orjson.loads(spec_path.read_bytes())
    spec["report"]["title"] = "Edited title"
    spec_path.write_bytes(orjson.dumps(spec))
    CaseBuilder(spec_path, root).build()
    with ScriptedLlmServer([REGOOD]) as server:
        assert interpreter(root, server, reinterpret=True).run().new
    # The operator's H1 is kept (its outcome answers its own statement); H2, H3 are
    # replaced by H4, H5.
    assert [h["id"] for h in load_package(root).case["hypotheses"]] == ["H1", "H4", "H5"]
    # An operator may not give a replaced interpreter hypothesis's ID to a new statement.
    spec["hypotheses"].append({"id": "H2", "statement": "Something else."})
    spec["report"]["title"] = "Edited title, again"
    spec_path.write_bytes(orjson.dumps(spec))
    with pytest.raises(CaseError) as caught:
        CaseBuilder(spec_path, root).build()
    assert caught.value.code == "spec_invalid"
    assert caught.value.details["hypothesis_id"] == "H2"


def test_a_label_change_keeps_the_interpretation_current(tmp_path: Path) -> None:
    root = built(tmp_path)
    with ScriptedLlmServer(FIRST) as server:
        interpreter(root, server).run()
        controller(root, server).run()
    spec_path = tmp_path / "inputs" / "case-spec.json"
    spec = orjson.loads(spec_path.read_bytes())
    spec["report"]["metadata"] = {"labels": ["quest"]}
    spec_path.write_bytes(orjson.dumps(spec))
    assert CaseBuilder(spec_path, root).build().revision == 3
    assert not interpretation_state(load_package(root)).report_changed
    with ScriptedLlmServer([]) as server:
        assert controller(root, server).run().state == "concluded"
        assert server.requests == []


def test_vba_investigate_refuses_an_edited_report_and_reinvestigates_it_on_request(
    tmp_path: Path,
) -> None:
    root = investigated_then_edited(tmp_path)
    with ScriptedLlmServer(AGAIN) as server:
        config = write_config(tmp_path, server)
        refused = run_vba("investigate", str(root), "--config", str(config))
        assert refused.returncode == 2, refused.stderr
        assert json.loads(refused.stderr)["error"] == "report_changed_since_interpretation"
        refused = run_vba("interpret", str(root), "--config", str(config))
        assert refused.returncode == 2, refused.stderr
        status = run_vba("status", str(root))
        assert "report: edited after revision 1 was interpreted" in status.stdout
        assert "verdict: version 1 of revision 2 (the case is at revision 3)" in status.stdout
        assert server.requests == []
        done = run_vba("investigate", str(root), "--config", str(config), "--reinvestigate")
        assert done.returncode == 0, done.stderr
        assert "interpreted: H3, H4 (revision 4)" in done.stdout
        assert len(server.requests) == 3
        again = run_vba("investigate", str(root), "--config", str(config), "--reinvestigate")
        assert again.returncode == 0, again.stderr
        assert len(server.requests) == 3  # an answer stored is never asked again
    status = run_vba("status", str(root))
    assert "verdict: version 2 of revision 4" in status.stdout
    assert "report: edited" not in status.stdout
    for form in ("md", "html"):
        report = run_vba("report", str(root), "--format", form)
        assert report.returncode == 0, report.stderr
        assert "verdict version 2 of revision 4" in report.stdout
    verified = run_vba("case", "verify", str(root))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _end_state(package: Path) -> dict[str, Any]:
    """What a rerun after a kill must reproduce (times and latencies left out)."""
    loaded = load_package(package)
    log = StepLog(package)
    budget = BudgetManager(package).snapshot()
    return {
        "manifest": loaded.manifest,
        "case": loaded.case,
        "checkpoints": [
            (c.kind, c.state, dict(c.payload)) for c in CheckpointStore(package).history()
        ],
        "outcomes": {h: log.outcome(h) for h in ("H1", "H2", "H3", "H4")},
        "verdicts": [
            {k: v for k, v in verdict.items() if k not in ("issued_at", "supersedes")}
            for verdict in VerdictStore(package).versions()
        ],
        "accounts": budget["accounts"],
    }


def test_vba_investigate_reinvestigate_killed_after_every_commit_resumes_exactly(
    tmp_path: Path,
) -> None:
    template = investigated_then_edited(tmp_path / "template")

    def vba(package: Path, server: ScriptedLlmServer, kill_after: int) -> int:
        config = write_config(tmp_path, server)
        return sigkill_vba(
            kill_after, "investigate", str(package), "--config", str(config), "--reinvestigate"
        )

    commits = sigkill_after_each_commit(template, tmp_path / "runs", AGAIN, vba, _end_state)
    clean = tmp_path / "runs" / "clean"
    assert [h["id"] for h in load_package(clean).case["hypotheses"]] == ["H3", "H4"]
    assert len(VerdictStore(clean).versions()) == 2
    assert commits >= 20
    print(f"\nvba investigate --reinvestigate killed with SIGKILL after each of {commits} commits")
    shutil.rmtree(tmp_path / "runs")
