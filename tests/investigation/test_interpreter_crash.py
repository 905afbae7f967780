"""Crash safety of the CaseInterpreter, killed right after every file commit.

The scenario has every durable step of the interpreter: the policy, the
checkpoint ``interpretation_started``, a rejected answer (call, reservation,
reply, settlement, call record, decision), the accepted one, the new
revision's inputs and case, the manifest (the commit point), the closed
account and the checkpoint ``interpreted``. A clean run is measured first;
then for every file commit of that run the interpreter is killed right after
it and started again. The rerun must end exactly as the clean run: the same
model requests (none lost, none repeated), a budget journal that charges what
the server billed, the same records and the same revision. The same holds for
``vba interpret`` killed with a real SIGKILL in a child process.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson

from tests.e2e.crash import (
    KillAtCommit,
    rerun_after_each_commit,
    sigkill_after_each_commit,
    sigkill_vba,
)
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import FIND_QUERY, write_config
from tests.investigation.test_interpreter import GOOD, answer, built, hypothesis, interpreter
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.investigation.budget import BudgetManager
from viano_bug_analysis.investigation.checkpoints import CheckpointStore
from viano_bug_analysis.investigation.recovery import CallRecordStore

# One rejected answer, one accepted.
SCRIPT = [answer(hypothesis("A.", FIND_QUERY, ["report", "P7"])), GOOD]
BILLED = (11 + 7) * len(SCRIPT)  # what the scripted server bills


def end_state(package: Path) -> dict[str, Any]:
    """Everything a rerun must reproduce, without times and latencies."""
    folder = package / PackageLayout.interpretation(1)
    records = {}
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        record = orjson.loads(path.read_bytes())
        if "chat" in record:  # a reply: the answer, not its latency
            record = {"content": record["chat"]["content"], "usage": record["chat"]["usage"]}
        records[path.name] = record
    budget = BudgetManager(package).snapshot()
    loaded = load_package(package)
    return {
        "log": records,
        "accounts": budget["accounts"],
        "reservations": budget["reservations"],
        "checkpoints": [
            (c.kind, c.state, dict(c.payload), c.blocked)
            for c in CheckpointStore(package).history()
        ],
        "call_records": [(r.seq, r.sha256) for r in CallRecordStore(package).list()],
        "manifest": loaded.manifest,
        "case": loaded.case,
    }


def billed(package: Path) -> int:
    reservations = BudgetManager(package).snapshot()["reservations"]
    return sum(r["actual"] or 0 for r in reservations.values() if r["state"] == "settled")


def test_killed_after_every_file_commit_the_rerun_ends_as_the_clean_run(tmp_path: Path) -> None:
    template = built(tmp_path)
    clean = tmp_path / "clean"
    shutil.copytree(template, clean)
    with ScriptedLlmServer(SCRIPT) as server, KillAtCommit(None) as count:
        assert interpreter(clean, server).run().state == "interpreted"
        assert len(server.requests) == len(SCRIPT)
    expected = end_state(clean)
    assert billed(clean) == BILLED
    assert [h["id"] for h in expected["case"]["hypotheses"]] == ["H1", "H2"]
    assert count.commits > 12  # every kind of step was committed
    print(f"\nclean interpretation: {count.commits} file commits, each one killed after in turn")

    def run(package: Path, server: ScriptedLlmServer) -> str:
        return interpreter(package, server).run().state

    def end(package: Path) -> tuple[int, dict[str, Any]]:
        return billed(package), end_state(package)

    rerun_after_each_commit(
        template,
        tmp_path,
        SCRIPT,
        count,
        run,
        state="interpreted",
        end=end,
        expected=(BILLED, expected),
    )


def test_vba_interpret_killed_with_sigkill_after_every_file_commit_resumes_exactly(
    tmp_path: Path,
) -> None:
    template = built(tmp_path)

    def vba(package: Path, server: ScriptedLlmServer, kill_after: int) -> int:
        config = write_config(tmp_path, server)
        return sigkill_vba(kill_after, "interpret", str(package), "--config", str(config))

    def end(package: Path) -> tuple[int, dict[str, Any]]:
        return billed(package), end_state(package)

    commits = sigkill_after_each_commit(template, tmp_path, SCRIPT, vba, end)
    assert billed(tmp_path / "clean") == BILLED
    assert commits >= 12
    print(f"\nvba interpret killed with SIGKILL after each of its {commits} file commits")
