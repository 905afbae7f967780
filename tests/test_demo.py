"""The README's demo runs end to end on the bundled sample."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples" / "bug-20"


def _demo(*extra: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.demo", str(SAMPLE), *extra],
        capture_output=True,
        check=True,
    )


def test_demo_reports_verified_facts_with_origins() -> None:
    report = orjson.loads(_demo("--json").stdout)
    results = {r["request_id"]: r["result"] for r in report["result"]["results"]}
    assert [m["line"] for m in results["Q0002"]["matches"]] == [39]
    assert [line["line"] for line in results["Q0003"]["lines"]] == [37, 38, 39]
    assert results["Q0004"]["coverage"] == "schema_only"
    assert [row["pointer"] for row in results["Q0005"]["rows"]] == ["/rows/1"]
    assert report["rejected_batch"]["error"] == "unknown_column"


def test_demo_summary_is_readable_and_leaves_the_sample_untouched() -> None:
    before = sorted((p, p.stat().st_mtime_ns) for p in SAMPLE.rglob("*"))
    out = _demo().stdout.decode()
    assert "[Q0001 H1] source.find_symbol" in out
    assert "db-001#/rows/1" in out
    # Rows as JSON, the way they are stored, not as Python reprs.
    assert 'db-001#/rows/1  {"ID":90001,"LogTitle":"Catch the Wolpertinger",' in out
    assert "{'ID'" not in out
    assert sorted((p, p.stat().st_mtime_ns) for p in SAMPLE.rglob("*")) == before
