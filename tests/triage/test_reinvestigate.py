"""``vba triage --reinvestigate`` on an edited report, end to end with the scripted LLM
server, the real-schema test DB and the fixture git repository.

Report 101 is investigated (interpretation H1 at revision 2, verdict v1); its body is
then edited on the tracker. Without ``--reinvestigate`` the case is marked
``changed_since_verdict`` and nothing is asked; with it the package's own
re-investigation runs (``vba investigate --reinvestigate``'s mechanism): a new
interpretation of the edited revision (H2), H2 investigated, verdict v2 of revision 4,
v1 kept. A rerun asks nothing, with or without the option. A run killed with SIGKILL
during the re-investigation and run again ends with the same index and packages, and
the model was asked each question exactly once.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.case.builder.conftest import ResearchSetup
from tests.e2e.crash import sigkill_vba
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.triage.backlog import backlog
from tests.triage.test_triage import _interpretation, _rows, issues_file, verify
from viano_bug_analysis.investigation.commands import status_document
from viano_bug_analysis.investigation.verdict import VerdictStore

pytestmark = pytest.mark.integration

QUEST = _rows("quest_template", "ID", 90001)
CREATURE = _rows("creature_template", "entry", 90007)


def _answer(hid: str, next_step: dict[str, Any], evidence: list[dict[str, str]]) -> str:
    done = next_step["kind"] == "conclusion"
    return json.dumps(
        {
            "hypothesis_id": hid,
            "assessment": "supported" if done else "undetermined",
            "confidence": 0.7 if done else 0.4,
            "evidence": evidence,
            "next": next_step,
        }
    )


def _script(statement: str, hid: str, query: dict[str, Any]) -> list[str]:
    return [
        _interpretation(statement, query),
        _answer(hid, {"kind": "tool", "operation": "project.query", "arguments": query}, []),
        _answer(
            hid,
            {"kind": "conclusion", "summary": "The row is there as the report says."},
            [{"evidence_id": "E1" if hid == "H1" else "E2", "role": "supports",
              "reference": "/rows/0"}],
        ),
    ]  # fmt: skip


FIRST = _script("The quest row is wrong.", "H1", QUEST)
AGAIN = _script("The wolpertinger despawns before the credit.", "H2", CREATURE)


def _config(tmp_path: Path, server: ScriptedLlmServer, research: ResearchSetup) -> Path:
    config = tmp_path / "investigate.toml"
    config.write_text(
        f'[llm]\nbase_urls = ["{server.base_url}"]\nmodel = "scripted"\nmax_retries = 0\n'
        "[investigation]\nresponse_recovery_version = 1\nmax_steps = 4\n"
        f'[research]\nconfig = "{research.config_path}"\n'
    )
    return config


def _command(issues: Path, out: Path, config: Path, research: ResearchSetup) -> list[str]:
    return ["triage", str(issues), "--out", str(out), "--project-config",
            str(research.config_path), "--config", str(config), "--jobs", "1",
            "--only", "101"]  # fmt: skip


def _vba(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _investigated_then_edited(tmp_path: Path, research: ResearchSetup) -> tuple[Path, Path]:
    """The triage folder with report 101 investigated, and the issue list with its body
    edited since."""
    issues = issues_file(tmp_path)
    out = tmp_path / "out"
    with ScriptedLlmServer(FIRST) as server:
        done = _vba(*_command(issues, out, _config(tmp_path, server, research), research))
        assert done.returncode == 0, done.stderr
        assert len(server.requests) == 3
    edited = backlog()
    edited[0]["body"] += "\r\nEdited: the wolpertinger vanishes when the net hits it."
    issues_file(tmp_path, edited)
    return issues, out


def _row(out: Path) -> dict[str, Any]:
    rows = json.loads((out / "index.json").read_text())["rows"]
    assert [row["case"] for row in rows] == ["vcore-bugs-101"]
    row: dict[str, Any] = rows[0]
    return row


def test_an_edited_report_is_reinvestigated_with_the_option_and_a_rerun_asks_nothing(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    issues, out = _investigated_then_edited(tmp_path, research_setup)
    package = out / "cases" / "vcore-bugs-101"
    with ScriptedLlmServer(AGAIN) as server:
        command = _command(issues, out, _config(tmp_path, server, research_setup), research_setup)
        marked = _vba(*command)
        assert marked.returncode == 0, marked.stderr
        assert server.requests == []
        assert _row(out)["status"] == "changed_since_verdict"
        status = status_document(package)
        assert status["interpretation"] == {"interpreted_revision": 1, "report_changed": True}
        assert "edited after revision 1" in (out / "reports" / "vcore-bugs-101.html").read_text()
        done = _vba(*command, "--reinvestigate")
        assert done.returncode == 0, done.stderr
        assert len(server.requests) == 3
        # The new interpretation read the edited body.
        assert "the wolpertinger vanishes" in server.requests[0].messages[-1]["content"]
        index = (out / "index.json").read_bytes()
        for again in (command, [*command, "--reinvestigate"]):
            rerun = _vba(*again)
            assert rerun.returncode == 0, rerun.stderr
            assert len(server.requests) == 3  # an answer stored is never asked again
            assert (out / "index.json").read_bytes() == index
    row = _row(out)
    assert row["status"] == "investigated" and row["verdict"] == {"H2": "supported"}
    status = status_document(package)
    assert status["interpretation"] == {"interpreted_revision": 3, "report_changed": False}
    assert status["verdict"] == {
        "version": 2,
        "analysis_revision": 4,
        "complete": True,
        "current": True,
    }
    versions = VerdictStore(package).versions()
    assert [(v["analysis_revision"], [h["id"] for h in v["hypotheses"]]) for v in versions] == [
        (2, ["H1"]),
        (4, ["H2"]),
    ]
    record = json.loads((out / "results" / "vcore-bugs-101.json").read_text())
    assert record["investigated_spec"] == record["spec_sha256"]
    verify(package)


# `python -c COUNT ARGS...`: `vba ARGS...`, then every file commit it made (the target
# of each link or rename, one a line) on stderr after a line `commits:`.
COUNT = (
    "import os, sys\n"
    "targets = []\n"
    "for name in ('link', 'replace'):\n"
    "    original = getattr(os, name)\n"
    "    def commit(*args, _original=original, **kwargs):\n"
    "        result = _original(*args, **kwargs)\n"
    "        targets.append(os.fspath(args[1]))\n"
    "        return result\n"
    "    setattr(os, name, commit)\n"
    "from viano_bug_analysis.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stderr.write('commits:\\n' + '\\n'.join(targets) + '\\n')\n"
    "raise SystemExit(code)\n"
)


def test_killed_with_sigkill_during_the_reinvestigation_and_run_again_resumes(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    issues, base = _investigated_then_edited(tmp_path, research_setup)

    def run(out: Path, kill_after: int) -> tuple[int, int]:
        with ScriptedLlmServer(AGAIN) as server:
            config = _config(tmp_path, server, research_setup)
            args = [*_command(issues, out, config, research_setup), "--reinvestigate"]
            code = sigkill_vba(kill_after, *args)
            rerun = sigkill_vba(0, *args)
            assert rerun == 0, f"commit {kill_after}: rerun exit {rerun}"
            assert server.unscripted == 0
            return code, len(server.requests)

    # The clean run, its file commits counted: the new spec, the build of the new
    # revision, then (from the first checkpoint) the re-investigation, the case
    # report, the result record and the index.
    clean = tmp_path / "clean"
    shutil.copytree(base, clean)
    with ScriptedLlmServer(AGAIN) as server:
        config = _config(tmp_path, server, research_setup)
        args = [*_command(issues, clean, config, research_setup), "--reinvestigate"]
        done = subprocess.run(
            [sys.executable, "-c", COUNT, *args], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        assert len(server.requests) == 3
    targets = done.stderr.split("commits:\n", 1)[1].split()
    # Commits name the file only (durable writes link and rename inside the directory):
    # the first checkpoint of the run, ``NNNNNN-transition.json``, is its ``reopened``.
    first = next(n for n, t in enumerate(targets, 1) if re.fullmatch(r"[0-9]+-transition\.json", t))
    expected = (clean / "index.json").read_bytes()
    # Two points in the build, then six spread over the re-investigation to its last
    # commit: every commit of the re-investigation itself is killed at in
    # tests/investigation/test_reinvestigation.py; here the triage's own resume is shown.
    span = len(targets) - first
    points = sorted({1, first // 2, *(first + span * k // 5 for k in range(6))})
    for kill_after in points:
        out = tmp_path / f"killed-{kill_after:03d}"
        shutil.copytree(base, out)
        code, asked = run(out, kill_after)
        assert code == -9, f"commit {kill_after}: exit {code}"
        assert asked == 3, f"commit {kill_after}: {asked} requests"  # none lost or repeated
        assert (out / "index.json").read_bytes() == expected, f"commit {kill_after}"
        verify(out / "cases" / "vcore-bugs-101")
        shutil.rmtree(out)
    assert len(points) >= 6 and points[-1] == len(targets)
    print(
        f"\nvba triage --reinvestigate: {len(targets)} file commits ({first - 1} before the "
        f"re-investigation); killed with SIGKILL after {len(points)} of them, each resumed"
    )
