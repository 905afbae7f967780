"""The one JSON mechanism: strict parse (hostile classes, limits, linear time) and
the canonical encoding (orjson bytes, exact big integers, typed refusals)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import sys
import unicodedata
import uuid
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from viano_bug_analysis import jsonio
from viano_bug_analysis.case import canonical as case_canonical
from viano_bug_analysis.errors import VbaError
from viano_bug_analysis.jsonio import (
    MAX_DEPTH,
    MAX_ENCODE_DEPTH,
    JsonDecodeError,
    JsonEncodeError,
    JsonFailure,
    Parsed,
    canonical_bytes,
    canonical_sha256,
    ordered_bytes,
    sha256_hex,
    strict_loads,
    strict_parse,
)

SECRET = "Wolpertinger"


class _Kind(enum.Enum):
    A = 1


@dataclasses.dataclass
class _Row:
    x: int


_text = st.text(st.characters(exclude_categories=["Cs"]))
_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | _text
    | st.floats(allow_nan=False, allow_infinity=False)
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=25,
)


def _nest(depth: int) -> str:
    return "[" * depth + "]" * depth


# --- parse: agreement with json.loads on valid input --------------------------------


@given(_values, st.booleans(), st.booleans())
def test_agrees_with_json_loads_on_valid_json(value: Any, ascii_only: bool, indent: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=2 if indent else None)
    expected = json.loads(text)
    assert strict_loads(text) == expected
    assert strict_loads(text.encode("utf-8")) == expected


@given(st.text(max_size=200))
def test_never_raises_and_only_the_strict_rules_reject_more(text: str) -> None:
    parsed = strict_parse(text)
    try:
        expected = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        assert isinstance(parsed, JsonFailure)
        return
    if isinstance(parsed, Parsed):
        assert parsed.value == expected
    else:
        assert parsed.code in {"duplicate_key", "non_finite_number", "invalid_string", "too_deep"}


def _no_constant(name: str) -> Any:
    raise ValueError(name)


@given(st.binary(max_size=100))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    assert isinstance(strict_parse(data), (Parsed, JsonFailure))


# --- parse: each hostile class --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ('{"a": 1, "a": 2}', 0),
        ('{"x": [{"y": {"z": 1, "z": 2}}]}', 13),
        ('{"a": 1, "b": 2, "a": 1}', 0),
    ],
)
def test_duplicate_keys_at_any_depth(text: str, offset: int) -> None:
    assert strict_parse(text) == JsonFailure("duplicate_key", offset)


@pytest.mark.parametrize(
    ("text", "offset"),
    [("NaN", 0), ("[Infinity]", 1), ('{"a": -Infinity}', 6), ("1e400", 0), ("[-1.5e309]", 1)],
)
def test_non_finite_numbers(text: str, offset: int) -> None:
    assert strict_parse(text) == JsonFailure("non_finite_number", offset)


def test_an_integer_too_long_to_convert() -> None:
    assert strict_parse("[" + "7" * 5000 + "]") == JsonFailure("number_too_long", 1)


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("0.\u0663\u0665", 1),  # 0.٣٥
        ("2\uff10", 1),  # 2０
        ("1e\u0967", 1),  # 1e१
        ("\u0663", 0),
        ('{"p": 0.\u0663}', 7),
        ("-\u0661", 0),
    ],
)
def test_non_ascii_digits_are_not_numbers(text: str, offset: int) -> None:
    assert strict_parse(text) == JsonFailure("syntax_error", offset)


_non_ascii_digits = st.characters(categories=["Nd"]).filter(lambda c: not "0" <= c <= "9")


@given(_non_ascii_digits, st.sampled_from(["{}", "1{}", "1.{}", "1e{}", "-{}", "1{}.5", "[1{}]"]))
def test_no_non_ascii_digit_is_ever_a_number(digit: str, template: str) -> None:
    assert unicodedata.category(digit) == "Nd"
    failure = strict_parse(template.format(digit))
    assert isinstance(failure, JsonFailure)
    assert failure.code == "syntax_error"


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ('"\\ud83d"', 0),
        ('{"summary": "net \\ud83d"}', 12),
        ('["ok", "\\ude00x"]', 7),
        ('{"\\ud800": 1}', 1),
        ('"\\ude00\\ud83d"', 0),  # reversed pair: two lone surrogates
        ('"\ud83d"', 0),  # raw lone surrogate in a str
        ('{"k\udfff": 1}', 1),
    ],
)
def test_lone_surrogates_are_invalid_strings(text: str, offset: int) -> None:
    assert strict_parse(text) == JsonFailure("invalid_string", offset)


def test_a_paired_escaped_surrogate_is_one_character() -> None:
    assert strict_loads('{"e": "\\ud83d\\ude00"}') == {"e": "\U0001f600"}


def test_depth_at_the_limit_is_accepted_and_one_past_is_refused() -> None:
    assert isinstance(strict_parse(_nest(MAX_DEPTH)), Parsed)
    assert strict_parse(_nest(MAX_DEPTH + 1)) == JsonFailure("too_deep", MAX_DEPTH)
    mixed = '{"a": [' * 5 + "1" + "]}" * 5
    assert strict_parse(mixed, max_depth=10) == Parsed(json.loads(mixed))
    assert strict_parse(mixed, max_depth=9) == JsonFailure("too_deep", mixed.rindex("["))


def test_depth_is_counted_not_caught_far_beyond_the_recursion_limit() -> None:
    assert strict_parse("[" * 1_000_000) == JsonFailure("too_deep", MAX_DEPTH)


@pytest.mark.parametrize(
    ("data", "offset"),
    [(b'"\xff"', 1), (b'{"a": "\xed\xa0\x80"}', 7), (b'["ok", "\xc3"]', 8)],
)
def test_bytes_that_are_not_utf8(data: bytes, offset: int) -> None:
    assert strict_parse(data) == JsonFailure("not_utf8", offset)


def test_a_byte_order_mark_is_not_whitespace() -> None:
    assert strict_parse(b"\xef\xbb\xbf{}") == JsonFailure("syntax_error", 0)


def test_size_limit_in_utf8_bytes() -> None:
    text = '"' + "\u00e4" * 10 + '"'  # 12 characters, 22 bytes
    assert strict_parse(text, max_bytes=22) == Parsed("\u00e4" * 10)
    assert strict_parse(text, max_bytes=21) == JsonFailure("too_large", 0)
    assert strict_parse(text.encode(), max_bytes=21) == JsonFailure("too_large", 0)


@pytest.mark.parametrize(
    ("text", "offset"),
    [("", 0), ("  ", 2), ("[1,]", 3), ("[1 2]", 3), ('{"a" 1}', 5), ("{1: 2}", 1), ("01", 1)],
)
def test_syntax_errors_have_offsets(text: str, offset: int) -> None:
    assert strict_parse(text) == JsonFailure("syntax_error", offset)


def test_strict_loads_raises_a_typed_error_without_content() -> None:
    with pytest.raises(JsonDecodeError) as caught:
        strict_loads('{"' + SECRET + '": 1, "' + SECRET + '": 2}')
    error = caught.value
    assert isinstance(error, VbaError)
    assert error.code == "json_duplicate_key"
    assert error.details == {"reason": "duplicate_key", "offset": 0}
    assert SECRET not in str(error) + repr(error) + repr(error.details)


HOSTILE_INPUTS: dict[str, str] = {
    "long_array": "[" + "1," * 400_000 + "1]",
    "many_keys": '{"' + '": 1, "'.join(f"k{i}" for i in range(150_000)) + '": 1}',
    "escapes": '"' + "\\u00e4\\n" * 200_000 + '"',
    "long_float": "1" * 4000 + "." + "5" * 2_000_000,
    "deep_then_junk": "[" * MAX_DEPTH + "-" * 2_000_000,
    "trailing_comma": "[" + '"a",' * 300_000 + "]",
}
"""About 2 MB each; benches/bench_jsonio.py times them beside json.loads (a
quadratic step would take minutes). Here only what each one parses to."""


def _hostile_outcome(name: str) -> Parsed | JsonFailure:
    text = HOSTILE_INPUTS[name]
    expected: dict[str, Parsed | JsonFailure] = {
        "long_array": Parsed([1] * 400_001),
        "many_keys": Parsed({f"k{i}": 1 for i in range(150_000)}),
        "escapes": Parsed("\u00e4\n" * 200_000),
        "long_float": JsonFailure("non_finite_number", 0),
        "deep_then_junk": JsonFailure("syntax_error", MAX_DEPTH),
        "trailing_comma": JsonFailure("syntax_error", len(text) - 1),
    }
    return expected[name]


@pytest.mark.parametrize("name", sorted(HOSTILE_INPUTS))
def test_large_hostile_inputs_parse_to_the_right_outcome(name: str) -> None:
    assert strict_parse(HOSTILE_INPUTS[name]) == _hostile_outcome(name)


# --- canonical bytes -------------------------------------------------------------------


@given(_values)
def test_canonical_bytes_are_orjson_sorted_where_orjson_can_encode(value: Any) -> None:
    try:
        expected = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits
        return
    assert canonical_bytes(value) == expected


@given(_values)
def test_the_exact_encoder_is_byte_identical_to_orjson(value: Any) -> None:
    try:
        expected = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return
    assert jsonio._encode_exact(value, sort_keys=True) == expected


@given(_values)
def test_ordered_bytes_keep_insertion_order_and_read_back_equal(value: Any) -> None:
    try:
        expected = orjson.dumps(value)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: the exact encoder writes it
        expected = jsonio._encode_exact(value, sort_keys=False)
    assert ordered_bytes(value) == expected
    assert jsonio._encode_exact(value, sort_keys=False) == expected
    assert strict_loads(ordered_bytes(value)) == value
    assert canonical_bytes(strict_loads(ordered_bytes(value))) == canonical_bytes(value)


def test_ordered_bytes_refuse_what_canonical_bytes_refuse() -> None:
    assert ordered_bytes({"b": 1, "a": [2**70, {"d": 0, "c": 1}]}) == (
        b'{"b":1,"a":[1180591620717411303424,{"d":0,"c":1}]}'
    )
    for bad in (float("nan"), {1: 2}, "\ud800", object()):
        with pytest.raises(JsonEncodeError) as ordered:
            ordered_bytes(bad)
        with pytest.raises(JsonEncodeError) as canonical:
            canonical_bytes(bad)
        assert ordered.value.code == canonical.value.code


@given(_values)
def test_canonical_bytes_round_trip_through_the_strict_parse(value: Any) -> None:
    data = canonical_bytes(value)
    assert strict_loads(data) == json.loads(data)
    assert canonical_bytes(strict_loads(data)) == data


_big = st.integers(min_value=2**64).flatmap(lambda n: st.sampled_from([n, -n]))


@given(st.dictionaries(_text, _big | st.integers(), min_size=1, max_size=5), _big)
def test_integers_of_any_size_are_exact(document: dict[str, Any], big: int) -> None:
    document = {**document, "big": big}
    data = canonical_bytes(document)
    assert (
        data
        == json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    )
    assert strict_loads(data) == document


def test_two_to_the_seventy() -> None:
    row = {"v": 2**70, "k": 1, "f": 0.5, "s": "\u00e4\n"}
    assert canonical_bytes(row) == b'{"f":0.5,"k":1,"s":"\xc3\xa4\\n","v":1180591620717411303424}'


def test_nesting_beyond_orjson_limit_is_encoded_exactly() -> None:
    deep: Any = {"x": 1.5}
    for _ in range(600):
        deep = [deep, {"b": 2, "a": -(2**80)}]
    assert canonical_bytes(deep) == json.dumps(deep, sort_keys=True, separators=(",", ":")).encode()


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | _text,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
        max_leaves=25,
    )
)
def test_case_package_hashes_do_not_change(value: Any) -> None:
    assert canonical_bytes(value) == case_canonical.canonical_bytes(value)
    assert canonical_sha256(value) == case_canonical.sha256_canonical(value)


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (float("nan"), "json_non_finite_number"),
        ({"a": [float("inf")]}, "json_non_finite_number"),
        ([-float("inf")], "json_non_finite_number"),
        ("net \ud83d", "json_invalid_string"),
        ({"k\udc00": 1}, "json_invalid_string"),
        ({1: "a"}, "json_non_string_key"),
        ({"a": b"bytes"}, "json_unsupported_type"),
        ({"a": {1, 2}}, "json_unsupported_type"),
        ([[[[]]]], "json_too_deep"),
    ],
)
def test_values_that_are_not_json_are_refused_with_a_code(value: Any, code: str) -> None:
    with pytest.raises(JsonEncodeError) as caught:
        canonical_bytes(value, max_depth=3)
    assert caught.value.code == code


_FOREIGN = [
    float("nan"),
    {"a": [float("inf")]},
    [-float("inf")],
    "net \ud83d",
    {"k\udc00": 1},
    {1: "a"},
    {"a": b"bytes"},
    {"a": {1, 2}},
    {"id": uuid.UUID(int=7)},
    [datetime.date(2026, 1, 1)],
    {"kind": _Kind.A},
    {"row": _Row(1)},
]


@pytest.mark.parametrize("value", _FOREIGN)
def test_what_orjson_would_write_without_a_word_is_refused_at_the_default_depth(
    value: Any,
) -> None:
    # At the default depth canonical_bytes tries orjson first: NaN would be
    # written as null, a UUID, date, enum or dataclass as JSON of another value.
    with pytest.raises(JsonEncodeError) as caught:
        canonical_bytes(value)
    with pytest.raises(JsonEncodeError) as walked:
        jsonio._check(value, MAX_ENCODE_DEPTH)
    assert caught.value.code == walked.value.code


def _walked(value: Any) -> bytes:
    """canonical_bytes as it is without orjson's attempt first: the walk decides."""
    depth, exact = jsonio._check(value, MAX_ENCODE_DEPTH)
    if depth <= jsonio._ORJSON_DEPTH and not exact:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return jsonio._encode_exact(value, sort_keys=True)


_any_float = st.floats()  # NaN and infinities included
_mixed = st.recursive(
    st.none() | st.booleans() | st.integers() | _any_float | _text,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(_text, inner, max_size=4)
    ),
    max_leaves=20,
)


@given(_mixed)
def test_the_orjson_attempt_agrees_with_the_walk(value: Any) -> None:
    try:
        expected: bytes | str = _walked(value)
    except JsonEncodeError as err:
        expected = err.code
    try:
        got: bytes | str = canonical_bytes(value)
    except JsonEncodeError as err:
        got = err.code
    assert got == expected


def test_an_encode_error_keeps_no_part_of_the_value() -> None:
    with pytest.raises(JsonEncodeError) as caught:
        canonical_bytes({SECRET: [SECRET, float("nan")]})
    error = caught.value
    assert SECRET not in str(error) + repr(error) + repr(error.details)


def test_depth_limit_of_the_encoder() -> None:
    assert canonical_bytes(json.loads(_nest(3)), max_depth=3) == b"[[[]]]"
    with pytest.raises(JsonEncodeError):
        canonical_bytes(json.loads(_nest(4)), max_depth=3)


def test_sha256_hex() -> None:
    assert sha256_hex(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert canonical_sha256({"b": 1, "a": 2}) == sha256_hex(b'{"a":2,"b":1}')


@settings(max_examples=50)
@given(_values)
def test_canonical_bytes_do_not_depend_on_insertion_order(value: Any) -> None:
    if isinstance(value, dict):
        assert canonical_bytes(dict(reversed(list(value.items())))) == canonical_bytes(value)


# --- the fast path and the exact parser agree ------------------------------------------

_TRICKY = [
    *'{}[]",:\\ -+.eE0123456789',
    "NaN",
    "Infinity",
    "1e400",
    "\u0663",
    "\uff10",
    "\\ud83d",
    "\\ude00",
    "\ud83d",
    "\ufeff",
    '"a":1,"a":2',
    "\t",
    "\x00",
    "[" * 70,
    "]" * 70,
]


@st.composite
def near_json(draw: st.DrawFn) -> str:
    """Valid JSON with a few small edits from characters that matter to a parser."""
    text = json.dumps(draw(_values), ensure_ascii=draw(st.booleans()))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 2))
        text = text[:at] + draw(st.sampled_from(_TRICKY)) + text[at + cut :]
    return text


@settings(max_examples=500)
@given(st.one_of(near_json(), st.text(max_size=60), st.builds(json.dumps, _values)))
def test_the_fast_path_agrees_with_the_exact_parser(text: str) -> None:
    fast = jsonio._fast_parse(text, MAX_DEPTH)
    try:
        exact = jsonio._parse(text, MAX_DEPTH)
    except jsonio._Reject:
        assert fast is jsonio._MISS  # only the exact parser decides failures
        return
    if fast is not jsonio._MISS:
        assert fast == exact
        assert canonical_bytes(fast) == canonical_bytes(exact)  # 1, 1.0 and true differ


@given(_values, st.booleans())
def test_valid_json_takes_the_fast_path(value: Any, indent: bool) -> None:
    text = json.dumps(value, ensure_ascii=False, indent=1 if indent else None)
    assert jsonio._fast_parse(text, MAX_DEPTH) is not jsonio._MISS


@pytest.mark.parametrize(
    "text",
    ['"\\ud83d\\ude00"', '["\\\\ud83d"]', "[" * MAX_DEPTH + "]" * MAX_DEPTH + " "],
)
def test_what_the_fast_path_leaves_out_still_parses(text: str) -> None:
    assert strict_parse(text) == Parsed(json.loads(text))


def test_deep_input_never_reaches_the_c_parser_whatever_the_recursion_limit() -> None:
    # With a raised limit the C parser would recurse until the C stack ran out.
    text = "[" * 200_000 + "]" * 200_000
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1_000_000)
    try:
        assert strict_parse(text) == JsonFailure("too_deep", MAX_DEPTH)
        parsed = strict_parse(text, max_depth=300_000)  # the exact parser needs no recursion
        assert isinstance(parsed, Parsed)
        assert not jsonio._deeper_than(parsed.value, 200_000)
    finally:
        sys.setrecursionlimit(limit)


# --- RFC 8785 (JCS) as an oracle: where any JCS library can check our hashes ----------

_BMP_TEXT = st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"]))
_SAFE = 2**53 - 1
_case_domain = st.recursive(
    st.none() | st.booleans() | st.integers(-_SAFE, _SAFE) | _BMP_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_BMP_TEXT, inner, max_size=4),
    max_leaves=25,
)


@given(_case_domain)
def test_in_the_case_domain_with_bmp_keys_the_bytes_are_exactly_jcs(value: Any) -> None:
    # No floats, integers within +-(2**53 - 1), keys inside the BMP: every
    # stored case value. Strings outside the BMP are fine too as values.
    assert canonical_bytes(value) == rfc8785.dumps(value)


@given(st.dictionaries(_text, st.integers(-_SAFE, _SAFE), max_size=6), st.integers(0, 9))
def test_values_outside_the_bmp_agree_too(value: dict[str, int], n: int) -> None:
    document: dict[str, Any] = {k: v for k, v in value.items() if max(k, default="") <= "\uffff"}
    document["emoji"] = "\U0001f600" * n
    assert canonical_bytes(document) == rfc8785.dumps(document)


@pytest.mark.parametrize(
    ("value", "ours", "jcs"),
    [
        # Code point order vs UTF-16 order: only keys outside the BMP against
        # keys in U+E000-U+FFFF sort differently.
        (
            {"\U0001f600": 1, "\ufffd": 2},
            '{"\ufffd":2,"\U0001f600":1}',
            '{"\U0001f600":1,"\ufffd":2}',
        ),
        # Floats: we keep 1 and 1.0 apart and write orjson's shortest form.
        (100.0, "100.0", "100"),
        (1e16, "1e+16", "10000000000000000"),
        (-0.0, "-0.0", "0"),
    ],
    ids=["non_bmp_key", "integral_float", "large_float", "negative_zero"],
)
def test_where_we_differ_from_jcs(value: Any, ours: str, jcs: str) -> None:
    assert canonical_bytes(value) == ours.encode()
    assert rfc8785.dumps(value) == jcs.encode()


@pytest.mark.parametrize("value", [2**53, -(2**53), 2**70])
def test_integers_beyond_the_double_range_are_exact_here_and_refused_by_jcs(value: int) -> None:
    assert canonical_bytes(value) == str(value).encode()
    with pytest.raises(rfc8785.IntegerDomainError):
        rfc8785.dumps(value)
