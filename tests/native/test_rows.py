"""RowSnapshot: parsing rules, typed equality, projection, paging and errors."""

from __future__ import annotations

import enum
import json
import math
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from viano_bug_analysis._native import RowSnapshot
from viano_bug_analysis.errors import InvalidArgumentError, RowSnapshotError

BOM = b"\xef\xbb\xbf"
MARKER = "SECRET-ROW-VALUE-7f3a"


def parse(text: str | bytes) -> RowSnapshot:
    return RowSnapshot.parse(text.encode() if isinstance(text, str) else text)


def find(snapshot: RowSnapshot, column: str, value: object) -> list[int]:
    total, page = snapshot.lookup([(column, value)], columns=None, offset=0, limit=10**9)
    assert total == len(page)
    return [index for index, _ in page]


def parse_error(data: bytes) -> RowSnapshotError:
    with pytest.raises(RowSnapshotError) as info:
        RowSnapshot.parse(data)
    return info.value


def same(a: Any, b: Any) -> bool:
    """Equal with identical types all the way down (and -0.0 distinct from 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (a != a and b != b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


# --- shapes -----------------------------------------------------------------


def test_raw_array() -> None:
    snap = parse('[{"id": 1, "name": "a"}, {"name": "b", "extra": null}]')
    assert snap.kind == "array"
    assert snap.row_count == 2
    assert snap.has_rows is True
    assert snap.header_json is None
    assert snap.columns() == ["id", "name", "extra"]
    assert snap.has_column("extra")
    assert not snap.has_column("missing")


def test_document_header_is_everything_but_rows() -> None:
    doc = {
        "format": "viano-database-snapshot",
        "format_version": 1,
        "table": "players",
        "columns": [{"name": "id", "type": "integer"}],
        "rows": [{"id": 42}, {"id": 7}],
        "coverage": "partial",
    }
    snap = parse(json.dumps(doc, indent=2))
    assert snap.kind == "document"
    assert snap.has_rows is True
    assert snap.row_count == 2
    assert isinstance(snap.header_json, bytes)
    header = json.loads(snap.header_json)
    assert header == {k: v for k, v in doc.items() if k != "rows"}
    assert list(header) == ["format", "format_version", "table", "columns", "coverage"]
    assert find(snap, "id", 42) == [0]


def test_header_keeps_escaped_keys_and_raw_values() -> None:
    snap = parse('{"we\\"ird\\u00e9": [1.50, 1e400], "x": {"deep": "\\u00e9"}}')
    assert snap.header_json is not None
    header = json.loads(snap.header_json)
    assert header == {'we"irdé': [1.5, math.inf], "x": {"deep": "é"}}


def test_document_without_rows_is_schema_only() -> None:
    snap = parse('{"format": "viano-database-snapshot", "columns": []}')
    assert snap.kind == "document"
    assert snap.has_rows is False
    assert snap.row_count == 0
    assert snap.columns() == []
    assert snap.lookup([("id", 1)], columns=None, offset=0, limit=10) == (0, [])


def test_empty_rows() -> None:
    for text in ("[]", '{"rows": []}', " [ ] "):
        snap = parse(text)
        assert snap.row_count == 0
        assert snap.has_rows is True


def test_escaped_rows_key_is_the_rows_member() -> None:
    snap = parse('{"\\u0072ows": [{"a": 1}]}')
    assert snap.has_rows and snap.row_count == 1
    assert snap.header_json == b"{}"


@pytest.mark.parametrize(
    "text",
    ["42", '"rows"', "null", "true", '{"rows": {}}', '{"rows": null}', '{"rows": "[]"}'],
)
def test_bad_shapes(text: str) -> None:
    err = parse_error(text.encode())
    assert err.code == "rows_bad_shape"
    assert isinstance(err.details["what"], str)


def test_row_that_is_not_an_object() -> None:
    err = parse_error(b'[{"a": 1}, {"a": 2}, [1], 3]')
    assert err.code == "rows_not_object"
    assert err.details == {"index": 2}
    err = parse_error(b'{"rows": [null]}')
    assert (err.code, err.details) == ("rows_not_object", {"index": 0})


def test_invalid_json_wins_over_shape_errors() -> None:
    assert parse_error(b'[1, {"a": x}]').code == "rows_invalid_json"
    assert parse_error(b'{"rows": 1, "x": ]').code == "rows_invalid_json"
    assert parse_error(b"7 7").code == "rows_invalid_json"


# --- invalid JSON ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (b"", 0),
        (b"   ", 3),
        (b'[{"a": 1}', 9),
        (b'[{"a": 1}] x', 11),
        (b'[{"a": 1},]', 10),
        (b'[{"a": 1,}]', 9),
        (b'[{"a" 1}]', 6),
        (b"[{'a': 1}]", 2),
        (b'[{"a": NaN}]', 7),
        (b'[{"a": Infinity}]', 7),
        (b'[{"a": -Infinity}]', 8),
        (b'[{"a": 01}]', 8),
        (b'[{"a": 1.}]', 9),
        (b'[{"a": .5}]', 7),
        (b'[{"a": 1e}]', 9),
        (b'[{"a": +1}]', 7),
        (b'[{"a": tru}]', 7),
        (b'[{"a": "x\ty"}]', 9),
        (b'[{"a": "\\x"}]', 8),
        (b'[{"a": "\\u12"}]', 8),
        (b'[{"a": "\\ud800"}]', 8),
        (b'[{"a": "\\udc00"}]', 8),
        (b'[{"a": "\\ud800\\u0041"}]', 8),
        (b'[{"a": "\xff"}]', 8),
        (b'[{"a": "\xc3"}]', 8),
        (b'[{"a": "unterminated}]', 22),
        (BOM + b'[{"a": "\xff"}]', 11),
        (BOM + b"[] x", 6),
        (BOM + BOM + b"[]", 3),
    ],
)
def test_invalid_json(data: bytes, offset: int) -> None:
    err = parse_error(data)
    assert err.code == "rows_invalid_json"
    assert err.details == {"offset": offset}


def test_truncated_everywhere() -> None:
    text = b'{"format": "x", "rows": [{"a": [1, {"b": "c\\n"}], "d": -1.5e3, "e": true}]}'
    RowSnapshot.parse(text)
    for cut in range(len(text)):
        err = parse_error(text[:cut])
        assert err.code == "rows_invalid_json", cut
        assert 0 <= err.details["offset"] <= cut


def test_too_deep() -> None:
    ok = '[{"a": ' + "[" * 500 + "]" * 500 + "}]"
    parse(ok)
    deep = '[{"a": ' + "[" * 600 + "]" * 600 + "}]"
    assert parse_error(deep.encode()).code == "rows_bad_shape"


def test_only_bytes_are_accepted() -> None:
    with pytest.raises(TypeError):
        RowSnapshot.parse("[]")  # type: ignore[arg-type]


# --- duplicate keys --------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (b'[{"a": 1, "a": 2}]', 10),
        (b'[{"a": 1}, {"b": 1, "c": 2, "b": 3}]', 28),
        (b'[{"a": {"b": 1, "b": 2}}]', 16),
        (b'[{"a": [{"c": [{"d": 1, "d": 1}]}]}]', 24),
        (b'[{"a": 1, "\\u0061": 2}]', 10),
        (b'{"rows": [], "rows": []}', 13),
        (b'{"h": {"k": 1, "k": 1}, "rows": []}', 15),
        (b'{"x": 1, "rows": [{"y": {"x": 1, "x": 1}}]}', 33),
        (BOM + b'[{"a": 1, "a": 2}]', 13),
    ],
)
def test_duplicate_keys_at_any_depth(data: bytes, offset: int) -> None:
    err = parse_error(data)
    assert err.code == "rows_duplicate_key"
    assert err.details == {"offset": offset}


def test_same_key_in_sibling_objects_is_fine() -> None:
    snap = parse('[{"a": {"b": 1}, "c": {"b": 2}, "d": [{"b": 1}, {"b": 1}]}, {"a": 3}]')
    assert snap.row_count == 2


def test_duplicates_in_wide_nested_object() -> None:
    members = ", ".join(f'"k{i}": {i}' for i in range(200))
    parse(f'[{{"a": {{{members}}}}}]')
    err = parse_error(f'[{{"a": {{{members}, "k150": 0}}}}]'.encode())
    assert err.code == "rows_duplicate_key"


# --- typed equality -------------------------------------------------------------


def test_true_one_string_one_and_float_one_are_distinct() -> None:
    snap = parse('[{"v": true}, {"v": 1}, {"v": "1"}, {"v": 1.0}, {"v": null}, {"v": [1]}, {}]')
    assert find(snap, "v", True) == [0]
    assert find(snap, "v", 1) == [1]
    assert find(snap, "v", "1") == [2]
    assert find(snap, "v", 1.0) == [3]
    assert find(snap, "v", None) == [4]
    assert find(snap, "v", False) == []
    assert find(snap, "v", 0) == []


def test_floats_compare_by_value() -> None:
    snap = parse(
        '[{"v": 1.0}, {"v": 1.00}, {"v": 1e0}, {"v": 10E-1}, {"v": 0.1e1},'
        ' {"v": -0.0}, {"v": 0.0}, {"v": 0e7}, {"v": 1e400}, {"v": -1e400}, {"v": 1}]'
    )
    assert find(snap, "v", 1.0) == [0, 1, 2, 3, 4]
    assert find(snap, "v", 0.0) == [5, 6, 7]
    assert find(snap, "v", -0.0) == [5, 6, 7]
    assert find(snap, "v", math.inf) == [8]
    assert find(snap, "v", -math.inf) == [9]
    assert find(snap, "v", math.nan) == []
    _, page = snap.lookup([("v", -0.0)], columns=None, offset=0, limit=1)
    assert same(page[0][1]["v"], -0.0)
    _, page = snap.lookup([("v", math.inf)], columns=None, offset=0, limit=1)
    assert page[0][1]["v"] == math.inf


def test_integers_are_exact_at_any_size() -> None:
    big = 2**70
    huge = 10**300 + 1
    snap = parse(
        json.dumps(
            [
                {"v": big},
                {"v": -big},
                {"v": 0},
                {"v": 2**63},
                {"v": -(2**63)},
                {"v": 2**64},
                {"v": huge},
            ]
        ).replace('{"v": 0}', '{"v": -0}')
    )
    assert find(snap, "v", big) == [0]
    assert find(snap, "v", big + 1) == []
    assert find(snap, "v", float(big)) == []
    assert find(snap, "v", -big) == [1]
    assert find(snap, "v", 0) == [2]
    assert find(snap, "v", 2**63) == [3]
    assert find(snap, "v", -(2**63)) == [4]
    assert find(snap, "v", 2**64) == [5]
    assert find(snap, "v", huge) == [6]
    _, page = snap.lookup([("v", huge)], columns=None, offset=0, limit=1)
    assert same(page[0][1]["v"], huge)
    _, page = snap.lookup([("v", big)], columns=None, offset=0, limit=1)
    assert same(page[0][1]["v"], big)


def test_minus_zero_integer_equals_zero() -> None:
    snap = parse('[{"v": -0}, {"v": 0}, {"v": -0.0}]')
    assert find(snap, "v", 0) == [0, 1]
    _, page = snap.lookup([("v", 0)], columns=None, offset=0, limit=5)
    assert [same(row["v"], 0) for _, row in page] == [True, True]


def test_int_subclass_is_an_int() -> None:
    class Level(enum.IntEnum):
        HIGH = 2**70

    snap = parse(json.dumps([{"v": 2**70}, {"v": 3}]))
    assert find(snap, "v", Level.HIGH) == [0]


def test_strings_compare_after_unescaping() -> None:
    snap = parse(
        '[{"s": "caf\\u00e9"}, {"s": "café"}, {"s": "\\ud83d\\ude00"}, {"s": "😀"},'
        ' {"s": "a\\"b\\\\c\\n\\t\\/"}, {"s": ""}, {"s": "\\u0000"}]'
    )
    assert find(snap, "s", "café") == [0, 1]
    assert find(snap, "s", "😀") == [2, 3]
    assert find(snap, "s", 'a"b\\c\n\t/') == [4]
    assert find(snap, "s", "") == [5]
    assert find(snap, "s", "\0") == [6]
    assert find(snap, "s", "cafe") == []
    _, page = snap.lookup([("s", "😀")], columns=None, offset=0, limit=5)
    assert [row["s"] for _, row in page] == ["😀", "😀"]


def test_sql_looking_values_are_plain_data() -> None:
    values = ["1; DROP TABLE x", "' OR '1'='1", "%", "_", "*", "NULL", "null", "true"]
    snap = parse(json.dumps([{"v": v} for v in values] + [{"v": None}, {"v": True}]))
    for index, value in enumerate(values):
        assert find(snap, "v", value) == [index]
    assert find(snap, "v", None) == [len(values)]
    assert find(snap, "v", True) == [len(values) + 1]


def test_escaped_keys_are_decoded() -> None:
    snap = parse('[{"n\\u00e4me": 1, "a\\"b": 2, "tab\\t": 3}, {"näme": 4}]')
    assert snap.columns() == ["näme", 'a"b', "tab\t"]
    assert find(snap, "näme", 4) == [1]
    assert find(snap, 'a"b', 2) == [0]
    assert snap.has_column("tab\t")


def test_key_that_looks_like_an_escape() -> None:
    # The column named by the raw text `a\nb` (backslash, n) is not the
    # column named `a` newline `b`.
    snap = parse('[{"a\\\\nb": 1}, {"a\\nb": 2}]')
    assert snap.columns() == ["a\\nb", "a\nb"]
    assert find(snap, "a\\nb", 1) == [0]
    assert find(snap, "a\nb", 2) == [1]


def test_bom_is_skipped() -> None:
    snap = parse(BOM + b'[{"a": "x"}]')
    assert find(snap, "a", "x") == [0]


def test_nested_values_never_equal_scalars_and_come_back_as_python() -> None:
    nested = '[1, "x", {"k": null, "big": 1180591620717411303424}, 2.5, -0.0, true, []]'
    snap = parse(f'[{{"id": 0, "n": {nested}, "m": {{}}}}, {{"id": 1, "n": "[1]", "m": "{{}}"}}]')
    for value in [None, 1, "x", "[1]", True, nested, "{}"]:
        assert 0 not in find(snap, "n", value)
        assert 0 not in find(snap, "m", value)
    assert find(snap, "n", "[1]") == [1]
    assert snap.find_references("x", ["n", "m"], columns=None, offset=0, limit=5) == (0, [])
    _, page = snap.lookup([("id", 0)], columns=None, offset=0, limit=1)
    assert same(page[0][1], {"id": 0, "n": json.loads(nested), "m": {}})


def test_missing_key_is_not_null() -> None:
    snap = parse('[{"a": null}, {"b": 1}]')
    assert find(snap, "a", None) == [0]
    assert find(snap, "b", None) == []
    total, page = snap.lookup([("b", 1)], columns=["a", "b"], offset=0, limit=5)
    assert (total, page) == (1, [(1, {"b": 1})])


def test_unknown_filter_column_matches_nothing() -> None:
    snap = parse('[{"a": 1}]')
    assert snap.lookup([("a", 1), ("zzz", None)], columns=None, offset=0, limit=5) == (0, [])


# --- lookup, projection, paging --------------------------------------------------


ROWS = [
    {"k": 1, "a": "x", "b": 2},
    {"b": 3, "k": 1},
    {"k": 2},
    {"k": 1, "a": "y"},
    {"k": "1", "a": "y"},
    {"k": 1, "a": "y", "b": None},
]


def test_lookup_projection_in_requested_order() -> None:
    snap = parse(json.dumps(ROWS))
    total, page = snap.lookup([("k", 1)], columns=["b", "a", "b", "nope"], offset=0, limit=10)
    assert total == 4
    assert page == [
        (0, {"b": 2, "a": "x"}),
        (1, {"b": 3}),
        (3, {"a": "y"}),
        (5, {"b": None, "a": "y"}),
    ]
    assert [list(row) for _, row in page] == [["b", "a"], ["b"], ["a"], ["b", "a"]]


def test_lookup_without_projection_keeps_row_order() -> None:
    snap = parse(json.dumps(ROWS))
    _, page = snap.lookup([("k", 1)], columns=None, offset=1, limit=1)
    assert page == [(1, {"b": 3, "k": 1})]
    assert list(page[0][1]) == ["b", "k"]
    _, page = snap.lookup([("k", 1)], columns=[], offset=0, limit=1)
    assert page == [(0, {})]


def test_filters_are_anded() -> None:
    snap = parse(json.dumps(ROWS))
    total, page = snap.lookup([("k", 1), ("a", "y")], columns=["a"], offset=0, limit=10)
    assert total == 2
    assert [index for index, _ in page] == [3, 5]
    assert snap.lookup([("a", "y"), ("a", "x")], columns=None, offset=0, limit=10) == (0, [])


def test_paging() -> None:
    snap = parse(json.dumps(ROWS))
    pages = [
        snap.lookup([("k", 1)], columns=["k"], offset=offset, limit=limit)
        for offset, limit in [(0, 2), (2, 2), (4, 2), (100, 5), (0, 0), (3, 10**30)]
    ]
    assert [total for total, _ in pages] == [4] * 6
    assert [[index for index, _ in page] for _, page in pages] == [[0, 1], [3, 5], [], [], [], [5]]


def test_document_row_indices_are_positions_in_rows() -> None:
    doc = {"format": "x", "rows": [{"id": i, "even": i % 2 == 0} for i in range(10)]}
    snap = parse(json.dumps(doc))
    total, page = snap.lookup([("even", False)], columns=["id"], offset=1, limit=2)
    assert total == 5
    assert page == [(3, {"id": 3}), (5, {"id": 5})]


def test_find_references_reports_matching_columns() -> None:
    snap = parse(
        '[{"a": 7, "b": 7, "c": 7}, {"a": 1, "c": 7}, {"b": "7"}, {"c": 7.0}, {"d": 7}, {"c": 7}]'
    )
    total, page = snap.find_references(7, ["c", "a", "zzz", "c"], columns=["a"], offset=0, limit=10)
    assert total == 3
    assert page == [(0, ["c", "a"], {"a": 7}), (1, ["c"], {"a": 1}), (5, ["c"], {})]
    total, page = snap.find_references(7, ["c", "a"], columns=None, offset=1, limit=1)
    assert (total, page) == (3, [(1, ["c"], {"a": 1, "c": 7})])
    assert snap.find_references(7, ["zzz"], columns=None, offset=0, limit=10) == (0, [])
    assert snap.find_references("7", ["a", "b"], columns=None, offset=0, limit=10) == (
        1,
        [(2, ["b"], {"b": "7"})],
    )


def test_varying_key_orders_and_sets() -> None:
    rows: list[dict[str, object]] = []
    for i in range(3000):
        if i % 7 == 0:
            rows.append({"c": i, "a": i % 5})
        elif i % 11 == 0:
            rows.append({"a": i % 5, "b": str(i), "x": None})
        else:
            rows.append({"a": i % 5, "b": str(i), "c": i})
    snap = parse(json.dumps(rows))
    assert snap.columns() == ["c", "a", "b", "x"]
    expected = [i for i, row in enumerate(rows) if row.get("a") == 3]
    assert find(snap, "a", 3) == expected
    assert find(snap, "c", 2996) == [2996]
    assert find(snap, "x", None) == [i for i, row in enumerate(rows) if "x" in row]


# --- arguments ------------------------------------------------------------------


@pytest.mark.parametrize("value", [[1], {"a": 1}, b"1", (1,), object(), 1j, {1}])
def test_unsupported_values_are_rejected(value: object) -> None:
    snap = parse('[{"a": 1}]')
    with pytest.raises(InvalidArgumentError) as info:
        snap.lookup([("a", value)], columns=None, offset=0, limit=1)
    assert info.value.code == "invalid_argument"
    with pytest.raises(InvalidArgumentError):
        snap.find_references(value, ["a"], columns=None, offset=0, limit=1)


def test_lone_surrogate_query_is_rejected() -> None:
    snap = parse('[{"a": "x"}]')
    with pytest.raises(InvalidArgumentError):
        snap.lookup([("a", "\ud800")], columns=None, offset=0, limit=1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"offset": -1, "limit": 1},
        {"offset": 0, "limit": -1},
        {"offset": -(2**80), "limit": 1},
        {"offset": True, "limit": 1},
        {"offset": 0, "limit": 1.0},
        {"offset": "0", "limit": 1},
        {"offset": None, "limit": 1},
    ],
)
def test_bad_offsets_and_limits(kwargs: dict[str, Any]) -> None:
    snap = parse('[{"a": 1}]')
    with pytest.raises(InvalidArgumentError):
        snap.lookup([("a", 1)], columns=None, **kwargs)
    with pytest.raises(InvalidArgumentError):
        snap.find_references(1, ["a"], columns=None, **kwargs)


def test_huge_offset_and_limit_clamp() -> None:
    snap = parse('[{"a": 1}]')
    assert snap.lookup([("a", 1)], columns=None, offset=2**80, limit=1) == (1, [])
    assert snap.lookup([("a", 1)], columns=None, offset=0, limit=2**80) == (1, [(0, {"a": 1})])


@pytest.mark.parametrize(
    "filters",
    [[], "ab", [("a",)], [("a", 1, 2)], [(1, 1)], None, [["a", 1]], {"a": 1}],
)
def test_bad_filters(filters: Any) -> None:
    snap = parse('[{"a": 1}]')
    with pytest.raises(InvalidArgumentError):
        snap.lookup(filters, columns=None, offset=0, limit=1)


@pytest.mark.parametrize("columns", ["a", [1], b"a", 5])
def test_bad_projection(columns: Any) -> None:
    snap = parse('[{"a": 1}]')
    with pytest.raises(InvalidArgumentError):
        snap.lookup([("a", 1)], columns=columns, offset=0, limit=1)


@pytest.mark.parametrize("search", [[], "a", None, [1]])
def test_bad_search_columns(search: Any) -> None:
    snap = parse('[{"a": 1}]')
    with pytest.raises(InvalidArgumentError):
        snap.find_references(1, search, columns=None, offset=0, limit=1)


def test_keyword_only_arguments() -> None:
    snap = parse('[{"a": 1}]')
    with pytest.raises(TypeError):
        snap.lookup([("a", 1)], None, 0, 1)  # type: ignore[misc]
    with pytest.raises(TypeError):
        snap.lookup([("a", 1)])  # type: ignore[call-arg]


# --- errors never carry values ----------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        f'[{{"{MARKER}": "{MARKER}", "{MARKER}": 1}}]',
        f'[{{"a": "{MARKER}"}}, "{MARKER}"]',
        f'[{{"a": "{MARKER}" {MARKER}}}]',
        f'[{{"a": "{MARKER}\\q"}}]',
        f'{{"{MARKER}": 1, "rows": "{MARKER}"}}',
        f'"{MARKER}"',
        f'[{{"a": {{"{MARKER}": 1, "{MARKER}": 2}}}}]',
        f'[{{"a": "{MARKER}\t"}}]',
        f'[{{"a": "{MARKER}"',
    ],
)
def test_errors_never_contain_row_values(data: str) -> None:
    err = parse_error(data.encode())
    for text in (str(err), repr(err), err.message, json.dumps(err.details), str(err.args)):
        assert MARKER not in text
        assert "SECRET" not in text


def test_argument_errors_never_contain_values() -> None:
    snap = parse('[{"a": 1}]')
    for call in (
        lambda: snap.lookup([("a", [MARKER])], columns=None, offset=0, limit=1),
        lambda: snap.lookup([(MARKER, 1)], columns=MARKER, offset=0, limit=1),
        lambda: snap.find_references(MARKER, MARKER, columns=None, offset=0, limit=1),
        lambda: snap.lookup([("a", 1)], columns=None, offset=MARKER, limit=1),
    ):
        with pytest.raises(InvalidArgumentError) as info:
            call()
        assert MARKER not in str(info.value)
        assert MARKER not in repr(info.value.details)


# --- object behaviour ---------------------------------------------------------------


def test_snapshot_is_immutable() -> None:
    snap = parse('[{"a": 1}]')
    with pytest.raises(AttributeError):
        snap.kind = "document"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        snap.extra = 1  # type: ignore[attr-defined]


def test_snapshot_outlives_its_bytes() -> None:
    data = bytearray(b'[{"a": "kept"}]')
    snap = RowSnapshot.parse(bytes(data))
    del data
    assert find(snap, "a", "kept") == [0]
    _, page = snap.lookup([("a", "kept")], columns=None, offset=0, limit=1)
    assert page == [(0, {"a": "kept"})]


def test_shared_across_threads() -> None:
    rows = [{"id": i, "group": i % 10, "name": f"n{i}"} for i in range(5000)]
    snap = parse(json.dumps(rows))

    def work(group: int) -> tuple[int, list[int]]:
        total, page = snap.lookup([("group", group)], columns=["id"], offset=0, limit=10**6)
        return total, [row["id"] for _, row in page]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, list(range(10)) * 8))
    for group, (total, ids) in zip(list(range(10)) * 8, results, strict=True):
        assert total == 500
        assert ids == list(range(group, 5000, 10))


def test_parse_many_in_threads() -> None:
    data = json.dumps([{"id": i, "v": str(i)} for i in range(2000)]).encode()
    with ThreadPoolExecutor(max_workers=4) as pool:
        snaps = list(pool.map(RowSnapshot.parse, [data] * 8))
    assert all(s.row_count == 2000 for s in snaps)


def test_repr_has_no_values() -> None:
    snap = parse(f'[{{"a": "{MARKER}"}}]')
    assert MARKER not in repr(snap)
    assert "rows=1" in repr(snap)
