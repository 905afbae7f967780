"""The two directions of the bundled Vcore reference map agree, for any row and any ID.

No database: a row of an entry's table is matched against the entry's
``reverse_query`` the way SQL compares (``=``, ``IN``, ``LIKE '%…%'``,
``<``), then kept by ``names``. For every entry, every generated row and
every entity:

* reverse, then forward: a row the reverse lookup of entity E returns and
  keeps satisfies the entry's ``when`` and names E through ``named``;
* forward, then reverse: a row that satisfies ``when`` and names E through
  ``named`` is returned and kept by the reverse lookup of E.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from viano_bug_analysis.enrichment import references, vcore_profile
from viano_bug_analysis.enrichment.profile import Filter, Reference

PROFILE = vcore_profile()
HOLDING = [ref for ref in PROFILE.references if not ref.symbol]
IDS = st.integers(min_value=-(2**31), max_value=2**32 - 1)
# Values near the ones the map compares with, so that `when` holds often enough.
SMALL = st.integers(min_value=-3, max_value=120)


def _sql_holds(column_value: Any, f: Mapping[str, Any]) -> bool:
    """One filter as MariaDB evaluates it on this row (NULL compares false)."""
    wanted, operator = f["value"], f["operator"]
    if column_value is None:
        return False
    if operator == "contains":
        return str(wanted) in str(column_value)
    if isinstance(column_value, str):
        return False  # the map never compares a text column with a number
    if operator == "in":
        return bool(column_value in wanted)
    return bool(
        {
            "eq": column_value == wanted,
            "ne": column_value != wanted,
            "lt": column_value < wanted,
            "le": column_value <= wanted,
            "gt": column_value > wanted,
            "ge": column_value >= wanted,
        }[operator]
    )


def _reverse_keeps(ref: Reference, row: Mapping[str, Any], entity_type: str, value: int) -> bool:
    query = references.reverse_query(PROFILE, ref, entity_type, value)
    matched = all(_sql_holds(row.get(f["column"]), f) for f in query["filters"])
    return matched and references.names(ref, row, entity_type, value)


def _forward_names(ref: Reference, row: Mapping[str, Any], entity_type: str, value: int) -> bool:
    named = references.named(ref, row.get(ref.column))
    return references.when_holds(ref, row) and (entity_type, value) in named


def _wanted(f: Filter) -> st.SearchStrategy[Any]:
    if f.operator == "in":
        return st.sampled_from(list(f.value)) | SMALL
    if f.operator in ("eq", "ne", "lt", "le", "gt", "ge") and isinstance(f.value, int):
        return st.sampled_from([f.value, f.value - 1, f.value + 1, -f.value]) | SMALL
    return SMALL


def _column_value(ref: Reference) -> st.SearchStrategy[Any]:
    if ref.separated_by is None:
        return IDS | SMALL | st.none()
    sep = ref.separated_by
    items = st.lists(IDS.map(str) | st.sampled_from(["", "x", "00", "-0"]), max_size=5)
    return items.map(sep.join) | st.none()


@st.composite
def cases(draw: st.DrawFn) -> tuple[Reference, dict[str, Any], str, int]:
    ref = draw(st.sampled_from(HOLDING))
    row: dict[str, Any] = {c: draw(SMALL | st.none()) for c in PROFILE.columns_of(ref.table)}
    for f in ref.when:
        row[f.column] = draw(_wanted(f))
    if draw(st.booleans()) or not any(f.column == ref.column for f in ref.when):
        row[ref.column] = draw(_column_value(ref))
    entity_type = draw(st.sampled_from(ref.types()))
    named = [v for t, v in references.named(ref, row.get(ref.column)) if t == entity_type]
    value = draw(st.sampled_from(named) | IDS if named else IDS)
    return ref, row, entity_type, value


@settings(max_examples=1000, deadline=None)
@given(cases())
def test_reverse_then_forward_and_forward_then_reverse_agree(
    case: tuple[Reference, dict[str, Any], str, int],
) -> None:
    ref, row, entity_type, value = case
    assert _reverse_keeps(ref, row, entity_type, value) == _forward_names(
        ref, row, entity_type, value
    ), (ref.name, row, entity_type, value)


def test_every_entry_is_drawn_from() -> None:
    # The property above samples the whole map, symbol entries aside.
    assert {ref.name for ref in HOLDING} == {
        ref.name for ref in PROFILE.references if ref.holds is not None
    }
