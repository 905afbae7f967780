"""Capture validation names the place and the property through the one mapper (point 21)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tests.project_research.research_fakes import FakeDatabase, FakeGit, make_config
from tests.project_research.test_service import EXAMPLE
from viano_bug_analysis.project_research import ProjectResearch
from viano_bug_analysis.project_research.captures import Capture, CaptureError


def test_a_capture_missing_a_result_property_names_it(tmp_path: Path) -> None:
    research = ProjectResearch(make_config(tmp_path), git=FakeGit(), database=FakeDatabase())
    document = copy.deepcopy(dict(research.capture(EXAMPLE).document))
    del document["result"]["coverage"]
    with pytest.raises(CaptureError) as info:
        Capture.from_document(document)
    err = info.value
    assert err.code == "capture_invalid"
    assert (err.details["path"], err.details["property"]) == ("/result/coverage", "coverage")
    assert "'coverage'" in err.message and "/result" in err.message
