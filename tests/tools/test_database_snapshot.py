"""database-snapshot-v1: the neutral document, raw arrays and their rejections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from viano_bug_analysis.tools.database_snapshot import (
    COVERAGES,
    SnapshotShape,
    parse_snapshot,
    snapshot_schema,
    validate_snapshot,
)
from viano_bug_analysis.tools.errors import ToolError

REPO = Path(__file__).resolve().parents[2]
MARKER = "SECRET-ROW-VALUE-5b9e"
DROP = object()  # a document() change that removes the member


def document(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": "viano-database-snapshot",
        "format_version": 1,
        "table": "switches",
        "columns": [{"name": "id", "type": "integer"}, {"name": "name", "type": "string"}],
        "rows": [{"id": 42, "name": "lever"}],
        "coverage": "partial",
    }
    doc.update(changes)
    return {key: value for key, value in doc.items() if value is not DROP}


def shape_of(data: bytes | dict[str, Any] | list[Any]) -> SnapshotShape:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return validate_snapshot(parse_snapshot(raw))


def rejected(data: bytes | dict[str, Any] | list[Any]) -> ToolError:
    with pytest.raises(ToolError) as info:
        shape_of(data)
    assert MARKER not in str(info.value)
    assert MARKER not in repr(info.value.details)
    return info.value


# --- the schema file --------------------------------------------------------


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(snapshot_schema())


def test_packaged_schema_is_identical_to_the_source_of_truth() -> None:
    source = REPO / "schemas" / "database-snapshot-v1.schema.json"
    packaged = REPO / "python" / "viano_bug_analysis" / "schemas" / source.name
    assert packaged.read_bytes() == source.read_bytes()


def test_snapshot_schema_returns_a_copy() -> None:
    snapshot_schema()["properties"].clear()
    assert "rows" in snapshot_schema()["properties"]


# --- valid documents ----------------------------------------------------------


def test_minimal_document() -> None:
    shape = shape_of(document())
    assert shape.table == "switches"
    assert shape.coverage == "partial"
    assert shape.known_columns == ("id", "name")
    assert shape.declared_columns == (
        {"name": "id", "type": "integer"},
        {"name": "name", "type": "string"},
    )


@pytest.mark.parametrize("coverage", ["partial", "complete_snapshot", "unknown"])
def test_every_coverage_with_rows_is_accepted(coverage: str) -> None:
    assert shape_of(document(coverage=coverage)).coverage == coverage


def test_schema_only_without_rows_is_accepted() -> None:
    shape = shape_of(document(coverage="schema_only", rows=DROP))
    assert shape.coverage == "schema_only"
    assert shape.known_columns == ("id", "name")


def test_coverages_constant_matches_the_schema() -> None:
    assert list(COVERAGES) == snapshot_schema()["properties"]["coverage"]["enum"]


def test_optional_column_members_are_kept() -> None:
    columns = [{"name": "id", "type": "int(10)", "nullable": False, "key": "PRI"}]
    shape = shape_of(document(columns=columns, rows=[{"id": 1}]))
    assert shape.declared_columns == tuple(columns)


def test_a_row_may_leave_a_declared_column_out() -> None:
    assert shape_of(document(rows=[{"id": 1}, {}])).known_columns == ("id", "name")


def test_empty_rows_with_partial_coverage_are_accepted() -> None:
    assert shape_of(document(rows=[])).known_columns == ("id", "name")


# --- the rules ----------------------------------------------------------------


def test_duplicate_column_names_are_rejected() -> None:
    columns = [
        {"name": "id", "type": "integer"},
        {"name": "name", "type": "string"},
        {"name": "id", "type": "string"},
    ]
    err = rejected(document(columns=columns))
    assert err.code == "snapshot_duplicate_column"
    assert err.details == {"pointer": "/columns/2/name", "index": 2}


def test_a_row_key_that_is_not_declared_is_rejected() -> None:
    err = rejected(document(rows=[{"id": 1}, {"id": 2, MARKER: 3}]))
    assert err.code == "snapshot_undeclared_column"
    assert err.details == {"pointer": "/rows", "count": 1}


@pytest.mark.parametrize("rows", [[], [{"id": 1}]])
def test_schema_only_with_a_rows_member_is_rejected(rows: list[Any]) -> None:
    err = rejected(document(coverage="schema_only", rows=rows))
    assert err.code == "snapshot_schema_only_has_rows"
    assert err.details == {"pointer": "/rows"}


@pytest.mark.parametrize("coverage", ["partial", "complete_snapshot", "unknown"])
def test_rows_are_required_unless_schema_only(coverage: str) -> None:
    err = rejected(document(coverage=coverage, rows=DROP))
    assert err.code == "snapshot_invalid"
    assert err.details == {"pointer": "/rows", "keyword": "required"}


@pytest.mark.parametrize(
    ("changes", "pointer", "keyword"),
    [
        ({"format": DROP}, "/format", "required"),
        ({"format": MARKER}, "/format", "const"),
        ({"format_version": 2}, "/format_version", "const"),
        ({"format_version": 2**70}, "/format_version", "const"),
        ({"table": DROP}, "/table", "required"),
        ({"table": 7}, "/table", "type"),
        ({"table": ""}, "/table", "minLength"),
        ({"columns": DROP}, "/columns", "required"),
        ({"columns": MARKER}, "/columns", "type"),
        ({"columns": [MARKER]}, "/columns/0", "type"),
        ({"columns": [{"name": "id"}]}, "/columns/0/type", "required"),
        ({"columns": [{"name": "", "type": "integer"}]}, "/columns/0/name", "minLength"),
        ({"columns": [{"name": "id", "type": "integer", MARKER: 1}]}, "/columns/0", None),
        ({"columns": [{"name": "id", "type": "t", "nullable": 1}]}, "/columns/0/nullable", "type"),
        ({"columns": [{"name": "id", "type": "t", "key": 1}]}, "/columns/0/key", "type"),
        ({"coverage": DROP}, "/coverage", "required"),
        ({"coverage": MARKER}, "/coverage", "enum"),
        ({MARKER: MARKER}, "", "additionalProperties"),
    ],
)
def test_header_violations_name_the_pointer_never_the_value(
    changes: dict[str, Any], pointer: str, keyword: str | None
) -> None:
    err = rejected(document(**changes))
    assert err.code == "snapshot_invalid"
    assert err.details["pointer"] == pointer
    if keyword is not None:
        assert err.details["keyword"] == keyword


@pytest.mark.parametrize(
    ("data", "cause"),
    [
        (b"{", "rows_invalid_json"),
        (b"", "rows_invalid_json"),
        (b'[{"a": NaN}]', "rows_invalid_json"),
        (b'{"table": "a", "table": "b", "rows": []}', "rows_duplicate_key"),
        (b'[{"id": 1, "id": 2}]', "rows_duplicate_key"),
        (b'[{"id": {"x": 1, "x": 2}}]', "rows_duplicate_key"),
        (b"[1]", "rows_not_object"),
        (b'{"rows": ["' + MARKER.encode() + b'"]}', "rows_not_object"),
        (b'"' + MARKER.encode() + b'"', "rows_bad_shape"),
        (b'{"rows": 5}', "rows_bad_shape"),
    ],
)
def test_json_level_problems_wrap_the_core_code(data: bytes, cause: str) -> None:
    err = rejected(data)
    assert err.code == "snapshot_invalid"
    assert err.details["cause"] == cause


def test_header_big_integers_are_not_truncated_into_validity() -> None:
    # 2**64 + 1 must not wrap around to 1.
    err = rejected(document(format_version=2**64 + 1))
    assert err.details["pointer"] == "/format_version"


# --- raw arrays -----------------------------------------------------------------


def test_raw_array_invents_no_table_and_has_unknown_coverage() -> None:
    shape = shape_of([{"id": 1}, {"name": "b", "extra": None}])
    assert shape == SnapshotShape(None, "unknown", None, ("id", "name", "extra"))


def test_empty_raw_array_knows_no_column() -> None:
    assert shape_of([]).known_columns == ()


def test_raw_array_of_empty_objects_knows_no_column() -> None:
    assert shape_of([{}, {}]).known_columns == ()


def test_raw_array_with_a_bom_is_accepted() -> None:
    assert shape_of(b'\xef\xbb\xbf[{"id": 1}]').known_columns == ("id",)


# --- exact numbers and named errors (issue 11, points 18 and 21) ---------------------


def test_an_integral_float_format_version_is_refused() -> None:
    # JSON Schema's const counts 1.0 as 1; the snapshot header does not.
    err = rejected(document(format_version=1.0))
    assert (err.code, err.details["pointer"], err.details["keyword"]) == (
        "snapshot_invalid",
        "/format_version",
        "const",
    )


def test_a_bad_coverage_lists_the_coverages() -> None:
    err = rejected(document(coverage="full"))
    assert err.details["allowed"] == list(COVERAGES)
    assert "partial, complete_snapshot, unknown, schema_only" in err.message


def test_a_missing_header_property_is_named_in_the_message() -> None:
    err = rejected(document(table=DROP))
    assert "'table'" in err.message and err.details["pointer"] == "/table"
