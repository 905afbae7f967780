"""A cold git search next to its inflate floor, round by round in one process.

    .venv/bin/python -m benches.ab_git_cold [--rounds 9] [--corpus DIR]

On a machine that other work shares, the rows of ``benches/bench_git.py``
run minutes apart and the load between them moves their ratio more than a
change does. Here each round runs the floor (``GitSelection.inflate_floor``
over a listing made once) and then a cold ``GitSource.search`` (a fresh
source: open, list, read, search, SHA-256 of the hit blobs) right after it,
so both see the same load; the wall time and the process CPU time of each
are printed as one JSON line (medians and minima over the rounds).

To compare two builds, run this alternately with each build's package first
on ``PYTHONPATH`` (one process per build and run). The corpus is the text
corpus of ``benches/bench_git.py``, built once into ``--corpus`` (default: a
directory under the system's temp directory, reused when present).
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benches import bench_git
from viano_bug_analysis._native import GitRepository


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _corpus(root: Path) -> tuple[Path, str]:
    marker = root / "commit"
    if not marker.exists():
        built = bench_git._build(root, text_only=True)
        marker.write_text(built.commit)
    return root / "checkout", marker.read_text().strip()


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    cpu, wall = _cpu(), time.perf_counter()
    run()
    return (time.perf_counter() - wall) * 1e3, (_cpu() - cpu) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--corpus", type=Path, default=Path(tempfile.gettempdir(), "vba-ab-git"))
    args = parser.parse_args()
    checkout, commit = _corpus(args.corpus)
    corpus = bench_git.Corpus(checkout, commit, files=0, bytes=0)
    repo = GitRepository(checkout, cache_bytes=0)
    listing = repo.tree(commit, max_entries=1_000_000, timeout_s=60.0)
    selection = listing.select(prefix=None, sql_only=False, max_file_bytes=bench_git.MAX_FILE_BYTES)
    rows: dict[str, list[float]] = {}
    for round_ in range(args.rounds + 1):  # the first round warms up
        gc.collect()
        floor = _timed(functools.partial(selection.inflate_floor, timeout_s=60.0))
        # Made and dropped outside the timing, as in bench_git's cold row.
        source = bench_git._source(corpus)
        cold = _timed(functools.partial(bench_git._ours, source))
        del source
        if round_:
            for name, (wall, cpu) in (("floor", floor), ("cold", cold)):
                rows.setdefault(name, []).append(wall)
                rows.setdefault(name + "_cpu", []).append(cpu)
    summary: dict[str, float] = {}
    for name, values in rows.items():
        summary[name] = round(statistics.median(values), 1)
        summary[name + "_min"] = round(min(values), 1)
    summary["cold_over_floor"] = round(summary["cold"] / summary["floor"], 2)
    summary["cold_over_floor_cpu"] = round(summary["cold_cpu"] / summary["floor_cpu"], 2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
