"""One ``ToolLimits`` object reaches every layer (point 17); the command line can set it (23)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.tools.many_sources import build_many_sources, search_all
from tests.tools.package_factory import BuiltPackage, build_package
from tests.tools.test_router import DESCRIPTOR, ROWS, lookup
from viano_bug_analysis.cli import main
from viano_bug_analysis.profiles.vcore.db_tools import normalize_schema_descriptor
from viano_bug_analysis.tools import InvestigationToolRouter, ToolError, ToolLimits
from viano_bug_analysis.tools.database_query import DatabaseQueryTool
from viano_bug_analysis.tools.limits import load_limits


@pytest.fixture
def package(tmp_path: Path) -> BuiltPackage:
    return build_package(
        tmp_path,
        database={"quest_template.rows.json": ROWS, "quest_template.schema.json": DESCRIPTOR},
    )


def _query(router: InvestigationToolRouter, package: BuiltPackage) -> dict[str, object]:
    request = package.request(lookup(package.refs["quest_template.rows.json"], {"ID": 1}))
    return router.query(package.path, request)


def test_database_rows_applies_with_a_database_tool_passed_in(package: BuiltPackage) -> None:
    # The README/demo construction: an adapter-carrying tool plus limits.
    router = InvestigationToolRouter(
        database_tool=DatabaseQueryTool(normalize_schema_descriptor),
        limits=ToolLimits(database_rows=4),
    )
    with pytest.raises(ToolError) as info:
        _query(router, package)
    assert info.value.code == "snapshot_too_many_rows"
    assert (info.value.details["limit"], info.value.details["rows"]) == (4, 5)


def test_raised_database_rows_overrides_the_tool_default(package: BuiltPackage) -> None:
    tool = DatabaseQueryTool(normalize_schema_descriptor, max_rows=2)
    router = InvestigationToolRouter(database_tool=tool, limits=ToolLimits(database_rows=5))
    assert _query(router, package)["results"]


def test_a_cached_table_is_checked_against_each_router_limits(package: BuiltPackage) -> None:
    tool = DatabaseQueryTool(normalize_schema_descriptor)
    generous = InvestigationToolRouter(database_tool=tool, limits=ToolLimits(database_rows=5))
    strict = InvestigationToolRouter(database_tool=tool, limits=ToolLimits(database_rows=4))
    assert _query(generous, package)["results"]
    with pytest.raises(ToolError) as info:
        _query(strict, package)
    assert info.value.code == "snapshot_too_many_rows"


# -- vba query --limits FILE (issue 11, point 23) ---------------------------------------------


def _error_line(err: str) -> dict[str, Any]:
    return json.loads(err.strip().splitlines()[-1])


def _many(tmp_path: Path) -> tuple[BuiltPackage, Path]:
    package = build_many_sources(tmp_path, count=70)
    request = tmp_path / "request.json"
    request.write_bytes(orjson.dumps(package.request(search_all(package, "Wolpertinger"))))
    return package, request


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("limits.json", '{"selected_files": 100, "result_bytes": 4194304}'),
        ("limits.toml", "selected_files = 100\nresult_bytes = 4194304\n"),
    ],
)
def test_vba_query_limits_file_raises_the_documented_limits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    package, request = _many(tmp_path)
    assert main(["query", str(package.path), str(request)]) == 2
    assert _error_line(capsys.readouterr().err)["error"] == "too_many_files"
    limits = tmp_path / name
    limits.write_text(text)
    assert main(["query", str(package.path), str(request), "--limits", str(limits)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["results"][0]["result"]["sources_searched"] == 70


def test_load_limits_keeps_the_defaults_it_is_not_given(tmp_path: Path) -> None:
    path = tmp_path / "limits.toml"
    path.write_text("database_rows = 7\n")
    assert load_limits(path) == replace(ToolLimits(), database_rows=7)


@pytest.mark.parametrize(
    ("name", "text", "path", "rule"),
    [
        ("l.json", '{"selected_file": 100}', "/selected_file", "additionalProperties"),
        ("l.json", '{"selected_files": 0}', "/selected_files", "minimum"),
        ("l.json", '{"selected_files": 10.0}', "/selected_files", "type"),
        ("l.json", '{"selected_files": true}', "/selected_files", "type"),
        ("l.json", '{"selected_files": "100"}', "/selected_files", "type"),
        ("l.toml", "selected_files = 10.0\n", "/selected_files", "type"),
        ("l.json", "[1]", "", "type"),
    ],
)
def test_a_bad_limits_file_is_a_typed_error_naming_the_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, path: str, rule: str
) -> None:
    limits = tmp_path / name
    limits.write_text(text)
    with pytest.raises(ToolError) as info:
        load_limits(limits)
    assert info.value.code == "limits_invalid"
    assert (info.value.details["path"], info.value.details["rule"]) == (path, rule)
    package, request = _many(tmp_path)
    assert main(["query", str(package.path), str(request), "--limits", str(limits)]) == 2
    line = _error_line(capsys.readouterr().err)
    assert line["error"] == "limits_invalid" and line["details"]["path"] == path


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("l.json", '{"selected_files": 1, "selected_files": 2}', "duplicate_key"),
        ("l.json", '{"selected_files": NaN}', "non_finite_number"),
        ("l.toml", "selected_files = = 1\n", "toml_syntax"),
        ("l.json", "", "syntax_error"),
    ],
)
def test_a_limits_file_that_does_not_parse_is_a_typed_error(
    tmp_path: Path, name: str, text: str, reason: str
) -> None:
    limits = tmp_path / name
    limits.write_text(text)
    with pytest.raises(ToolError) as info:
        load_limits(limits)
    assert (info.value.code, info.value.details["reason"]) == ("limits_invalid", reason)


def test_an_unreadable_limits_file_is_a_typed_error(tmp_path: Path) -> None:
    for path in (tmp_path / "missing.json", tmp_path):
        with pytest.raises(ToolError) as info:
            load_limits(path)
        assert info.value.code == "limits_invalid"
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(ToolError) as info:
        load_limits(fifo)  # must not wait for a writer
    assert info.value.details["reason"] == "not_a_regular_file"


def limits_toml_refused(tmp_path: Path, text: str) -> ToolError:
    path = tmp_path / "limits.toml"
    path.write_text(text)
    with pytest.raises(ToolError) as caught:
        load_limits(path)
    assert caught.value.code == "limits_invalid"
    assert "LEAK" not in str(caught.value)
    return caught.value


def test_a_toml_date_is_a_typed_error_not_a_value_error(tmp_path: Path) -> None:
    # The compiled validator has no type for a TOML date (it raised ValueError);
    # the one TOML loader refuses one at its key.
    err = limits_toml_refused(tmp_path, "batch_requests = 1979-05-27\n")
    assert (err.details["path"], err.details["rule"]) == ("/batch_requests", "type")


def test_a_toml_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    err = limits_toml_refused(tmp_path, "batch_requests = 4\nline_chars = LEAK\n")
    assert err.details == {"reason": "toml_syntax", "line": 2, "column": 14}
