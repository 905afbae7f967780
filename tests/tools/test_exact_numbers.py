"""Numbers through the router: integers exact at any size, and 10.0 is not an integer.

Point 16: a stored integer beyond 64 bits is answered exactly and can be
looked up exactly; point 18: whatever ``preflight`` accepts runs without a
validation error, because ``offset: 0.0`` is refused at preflight with its
pointer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.tools.package_factory import BuiltPackage, build_package
from viano_bug_analysis.cli import main
from viano_bug_analysis.tools import InvestigationToolRouter, ToolError

BIG = 2**70
ROWS = (
    b'{"format":"viano-database-snapshot","format_version":1,"table":"item_instance",'
    b'"columns":[{"name":"k","type":"integer"},{"name":"v","type":"integer"}],'
    b'"coverage":"complete_snapshot","rows":['
    b'{"k":1,"v":1180591620717411303424},{"k":2,"v":1180591620717411303425},'
    b'{"k":3,"v":1.1805916207174113e+21},{"k":4,"v":-1180591620717411303424}]}'
)
SOURCE = b"int a = 1;\nint b = 2;\nint c = a + b;\n"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> BuiltPackage:
    return build_package(
        tmp_path_factory.mktemp("numbers"),
        sources={"src/a.cpp": SOURCE},
        database={"item_instance.rows.json": ROWS},
    )


def _lookup(package: BuiltPackage, filters: dict[str, Any], **extra: Any) -> dict[str, Any]:
    ref = package.refs["item_instance.rows.json"]
    arguments = {"source_ref": ref, "filters": filters, "offset": 0, "limit": 10, **extra}
    return package.request({"operation": "database.lookup", "arguments": arguments})


# -- point 16: big integers ----------------------------------------------------------------------


def test_a_big_integer_filter_finds_exactly_its_row(package: BuiltPackage) -> None:
    result = InvestigationToolRouter().query(package.path, _lookup(package, {"v": BIG}))
    rows = result["results"][0]["result"]["rows"]
    assert [(r["pointer"], r["row"]) for r in rows] == [("/rows/0", {"k": 1, "v": BIG})]
    assert type(rows[0]["row"]["v"]) is int


def test_the_next_integer_is_another_row(package: BuiltPackage) -> None:
    result = InvestigationToolRouter().query(package.path, _lookup(package, {"v": BIG + 1}))
    assert [r["row"] for r in result["results"][0]["result"]["rows"]] == [{"k": 2, "v": BIG + 1}]


def test_a_stored_big_integer_is_returned_exactly(package: BuiltPackage) -> None:
    result = InvestigationToolRouter().query(package.path, _lookup(package, {"k": 4}))
    assert result["results"][0]["result"]["rows"][0]["row"]["v"] == -BIG


def test_the_request_hash_covers_the_exact_big_integer(package: BuiltPackage) -> None:
    router = InvestigationToolRouter()
    one = router.query(package.path, _lookup(package, {"v": BIG}))
    two = router.query(package.path, _lookup(package, {"v": BIG + 1}))
    assert one["batch_sha256"] != two["batch_sha256"]
    assert one["results"][0]["request_sha256"] != two["results"][0]["request_sha256"]


def test_vba_query_prints_the_big_integer_exactly(
    package: BuiltPackage, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request = tmp_path / "request.json"
    # Written by hand: orjson cannot write an integer beyond 64 bits.
    request.write_text(json.dumps(_lookup(package, {"v": BIG})))
    for pretty in ([], ["--pretty"]):
        assert main(["query", str(package.path), str(request), *pretty]) == 0
        out = capsys.readouterr().out
        assert "1180591620717411303424" in out
        parsed = json.loads(out)
        assert parsed["results"][0]["result"]["rows"][0]["row"] == {"k": 1, "v": BIG}


# -- point 18: 10.0 is not an integer ------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "value"),
    [("offset", 0.0), ("limit", 10.0), ("offset", 1e1), ("limit", 5.0)],
)
def test_an_integral_float_is_refused_at_preflight_with_its_pointer(
    package: BuiltPackage, argument: str, value: float
) -> None:
    request = _lookup(package, {"k": 1}, **{argument: value})
    for run in (InvestigationToolRouter().preflight, InvestigationToolRouter().query):
        with pytest.raises(ToolError) as info:
            run(package.path, request)
        err = info.value
        assert err.code == "request_invalid"
        assert err.details["path"] == f"/requests/0/arguments/{argument}"
        assert err.details["rule"] == "type" and err.details["request_index"] == 0


def test_a_float_filter_value_is_still_a_float(package: BuiltPackage) -> None:
    # Only integer-typed arguments refuse floats; a filter value 1.0 is its own value.
    result = InvestigationToolRouter().query(
        package.path, _lookup(package, {"v": 1.1805916207174113e21})
    )
    assert [r["row"]["k"] for r in result["results"][0]["result"]["rows"]] == [3]


NUMBERS = st.one_of(
    st.integers(min_value=-3, max_value=12),
    st.sampled_from([0.0, 1.0, 10.0, 2.5, -0.0, 1e1, True, False, None, "1", BIG, 2**31]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**72), max_value=2**72),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)


@st.composite
def requests(draw: st.DrawFn, package: BuiltPackage) -> dict[str, Any]:
    src = package.refs["src/a.cpp"]
    db = package.refs["item_instance.rows.json"]
    ref = draw(st.sampled_from([src, db, "src-999"]))
    column = st.sampled_from(["k", "v", "x"])
    operation = draw(
        st.sampled_from(
            [
                "source.find_text",
                "source.find_symbol",
                "source.read_context",
                "database.describe",
                "database.lookup",
                "database.find_references",
            ]
        )
    )
    page = {"offset": draw(NUMBERS), "limit": draw(NUMBERS)}
    arguments: dict[str, Any]
    if operation == "source.find_text":
        text = draw(st.sampled_from(["int", "a", "zz"]))
        arguments = {"source_refs": [ref], "text": text, "case_sensitive": draw(st.booleans())}
        arguments |= page
    elif operation == "source.find_symbol":
        arguments = {"source_refs": [ref], "symbol": draw(st.sampled_from(["a", "int"])), **page}
    elif operation == "source.read_context":
        arguments = {"source_ref": ref, "start_line": draw(NUMBERS), "end_line": draw(NUMBERS)}
    elif operation == "database.describe":
        arguments = {"source_ref": ref}
    elif operation == "database.lookup":
        filters = draw(st.dictionaries(column, SCALARS, min_size=1, max_size=2))
        arguments = {"source_ref": ref, "filters": filters, **page}
    else:
        columns = draw(st.lists(column, min_size=1, max_size=2, unique=True))
        arguments = {"source_ref": ref, "search_columns": columns, "value": draw(SCALARS)}
        arguments |= page
    if (
        draw(st.booleans())
        and operation.startswith("database.")
        and operation != "database.describe"
    ):
        arguments["columns"] = draw(st.lists(column, min_size=1, max_size=2, unique=True))
    return package.request({"operation": operation, "arguments": arguments})


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_whatever_preflight_accepts_runs_without_a_validation_error(
    package: BuiltPackage, data: st.DataObject
) -> None:
    request = data.draw(requests(package))
    router = InvestigationToolRouter()
    try:
        router.preflight(package.path, request)
    except ToolError:
        return
    # Anything but a successful answer is a check preflight missed.
    document = router.query(package.path, request)
    assert len(document["results"]) == 1
