"""refusal_record / refusal_text: a refused request explained as the CLI explains it."""

from __future__ import annotations

import json

import pytest

from viano_bug_analysis.errors import ResearchError, ToolError
from viano_bug_analysis.project_research.config import Limits
from viano_bug_analysis.project_research.service import validate_query
from viano_bug_analysis.tools.refusals import MAX_ALLOWED, refusal_record, refusal_text

MARKER = "ROW-VALUE-7f3a"


def test_an_unknown_column_names_the_column_the_table_and_the_allowed_ones() -> None:
    err = ResearchError(
        "unknown_column",
        "the table has no such column",
        {
            "argument": "filters",
            "index": 0,
            "column": "QuestId",
            "table": "creature_queststarter",
            "allowed": ["id", "quest"],
        },
    )
    text = refusal_text(refusal_record(err))
    assert text.startswith("refused (unknown_column): the table has no such column")
    for part in ("argument filters", "column QuestId", "table creature_queststarter"):
        assert part in text
    assert "allowed: id, quest" in text


def test_a_limit_refusal_names_its_maximum() -> None:
    with pytest.raises(ResearchError) as info:
        validate_query({"kind": "database.tables", "offset": 0, "limit": 200}, Limits())
    record = refusal_record(info.value)
    assert record["code"] == "limit_exceeded"
    assert record["maximum"] == Limits().page
    assert record["pointer"] == "/limit"
    assert f"the maximum is {Limits().page}" in refusal_text(record)
    assert str(Limits().page) in info.value.message


def test_a_schema_bound_names_its_maximum() -> None:
    with pytest.raises(ResearchError) as info:
        validate_query({"kind": "database.tables", "offset": 0, "limit": 20_000})
    assert info.value.details["maximum"] == 10_000
    assert "the maximum is 10000" in refusal_text(refusal_record(info.value))


def test_a_symbol_that_starts_with_a_digit_points_to_whole_word_search() -> None:
    with pytest.raises(ResearchError) as info:
        validate_query({"kind": "source.symbol", "symbol": "26290", "offset": 0, "limit": 5})
    assert "whole_word" in refusal_text(refusal_record(info.value))


def test_older_details_that_name_the_bound_as_limit_still_give_the_maximum() -> None:
    err = ToolError("limit_exceeded", "too many", {"request_index": 0, "limit": 100})
    assert refusal_record(err)["maximum"] == 100


def test_the_allowed_list_is_bounded() -> None:
    names = [f"c{i}" for i in range(100)]
    record = refusal_record(ResearchError("unknown_column", "no", {"allowed": names}))
    assert record["allowed"] == names[:MAX_ALLOWED]
    assert record["allowed_total"] == 100
    assert f"(first {MAX_ALLOWED} of 100)" in refusal_text(record)


def test_only_the_typed_fields_are_kept() -> None:
    err = ResearchError("invalid_filter_value", "bad", {"index": 0, "value": MARKER, "row": {}})
    record = refusal_record(err)
    assert MARKER not in json.dumps(record)
    assert record == {"code": "invalid_filter_value", "message": "bad", "index": 0}


def test_a_record_of_an_older_version_still_gives_a_line() -> None:
    assert refusal_text({"code": "unknown_column"}) == (
        "refused (unknown_column); change the request"
    )


def test_an_untyped_exception_is_not_described() -> None:
    assert refusal_record(RuntimeError(MARKER)) == {"code": "internal_error"}
