"""`vba investigate`, `vba resume` and `vba status` around crashes and concurrency:
the manifest brought back in line with the checkpoint log by every start, one
investigation per package (two real processes), and progress lines with the
live budget. No live research: the model's queries go to the snapshot router."""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e.crash import KillAtCommit, Killed
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer, hang
from tests.investigation.package_fixtures import (
    CONCLUDE,
    FIND,
    answer,
    built_package,
    scripted_client,
)
from viano_bug_analysis import cli
from viano_bug_analysis.case.lock import INVESTIGATION_LOCK, package_lock
from viano_bug_analysis.case.package import MANIFEST_NAME, load_package
from viano_bug_analysis.errors import CaseError
from viano_bug_analysis.exit_codes import ExitCode
from viano_bug_analysis.investigation.budget import BudgetManager
from viano_bug_analysis.investigation.checkpoints import CheckpointStore
from viano_bug_analysis.investigation.commands import run_resume, status_document
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.evidence import EvidenceStore
from viano_bug_analysis.investigation.steps import StepLog

BLOCKING = InvestigationSettings(invalid_response_limit=1, response_recovery_version=1)
BLOCKED_STATUS = {
    "state": "blocked",
    "code": "INVALID_LLM_RESPONSES",
    "resume_state": "investigation",
}


def run(root: Path, server: ScriptedLlmServer, settings: InvestigationSettings) -> Any:
    return InvestigationController(root, model=scripted_client(server), settings=settings).run()


def manifest_status(root: Path) -> dict[str, Any]:
    status: dict[str, Any] = load_package(root).manifest["status"]
    return status


# -- point 8: the manifest follows the checkpoint log -----------------------------------


def test_a_kill_between_blocking_and_the_manifest_update_is_repaired_by_the_next_start(
    tmp_path: Path,
) -> None:
    template = built_package(tmp_path)
    clean = tmp_path / "clean"
    shutil.copytree(template, clean)
    with ScriptedLlmServer(["not json"]) as server, KillAtCommit(None) as count:
        assert run(clean, server, BLOCKING).state == "blocked"
    assert manifest_status(clean) == BLOCKED_STATUS

    behind = 0
    for stop in range(1, count.commits + 1):
        root = tmp_path / f"k{stop:02d}"
        shutil.copytree(template, root)
        point = f"killed after commit {stop} ({count.points[stop - 1]})"
        with ScriptedLlmServer(["not json"]) as server:
            with KillAtCommit(stop), pytest.raises(Killed):
                run(root, server, BLOCKING)
            # `vba status` is read-only: it reports the log's state and says
            # whether the manifest lags, but writes nothing.
            manifest_before = (root / MANIFEST_NAME).read_bytes()
            document = status_document(root)
            assert (root / MANIFEST_NAME).read_bytes() == manifest_before, point
            if not document["manifest_in_sync"]:
                behind += 1
                assert document["state"] == "blocked", point
            assert run(root, server, BLOCKING).state == "blocked", point
        assert manifest_status(root) == BLOCKED_STATUS, point
        assert status_document(root)["manifest_in_sync"], point
    assert behind >= 1  # the kill between the blocked checkpoint and the manifest was tried


def test_a_kill_inside_vba_resume_does_not_leave_the_case_refusing_queries(
    tmp_path: Path,
) -> None:
    template = built_package(tmp_path)
    with ScriptedLlmServer(["not json"]) as server:
        assert run(template, server, BLOCKING).state == "blocked"
    clean = tmp_path / "clean"
    shutil.copytree(template, clean)
    with KillAtCommit(None) as count:
        assert cli.main(["resume", str(clean), "--operator", "ops"]) == 0
    assert count.commits == 2  # the resume checkpoint, then the manifest

    for stop in range(1, count.commits + 1):
        root = tmp_path / f"k{stop}"
        shutil.copytree(template, root)
        with KillAtCommit(stop), pytest.raises(Killed):
            cli.main(["resume", str(root), "--operator", "ops"])
        with ScriptedLlmServer([answer(FIND), answer(CONCLUDE)]) as server:
            final = run(root, server, BLOCKING)
            assert final.state == "concluded"
            # The snapshot query was answered, not refused with case_blocked.
            assert "refused by the tool" not in server.requests[1].messages[-1]["content"]
        rejections = [c.rejection for c in CheckpointStore(root).history() if c.rejection]
        assert rejections == [], stop
        assert [r["evidence_id"] for r in EvidenceStore(root).records()] == ["E1"]
        assert StepLog(root).get("H1", 1, 2, "dispatch") == {"evidence_id": "E1", "new": True}
        assert manifest_status(root) == {"state": "active"}


# -- point 9: one investigation per package ---------------------------------------------


def config_file(tmp_path: Path, server: ScriptedLlmServer, read_timeout: float = 60.0) -> Path:
    path = tmp_path / "investigate.toml"
    path.write_text(
        f"""[llm]
base_urls = ["{server.base_url}"]
model = "scripted"
max_retries = 0
read_timeout = {read_timeout}
[investigation]
response_recovery_version = 1
"""
    )
    return path


def investigate(root: Path, config: Path) -> list[str]:
    return [sys.executable, "-m", "viano_bug_analysis.cli", "investigate", str(root),
            "--config", str(config)]  # fmt: skip


def test_a_second_investigation_of_the_package_stops_at_once_with_package_busy(
    tmp_path: Path,
) -> None:
    root = built_package(tmp_path)
    with ScriptedLlmServer([hang(60.0), answer(CONCLUDE)]) as server:
        config = config_file(tmp_path, server)
        first = subprocess.Popen(
            investigate(root, config),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(server.requests) == 1  # the first run holds the package and waits
            journal_before = BudgetManager(root).snapshot()
            started = time.monotonic()
            second = subprocess.run(
                investigate(root, config),
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                timeout=120,
            )
            elapsed = time.monotonic() - started
            print(f"\nsecond investigate refused after {elapsed:.2f} s, process start included")
            assert second.returncode == ExitCode.BUSY, second.stderr
            error = orjson.loads(second.stderr.strip().splitlines()[-1])
            assert error["error"] == "package_busy"
            assert error["details"] == {"lock": ".investigation.lock"}
            assert "Traceback" not in second.stderr
            # Nothing was sent, reserved or written by the second run.
            assert len(server.requests) == 1
            assert BudgetManager(root).snapshot() == journal_before
            assert elapsed < 30, elapsed  # at once, not after the model's timeout
            assert first.poll() is None  # the first run was never disturbed
        finally:
            first.send_signal(signal.SIGKILL)  # kill -9: the kernel drops its lock
            first.wait()
        # The lock died with its holder: the next run takes the package and
        # repeats the unanswered request under its original reservation.
        third = subprocess.run(
            investigate(root, config),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert third.returncode == 0, third.stderr
        assert len(server.requests) == 2
    account = BudgetManager(root).account("H1")
    assert account.status == "concluded" and account.reserved == 0


def test_resume_waits_for_no_one_while_an_investigation_holds_the_package(
    tmp_path: Path,
) -> None:
    root = built_package(tmp_path)
    with ScriptedLlmServer(["not json"]) as server:
        assert run(root, server, BLOCKING).state == "blocked"
    with package_lock(root, INVESTIGATION_LOCK, "investigation"):
        with pytest.raises(CaseError) as refused:
            run_resume(argparse.Namespace(package=str(root), operator="ops"))
        assert refused.value.code == "package_busy"
    current = CheckpointStore(root).current()
    assert current is not None and current.state == "blocked"


# -- point 20: the progress line shows the live budget -----------------------------------


def budget_figures(stderr: str) -> list[tuple[str, int]]:
    found = re.findall(r"^(.*) \| budget left (-?[0-9]+)$", stderr, flags=re.MULTILINE)
    return [(text, int(left)) for text, left in found]


def test_the_progress_line_shows_the_budget_left_at_that_moment(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    limit = InvestigationSettings().budget_per_hypothesis
    dispatch = InvestigationSettings().dispatch_cost
    with ScriptedLlmServer(["not json"]) as server:
        config = tmp_path / "first.toml"
        config.write_text(
            config_file(tmp_path, server).read_text() + "invalid_response_limit = 1\n"
        )
        first = subprocess.run(
            investigate(root, config), capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
        assert first.returncode == 4, first.stderr
    budget = BudgetManager(root)
    estimate = budget.reservation("H1:1:1:llm").amount  # type: ignore[union-attr]
    spent = budget.account("H1").spent
    # A fresh run: the figure is the account's, not 0.
    assert budget_figures(first.stderr) == [
        ("H1 step 1: asking the model", limit - estimate),
        ("H1 step 1: answer rejected (syntax_error)", limit - spent),
    ]

    assert cli.main(["resume", str(root), "--operator", "ops"]) == 0
    with ScriptedLlmServer([answer(FIND), answer(CONCLUDE)]) as server:
        second = subprocess.run(
            investigate(root, config_file(tmp_path, server)),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        assert second.returncode == 0, second.stderr
    budget = BudgetManager(root)
    reservations = budget.snapshot()["reservations"]
    amount = {key: r["amount"] for key, r in reservations.items()}
    actual = {key: r["actual"] for key, r in reservations.items()}
    after_resume = limit - actual["H1:1:1:llm"]
    after_answer = after_resume - actual["H1:1:2:llm"]
    after_query = after_answer - dispatch
    # After a resume: every line moves with the journal, none is frozen.
    assert budget_figures(second.stderr) == [
        ("H1 step 1: asking the model", after_resume - amount["H1:1:2:llm"]),
        ("H1 step 1: source.find_text", after_answer - dispatch),
        ("H1 step 2: asking the model", after_query - amount["H1:2:1:llm"]),
        ("H1: undetermined (concluded)", after_query - actual["H1:2:1:llm"]),
    ]
    assert budget.account("H1").available == after_query - actual["H1:2:1:llm"]
