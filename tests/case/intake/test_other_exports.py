"""Files that are not a tracker export are refused with what was expected (issue 34
point 5): a CSV was one case titled "number,title,body", an unknown JSON object
"has no title"; a search result's {"items": [...]} / {"issues": [...]} is read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import error_of, vba

ISSUE = {"number": 7, "title": "The wolf does not attack", "body": "1. pull it\n2. nothing"}


@pytest.mark.parametrize(
    ("name", "content", "form"),
    [
        ("issues.csv", "number,title,body\n7,The wolf,does not attack\n", "CSV"),
        ("issues.txt.export", "number,title,body\n7,The wolf,does not attack\n", "CSV"),
        ("issues.yaml", "- number: 7\n  title: The wolf\n", "YAML"),
        ("issues", "- number: 7\n  title: The wolf\n", "YAML"),
        ("issues.yml", "issues:\n  - number: 7\n", "YAML"),
    ],
)
def test_a_data_file_is_refused_with_what_was_expected(
    tmp_path: Path, name: str, content: str, form: str
) -> None:
    (tmp_path / name).write_text(content)
    done = vba("case", "import", tmp_path / name, "-o", tmp_path / "spec.json")
    assert done.returncode == 2, done.stdout
    error = error_of(done)
    assert error["error"] == "report_invalid"
    assert error["details"]["reason"] == "not_a_tracker_export"
    assert f"is {form}, not a tracker export" in error["message"]
    assert "gh issue view" in error["details"]["expected"]
    assert not (tmp_path / "spec.json").exists()
    assert "The wolf" not in done.stderr  # never the report's text


def test_json_of_an_unknown_shape_is_refused_as_such(tmp_path: Path) -> None:
    (tmp_path / "export.json").write_text(json.dumps({"data": {"rows": [1, 2]}}))
    done = vba("case", "import", tmp_path / "export.json", "-o", tmp_path / "spec.json")
    assert done.returncode == 2
    error = error_of(done)
    assert error["details"]["reason"] == "not_a_tracker_export"
    assert "unknown shape" in error["message"]


@pytest.mark.parametrize("key", ["items", "issues"])
def test_a_search_result_wrapper_is_read_as_its_list(tmp_path: Path, key: str) -> None:
    wrapper = {"total_count": 2, "incomplete_results": False, key: [ISSUE, {**ISSUE, "number": 8}]}
    (tmp_path / "search.json").write_text(json.dumps(wrapper))
    done = vba("case", "import", tmp_path / "search.json", "--out-dir", tmp_path / "specs")
    assert done.returncode == 0, done.stderr
    specs = sorted((tmp_path / "specs").iterdir())
    assert len(specs) == 2
    titles = [json.loads(p.read_text())["report"]["title"] for p in specs]
    assert titles == [ISSUE["title"]] * 2


def test_a_markdown_report_whose_first_line_has_commas_is_still_a_report(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("number,title,body\n\nthe header above is a title\n")
    done = vba("case", "import", tmp_path / "report.md", "-o", tmp_path / "spec.json")
    assert done.returncode == 0, done.stderr
