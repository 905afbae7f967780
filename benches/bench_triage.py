"""Benchmark: ``vba triage`` of 100 synthetic reports against the test MariaDB.

Each report names one or two entities of the fixture world DB (quests,
creatures, a spell) in one of the tracker styles of tests/triage/backlog.py.
The whole command runs in a child process, once with one job and once with
one job per core (the ``baseline-one-job`` row beside ``jobs-per-core``), a
fresh folder each round; the extra figures are the child's peak resident
memory (``wait4``'s ``ru_maxrss``), the queries per report (from the index)
and the wall time per report.

Needs the test MariaDB (VBA_TEST_DB_PORT, VBA_TEST_DB_PASSWORD_FILE): `make
bench` starts it.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.case.builder.conftest import build_source_repo, write_config
from tests.project_research.conftest import TestDatabase, mariadb

__all__ = ["mariadb"]

GROUP = "triage: 100 synthetic reports, one package each"
REPORTS = 100
_ROUND = itertools.count()
QUESTS = range(90000, 90010)
CREATURES = (90000, 90001, 90002, 90005, 90006, 90007, 90008, 90009)


def synthetic_backlog(count: int = REPORTS) -> list[dict[str, Any]]:
    issues = []
    for n in range(count):
        quest, creature = QUESTS[n % len(QUESTS)], CREATURES[n % len(CREATURES)]
        style = n % 3
        if style == 0:
            body = (
                f"### Current Behaviour\r\n\r\nhttps://www.wowhead.com/quest={quest} cannot be "
                f"finished.\r\n\r\n### Steps to reproduce the problem\r\n\r\n1. `.quest add "
                f"{quest}`\r\n2. `.go creature {creature}`\r\n"
            )
        elif style == 1:
            body = f"**Description:** npc {creature} does nothing when I talk to it\n"
        else:
            body = f"spell 90004 on creature {creature} gives no credit for quest {quest}"
        issues.append(
            {
                "number": 1000 + n,
                "title": f"Report {n}: entity {creature}",
                "body": body,
                "url": f"https://github.com/example-org/vcore-bugs/issues/{1000 + n}",
                "state": "OPEN",
                "labels": [{"name": "bug"}],
                "author": {"login": "bench"},
                "createdAt": "2026-11-01T10:00:00Z",
                "updatedAt": "2026-11-02T10:00:00Z",
            }
        )
    return issues


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, mariadb: TestDatabase) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("bench-triage")
    repo, commit = build_source_repo(root / "repo")
    config = write_config(root, mariadb, repo, commit, database="cata_world")
    issues = root / "issues.json"
    issues.write_text(json.dumps(synthetic_backlog()))
    return config, issues


def _triage(config: Path, issues: Path, out: Path, jobs: int) -> tuple[float, int]:
    """Wall seconds and peak resident KiB of one ``vba triage`` child."""
    command = [sys.executable, "-m", "viano_bug_analysis.cli", "triage", str(issues),
               "--out", str(out), "--project-config", str(config), "--jobs", str(jobs)]  # fmt: skip
    started = time.perf_counter()
    child = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    )
    _pid, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    assert child.returncode == 0
    return seconds, usage.ru_maxrss


def _bench(benchmark: Any, setup: tuple[Path, Path], name: str, jobs: int) -> None:
    config, issues = setup
    benchmark.group = GROUP
    benchmark.name = name
    figures: dict[str, Any] = {}

    def fresh() -> tuple[tuple[Path], dict[str, Any]]:
        return (config.parent / f"round-{next(_ROUND)}",), {}

    def run(out: Path) -> None:
        seconds, peak_kib = _triage(config, issues, out, jobs)
        index = json.loads((out / "index.json").read_text())
        queries = [row["queries"] for row in index["rows"]]
        assert index["by_status"] == {"built": REPORTS}
        figures.update(
            jobs=jobs,
            reports=REPORTS,
            seconds_per_report=round(seconds / REPORTS, 3),
            peak_rss_mib=round(peak_kib / 1024, 1),
            queries_per_report_mean=round(sum(queries) / len(queries), 1),
            queries_per_report_max=max(queries),
            duplicate_groups=len(
                {r["duplicates"]["group"] for r in index["rows"] if r["duplicates"]}
            ),
        )

    benchmark.pedantic(run, setup=fresh, rounds=1, warmup_rounds=0)
    benchmark.extra_info["figures"] = figures


def test_baseline_one_job(benchmark: Any, setup: tuple[Path, Path]) -> None:
    _bench(benchmark, setup, "baseline-one-job", 1)


def test_jobs_per_core(benchmark: Any, setup: tuple[Path, Path]) -> None:
    _bench(benchmark, setup, "jobs-per-core", os.cpu_count() or 1)
