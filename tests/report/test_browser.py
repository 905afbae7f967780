"""The HTML report in a real browser: headless chromium loads the file from disk,
every citation link lands on an element that shows the cited value and its hash,
and a screenshot is kept at .artifacts/report-screenshot.png."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.report.browser import ARTIFACT, WRITTEN, chromium, run_chromium
from tests.report.package_fixture import HOSTILE, REPORT_TEXT, reported_package
from tests.report.test_html import parse
from viano_bug_analysis.report import build_report


def test_the_report_in_headless_chromium(tmp_path: Path) -> None:
    executable = chromium()
    package = reported_package(tmp_path)
    page_file = tmp_path / "report.html"
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "viano_bug_analysis.cli",
            "report",
            str(package),
            "-o",
            str(page_file),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    report = build_report(package)
    url = page_file.resolve().as_uri()

    # The DOM as the browser built it from the file (no network, no script).
    dom = run_chromium(executable, tmp_path / "profile-dom", "--dump-dom", url).decode()
    page = parse(dom)
    assert "script" not in {tag for tag, _attrs in page.tags}
    links = [
        str(attrs["href"])
        for tag, attrs in page.tags
        if tag == "a" and str(attrs.get("href", "")).startswith("#cite-")
    ]
    citations = [c for h in report["hypotheses"] for c in h["citations"]]
    assert sorted(links) == sorted(f"#{c['anchor']}" for c in citations)
    for citation in citations:
        target = page.text_by_id.get(citation["anchor"])
        assert target is not None, citation["anchor"]
        assert citation["excerpt"] in target
        assert citation["value_sha256"] in target and citation["computed_sha256"] in target
        assert citation["evidence"]["result_sha256"] in target  # the stored answer it lies in
        assert citation["provenance"]["member_sha256"] in target  # and its origin
    assert REPORT_TEXT.split("\n")[1] == HOSTILE
    assert HOSTILE in page.text_by_id["hypothesis-H2"]  # shown as text, not run

    shot = tmp_path / "report.png"
    run_chromium(
        executable,
        tmp_path / "profile-shot",
        "--window-size=1280,2600",
        f"--screenshot={shot}",
        url,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    ARTIFACT.parent.mkdir(exist_ok=True)
    shutil.copyfile(shot, ARTIFACT)
    WRITTEN.append(ARTIFACT)
