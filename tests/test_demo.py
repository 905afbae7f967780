"""The README's demo runs end to end: the case demo (a tracker issue to leads and a
case report, against the test MariaDB) and the router batch on the bundled sample."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

from tests.project_research.conftest import TestDatabase, mariadb

__all__ = ["mariadb"]

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples" / "bug-20"
# The case demo's issue and history: in the repository, not in an installed package.
CASE_SAMPLE = REPO / "samples" / "demo"


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


# -- the main job (make demo's first part), against the test services ------------------


def test_the_case_demo_imports_builds_and_writes_the_report(
    tmp_path: Path, mariadb: TestDatabase
) -> None:
    password = tmp_path / "reader.local.txt"
    password.write_text(mariadb.password + "\n")
    out = tmp_path / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.demo_case", "--out", str(out),
         "--db-port", str(mariadb.port), "--db-password-file", str(password),
         "--sample", str(CASE_SAMPLE)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "written case spec vcore-bugs-42 at " + str(out / "spec.json") in lines
    # The leads come first, and the fix made after the reported revision is the first.
    leads = next(i for i, line in enumerate(lines) if line.startswith("leads: "))
    assert "changed since the report" in lines[leads + 1]
    assert any("report revision ea69729" in line and "ancestor" in line for line in lines)
    report = out / "case-report.html"
    assert lines[-2] == f"== the case report: {report}" and report.stat().st_size > 0
    # The history's commit IDs are the same on every machine (the issue names the first).
    assert "revision 1 built" in done.stdout
    assert not (CASE_SAMPLE / ".git").exists()


def test_the_demo_history_has_fixed_commit_ids(tmp_path: Path) -> None:
    from viano_bug_analysis.demo_case import source_history

    commits = source_history(CASE_SAMPLE / "history", tmp_path / "repo")
    issue = orjson.loads((CASE_SAMPLE / "issue.json").read_bytes())
    assert commits[0].startswith("ea69729") and "ea69729" in issue["body"]
    assert len(commits) == 2


def test_the_case_demo_without_its_sample_says_where_it_looked(tmp_path: Path) -> None:
    # An installed package carries no samples: the folder is named or found, never guessed.
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.demo_case", "--out", str(tmp_path / "out"),
         "--db-port", "1", "--db-password-file", str(tmp_path / "pw"),
         "--sample", str(tmp_path / "missing")],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "no bundled sample at" in done.stderr and "--sample" in done.stderr
    assert "Traceback" not in done.stderr
