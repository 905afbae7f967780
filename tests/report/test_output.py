"""`vba report` and `vba status` as a user meets them: formats, -o, read-only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.report.package_fixture import SUMMARY_H1, reported_package
from tests.report.test_build import tree
from viano_bug_analysis.errors import ReportError
from viano_bug_analysis.investigation.commands import _one_line
from viano_bug_analysis.report.output import render, write_report
from viano_bug_analysis.schemas import schema_validator


def vba(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", *args],
        capture_output=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return reported_package(tmp_path_factory.mktemp("cli"))


def test_every_format_leaves_the_package_as_it_was(package: Path, tmp_path: Path) -> None:
    before = tree(package)
    json_run = vba("report", str(package), "--format", "json")
    assert json_run.returncode == 0, json_run.stderr
    assert schema_validator("case-report-v3").is_valid(orjson.loads(json_run.stdout))
    md = vba("report", str(package), "--format", "md")
    assert md.returncode == 0 and md.stdout.startswith(b"# Case BUG-77")
    out = tmp_path / "report.html"
    html = vba("report", str(package), "-o", str(out))
    assert html.returncode == 0 and html.stdout == b""
    assert out.read_bytes().startswith(b"<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary left
    assert tree(package) == before


def test_an_output_file_inside_the_package_is_refused(package: Path) -> None:
    before = tree(package)
    for target in (package / "report.html", package / "analysis" / "r.md"):
        run = vba("report", str(package), "-o", str(target))
        assert run.returncode == 2
        assert orjson.loads(run.stderr)["error"] == "report_output_inside_package"
    assert tree(package) == before


def test_an_unwritable_output_is_a_typed_error(package: Path, tmp_path: Path) -> None:
    with pytest.raises(ReportError) as caught:
        write_report(b"x", tmp_path / "missing" / "r.html", package)
    assert (caught.value.code, caught.value.details) == ("report_write_failed", {"errno": "ENOENT"})
    with pytest.raises(ReportError) as unknown:
        render({}, "pdf")
    assert unknown.value.code == "report_format_unknown"
    run = vba("report", str(package), "-o", str(tmp_path / "missing" / "r.html"))
    assert run.returncode == 6 and b"Traceback" not in run.stderr


def test_status_shows_tokens_apart_from_budget_units_and_each_conclusion(package: Path) -> None:
    run = vba("status", str(package))
    assert run.returncode == 0
    lines = run.stdout.decode().splitlines()
    assert "tokens: 44 prompt + 28 completion in 4 model answer(s)" in lines
    assert any(line.startswith("budget units: 272 of 400000 spent") for line in lines)
    assert "H1: supported (concluded, confidence 0.80)" in lines
    assert f"  {SUMMARY_H1}" in lines
    document = orjson.loads(vba("status", str(package), "--json").stdout)
    assert document["usage"]["completion_tokens"] == 28
    assert document["outcomes"]["H2"]["confidence"] == 0.7


def test_a_summary_cannot_write_control_characters_to_the_terminal() -> None:
    assert _one_line("fine\n\x1b[2J  H9: supported\r") == "fine ?[2J H9: supported"


def test_a_damaged_store_is_a_typed_error_not_a_traceback(tmp_path: Path) -> None:
    root = reported_package(tmp_path)
    result = sorted((root / "analysis" / "evidence" / "results").glob("*.json"))[0]
    result.write_bytes(result.read_bytes()[:-1])
    run = vba("report", str(root), "--format", "json")
    assert run.returncode == 5 and b"Traceback" not in run.stderr
    assert orjson.loads(run.stderr)["error"] == "evidence_corrupt"
    assert run.stdout == b""


def test_stored_answers_are_relative_links_that_resolve_from_where_the_report_is(
    tmp_path: Path,
) -> None:
    import re
    import subprocess
    import sys
    from urllib.parse import unquote

    from tests.report.package_fixture import reported_package

    package = reported_package(tmp_path)
    for fmt, pattern in (
        ("html", r'href="([^"#][^"]*)"'),
        ("md", r"\[(?:stored answer|capture)\]\(([^)]+)\)"),
    ):
        out = tmp_path / "elsewhere" / "deeper" / f"report.{fmt}"
        out.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "viano_bug_analysis.cli", "report", str(package),
             "--format", fmt, "-o", str(out)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        links = re.findall(pattern, out.read_text())
        assert links, fmt
        for link in links:
            assert not link.startswith(("/", "http:", "https:", "file:")), link
            target = (out.parent / unquote(link)).resolve()
            assert target.is_file(), (fmt, link)
            assert package.resolve() in target.parents  # a stored file of the package
