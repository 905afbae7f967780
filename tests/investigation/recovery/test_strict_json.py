"""The strict JSON parse: duplicate keys at every depth, no NaN/Infinity, typed failures."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from viano_bug_analysis.investigation.recovery.strict_json import (
    MAX_DEPTH,
    JsonFailure,
    Parsed,
    parse_strict,
)

SECRET = "Wolpertinger"


def test_parses_plain_json() -> None:
    text = '{"a": [1, 2.5, {"b": null}], "c": true, "d": "\\u00e4"}'
    assert parse_strict(text) == Parsed(json.loads(text))


def test_surrounding_whitespace_is_allowed() -> None:
    assert parse_strict(' \n\t{"a": 1}\r\n ') == Parsed({"a": 1})


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ('{"a": 1, "a": 2}', 0),
        ('{"x": {"a": 1, "a": 1}}', 6),
        ('{"x": [{"y": {"z": 1, "z": 2}}]}', 13),
        ('[{}, {"k": 1, "k": {"k": 2}}]', 5),
    ],
)
def test_duplicate_keys_are_rejected_at_every_depth(text: str, offset: int) -> None:
    assert parse_strict(text) == JsonFailure("duplicate_key", offset)


def test_duplicate_keys_three_levels_deep() -> None:
    text = '{"l1": {"l2": {"l3": {"id": 1, "id": 1}}}}'
    assert parse_strict(text) == JsonFailure("duplicate_key", text.index('{"id"'))


def test_the_same_key_in_sibling_objects_is_fine() -> None:
    assert parse_strict('[{"a": 1}, {"a": 2}]') == Parsed([{"a": 1}, {"a": 2}])


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("NaN", 0),
        ("[1, NaN]", 4),
        ('{"c": Infinity}', 6),
        ('{"c": -Infinity}', 6),
        ("[1e400]", 1),
        ("[-1e999]", 1),
    ],
)
def test_non_finite_numbers_are_rejected(text: str, offset: int) -> None:
    assert parse_strict(text) == JsonFailure("non_finite_number", offset)


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("", 0),
        ("   ", 3),
        ('{"a": 1} trailing', 9),
        ('{"a": 1,}', 8),
        ("{'a': 1}", 1),
        ('"open', 0),
        ("\ufeff{}", 0),
        ('["tab\tin string"]', 5),
    ],
)
def test_syntax_errors_have_an_offset(text: str, offset: int) -> None:
    assert parse_strict(text) == JsonFailure("syntax_error", offset)


def test_a_number_too_long_for_int_is_rejected_not_raised() -> None:
    assert parse_strict("9" * 5000) == JsonFailure("number_too_long", 0)


def test_deep_nesting_is_a_failure_not_a_crash() -> None:
    # The offset is the bracket that opens one level too many.
    assert parse_strict("[" * 50_000 + "]" * 50_000) == JsonFailure("too_deep", MAX_DEPTH)


def test_a_failure_never_carries_content() -> None:
    failure = parse_strict('{"' + SECRET + '": 1, "' + SECRET + '": 2}')
    assert isinstance(failure, JsonFailure)
    assert SECRET not in repr(failure)
    assert set(vars(failure) if hasattr(failure, "__dict__") else failure.__slots__) == {
        "code",
        "offset",
    }


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False)
)
_json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_json_values)
def test_agrees_with_json_loads_on_valid_json(value: Any) -> None:
    text = json.dumps(value)
    parsed = parse_strict(text)
    assert isinstance(parsed, Parsed)
    assert parsed.value == json.loads(text)


@given(st.text(max_size=200))
def test_never_raises_and_agrees_on_acceptance(text: str) -> None:
    parsed = parse_strict(text)
    try:
        expected = json.loads(text, parse_constant=_reject)
    except ValueError:
        assert isinstance(parsed, JsonFailure)
        return
    if isinstance(parsed, Parsed):
        assert parsed.value == expected or _has_nan(expected)
    else:  # only the strict checks may reject what json.loads accepts
        assert parsed.code in {"duplicate_key", "non_finite_number", "invalid_string", "too_deep"}


def _reject(name: str) -> Any:
    raise ValueError(name)


def _has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, list):
        return any(map(_has_nan, value))
    if isinstance(value, dict):
        return any(map(_has_nan, value.values()))
    return False


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ('{"confidence": 0.\u0663\u0665}', 16),  # 0.٣٥ was read as 0.35
        ('{"limit": 2\uff10}', 11),  # 2０ was read as 20
        ('{"x": 1e\u0967}', 7),  # 1e१ was read as 10.0
    ],
)
def test_json_numbers_are_ascii_digits_only(text: str, offset: int) -> None:
    assert parse_strict(text) == JsonFailure("syntax_error", offset)


@pytest.mark.parametrize(
    "text", ['{"summary": "net \\ud83d"}', '["\\udc00"]', '{"\\ud83d": 1}', '"\ud800"']
)
def test_a_lone_surrogate_is_an_invalid_string(text: str) -> None:
    failure = parse_strict(text)
    assert isinstance(failure, JsonFailure)
    assert failure.code == "invalid_string"


def test_the_depth_limit_is_counted_exactly() -> None:
    assert isinstance(parse_strict("[" * MAX_DEPTH + "]" * MAX_DEPTH), Parsed)
    assert parse_strict("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)) == JsonFailure(
        "too_deep", MAX_DEPTH
    )
