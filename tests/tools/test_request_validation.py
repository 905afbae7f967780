"""The compiled fast validator and the precise validators agree on every request."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from viano_bug_analysis.schema_errors import describe_first
from viano_bug_analysis.schemas import fast_validator, schema_validator
from viano_bug_analysis.tools.errors import ToolError
from viano_bug_analysis.tools.limits import ToolLimits
from viano_bug_analysis.tools.request_validation import REQUEST_SCHEMA, parse_batch

BASE: dict[str, Any] = {
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
        },
        {
            "request_id": "Q0002",
            "hypothesis_id": "H2",
            "action_id": "a-2",
            "operation": "database.lookup",
            "arguments": {"source_ref": "db-001", "filters": {"ID": 1}, "offset": 0, "limit": 5},
        },
    ],
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
PATHS = [
    (),
    ("requests", 0),
    ("requests", 0, "arguments"),
    ("requests", 1, "arguments"),
    ("requests", 1, "arguments", "filters"),
]
KEYS = st.sampled_from(
    [
        "format",
        "format_version",
        "case_id",
        "request_id",
        "hypothesis_id",
        "operation",
        "arguments",
        "text",
        "limit",
        "offset",
        "filters",
        "source_refs",
        "ID",
        "extra",
        "symbol",
    ]
)


def _slow_accepts(document: Any) -> bool:
    return describe_first(schema_validator(REQUEST_SCHEMA), document) is None


@settings(max_examples=400)
@given(st.sampled_from(PATHS), KEYS, json_values, st.booleans())
def test_fast_and_precise_validators_agree(path, key, value, delete) -> None:
    document = copy.deepcopy(BASE)
    target: Any = document
    for part in path:
        target = target[part]
    if delete:
        target.pop(key, None)
    else:
        target[key] = value
    fast = fast_validator(REQUEST_SCHEMA).is_valid(document)
    assert fast == _slow_accepts(document)
    if not fast:
        try:
            parse_batch(document, ToolLimits())
        except ToolError as err:
            assert err.code in {"request_invalid", "unknown_field", "unknown_operation"}
        else:
            raise AssertionError("an invalid document was accepted")


@settings(max_examples=50)
@given(st.sampled_from(PATHS), KEYS, st.sampled_from([float("inf"), float("-inf"), float("nan")]))
def test_a_number_json_cannot_write_is_refused_before_any_schema(path, key, value) -> None:
    # Not JSON, so outside what the validators are compared on above (the
    # compiled one refuses infinity, jsonschema's "number" takes it): the
    # batch parser refuses it first, whatever schema check would follow.
    document = copy.deepcopy(BASE)
    target: Any = document
    for part in path:
        target = target[part]
    target[key] = value
    try:
        parse_batch(document, ToolLimits())
    except ToolError as err:
        assert (err.code, err.details["reason"]) == ("request_invalid", "json_non_finite_number")
    else:
        raise AssertionError("a non-finite number was accepted")


def test_trailing_newline_does_not_pass_an_anchored_pattern() -> None:
    document = copy.deepcopy(BASE)
    document["requests"][0]["hypothesis_id"] = "H1\n"
    try:
        parse_batch(document, ToolLimits())
    except ToolError as err:
        assert err.code == "request_invalid"
    else:
        raise AssertionError("accepted")
