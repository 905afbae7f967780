"""Facts on demand: filters, paging, the compact view, typed refusals."""

from __future__ import annotations

from typing import Any

import pytest

from tests.facts.sample import facts, index
from viano_bug_analysis.errors import FactError, UnknownFactKind
from viano_bug_analysis.facts.query import facts_query, facts_view


def ids(arguments: dict[str, Any]) -> list[str]:
    return [f["fact_id"] for f in facts_query(index(), arguments)["facts"]]


def test_by_ids_and_ranges_in_fact_order() -> None:
    assert ids({"ids": ["P9-P11", "P2"]}) == ["P2", "P9", "P10", "P11"]


def test_by_entity_its_rows_mentions_and_what_reached_it() -> None:
    found = ids({"entity": {"type": "creature", "id": 90002}, "limit": 50})
    assert {"P2", "P9", "P10", "P14", "P19", "P23"} <= set(found)
    assert "P6" not in found
    assert ids({"entity": {"type": "quest", "id": "90001"}}) == ["P1", "P6", "P7", "P8"]


def test_by_table_kind_and_text() -> None:
    assert ids({"table": "conditions"}) == ["P9", "P10"]
    assert ids({"fact_kind": "project_context_coverage"}) == ["P15", "P16", "P17"]
    assert ids({"text": "WOLPERTINGER", "fact_kind": "project_rows"}) == ["P6"]


def test_pages_with_the_offset_of_the_next() -> None:
    first = facts_query(index(), {"limit": 10})
    assert first["total"] == len(facts()) and first["next_offset"] == 10
    last = facts_query(index(), {"offset": 20, "limit": 10})
    assert [f["fact_id"] for f in last["facts"]] == ["P21", "P22", "P23"]
    assert last["next_offset"] is None
    text = facts_view(first)
    assert text.startswith(f"facts 1-10 of {len(facts())}:")
    assert text.endswith("more: ask again with offset 10")
    assert facts_view(facts_query(index(), {"offset": 99})).endswith("past the end")


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({"limit": 51}, "/limit"),
        ({"limit": 0}, "/limit"),
        ({"offset": -1}, "/offset"),
        ({"ids": ["12"]}, "/ids/0"),
        ({"ids": ["P5-P2"]}, "/ids/0"),
        ({"entity": {"type": "quest"}}, "/entity/id"),
        ({"sql": "select"}, "/sql"),
    ],
)
def test_a_bad_argument_is_a_typed_error_naming_where(arguments: dict, path: str) -> None:
    with pytest.raises(FactError) as caught:
        facts_query(index(), arguments)
    assert caught.value.code == "facts_query_invalid"
    assert caught.value.details["path"] == path


def test_an_unknown_kind_is_unknown_fact_kind() -> None:
    with pytest.raises(UnknownFactKind):
        facts_query(index(), {"fact_kind": "project_guess"})
