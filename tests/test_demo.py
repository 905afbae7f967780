"""The README's demo runs end to end on the bundled sample."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]


def test_demo_reports_verified_facts_with_origins() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.demo", str(REPO / "samples/bug-20"), "--json"],
        capture_output=True,
        check=True,
    ).stdout
    report = orjson.loads(out)
    searches = {s["pattern"]: s for s in report["searches"]}
    credit = searches["KilledMonsterCredit"]
    assert credit["total"] == 1
    assert credit["hits"][0]["line"] == 39
    assert len(credit["hits"][0]["sha256"]) == 64
    assert searches["npc_wild_wolpertinger"]["total"] == 3
    rows = report["rows"]
    assert [p for p, _ in rows["lookup ID == 90001 (integer)"]] == ["/rows/1"]
    assert [p for p, _ in rows['lookup ID == "90001" (string)']] == ["/rows/2"]


def test_demo_summary_is_readable() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.demo", str(REPO / "samples/bug-20")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Verified source members:" in out
    assert "/rows/1" in out
