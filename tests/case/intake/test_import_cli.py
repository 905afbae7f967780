"""`vba case import` as an operator runs it: files written, accepted by `vba case create`,
and every bad report refused with exit 2, one JSON error naming the field, and no file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.case.intake.reports import gh_issue, gitlab_issue, rest_issue
from tests.cli.helpers import error_of, vba

# A word of every report body below: it must never reach stderr.
SECRET = "brewmaster"


def write(path: Path, document: Any) -> Path:
    path.write_bytes(document if isinstance(document, bytes) else json.dumps(document).encode())
    return path


def test_import_then_create_and_build_accept_the_spec(tmp_path: Path) -> None:
    report = write(tmp_path / "issue.json", rest_issue())
    spec = tmp_path / "specs" / "case-spec.json"
    done = vba("case", "import", report, "-o", spec)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"written case spec examplecore-cata-812 at {spec}\n"
    document = json.loads(spec.read_bytes())
    assert document["report"]["metadata"]["revision"] == {
        "commit": "5e3a9c1",
        "from": "FC rev. hash/commit",
    }
    created = vba("case", "create", spec, tmp_path / "pkg", "--json")
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["case_id"] == "examplecore-cata-812"
    built = vba("case", "build", spec, tmp_path / "built")
    assert built.returncode == 0, built.stderr


def test_json_summary_and_comments(tmp_path: Path) -> None:
    report = write(tmp_path / "gh.json", gh_issue())
    spec = tmp_path / "spec.json"
    done = vba("case", "import", report, "-o", spec, "--with-comments", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "specs": [
            {"index": None, "case_id": "examplecore-77", "path": str(spec), "status": "written"}
        ],
        "skipped": [],
    }
    assert json.loads(spec.read_bytes())["report"]["metadata"]["comments"] == 2


def test_the_same_bytes_again_are_a_no_op_other_bytes_need_force(tmp_path: Path) -> None:
    report = write(tmp_path / "gh.json", gh_issue())
    spec = tmp_path / "spec.json"
    assert vba("case", "import", report, "-o", spec).returncode == 0
    before = spec.stat()
    again = vba("case", "import", report, "-o", spec)
    assert (again.returncode, again.stdout) == (
        0,
        f"unchanged case spec examplecore-77 at {spec}\n",
    )
    assert spec.stat().st_mtime_ns == before.st_mtime_ns
    refused = vba("case", "import", report, "-o", spec, "--with-comments")
    assert refused.returncode == 2
    assert error_of(refused)["error"] == "import_output_exists"
    assert "comments" not in json.loads(spec.read_bytes())["report"]["metadata"]
    forced = vba("case", "import", report, "-o", spec, "--with-comments", "--force")
    assert (forced.returncode, forced.stdout) == (
        0,
        f"replaced case spec examplecore-77 at {spec}\n",
    )
    assert json.loads(spec.read_bytes())["report"]["metadata"]["comments"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gh.json", "spec.json"]


def test_a_symbolic_link_at_the_spec_name_is_refused(tmp_path: Path) -> None:
    report = write(tmp_path / "gh.json", gh_issue())
    (tmp_path / "elsewhere.json").write_text("{}")
    (tmp_path / "spec.json").symlink_to(tmp_path / "elsewhere.json")
    done = vba("case", "import", report, "-o", tmp_path / "spec.json", "--force")
    assert done.returncode == 2
    assert error_of(done)["details"] == {"reason": "symbolic_link"}
    assert (tmp_path / "elsewhere.json").read_text() == "{}"


def test_a_list_goes_to_an_out_dir_one_file_per_issue(tmp_path: Path) -> None:
    items = [rest_issue(), rest_issue(number=813, pull_request={}), gitlab_issue()]
    report = write(tmp_path / "issues.json", items)
    out = tmp_path / "specs"
    done = vba("case", "import", report, "--out-dir", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"written case spec examplecore-cata-812 at {out / 'examplecore-cata-812.json'}",
        f"written case spec core-31 at {out / 'core-31.json'}",
        "skipped item 1: a pull request (--include-pull-requests takes it)",
    ]
    assert sorted(p.name for p in out.iterdir()) == ["core-31.json", "examplecore-cata-812.json"]
    done = vba("case", "import", report, "--out-dir", out, "--include-pull-requests", "--json")
    statuses = [(s["case_id"], s["status"]) for s in json.loads(done.stdout)["specs"]]
    assert statuses == [
        ("examplecore-cata-812", "unchanged"),
        ("examplecore-cata-813", "written"),
        ("core-31", "unchanged"),
    ]


def test_markdown_from_standard_input(tmp_path: Path) -> None:
    import subprocess
    import sys

    spec = tmp_path / "spec.json"
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "case", "import", "-", "-o", spec],
        input=b"# Keg quest\n\nNothing happens.\n",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(spec.read_bytes())
    assert (document["case_id"], document["report"]["title"]) == ("report", "Keg quest")


BAD_REPORTS: list[tuple[str, str, bytes, str, dict[str, Any]]] = [
    # (name, file name, bytes, code, details that must be there)
    (
        "broken JSON",
        "a.json",
        b'{"title": "brewmaster",',
        "report_invalid",
        {"field": "", "reason": "syntax_error", "line": 1},
    ),
    (
        "braces without a suffix",
        "report",
        b"{brewmaster}",
        "report_invalid",
        {"field": "", "reason": "syntax_error"},
    ),
    (
        "duplicate key",
        "a.json",
        b'{"title": "a", "title": "brewmaster"}',
        "report_invalid",
        {"reason": "duplicate_key"},
    ),
    ("a scalar", "a.json", b"42", "report_invalid", {"field": "", "reason": "wrong_type"}),
    (
        "no title",
        "a.json",
        json.dumps({"body": SECRET}).encode(),
        "report_invalid",
        {"field": "/title", "reason": "missing"},
    ),
    (
        "null title",
        "a.json",
        json.dumps({"title": None}).encode(),
        "report_invalid",
        {"field": "/title", "reason": "missing"},
    ),
    (
        "blank title",
        "a.json",
        json.dumps({"title": " \t"}).encode(),
        "report_invalid",
        {"field": "/title", "reason": "empty"},
    ),
    (
        "title not a string",
        "a.json",
        json.dumps({"title": 5}).encode(),
        "report_invalid",
        {"field": "/title", "reason": "wrong_type"},
    ),
    (
        "title too long",
        "a.json",
        json.dumps({"title": "b" * 1001}).encode(),
        "report_too_large",
        {"field": "/title", "limit": 1000, "unit": "characters"},
    ),
    (
        "body too large",
        "a.json",
        json.dumps({"title": "t", "body": "é" * 600_000}).encode(),
        "report_too_large",
        {"field": "/body", "limit": 1048576},
    ),
    (
        "body not a string",
        "a.json",
        json.dumps({"title": "t", "body": [SECRET]}).encode(),
        "report_invalid",
        {"field": "/body", "reason": "wrong_type"},
    ),
    (
        "labels a string",
        "a.json",
        json.dumps(rest_issue(labels="bug")).encode(),
        "report_invalid",
        {"field": "/labels", "reason": "wrong_type"},
    ),
    (
        "label without name",
        "a.json",
        json.dumps(rest_issue(labels=[{"color": "f"}])).encode(),
        "report_invalid",
        {"field": "/labels/0/name", "reason": "missing"},
    ),
    (
        "user a string",
        "a.json",
        json.dumps(rest_issue(user="x")).encode(),
        "report_invalid",
        {"field": "/user", "reason": "wrong_type"},
    ),
    (
        "number a string",
        "a.json",
        json.dumps(rest_issue(number="812")).encode(),
        "report_invalid",
        {"field": "/number", "reason": "wrong_type"},
    ),
    (
        "number zero",
        "a.json",
        json.dumps(rest_issue(number=0)).encode(),
        "report_invalid",
        {"field": "/number", "reason": "out_of_range"},
    ),
    (
        "comments an object",
        "a.json",
        json.dumps(gh_issue(comments={})).encode(),
        "report_invalid",
        {"field": "/comments", "reason": "wrong_type"},
    ),
    (
        "comment body wrong",
        "a.json",
        json.dumps(gh_issue(comments=[{"body": 1}])).encode(),
        "report_invalid",
        {"field": "/comments/0/body"},
    ),
    (
        "iid a float",
        "a.json",
        json.dumps(gitlab_issue(iid=3.5)).encode(),
        "report_invalid",
        {"field": "/iid", "reason": "wrong_type"},
    ),
    (
        "NUL escape",
        "a.json",
        json.dumps({"title": "a\u0000b"}).encode(),
        "report_invalid",
        {"field": "/title", "reason": "nul_character"},
    ),
    (
        "a list with -o",
        "a.json",
        json.dumps([gh_issue()]).encode(),
        "report_invalid",
        {"field": "", "reason": "list_needs_out_dir"},
    ),
    (
        "a single pull request",
        "a.json",
        json.dumps(rest_issue(pull_request={})).encode(),
        "report_invalid",
        {"field": "/pull_request"},
    ),
    (
        "not UTF-8",
        "a.md",
        b"# brewmaster \xff\xfe",
        "report_unreadable",
        {"reason": "not_utf8", "offset": 13},
    ),
    (
        "a NUL byte",
        "a.txt",
        b"brewmaster\x00",
        "report_unreadable",
        {"reason": "nul_byte", "offset": 10},
    ),
    ("empty text", "a.md", b"\n  \n", "report_invalid", {"field": "/title", "reason": "missing"}),
    (
        "text body too large",
        "a.md",
        b"t\n" + b"x" * (1024 * 1024 + 1),
        "report_too_large",
        {"field": "/body"},
    ),
]


@pytest.mark.parametrize(
    ("name", "file_name", "data", "code", "details"), BAD_REPORTS, ids=[r[0] for r in BAD_REPORTS]
)
def test_bad_reports_exit_2_with_one_error_naming_the_field_and_no_file(
    tmp_path: Path, name: str, file_name: str, data: bytes, code: str, details: dict[str, Any]
) -> None:
    report = write(tmp_path / file_name, data)
    spec = tmp_path / "out" / "spec.json"
    done = vba("case", "import", report, "-o", spec)
    assert done.returncode == 2, (name, done.stderr)
    error = error_of(done)
    assert error["error"] == code
    assert details.items() <= error["details"].items()
    assert SECRET not in done.stderr and str(tmp_path) not in done.stderr
    assert not spec.exists()


def test_a_bad_item_of_a_list_names_its_index_and_no_file_is_written(tmp_path: Path) -> None:
    items = [rest_issue(), rest_issue(number=9, title=["x"])]
    report = write(tmp_path / "issues.json", items)
    done = vba("case", "import", report, "--out-dir", tmp_path / "out")
    assert done.returncode == 2
    assert error_of(done)["details"] == {
        "field": "/1/title",
        "reason": "wrong_type",
        "expected": "a string or null",
        "index": 1,
    }
    assert not (tmp_path / "out").exists()


def test_two_items_with_one_case_id_are_refused(tmp_path: Path) -> None:
    report = write(tmp_path / "issues.json", [gh_issue(), gh_issue(title="again")])
    done = vba("case", "import", report, "--out-dir", tmp_path / "out")
    assert done.returncode == 2
    assert error_of(done)["details"] == {"field": "/1", "reason": "duplicate_case_id", "index": 1}


def test_unreadable_reports(tmp_path: Path) -> None:
    missing = vba("case", "import", tmp_path / "nope.json", "-o", tmp_path / "s.json")
    assert (missing.returncode, error_of(missing)["details"]) == (
        2,
        {"reason": "FileNotFoundError"},
    )
    directory = vba("case", "import", tmp_path, "-o", tmp_path / "s.json")
    assert error_of(directory)["details"] == {"reason": "not_a_regular_file"}
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(16 * 1024 * 1024 + 1)
    too_big = vba("case", "import", big, "-o", tmp_path / "s.json")
    assert error_of(too_big) == {
        "error": "report_too_large",
        "message": "the report's file is longer than 16777216 bytes",
        "details": {"field": "", "limit": 16777216, "unit": "bytes"},
    }
    assert not (tmp_path / "s.json").exists()


def test_output_and_out_dir_exclude_each_other(tmp_path: Path) -> None:
    report = write(tmp_path / "gh.json", gh_issue())
    assert vba("case", "import", report).returncode == 2
    both = vba("case", "import", report, "-o", tmp_path / "a", "--out-dir", tmp_path / "b")
    assert both.returncode == 2 and "not allowed with" in both.stderr


def test_a_refused_overwrite_in_a_list_names_the_item_and_keeps_the_files_before(
    tmp_path: Path,
) -> None:
    report = write(tmp_path / "issues.json", [rest_issue(), gitlab_issue()])
    out = tmp_path / "out"
    out.mkdir()
    (out / "core-31.json").write_text("{}\n")
    done = vba("case", "import", report, "--out-dir", out)
    assert done.returncode == 2
    assert error_of(done)["details"] == {"reason": "differs", "index": 1}
    assert (
        done.stdout
        == f"written case spec examplecore-cata-812 at {out / 'examplecore-cata-812.json'}\n"
    )
    assert (out / "core-31.json").read_text() == "{}\n"
