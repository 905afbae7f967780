"""Benchmark: "already fixed?" for 100 reports against a history of thousands of commits.

A generated repository (``git fast-import``) of ``COMMITS`` commits on one
line, each changing one to three of 400 files (every 500th is a mass change
of 150 files), with subjects naming quest IDs and some closing issues. Each
of the 100 reports names a quest and a date; per report the rows read the
first-parent window (``[limits] history_commits`` = all of it) and rank it
(``enrichment/fixes/evidence.rank``), as the build phase does, without the
journaled ``source.changes`` query (benchmarked with the git source).

Rows:

- ``baseline_git_log`` (reference): one ``git log --first-parent
  --name-status`` of the same line, the CLI reading it once with no ranking;
- ``cold_cache``: nothing kept between rounds (``forget_histories``): the first
  report reads and diffs every commit, the 99 others reuse its window;
- ``warm_cache``: the repository and window of earlier rounds kept;
- ``rust_cache_only``: the repository kept, the window read from the core's
  per-commit cache and converted anew for every report.

``extra_info``: the peak resident memory of a child process that runs the
cold then the warm loop once (``ru_maxrss``) and its two times.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.project_research.git_fixtures import GIT_ENV

GROUP = "fixes: 100 reports against 3000 commits"
COMMITS = 3000
REPORTS = 100
FILES = 400
MASS_EVERY = 500
START = 1_700_000_000


def _history(path: Path) -> str:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=GIT_ENV, check=True)
    out: list[bytes] = []

    def data(text: str) -> None:
        raw = text.encode()
        out.append(f"data {len(raw)}\n".encode() + raw + b"\n")

    for n in range(1, COMMITS + 1):
        when = START + n * 3600
        quest = 10000 + n % 700
        if n % 97 == 0:
            message = f"Core/Quest: fix quest {quest} credit\n\nCloses #{n % 300}"
        else:
            message = f"DB/Quest: {quest} tweak {n} (#{n})"
        out.append(f"commit refs/heads/main\nmark :{n}\n".encode())
        out.append(f"author Dev{n % 7} <d@example.invalid> {when} +0000\n".encode())
        out.append(f"committer Dev <d@example.invalid> {when} +0000\n".encode())
        data(message)
        if n > 1:
            out.append(f"from :{n - 1}\n".encode())
        touched = range(150) if n % MASS_EVERY == 0 else range(1 + n % 3)
        for k in touched:
            file = (n * 7 + k * 13) % FILES
            out.append(f"M 100644 inline sql/updates/world/{file:03d}.sql\n".encode())
            data(f"DELETE FROM quest_template_addon WHERE ID={quest};\n-- {n}\n")
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=path,
        env=GIT_ENV,
        input=b"".join(out),
        check=True,
    )
    return (
        subprocess.run(
            ["git", "rev-parse", "main"], cwd=path, env=GIT_ENV, capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )


_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from benches.bench_fixes import history_source, reports_loop
source = history_source(Path(sys.argv[1]), sys.argv[2])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter(); reports_loop(source); cold = time.perf_counter() - t0
t0 = time.perf_counter(); reports_loop(source); warm = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"cold_s": cold, "warm_s": warm, "peak_rss_kib": peak,
                  "rss_before_kib": before}))
"""


def history_source(path: Path, head: str) -> Any:
    from viano_bug_analysis.enrichment.fixes.source import HistorySource
    from viano_bug_analysis.project_research.config import Limits

    limits = Limits(history_commits=COMMITS, history_files=200, git_seconds=120)
    return HistorySource("source", path, "https://github.com/vcore/vcore", None, head, limits)


def forget_histories() -> None:
    """Empties the process's opened repositories and windows: the next read is cold."""
    from viano_bug_analysis.enrichment.fixes import source

    source._opened.clear()
    source._windows.clear()
    source._providers.clear()
    source._headers.clear()


def reports_loop(source: Any, *, keep_window: bool = True) -> int:
    """Reads the window and ranks it for each of the 100 reports, as the build phase
    does (``HistorySource.window``, ``rank``); returns how many reports got a claim.
    ``keep_window`` False: each report converts the window anew from the core's cache."""
    from viano_bug_analysis.enrichment.fixes import source as module
    from viano_bug_analysis.enrichment.fixes.clues import ReportClues
    from viano_bug_analysis.enrichment.fixes.evidence import rank
    from viano_bug_analysis.project_research.git_history import anchor_at, utc_text

    claims = 0
    for r in range(REPORTS):
        if not keep_window:
            module._windows.clear()
        window = source.window()
        created = START + (r * 29 + 11) * 3600
        clues = ReportClues(
            number=r,
            repository="vcore/vcore",
            same_repository=True,
            created_at=utc_text(created),
            ids=(str(10000 + (r * 7) % 700),),
        )
        at = anchor_at(window.commits, created)
        candidates = window.commits[: (at or 0) + 500]
        ranking = rank(clues, candidates, {}, key_columns=frozenset({"ID"}))
        claims += ranking.verdict != "none"
    return claims


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("fixes-bench") / "repo"
    return path, _history(path)


@pytest.mark.benchmark(group=GROUP)
def test_cold_cache(benchmark: Any, history: tuple[Path, str]) -> None:
    path, head = history
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), head],
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    benchmark.extra_info.update(json.loads(child.stdout))
    source = history_source(path, head)

    def cold() -> int:
        forget_histories()
        return reports_loop(source)

    claims = benchmark.pedantic(cold, rounds=3, iterations=1)
    assert claims > 0


@pytest.mark.benchmark(group=GROUP)
def test_warm_cache(benchmark: Any, history: tuple[Path, str]) -> None:
    source = history_source(*history)
    forget_histories()
    reports_loop(source)
    benchmark.pedantic(lambda: reports_loop(source), rounds=3, iterations=1)


@pytest.mark.benchmark(group=GROUP)
def test_rust_cache_only(benchmark: Any, history: tuple[Path, str]) -> None:
    """The window converted anew for every report: what the per-commit cache of the
    Rust core alone saves (no window kept in Python)."""
    source = history_source(*history)
    forget_histories()
    reports_loop(source)

    benchmark.pedantic(lambda: reports_loop(source, keep_window=False), rounds=3, iterations=1)


@pytest.mark.benchmark(group=GROUP)
def test_baseline_git_log(benchmark: Any, history: tuple[Path, str]) -> None:
    path, head = history

    def once() -> int:
        t0 = time.perf_counter()
        out = subprocess.run(
            ["git", "log", "--first-parent", "--no-renames", "--name-status", head],
            cwd=path,
            env=GIT_ENV,
            capture_output=True,
            check=True,
        )
        assert time.perf_counter() >= t0
        return len(out.stdout)

    benchmark.pedantic(once, rounds=3, iterations=1)
