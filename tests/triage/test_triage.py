"""``vba triage`` over a small backlog against the real-schema test DB and a git repository.

What is checked: every report is its own verified package and its row in
the index links its issue; a second run asks nothing and writes the same
bytes; an edited report makes a new revision of that case only; a bad report
among good ones is recorded and the others go on; a second run on a busy
folder stops at once (exit 7); a run killed with SIGKILL and run again ends
with the same index as an uninterrupted one; the duplicate groups and the
"needs info" flags.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.case.builder.conftest import ResearchSetup
from tests.triage.backlog import backlog
from viano_bug_analysis.case.lock import exclusive_lock
from viano_bug_analysis.errors import TriageError
from viano_bug_analysis.profiles import load_profile
from viano_bug_analysis.project_research import load_config
from viano_bug_analysis.triage.reports import Selection, read_reports
from viano_bug_analysis.triage.run import LOCK, Triage, TriageSetup

pytestmark = pytest.mark.integration


def issues_file(directory: Path, issues: list[dict[str, Any]] | None = None) -> Path:
    path = directory / "issues.json"
    path.write_text(json.dumps(issues if issues is not None else backlog()))
    return path


def triage(
    issues: Path, out: Path, research_setup: ResearchSetup, *, jobs: int = 2
) -> list[dict[str, Any]]:
    setup = TriageSetup(
        profile=load_profile("vcore"),
        research_config=load_config(research_setup.config_path),
        investigation=None,
        jobs=jobs,
    )
    return Triage(out, setup).run(read_reports(issues))


def tree(out: Path) -> dict[str, str]:
    """SHA-256 of every file below ``out`` except the lock (whose bytes mean nothing)."""
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != LOCK
    }


def verify(package: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "case", "verify", str(package)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_report_is_a_verified_package_with_its_row(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    out = tmp_path / "out"
    records = triage(issues_file(tmp_path), out, research_setup)
    assert [r["status"] for r in records] == ["built"] * 4
    index = json.loads((out / "index.json").read_text())
    rows = {row["case"]: row for row in index["rows"]}
    assert [row["url"] for row in index["rows"]] == [i["url"] for i in backlog()]
    for case, row in rows.items():
        verify(out / "cases" / case)
        assert row["package"] == f"cases/{case}" and (out / row["report"]).is_file()
    # Both reports name quest 90001: one group, the shared entity named.
    assert rows["vcore-bugs-101"]["duplicates"]["with"] == ["vcore-bugs-102"]
    assert {"entity_type": "quest", "entity_id": 90001} in rows["vcore-bugs-102"]["duplicates"][
        "shared"
    ]
    assert rows["vcore-bugs-103"]["duplicates"] is None
    # 9f1c2ab is no commit of the test repository: a report from another fork.
    assert rows["vcore-bugs-101"]["needs_info"] == ["revision_unknown"]
    assert rows["vcore-bugs-101"]["repository"] == "example-org/vcore-bugs"
    assert [rows[c]["state"] for c in sorted(rows)] == ["open", "open", "open", "closed"]
    assert rows["vcore-bugs-102"]["needs_info"] == ["no_revision", "no_steps", "custom_modules"]
    assert rows["vcore-bugs-103"]["needs_info"] == ["no_revision"]
    assert rows["vcore-bugs-101"]["leads"] > 0 and rows["vcore-bugs-101"]["first_lead"]


def test_a_second_run_asks_nothing_and_writes_the_same_bytes(
    tmp_path: Path, research_setup: ResearchSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    issues = issues_file(tmp_path)
    triage(issues, out, research_setup)
    before = tree(out)

    from viano_bug_analysis.project_research import service

    asked: list[Any] = []
    original = service.ProjectResearch.query

    def counting(self: Any, query: Any) -> Any:
        asked.append(query)
        return original(self, query)

    monkeypatch.setattr(service.ProjectResearch, "query", counting)
    triage(issues, out, research_setup)
    assert asked == []
    assert tree(out) == before


def test_an_edited_report_is_a_new_revision_of_that_case_only(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    out = tmp_path / "out"
    triage(issues_file(tmp_path), out, research_setup)
    edited = backlog()
    edited[2]["body"] += "\r\nAlso the Thornback Boar next to it."
    records = triage(issues_file(tmp_path, edited), out, research_setup)
    assert [r["revision"] for r in records] == [1, 1, 2, 1]
    verify(out / "cases" / "vcore-bugs-103")


def test_a_bad_report_among_good_ones_is_recorded_and_the_others_go_on(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    issues = backlog()
    issues.insert(1, {"number": 150, "title": 7, "body": "not a title", "url": "x"})
    out = tmp_path / "out"
    records = triage(issues_file(tmp_path, issues), out, research_setup)
    assert [r["status"] for r in records] == ["built", "failed", "built", "built", "built"]
    assert records[1]["case"] == "issues.json#1"
    error = records[1]["error"]
    assert (error["stage"], error["code"], error["details"]["index"]) == (
        "import",
        "report_invalid",
        1,
    )
    index = json.loads((out / "index.json").read_text())
    assert index["by_status"] == {"built": 4, "failed": 1}


def test_a_second_run_on_a_busy_folder_stops_at_once(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    issues = issues_file(tmp_path)
    busy = TriageError("triage_busy", "held by the test")
    with exclusive_lock(out / LOCK, busy):
        with pytest.raises(TriageError) as caught:
            triage(issues, out, research_setup)
        assert caught.value.code == "triage_busy"
        done = subprocess.run(
            [sys.executable, "-m", "viano_bug_analysis.cli", "triage", str(issues), "--out",
             str(out), "--project-config", str(research_setup.config_path)],
            capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 7
        assert json.loads(done.stderr)["error"] == "triage_busy"
    assert not (out / "cases").exists()  # nothing was started


def test_killed_with_sigkill_and_run_again_ends_with_the_same_index(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    issues = issues_file(tmp_path)
    whole = tmp_path / "whole"
    triage(issues, whole, research_setup, jobs=1)
    command = [sys.executable, "-m", "viano_bug_analysis.cli", "triage", str(issues),
               "--project-config", str(research_setup.config_path), "--jobs", "1"]  # fmt: skip
    for kill_after in (0.5, 2.0, 4.0):
        out = tmp_path / f"killed-{kill_after}"
        process = subprocess.Popen(
            [*command, "--out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        time.sleep(kill_after)
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()
        again = subprocess.run(
            [*command, "--out", str(out)], capture_output=True, text=True, check=False
        )
        assert again.returncode == 0, again.stderr
        assert (out / "index.json").read_bytes() == (whole / "index.json").read_bytes()
        assert (out / "index.html").read_bytes() == (whole / "index.html").read_bytes()
        for case in json.loads((out / "index.json").read_text())["rows"]:
            verify(out / "cases" / case["case"])


def test_selection_by_number_date_and_label(tmp_path: Path) -> None:
    reports = read_reports(issues_file(tmp_path))
    picked = [r.key for r in reports if Selection.parse(only="101,vcore-bugs-104").keeps(r)]
    assert picked == ["vcore-bugs-101", "vcore-bugs-104"]
    recent = [r.key for r in reports if Selection.parse(since="2026-11-15").keeps(r)]
    assert recent == ["vcore-bugs-103"]
    npc = [r.key for r in reports if Selection.parse(labels=["NPC"]).keeps(r)]
    assert npc == ["vcore-bugs-103", "vcore-bugs-104"]
    for bad in ({"only": " , "}, {"since": "last week"}):
        with pytest.raises(TriageError) as caught:
            Selection.parse(**bad)  # type: ignore[arg-type]
        assert caught.value.code == "triage_selection_invalid"


def test_a_folder_of_issue_files_is_read_in_name_order(tmp_path: Path) -> None:
    folder = tmp_path / "issues"
    folder.mkdir()
    (folder / "b.md").write_text("# Hare does not flee\n\nThe Glade Hare (90006) just stands.\n")
    (folder / "a.json").write_text(json.dumps(backlog()[0]))
    (folder / "notes.bin").write_bytes(b"\x00")
    assert [r.key for r in read_reports(folder)] == ["vcore-bugs-101", "b"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TriageError) as caught:
        read_reports(empty)
    assert caught.value.details["reason"] == "empty_folder"


def _interpretation(statement: str, query: dict[str, Any]) -> str:
    return json.dumps(
        {
            "hypotheses": [
                {
                    "statement": statement,
                    "refuted_if": "The rows show the opposite.",
                    "rests_on": ["report"],
                    "first_query": {"operation": "project.query", "arguments": query},
                }
            ]
        }
    )


def _answer(next_step: dict[str, Any], evidence: list[dict[str, str]], **fields: Any) -> str:
    return json.dumps(
        {
            "hypothesis_id": "H1",
            "assessment": fields.get("assessment", "undetermined"),
            "confidence": fields.get("confidence", 0.4),
            "evidence": evidence,
            "next": next_step,
        }
    )


def _rows(table: str, column: str, value: int) -> dict[str, Any]:
    return {
        "kind": "database.rows",
        "table": table,
        "columns": [column],
        "filters": [{"column": column, "operator": "eq", "value": value}],
        "offset": 0,
        "limit": 5,
    }


def test_with_an_llm_each_report_is_investigated_once_and_a_rerun_asks_nothing(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer

    quest, spider = _rows("quest_template", "ID", 90001), _rows("creature_template", "entry", 90007)
    script = []
    for statement, query in (("The quest row is wrong.", quest), ("The spider has no AI.", spider)):
        script += [
            _interpretation(statement, query),
            _answer({"kind": "tool", "operation": "project.query", "arguments": query}, []),
            _answer(
                {"kind": "conclusion", "summary": "The row is there as the report says."},
                [{"evidence_id": "E1", "role": "supports", "reference": "/rows/0"}],
                assessment="supported",
                confidence=0.7,
            ),
        ]
    issues = issues_file(tmp_path)
    out = tmp_path / "out"
    with ScriptedLlmServer(script) as server:
        config = tmp_path / "investigate.toml"
        config.write_text(
            f'[llm]\nbase_urls = ["{server.base_url}"]\nmodel = "scripted"\nmax_retries = 0\n'
            "price_per_million_prompt = 1.0\nprice_per_million_completion = 2.0\n"
            "[investigation]\nresponse_recovery_version = 1\nmax_steps = 4\n"
            f'[research]\nconfig = "{research_setup.config_path}"\n'
        )
        command = [sys.executable, "-m", "viano_bug_analysis.cli", "triage", str(issues),
                   "--out", str(out), "--project-config", str(research_setup.config_path),
                   "--config", str(config), "--jobs", "1", "--only", "101,103"]  # fmt: skip
        first = subprocess.run(command, capture_output=True, text=True, check=False)
        assert first.returncode == 0, first.stderr
        assert len(server.requests) == 6
        again = subprocess.run(command, capture_output=True, text=True, check=False)
        assert again.returncode == 0, again.stderr
        assert len(server.requests) == 6  # an answer stored is never asked again
    index = json.loads((out / "index.json").read_text())
    assert [row["case"] for row in index["rows"]] == ["vcore-bugs-101", "vcore-bugs-103"]
    for row in index["rows"]:
        assert row["status"] == "investigated" and row["verdict"] == {"H1": "supported"}
        usage = row["usage"]
        expected = (usage["prompt_tokens"] * 1.0 + usage["completion_tokens"] * 2.0) / 1e6
        assert usage["cost"] == round(expected, 6)
    # A changed report is marked, not investigated again without --reinvestigate.
    edited = backlog()
    edited[0]["body"] += "\r\nStill broken today."
    issues_file(tmp_path, edited)
    with ScriptedLlmServer([]) as idle:
        old_url = config.read_text().split('"')[1]
        config.write_text(config.read_text().replace(old_url, idle.base_url))
        changed = subprocess.run(command, capture_output=True, text=True, check=False)
        assert changed.returncode == 0, changed.stderr
        assert idle.requests == []
    rows = {r["case"]: r for r in json.loads((out / "index.json").read_text())["rows"]}
    assert rows["vcore-bugs-101"]["status"] == "changed_since_verdict"
    assert rows["vcore-bugs-103"]["status"] == "investigated"


def test_the_index_in_headless_chromium_filters_and_sorts(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    from tests.report.browser import chromium, run_chromium

    executable = chromium()
    issues = backlog()
    issues[3]["title"] = '<img src=x onerror="document.title=1"> & Hilde'
    # A revision of the test repository, so one row needs no info (revision_unknown).
    issues[0]["body"] = issues[0]["body"].replace("9f1c2ab", research_setup.commit[:7])
    out = tmp_path / "out"
    triage(issues_file(tmp_path, issues), out, research_setup)
    page = (out / "index.html").resolve().as_uri()

    def rows(fragment: str) -> list[tuple[str, bool]]:
        dom = run_chromium(executable, tmp_path / "profile", "--dump-dom", page + fragment)
        text = dom.decode()
        found = []
        for chunk in text.split("<tr ")[1:]:
            case = chunk.split("<code>", 1)[1].split("</code>", 1)[0]
            found.append((case, " hidden" in chunk.split(">", 1)[0]))
        return found

    everything = rows("")
    assert [case for case, hidden in everything] == [
        "vcore-bugs-101", "vcore-bugs-102", "vcore-bugs-103", "vcore-bugs-104",
    ]  # fmt: skip
    assert not any(hidden for _case, hidden in everything)
    shown = [case for case, hidden in rows("#info=1") if not hidden]
    assert "vcore-bugs-102" in shown and "vcore-bugs-101" not in shown
    assert [case for case, hidden in rows("#q=spider") if not hidden] == ["vcore-bugs-103"]
    by_number_desc = [case for case, _hidden in rows("#sort=0&dir=desc")]
    assert by_number_desc == [
        "vcore-bugs-104",
        "vcore-bugs-103",
        "vcore-bugs-102",
        "vcore-bugs-101",
    ]
    # The hostile title is text: no element was made of it, no script ran.
    dom = run_chromium(executable, tmp_path / "profile", "--dump-dom", page).decode()
    assert "<img" not in dom and "&lt;img src=x" in dom
    assert "<title>Triage: 4 reports</title>" in dom


def test_ctrl_c_ends_with_one_line_and_130_and_the_rerun_ends_the_same(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    # Issue 34: Ctrl-C printed a 25-line KeyboardInterrupt traceback.
    issues = issues_file(tmp_path)
    whole = tmp_path / "whole"
    triage(issues, whole, research_setup, jobs=2)
    command = [sys.executable, "-m", "viano_bug_analysis.cli", "triage", str(issues),
               "--project-config", str(research_setup.config_path), "--jobs", "2"]  # fmt: skip
    out = tmp_path / "interrupted"
    process = subprocess.Popen(
        [*command, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        # A shell's background job ignores SIGINT, and a child inherits that.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # Once the first report started (its progress line), the workers are running.
    assert process.stderr is not None
    process.stderr.readline()
    os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    if process.returncode == 0:
        pytest.skip("the run finished before the interrupt arrived")
    assert process.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.splitlines()[-1].startswith("interrupted: ")
    again = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (out / "index.json").read_bytes() == (whole / "index.json").read_bytes()
    for case in json.loads((out / "index.json").read_text())["rows"]:
        verify(out / "cases" / case["case"])
