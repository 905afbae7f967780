"""The README's "Your first case" is runnable as written: the spec it shows is the
bundled ``samples/first-case`` spec, and that sample builds into a package."""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.case.package import load_package

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples" / "first-case"


def _readme_spec() -> object:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Your first case", 1)[1]
    block = re.search(r"```json\n(.*?)```", section, re.S)
    assert block is not None, "the first-case section has no JSON spec"
    return orjson.loads(block.group(1))


def test_the_readme_spec_is_the_bundled_sample() -> None:
    assert _readme_spec() == orjson.loads((SAMPLE / "case-spec.json").read_bytes())


def test_the_bundled_sample_builds(tmp_path: Path) -> None:
    CaseBuilder(SAMPLE / "case-spec.json", tmp_path / "package").build()
    package = load_package(tmp_path / "package")
    assert package.case_id == "BUG-41"
    assert [s["source_ref"] for s in package.case["source_context"]] == ["diag-001"]
