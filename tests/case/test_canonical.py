"""The canonical JSON rule: one byte string per value, floats and other types refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from viano_bug_analysis import jsonio
from viano_bug_analysis.case.canonical import (
    MAX_DEPTH,
    MAX_SAFE_INTEGER,
    JsonRejected,
    canonical_bytes,
    parse_json,
    sha256_canonical,
    sha256_hex,
)
from viano_bug_analysis.errors import CaseError

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
    | st.text()
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5)
    ),
    max_leaves=30,
)


def stdlib_canonical(value: Any) -> bytes:
    """The reference definition of the rule."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@given(json_values)
def test_canonical_form_is_a_fixed_point(value: Any) -> None:
    data = canonical_bytes(value)
    assert canonical_bytes(json.loads(data)) == data
    assert canonical_bytes(parse_json(data)) == data


@given(json_values)
def test_orjson_output_equals_the_stdlib_reference(value: Any) -> None:
    assert canonical_bytes(value) == stdlib_canonical(value)


@given(st.dictionaries(st.text(), st.integers(0, 9), min_size=2, max_size=8))
def test_keys_are_sorted_by_code_point(value: dict[str, int]) -> None:
    keys = list(json.loads(canonical_bytes(value), object_pairs_hook=lambda pairs: pairs))
    names = [k for k, _ in keys]
    assert names == sorted(value)
    assert names == sorted(value, key=lambda k: [ord(c) for c in k])


def test_exact_bytes_of_a_small_document() -> None:
    value = {"b": [1, True, None], "a": 'ä\n"\\/\x01\u2028', "\U0001f600": {}, "\uffff": -0}
    expected = '{"a":"ä\\n\\"\\\\/\\u0001\u2028","b":[1,true,null],"\uffff":0,"\U0001f600":{}}'
    assert canonical_bytes(value) == expected.encode("utf-8")


def test_hash_helpers() -> None:
    assert sha256_hex(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert sha256_canonical({"b": 1, "a": 2}) == sha256_hex(b'{"a":2,"b":1}')


@pytest.mark.parametrize(
    ("value", "reason", "pointer"),
    [
        (1.0, "floats are not allowed", ""),
        ({"a": [0, 0.5]}, "floats are not allowed", "/a/1"),
        ({"x/y": {"m~n": float("nan")}}, "floats are not allowed", "/x~1y/m~0n"),
        ({1: "a"}, "object keys must be strings", ""),
        ({"a": {(1, 2): 3}}, "object keys must be strings", "/a"),
        ([MAX_SAFE_INTEGER + 1], "integer outside the safe range", "/0"),
        ([-MAX_SAFE_INTEGER - 1], "integer outside the safe range", "/0"),
        ({"a": {1, 2}}, "value of a type JSON does not have", "/a"),
        ({"a": b"bytes"}, "value of a type JSON does not have", "/a"),
        ("\ud800", "a string is not valid Unicode (lone surrogate)", ""),
        ({"\udfff": 1}, "a string is not valid Unicode (lone surrogate)", ""),
    ],
)
def test_values_outside_the_domain_are_rejected(value: Any, reason: str, pointer: str) -> None:
    with pytest.raises(CaseError) as info:
        canonical_bytes(value)
    assert info.value.code == "case_not_canonical_value"
    assert info.value.details == {"reason": reason, "pointer": pointer}


def test_safe_integer_bounds_are_accepted() -> None:
    assert canonical_bytes([MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER]) == (
        b"[9007199254740991,-9007199254740991]"
    )


def test_nesting_is_bounded() -> None:
    ok: Any = 0
    for _ in range(MAX_DEPTH):
        ok = [ok]
    assert canonical_bytes(ok).count(b"[") == MAX_DEPTH
    with pytest.raises(CaseError, match="nesting too deep"):
        canonical_bytes([ok])


def test_tuples_are_arrays() -> None:
    assert canonical_bytes({"a": (1, "x")}) == b'{"a":[1,"x"]}'


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"a":1,"a":2}', "duplicate object key"),
        (b'{"a":{"b":1,"b":1}}', "duplicate object key"),
        (b"[NaN]", "NaN or Infinity is not JSON"),
        (b"[-Infinity]", "NaN or Infinity is not JSON"),
        (b"\xef\xbb\xbf{}", "starts with a byte order mark"),
        (b'{"a":"\xff"}', "not valid UTF-8"),
        (b'{"a":1', "not valid JSON"),
        (b"", "not valid JSON"),
        (b"[" + b"9" * 5000 + b"]", "not valid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nesting too deep"),
    ],
)
def test_parse_json_is_strict(data: bytes, reason: str) -> None:
    with pytest.raises(JsonRejected) as info:
        parse_json(data)
    assert info.value.reason == reason
    assert str(info.value) == reason


def test_parse_json_keeps_floats_for_the_caller_to_reject() -> None:
    assert parse_json(b'{"a":1.0,"b":-0}') == {"a": 1.0, "b": 0}


# --- one mechanism: the case rules are jsonio's, narrowed to the case domain ----------


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'["\\ud83d"]', "a string is not valid Unicode (lone surrogate)"),
        (b'{"\\udfff":1}', "a string is not valid Unicode (lone surrogate)"),
        (b"[1e400]", "NaN or Infinity is not JSON"),
        ("[\u0663]".encode(), "not valid JSON"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "nesting too deep"),
    ],
    ids=["lone_surrogate", "lone_surrogate_key", "overflow", "arabic_digit", "depth_over_limit"],
)
def test_parse_json_applies_the_one_strict_parser(data: bytes, reason: str) -> None:
    # The copy before jsonio let a lone surrogate, 1e400 (as inf) and nesting
    # beyond the canonical depth through to later stages.
    with pytest.raises(JsonRejected) as info:
        parse_json(data)
    assert info.value.reason == reason


def test_parse_json_accepts_exactly_the_depth_canonical_bytes_accepts() -> None:
    data = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert canonical_bytes(parse_json(data)) == data


_json_texts = st.one_of(
    json_values.map(lambda v: json.dumps(v, ensure_ascii=False)),
    st.text(alphabet='[]{}",:0123456789.eE-+ntrufalsNIy\\u\u0663 ', max_size=24),
)


@given(_json_texts)
def test_parse_json_accepts_what_jsonio_accepts(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    outcome = jsonio.strict_parse(data, max_depth=MAX_DEPTH, max_bytes=len(data))
    if isinstance(outcome, jsonio.JsonFailure):
        with pytest.raises(JsonRejected):
            parse_json(data)
    else:
        assert parse_json(data) == outcome.value


def test_the_hash_helpers_are_jsonio_s() -> None:
    assert sha256_hex is jsonio.sha256_hex
    assert sha256_canonical({"a": [1, "é"]}) == jsonio.canonical_sha256({"a": [1, "é"]})
