"""RowSnapshot against a few-line Python reference on generated snapshots.

The reference is `json.loads` (duplicates rejected by a pairs hook, NaN and
Infinity rejected by `parse_constant`) plus a loop with strict typed
equality. Python turns `1e400` into `inf` and so do we, so the two compare
like for like. Documented differences, kept out of the generated data: a
lone `\\ud800` escape (Python keeps a lone surrogate, we reject it: it has no
UTF-8 form) and nesting deeper than 512 levels.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from viano_bug_analysis._native import RowSnapshot
from viano_bug_analysis.errors import RowSnapshotError

BOM = b"\xef\xbb\xbf"

# --- the reference ------------------------------------------------------------


class Invalid(ValueError):
    """The reference's verdict: not valid JSON (or a duplicate key)."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise Invalid("duplicate key")
    return result


def _no_constants(name: str) -> Any:
    raise Invalid(name)


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


def ref_load(data: bytes) -> Any:
    body = data[3:] if data.startswith(BOM) else data
    try:
        doc = json.loads(
            body.decode("utf-8"), object_pairs_hook=_pairs, parse_constant=_no_constants
        )
    except (ValueError, RecursionError) as err:  # JSONDecodeError, bad UTF-8, huge ints
        raise Invalid(type(err).__name__) from err
    if _has_surrogate(doc):
        raise Invalid("lone surrogate")
    return doc


def ref_rows(doc: Any) -> tuple[str, list[Any]]:
    """('ok' | error code, rows)."""
    if isinstance(doc, list):
        rows = doc
    elif isinstance(doc, dict):
        if "rows" not in doc:
            return "ok", []
        if not isinstance(doc["rows"], list):
            return "rows_bad_shape", []
        rows = doc["rows"]
    else:
        return "rows_bad_shape", []
    for row in rows:
        if not isinstance(row, dict):
            return "rows_not_object", rows
    return "ok", rows


def typed_eq(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def project(row: dict[str, Any], columns: list[str] | None) -> dict[str, Any]:
    if columns is None:
        return dict(row)
    return {c: row[c] for c in dict.fromkeys(columns) if c in row}


def ref_lookup(rows, filters, columns, offset, limit):  # type: ignore[no-untyped-def]
    hits = [
        (i, row)
        for i, row in enumerate(rows)
        if all(k in row and typed_eq(row[k], v) for k, v in filters)
    ]
    return len(hits), [(i, project(row, columns)) for i, row in hits[offset : offset + limit]]


def ref_references(rows, value, search, columns, offset, limit):  # type: ignore[no-untyped-def]
    hits = []
    for i, row in enumerate(rows):
        matched = [c for c in dict.fromkeys(search) if c in row and typed_eq(row[c], value)]
        if matched:
            hits.append((i, matched, project(row, columns)))
    return len(hits), hits[offset : offset + limit]


def same(a: Any, b: Any) -> bool:
    """Deep equality with identical types, key order and float sign."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (a != a and b != b)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


# --- generated snapshots, as JSON text with varied spellings ----------------------

COLUMNS = ["id", "name", "v", "w", "é", 'a"b', "1; DROP TABLE x", "tab\t"]
FIXED_SPELLINGS = [
    "null", "true", "false", "0", "-0", "1", "-1", "0.0", "-0.0", "1.0", "1.00", "1e0", "10E-1",
    "1e400", "-1e400", "1E+2", "100", "9223372036854775807", "9223372036854775808",
    "-9223372036854775809", "18446744073709551616", "1180591620717411303424", '"1"', '"x"',
    '"\\u0078"', '"caf\\u00e9"', '"café"', '"\\ud83d\\ude00"', '"😀"', '""', '"\\/"',
    '"1; DROP TABLE x"', '"null"', "[]", "{}", "[1]", '{"x": 1}',
]  # fmt: skip

text_values = st.text(st.characters(blacklist_categories=["Cs"]), max_size=10)


@st.composite
def string_literal(draw: st.DrawFn, value: str | None = None) -> str:
    if value is None:
        value = draw(text_values)
    literal = json.dumps(value, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        literal = literal.replace("/", "\\/")
    return literal


@st.composite
def float_literal(draw: st.DrawFn) -> str:
    value = draw(st.floats(allow_nan=False, allow_infinity=False))
    spellings = [repr(value), f"{value:e}", f"{value:.17E}"]
    if value.is_integer() and abs(value) < 1e15:
        spellings.append(f"{int(value)}.0")
    return draw(st.sampled_from(spellings))


int_literal = st.one_of(
    st.integers(-1000, 1000), st.integers(-(2**64), 2**64), st.integers(-(10**40), 10**40)
).map(str)
scalar_literal = st.one_of(
    st.sampled_from(FIXED_SPELLINGS), int_literal, float_literal(), string_literal()
)


def _object_text(members: list[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in members) + "}"


json_literal = st.recursive(
    scalar_literal,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda items: "[" + ",".join(items) + "]"),
        st.lists(st.tuples(text_values, inner), max_size=3, unique_by=lambda kv: kv[0]).flatmap(
            lambda kvs: st.tuples(*[string_literal(k) for k, _ in kvs]).map(
                lambda keys, kvs=kvs: _object_text(
                    [(key, v) for key, (_, v) in zip(keys, kvs, strict=True)]
                )
            )
        ),
    ),
    max_leaves=6,
)


@st.composite
def row_literal(draw: st.DrawFn) -> str:
    names = draw(st.lists(st.sampled_from(COLUMNS), unique=True, max_size=len(COLUMNS)))
    members = []
    for name in names:
        key = draw(string_literal(name))
        value = draw(st.one_of(st.sampled_from(FIXED_SPELLINGS), scalar_literal, json_literal))
        members.append((key, value))
    return _object_text(members)


@st.composite
def snapshot_bytes(draw: st.DrawFn) -> bytes:
    rows = draw(st.lists(row_literal(), max_size=12))
    array = "[" + ",\n ".join(rows) + "]"
    if draw(st.booleans()):
        text = array
    else:
        header = '"format": "viano-database-snapshot", "format_version": 1, "coverage": "partial"'
        text = draw(
            st.sampled_from([f'{{{header}, "rows": {array}}}', f'{{"rows": {array}, {header}}}'])
        )
    data = text.encode("utf-8")
    return BOM + data if draw(st.booleans()) else data


QUERY_VALUES = [
    None, True, False, 0, -0.0, 0.0, 1, 1.0, -1, 100, 100.0, "1", "x", "", "café", "😀", "/",
    "1; DROP TABLE x", "null", math.inf, -math.inf, math.nan, 2**63, 2**64, -(2**63) - 1,
    2**70, 10**40,
]  # fmt: skip


def scalars_in(rows: list[dict[str, Any]]) -> list[Any]:
    return [v for row in rows for v in row.values() if not isinstance(v, list | dict)]


@st.composite
def query_value(draw: st.DrawFn, rows: list[dict[str, Any]]) -> Any:
    present = scalars_in(rows)
    pools = [st.sampled_from(QUERY_VALUES), st.integers(), st.floats(), text_values]
    if present:
        pools.insert(0, st.sampled_from(present))
    return draw(st.one_of(*pools))


@st.composite
def filters_for(draw: st.DrawFn, rows: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Mostly (column, value) pairs some row has, so that pages are not all empty."""
    present = [(c, v) for row in rows for c, v in row.items() if not isinstance(v, list | dict)]
    anything = st.tuples(st.sampled_from([*COLUMNS, "nope"]), query_value(rows))
    pair = st.one_of(st.sampled_from(present), anything) if present else anything
    return draw(st.lists(pair, min_size=1, max_size=draw(st.sampled_from([1, 1, 2, 3]))))


@st.composite
def reference_query(draw: st.DrawFn, rows: list[dict[str, Any]]) -> tuple[Any, list[str]]:
    """A value and search columns, mostly with one column that holds the value somewhere."""
    search = draw(st.lists(st.sampled_from([*COLUMNS, "nope"]), max_size=3))
    present = [(c, v) for row in rows for c, v in row.items() if not isinstance(v, list | dict)]
    if present and draw(st.integers(0, 3)):
        column, value = draw(st.sampled_from(present))
        search.insert(draw(st.integers(0, len(search))), column)
    else:
        value = draw(query_value(rows))
        search.append(draw(st.sampled_from(COLUMNS)))
    return value, search


columns_arg = st.one_of(st.none(), st.lists(st.sampled_from([*COLUMNS, "nope"]), max_size=4))
pages = st.tuples(st.integers(0, 14), st.integers(0, 14))

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _parse_both(data: bytes) -> tuple[RowSnapshot, list[dict[str, Any]]]:
    code, rows = ref_rows(ref_load(data))
    assert code == "ok"
    return RowSnapshot.parse(data), rows


# --- the differential tests ------------------------------------------------------------


@SETTINGS
@given(snapshot_bytes(), st.data())
def test_lookup_matches_reference(data: bytes, draw: st.DataObject) -> None:
    snap, rows = _parse_both(data)
    assert snap.row_count == len(rows)
    seen = list(dict.fromkeys(k for row in rows for k in row))
    assert snap.columns() == seen
    filters = draw.draw(filters_for(rows))
    columns = draw.draw(columns_arg)
    offset, limit = draw.draw(pages)
    got = snap.lookup(filters, columns=columns, offset=offset, limit=limit)
    expected = ref_lookup(rows, filters, columns, offset, limit)
    assert same(got, expected)


@SETTINGS
@given(snapshot_bytes(), st.data())
def test_single_filter_on_every_present_value(data: bytes, draw: st.DataObject) -> None:
    snap, rows = _parse_both(data)
    for row in rows:
        for column, value in row.items():
            if isinstance(value, list | dict):
                continue
            got = snap.lookup([(column, value)], columns=None, offset=0, limit=100)
            assert same(got, ref_lookup(rows, [(column, value)], None, 0, 100))


@SETTINGS
@given(snapshot_bytes(), st.data())
def test_find_references_matches_reference(data: bytes, draw: st.DataObject) -> None:
    snap, rows = _parse_both(data)
    value, search = draw.draw(reference_query(rows))
    columns = draw.draw(columns_arg)
    offset, limit = draw.draw(pages)
    got = snap.find_references(value, search, columns=columns, offset=offset, limit=limit)
    assert same(got, ref_references(rows, value, search, columns, offset, limit))


@SETTINGS
@given(snapshot_bytes())
def test_header_matches_reference(data: bytes) -> None:
    snap = RowSnapshot.parse(data)
    doc = ref_load(data)
    if isinstance(doc, dict):
        assert snap.kind == "document"
        assert snap.header_json is not None
        assert same(json.loads(snap.header_json), {k: v for k, v in doc.items() if k != "rows"})
    else:
        assert snap.kind == "array"
        assert snap.header_json is None


def _mutate(data: bytes, position: int, action: int, byte: int) -> bytes:
    position %= len(data) + 1
    if action == 0:
        return data[:position] + data[position + 1 :]
    if action == 1:
        return data[:position] + bytes([byte]) + data[position:]
    return data[:position] + bytes([byte]) + data[position + 1 :]


NOISE = b' \t\n\r{}[],:"\\-+.0123456789eEnulltrfasx\xc3\xa9\xff\x00'


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    snapshot_bytes(),
    st.lists(
        st.tuples(st.integers(0, 10**6), st.integers(0, 2), st.sampled_from(NOISE)), max_size=3
    ),
)
@example(b'[{"a": 1}]', [(6, 2, ord("N"))])
@example(b'[{"a": 1}]', [(9, 1, ord(","))])
@example(b'{"rows": [{"a": 1}]}', [(9, 2, ord("1"))])
def test_validity_and_shape_match_reference(data: bytes, edits: list[tuple[int, int, int]]) -> None:
    for position, action, byte in edits:
        data = _mutate(data, position, action, byte)
    try:
        code, rows = ref_rows(ref_load(data))
    except Invalid:
        with pytest.raises(RowSnapshotError) as info:
            RowSnapshot.parse(data)
        assert info.value.code in {"rows_invalid_json", "rows_duplicate_key"}
        assert 0 <= info.value.details["offset"] <= len(data)
        return
    if code == "ok":
        assert RowSnapshot.parse(data).row_count == len(rows)
        return
    with pytest.raises(RowSnapshotError) as info:
        RowSnapshot.parse(data)
    assert info.value.code == code
    if code == "rows_not_object":
        first = next(i for i, row in enumerate(rows) if not isinstance(row, dict))
        assert info.value.details == {"index": first}


@pytest.mark.parametrize("text", ['"\\ud800"', '"\\udfff"', '"a\\ud800b"'])
def test_documented_difference_lone_surrogates(text: str) -> None:
    data = f'[{{"a": {text}}}]'.encode()
    json.loads(data)  # Python keeps the lone surrogate ...
    with pytest.raises(RowSnapshotError):  # ... we have no UTF-8 for it.
        RowSnapshot.parse(data)
