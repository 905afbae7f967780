"""DatabaseQueryTool and LoadedTable: loading, caching, typed lookups and errors."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis.snapshot.rows import RowTable
from viano_bug_analysis.tools.database_query import DatabaseQueryTool, LoadedTable
from viano_bug_analysis.tools.errors import ToolError

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "bug-20" / "db"
MARKER = "SECRET-ROW-VALUE-5b9e"


def encode(value: Any) -> bytes:
    return value if isinstance(value, bytes) else json.dumps(value).encode()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load(
    value: Any, *, role: str = "database_snapshot", tool: DatabaseQueryTool | None = None
) -> LoadedTable:
    data = encode(value)
    return (tool or DatabaseQueryTool()).load(data, role=role, sha256=sha(data))


def document(rows: list[dict[str, Any]] | None, **changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": "viano-database-snapshot",
        "format_version": 1,
        "table": "things",
        "columns": [{"name": "id", "type": "integer"}, {"name": "v", "type": "any"}],
        "coverage": "partial",
    }
    if rows is not None:
        doc["rows"] = rows
    doc.update(changes)
    return doc


def schema_only(columns: list[str] = ["id", "v"]) -> dict[str, Any]:  # noqa: B006
    return {
        "format": "viano-database-snapshot",
        "format_version": 1,
        "table": "things",
        "columns": [{"name": name, "type": "t"} for name in columns],
        "coverage": "schema_only",
    }


def refused(call: Callable[[], object]) -> ToolError:
    with pytest.raises(ToolError) as info:
        call()
    err = info.value
    assert MARKER not in str(err)
    assert MARKER not in repr(err.details)
    return err


def pointers(result: dict[str, Any]) -> list[str]:
    return [row["pointer"] for row in result["rows"]]


@pytest.fixture
def parse_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = RowTable.parse

    def counting(cls: type[RowTable], data: bytes) -> RowTable:
        calls.append(len(data))
        return original(data)

    monkeypatch.setattr(RowTable, "parse", classmethod(counting))
    return calls


# --- typed equality -------------------------------------------------------------

TYPED_ROWS = [{"v": True}, {"v": 1}, {"v": "1"}, {"v": 1.0}, {"v": None}, {"v": 0}, {"v": False}]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, "/2"), (1, "/3"), ("1", "/4"), (1.0, "/5"), (None, "/6"), (0, "/7"), (False, "/8")],
)
def test_lookup_never_coerces(value: object, expected: str) -> None:
    table = load([{"id": 0}, {"id": -1}, *TYPED_ROWS])
    result = table.lookup({"v": value})
    assert pointers(result) == [expected]
    assert result["total"] == 1


def test_find_references_never_coerces() -> None:
    table = load([{"id": 1, "v": "1"}, {"id": "1", "v": 1.0}, {"id": True, "v": 1}])
    result = table.find_references(1, ["id", "v"])
    # Compare pointers: Python's == would call True, 1 and 1.0 equal.
    assert [(row["pointer"], row["matched_columns"]) for row in result["rows"]] == [
        ("/0", ["id"]),
        ("/2", ["v"]),
    ]
    assert type(result["rows"][1]["row"]["id"]) is bool


def test_big_integers_are_exact() -> None:
    table = load(document([{"id": 2**70}, {"id": 2**70 + 1}, {"id": float(2**70)}]))
    assert pointers(table.lookup({"id": 2**70})) == ["/rows/0"]
    assert pointers(table.lookup({"id": 2**70 + 1})) == ["/rows/1"]
    assert pointers(table.lookup({"id": float(2**70)})) == ["/rows/2"]
    assert table.lookup({"id": 2**70}, ["id"])["rows"][0]["row"] == {"id": 2**70}


@pytest.mark.parametrize(
    "text",
    ["1' OR '1'='1", "'; DROP TABLE things; --", "% _ *", "\\x00", "1 UNION SELECT *"],
)
def test_sql_looking_values_are_plain_data(text: str) -> None:
    table = load(document([{"id": 1, "v": text}, {"id": 2, "v": "other"}, {"id": 3, "v": 1}]))
    assert pointers(table.lookup({"v": text})) == ["/rows/0"]
    assert pointers(table.find_references(text, ["v"])) == ["/rows/0"]


def test_several_filters_must_all_match() -> None:
    table = load(document([{"id": 1, "v": "a"}, {"id": 2, "v": "a"}, {"id": 2, "v": "b"}]))
    assert pointers(table.lookup({"id": 2, "v": "a"})) == ["/rows/1"]


def test_a_missing_key_is_not_null() -> None:
    table = load(document([{"id": 1}, {"id": 2, "v": None}]))
    assert pointers(table.lookup({"v": None})) == ["/rows/1"]


# --- projection and pointers --------------------------------------------------


def test_projection_keeps_the_pointer_of_the_stored_row() -> None:
    table = load(document([{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]))
    result = table.lookup({"id": 3}, ["v"])
    assert result["rows"] == [{"pointer": "/rows/2", "row": {"v": "c"}}]
    assert table.lookup({"id": 3}, [])["rows"] == [{"pointer": "/rows/2", "row": {}}]
    assert table.lookup({"id": 3})["rows"] == [{"pointer": "/rows/2", "row": {"id": 3, "v": "c"}}]


def test_projection_of_a_column_the_row_lacks_leaves_it_out() -> None:
    table = load(document([{"id": 1}]))
    assert table.lookup({"id": 1}, ["id", "v"])["rows"][0]["row"] == {"id": 1}


def test_find_references_reports_matched_columns_and_projects() -> None:
    columns = [{"name": name, "type": "integer"} for name in ("id", "a", "b")]
    rows = [{"id": 1, "a": 7, "b": 0}, {"id": 7, "a": 7, "b": 7}, {"id": 2, "a": 0, "b": 7}]
    table = load(document(rows, columns=columns))
    result = table.find_references(7, ["a", "b"], ["id"])
    assert result["rows"] == [
        {"pointer": "/rows/0", "row": {"id": 1}, "matched_columns": ["a"]},
        {"pointer": "/rows/1", "row": {"id": 7}, "matched_columns": ["a", "b"]},
        {"pointer": "/rows/2", "row": {"id": 2}, "matched_columns": ["b"]},
    ]


def test_raw_array_pointers_have_no_rows_prefix() -> None:
    table = load([{"id": 1}, {"id": 2}])
    assert table.pointer_prefix == ""
    assert pointers(table.lookup({"id": 2})) == ["/1"]
    assert load(document([])).pointer_prefix == "/rows"


# --- paging -------------------------------------------------------------------


def test_paging_is_stable_and_complete() -> None:
    rows = [{"id": i, "v": "x" if i % 2 else "y"} for i in range(11)]
    table = load(document(rows))
    everything = pointers(table.lookup({"v": "x"}, None, 0, 100))
    assert everything == [f"/rows/{i}" for i in (1, 3, 5, 7, 9)]

    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = table.lookup({"v": "x"}, ["id"], offset, 2)
        assert page == table.lookup({"v": "x"}, ["id"], offset, 2)  # same answer twice
        assert page["total"] == 5
        assert page["offset"] == offset
        assert page["limit"] == 2
        assert page["truncated"] == (page["next_offset"] is not None)
        seen += pointers(page)
        offset = page["next_offset"]
    assert seen == everything


def test_paging_values() -> None:
    table = load([{"v": 1}] * 5)
    first = table.lookup({"v": 1}, None, 0, 2)
    assert (first["truncated"], first["next_offset"]) == (True, 2)
    last = table.lookup({"v": 1}, None, 4, 2)
    assert (last["truncated"], last["next_offset"], pointers(last)) == (False, None, ["/4"])
    beyond = table.lookup({"v": 1}, None, 9, 2)
    assert (beyond["total"], beyond["rows"], beyond["next_offset"]) == (5, [], None)
    refs = table.find_references(1, ["v"], None, 1, 3)
    assert (pointers(refs), refs["next_offset"]) == (["/1", "/2", "/3"], 4)


def test_results_are_json_ready() -> None:
    table = load(document([{"id": 2**70, "v": [1, {"x": None}]}]))
    result = table.find_references(2**70, ["id"])
    assert json.loads(json.dumps(result)) == result
    assert set(result) == {
        "coverage",
        "total",
        "offset",
        "limit",
        "truncated",
        "next_offset",
        "rows",
    }


# --- unknown columns and bad arguments ----------------------------------------


@pytest.mark.parametrize(
    ("call", "argument", "index"),
    [
        (lambda t: t.lookup({"id": 1, MARKER: 1}), "filters", 1),
        (lambda t: t.lookup({"id": 1}, ["v", "id", MARKER]), "columns", 2),
        (lambda t: t.find_references(1, [MARKER]), "search_columns", 0),
        (lambda t: t.find_references(1, ["id"], [MARKER]), "columns", 0),
        (lambda t: t.check_columns(["id", MARKER], argument="whatever"), "whatever", 1),
    ],
)
def test_unknown_columns_in_each_argument(
    call: Callable[[LoadedTable], object], argument: str, index: int
) -> None:
    table = load(document([{"id": 1, "v": 2}]))
    with pytest.raises(ToolError) as info:
        call(table)
    assert info.value.code == "unknown_column"
    assert info.value.details == {
        "argument": argument,
        "index": index,
        "column": MARKER,
        "allowed": ["id", "v"],  # the snapshot's columns: what the model may ask instead
    }


def test_columns_are_checked_before_values() -> None:
    table = load(document([{"id": 1}]))
    err = refused(lambda: table.lookup({"id": [1], "nope": 1}))
    assert err.code == "unknown_column"
    err = refused(lambda: table.find_references([1], ["id"], ["nope"]))
    assert (err.code, err.details["argument"]) == ("unknown_column", "columns")


@pytest.mark.parametrize(
    "value",
    [[MARKER], {"k": MARKER}, (MARKER,), b"x", math.nan, math.inf, -math.inf, object()],
)
def test_filter_values_must_be_json_scalars(value: object) -> None:
    table = load(document([{"id": 1, "v": MARKER}]))
    err = refused(lambda: table.lookup({"id": 1, "v": value}))
    assert err.code == "invalid_filter_value"
    assert err.details == {"argument": "filters", "index": 1, "column": "v"}
    err = refused(lambda: table.find_references(value, ["v"]))
    assert err.code == "invalid_filter_value"
    assert err.details == {"argument": "value"}


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda t: t.lookup({}), "filters"),
        (lambda t: t.lookup([("id", 1)]), "filters"),
        (lambda t: t.lookup({"id": 1}, "id"), "columns"),
        (lambda t: t.lookup({"id": 1}, [1]), "columns"),
        (lambda t: t.lookup({"id": 1}, None, -1), "offset"),
        (lambda t: t.lookup({"id": 1}, None, 0, True), "limit"),
        (lambda t: t.lookup({"id": 1}, None, 0, 1.5), "limit"),
        (lambda t: t.find_references(1, []), "search_columns"),
        (lambda t: t.find_references(1, "id"), "search_columns"),
    ],
)
def test_invalid_arguments(call: Callable[[LoadedTable], object], argument: str) -> None:
    table = load(document([{"id": 1}]))
    err = refused(lambda: call(table))
    assert err.code == "invalid_argument"
    assert err.details["argument"] == argument


# --- raw arrays through the tool ----------------------------------------------


def test_raw_array_columns_are_the_observed_keys() -> None:
    table = load([{"a": 1}, {"b": MARKER, "a": 2}])
    assert (table.table, table.coverage, table.kind) == (None, "unknown", "array")
    assert table.declared_columns is None
    assert table.known_columns() == ["a", "b"]
    assert pointers(table.lookup({"b": MARKER})) == ["/1"]
    assert table.describe() == {
        "table": None,
        "coverage": "unknown",
        "kind": "array",
        "columns": [{"name": "a", "type": None}, {"name": "b", "type": None}],
        "row_count": 2,
        "note": table.describe()["note"],
    }
    assert "not found here may still exist" in table.describe()["note"]


def test_empty_raw_array_validates_no_column() -> None:
    table = load([])
    assert table.known_columns() == []
    assert table.describe()["columns"] == []
    for call in (
        lambda: table.lookup({"id": 1}),
        lambda: table.find_references(1, ["id"]),
        lambda: table.check_columns(["id"], argument="columns"),
    ):
        assert refused(call).code == "unknown_column"


# --- coverage and schema_only -------------------------------------------------


def test_schema_only_answers_nothing_and_says_so() -> None:
    table = load(schema_only())
    assert (table.kind, table.row_count, table.known_columns()) == ("schema_only", 0, ["id", "v"])
    for result in (table.lookup({"id": 1}, ["v"]), table.find_references(1, ["id", "v"])):
        assert result["coverage"] == "schema_only"
        assert (result["total"], result["rows"], result["truncated"]) == (0, [], False)
    assert "not evidence" in table.describe()["note"]
    assert refused(lambda: table.lookup({"nope": 1})).code == "unknown_column"
    assert refused(lambda: table.lookup({"id": [1]})).code == "invalid_filter_value"


@pytest.mark.parametrize(
    ("coverage", "phrase"),
    [
        ("partial", "may still exist"),
        ("unknown", "may still exist"),
        ("complete_snapshot", "point-in-time"),
    ],
)
def test_describe_says_what_coverage_allows(coverage: str, phrase: str) -> None:
    table = load(document([{"id": 1}], coverage=coverage))
    described = table.describe()
    assert described["coverage"] == coverage
    assert described["kind"] == "document"
    assert described["table"] == "things"
    assert described["row_count"] == 1
    assert described["columns"] == [{"name": "id", "type": "integer"}, {"name": "v", "type": "any"}]
    assert phrase in described["note"]
    assert table.lookup({"id": 1})["coverage"] == coverage


def test_describe_returns_copies() -> None:
    table = load(document([]))
    table.describe()["columns"][0]["name"] = "changed"
    assert table.known_columns() == ["id", "v"]
    assert table.describe()["columns"][0]["name"] == "id"


def test_loaded_table_is_frozen() -> None:
    table = load(document([]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.table = "other"  # type: ignore[misc]


# --- limits -------------------------------------------------------------------


@pytest.mark.parametrize("as_document", [True, False])
def test_max_rows_at_the_limit_and_one_past(as_document: bool) -> None:
    tool = DatabaseQueryTool(max_rows=3)

    def member(count: int) -> Any:
        rows = [{"id": i} for i in range(count)]
        return document(rows) if as_document else rows

    assert load(member(3), tool=tool).row_count == 3
    err = refused(lambda: load(member(4), tool=tool))
    assert err.code == "snapshot_too_many_rows"
    assert err.details == {"limit": 3, "rows": 4}


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"max_rows": -1}, "max_rows"),
        ({"cache_size": True}, "cache_size"),
        ({"adapter": "not callable"}, "adapter"),
    ],
)
def test_constructor_arguments_are_checked(kwargs: dict[str, Any], argument: str) -> None:
    err = refused(lambda: DatabaseQueryTool(**kwargs))
    assert (err.code, err.details["argument"]) == ("invalid_argument", argument)


def test_unknown_role_and_bad_hash_are_refused() -> None:
    tool = DatabaseQueryTool()
    data = encode([])
    assert refused(lambda: tool.load(data, role="source", sha256=sha(data))).code == "unknown_role"
    err = refused(lambda: tool.load(data, role="database_snapshot", sha256="abc"))
    assert (err.code, err.details["argument"]) == ("invalid_argument", "sha256")
    err = refused(lambda: tool.load("[]", role="database_snapshot", sha256=sha(data)))  # type: ignore[arg-type]
    assert (err.code, err.details["argument"]) == ("invalid_argument", "data")


# --- caching ------------------------------------------------------------------


def test_a_second_load_does_not_parse_again(parse_calls: list[int]) -> None:
    tool = DatabaseQueryTool()
    data = encode(document([{"id": 1}]))
    assert tool.cached(sha(data), role="database_snapshot") is None
    first = tool.load(data, role="database_snapshot", sha256=sha(data))
    second = tool.load(data, role="database_snapshot", sha256=sha(data).upper())
    assert second is first
    assert tool.cached(sha(data), role="database_snapshot") is first
    assert len(parse_calls) == 1


def test_the_cache_is_keyed_by_role_too(parse_calls: list[int]) -> None:
    tool = DatabaseQueryTool()
    data = encode(schema_only())
    as_snapshot = tool.load(data, role="database_snapshot", sha256=sha(data))
    as_descriptor = tool.load(data, role="schema_descriptor", sha256=sha(data))
    assert as_snapshot is not as_descriptor
    assert tool.cached(sha(data), role="schema_descriptor") is as_descriptor
    assert len(parse_calls) >= 2


def test_least_recently_used_entries_are_evicted(parse_calls: list[int]) -> None:
    tool = DatabaseQueryTool(cache_size=2)
    members = [encode([{"id": i}]) for i in range(3)]
    for index in (0, 1, 0, 2, 0, 1):
        tool.load(members[index], role="database_snapshot", sha256=sha(members[index]))
    # 0 and 1 parse; 0 hits; 2 evicts 1; 0 hits; 1 parses again (evicting 2).
    assert len(parse_calls) == 4


def test_cache_size_zero_disables_the_cache(parse_calls: list[int]) -> None:
    tool = DatabaseQueryTool(cache_size=0)
    data = encode([])
    tool.load(data, role="database_snapshot", sha256=sha(data))
    tool.load(data, role="database_snapshot", sha256=sha(data))
    assert len(parse_calls) == 2
    assert tool.cached(sha(data), role="database_snapshot") is None


def test_failures_are_not_cached(parse_calls: list[int]) -> None:
    tool = DatabaseQueryTool()
    data = encode([{"id": 1}, {"id": 2}])
    small = DatabaseQueryTool(max_rows=1)
    for _ in range(2):
        assert refused(lambda: load(data, tool=small)).code == "snapshot_too_many_rows"
    assert len(parse_calls) == 2
    assert load(data, tool=tool).row_count == 2


def test_concurrent_loads_agree() -> None:
    tool = DatabaseQueryTool(cache_size=4)
    members = [encode([{"id": i}] * (i + 1)) for i in range(8)]

    def work(i: int) -> int:
        data = members[i % 8]
        return tool.load(data, role="database_snapshot", sha256=sha(data)).row_count

    with ThreadPoolExecutor(max_workers=8) as pool:
        counts = list(pool.map(work, range(200)))
    assert counts == [i % 8 + 1 for i in range(200)]


# --- schema descriptors and adapters ------------------------------------------


def native(**extra: Any) -> dict[str, Any]:
    return {"table": "things", "columns": [{"column_name": "id", "column_type": "int"}], **extra}


def to_neutral(descriptor: dict[str, Any]) -> dict[str, Any]:
    return schema_only([column["column_name"] for column in descriptor["columns"]])


def test_descriptor_without_adapter_is_refused() -> None:
    err = refused(lambda: load(native(), role="schema_descriptor"))
    assert err.code == "adapter_missing"


def test_neutral_schema_only_descriptor_needs_no_adapter() -> None:
    table = load(schema_only(), role="schema_descriptor")
    assert (table.kind, table.table) == ("schema_only", "things")
    assert table.known_columns() == ["id", "v"]


def test_neutral_descriptor_with_rows_coverage_is_refused() -> None:
    err = refused(lambda: load(document([{"id": 1}]), role="schema_descriptor"))
    assert (err.code, err.details) == ("descriptor_not_schema_only", {"pointer": "/coverage"})


def test_adapter_receives_the_whole_descriptor() -> None:
    seen: list[dict[str, Any]] = []

    def adapter(descriptor: dict[str, Any]) -> dict[str, Any]:
        seen.append(descriptor)
        return to_neutral(descriptor)

    tool = DatabaseQueryTool(adapter)
    descriptor = native(rows=[{"id": 1}], big=2**70)
    table = load(descriptor, role="schema_descriptor", tool=tool)
    assert seen == [descriptor]
    assert (table.coverage, table.known_columns()) == ("schema_only", ["id"])


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ([], "adapter_invalid_output"),
        ({**schema_only(), "coverage": "partial", "rows": []}, "adapter_invalid_output"),
        ({**schema_only(), "table": {1, 2}}, "adapter_invalid_output"),
        ({**schema_only(), "table": math.nan}, "adapter_invalid_output"),
        ({**schema_only(), "rows": []}, "snapshot_schema_only_has_rows"),
        ({**schema_only(), "table": None}, "snapshot_invalid"),
        ({**schema_only(["id", "id"])}, "snapshot_duplicate_column"),
    ],
)
def test_adapter_output_is_validated(output: Any, code: str) -> None:
    tool = DatabaseQueryTool(lambda _descriptor: output)
    assert refused(lambda: load(native(), role="schema_descriptor", tool=tool)).code == code


def test_adapter_errors() -> None:
    def failing(_descriptor: dict[str, Any]) -> dict[str, Any]:
        raise ValueError(MARKER)

    tool = DatabaseQueryTool(failing)
    err = refused(lambda: load(native(), role="schema_descriptor", tool=tool))
    assert (err.code, err.details) == ("adapter_failed", {"exception": "ValueError"})

    def refusing(_descriptor: dict[str, Any]) -> dict[str, Any]:
        raise ToolError("descriptor_invalid", "no", {"pointer": "/table"})

    tool = DatabaseQueryTool(refusing)
    err = refused(lambda: load(native(), role="schema_descriptor", tool=tool))
    assert err.code == "descriptor_invalid"


@pytest.mark.parametrize(
    ("data", "code", "cause"),
    [
        (b"{", "snapshot_invalid", "rows_invalid_json"),
        (b'{"table": "a", "table": "b"}', "snapshot_invalid", "rows_duplicate_key"),
        (b'{"columns": [{"column_name": "a", "column_name": "b"}]}', "snapshot_invalid",
         "rows_duplicate_key"),
        (b'[{"table": "a"}]', "descriptor_invalid", None),
    ],
)  # fmt: skip
def test_descriptor_json_problems(data: bytes, code: str, cause: str | None) -> None:
    tool = DatabaseQueryTool(to_neutral)
    err = refused(lambda: load(data, role="schema_descriptor", tool=tool))
    assert err.code == code
    assert err.details.get("cause") == cause


# --- the BUG-20 samples -------------------------------------------------------


def test_bug20_rows_typed_id_lookup() -> None:
    table = load((SAMPLES / "quest_template.rows.json").read_bytes())
    assert (table.table, table.coverage, table.row_count) == ("quest_template", "partial", 3)
    result = table.lookup({"ID": 90001}, ["ID", "RequiredNpcOrGo1"])
    assert result["rows"] == [
        {"pointer": "/rows/1", "row": {"ID": 90001, "RequiredNpcOrGo1": 90005}}
    ]
    assert pointers(table.lookup({"ID": "90001"})) == ["/rows/2"]
    refs = table.find_references(90003, ["StartItem", "RequiredNpcOrGo1"], ["ID"])
    assert refs["rows"] == [
        {"pointer": "/rows/1", "row": {"ID": 90001}, "matched_columns": ["StartItem"]}
    ]


# --- nothing from the member leaks into errors ----------------------------------


def test_no_error_carries_a_row_value() -> None:
    rows = [{"id": 1, "v": MARKER}, {"id": 2, "v": MARKER * 3}]
    table = load(document(rows))
    calls: list[Callable[[], object]] = [
        lambda: table.lookup({"v": [MARKER]}),
        lambda: table.lookup({"v": MARKER, "nope": MARKER}),
        lambda: table.find_references({"x": MARKER}, ["v"]),
        lambda: load(document([*rows, {"id": 3, MARKER: MARKER}])),
        lambda: load(document(rows, table=[MARKER])),
        lambda: load(document(rows, coverage=MARKER)),
        lambda: load(document(rows, coverage="schema_only")),
        lambda: load(encode(document(rows))[:-3]),
        lambda: load(rows, tool=DatabaseQueryTool(max_rows=1)),
        lambda: load([{"v": MARKER, "v2": 1}, 1]),
    ]
    for call in calls:
        refused(call)
