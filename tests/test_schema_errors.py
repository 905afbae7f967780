"""Every schema failure names its JSON Pointer, the property at fault and the alternatives.

The same mapper serves investigation requests, research queries and case
specs; these tests go through each public entry point.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.project_research.test_service import EXAMPLE, VALID
from viano_bug_analysis.case.create import create_package
from viano_bug_analysis.errors import CaseError
from viano_bug_analysis.project_research import ResearchError, validate_query
from viano_bug_analysis.schema_errors import violation
from viano_bug_analysis.tools.errors import ToolError
from viano_bug_analysis.tools.limits import ToolLimits
from viano_bug_analysis.tools.request_validation import parse_batch

SAMPLE_SPEC = Path(__file__).resolve().parents[1] / "samples" / "bug-20" / "case-spec.json"

REQUEST: dict[str, Any] = {
    "format": "viano-investigation-request",
    "format_version": 1,
    "case_id": "BUG-1",
    "package_id": "pkg-1",
    "analysis_revision": 1,
    "requests": [
        {
            "request_id": "Q0001",
            "hypothesis_id": "H1",
            "action_id": "a-1",
            "operation": "source.find_text",
            "arguments": {
                "source_refs": ["src-001"],
                "text": "x",
                "case_sensitive": True,
                "offset": 0,
                "limit": 5,
            },
        }
    ],
}


def _request_error(edit: Any) -> ToolError:
    document = copy.deepcopy(REQUEST)
    edit(document)
    with pytest.raises(ToolError) as info:
        parse_batch(document, ToolLimits())
    return info.value


def _spec_error(tmp_path: Path, edit: Any) -> CaseError:
    spec = json.loads(SAMPLE_SPEC.read_text())
    edit(spec)
    with pytest.raises(CaseError) as info:
        create_package(spec, tmp_path / "out", base_dir=SAMPLE_SPEC.parent)
    return info.value


# -- investigation requests --------------------------------------------------------------------


def test_request_missing_property_names_it() -> None:
    err = _request_error(lambda d: d["requests"][0].pop("hypothesis_id"))
    assert err.code == "request_invalid"
    assert err.details["path"] == "/requests/0/hypothesis_id"
    assert err.details["property"] == "hypothesis_id"
    assert err.details["request_index"] == 0
    assert "'hypothesis_id'" in err.message and "/requests/0" in err.message


def test_request_missing_envelope_property_names_it() -> None:
    err = _request_error(lambda d: d.pop("case_id"))
    assert (err.details["path"], err.details["property"]) == ("/case_id", "case_id")


def test_request_unknown_field_names_the_field_and_the_allowed_ones() -> None:
    err = _request_error(lambda d: d["requests"][0]["arguments"].__setitem__("txt", "x"))
    assert err.code == "unknown_field"
    assert err.details["path"] == "/requests/0/arguments/txt"
    assert err.details["property"] == "txt"
    assert err.details["allowed"] == [
        "case_sensitive",
        "limit",
        "offset",
        "source_refs",
        "text",
        "whole_word",
    ]
    assert "'txt'" in err.message and "case_sensitive, limit, offset" in err.message


def test_request_unknown_operation_lists_the_operations() -> None:
    err = _request_error(lambda d: d["requests"][0].__setitem__("operation", "source.grep"))
    assert err.code == "unknown_operation"
    assert err.details["path"] == "/requests/0/operation"
    assert "source.find_text" in err.details["allowed"]
    assert "source.find_text" in err.message


def test_request_unknown_field_with_an_odd_name_is_not_echoed() -> None:
    err = _request_error(lambda d: d.__setitem__("x'; DROP TABLE t; --", 1))
    assert err.code == "unknown_field"
    assert err.details["path"] == "" and "property" not in err.details
    assert "DROP" not in err.message and "DROP" not in repr(err.details)


def test_request_errors_never_echo_values() -> None:
    marker = "ZZ_VALUE_MARKER_ZZ"
    for edit in (
        lambda d: d["requests"][0]["arguments"].__setitem__("text", marker + "\n"),
        lambda d: d["requests"][0].__setitem__("operation", marker),
        lambda d: d["requests"][0]["arguments"].__setitem__("limit", marker),
        lambda d: d["requests"][0].__setitem__("hypothesis_id", marker),
    ):
        err = _request_error(edit)
        assert marker not in err.message and marker not in repr(err.details)


def test_size_bounds_say_the_size_in_words() -> None:
    empty = _request_error(lambda d: d["requests"][0]["arguments"].__setitem__("text", ""))
    assert empty.message.endswith("value at /requests/0/arguments/text must not be empty")
    none = _request_error(lambda d: d["requests"][0]["arguments"].__setitem__("source_refs", []))
    assert none.message.endswith("must not be empty")
    bounded = Draft202012Validator({"maxItems": 2, "minLength": 3, "maxProperties": 1})
    words = [violation(e).message for e in bounded.iter_errors([1, 2, 3])]
    words += [violation(e).message for e in bounded.iter_errors("ab")]
    words += [violation(e).message for e in bounded.iter_errors({"a": 1, "b": 2})]
    assert words == [
        "value at / must have at most 2 items",
        "value at / must have at least 3 characters",
        "value at / must have at most 1 property",
    ]


# -- research queries --------------------------------------------------------------------------


def test_research_missing_property_names_it() -> None:
    query = {key: value for key, value in EXAMPLE.items() if key != "columns"}
    with pytest.raises(ResearchError) as info:
        validate_query(query)
    err = info.value
    assert err.code == "query_invalid"
    assert (err.details["path"], err.details["property"]) == ("/columns", "columns")
    assert "'columns'" in err.message


def test_research_unknown_field_names_it_and_the_allowed_ones() -> None:
    with pytest.raises(ResearchError) as info:
        validate_query({**VALID["source.symbol"][0], "regex": True})
    err = info.value
    assert err.code == "unknown_field"
    assert (err.details["path"], err.details["property"]) == ("/regex", "regex")
    assert "symbol" in err.details["allowed"] and "'regex'" in err.message


def test_research_unknown_kind_lists_the_kinds() -> None:
    with pytest.raises(ResearchError) as info:
        validate_query({"kind": "database.sql"})
    assert info.value.code == "kind_unknown"
    assert "database.rows" in info.value.details["allowed"]
    assert "database.rows" in info.value.message
    assert info.value.details["hint"].startswith("allowed: source.files, ")  # documented


# -- case specs --------------------------------------------------------------------------------


def test_spec_typo_names_the_property_and_the_allowed_ones(tmp_path: Path) -> None:
    def typo(spec: dict[str, Any]) -> None:
        spec["hypotheses"][0]["statment"] = spec["hypotheses"][0].pop("statement")

    err = _spec_error(tmp_path, typo)
    assert err.code == "spec_invalid"
    assert err.details["pointer"] == "/hypotheses/0/statment"
    assert err.details["property"] == "statment"
    assert err.details["allowed"] == ["id", "statement"]
    assert "'statment'" in err.message and "id, statement" in err.message


def test_spec_missing_property_names_it(tmp_path: Path) -> None:
    err = _spec_error(tmp_path, lambda s: s["report"].pop("title"))
    assert (err.details["pointer"], err.details["property"]) == ("/report/title", "title")
    assert "'title'" in err.message


def test_spec_wrong_role_lists_the_roles(tmp_path: Path) -> None:
    err = _spec_error(
        tmp_path, lambda s: s["attachments"][0]["members"][0].__setitem__("role", "source")
    )
    assert err.details["pointer"] == "/attachments/0/members/0/role"
    assert err.details["allowed"] == ["source_file", "database_snapshot", "schema_descriptor"]
    assert "source_file, database_snapshot, schema_descriptor" in err.message


def test_spec_zip_and_directory_names_both(tmp_path: Path) -> None:
    err = _spec_error(tmp_path, lambda s: s["attachments"][0].__setitem__("zip", "x.zip"))
    assert err.details["pointer"] == "/attachments/0"
    assert err.details["allowed"] == ["zip", "directory"]
    assert "exactly one of the properties zip, directory" in err.message
