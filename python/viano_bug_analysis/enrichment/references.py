"""The reference map's two directions as queries: the one place both are worded.

Forward: a row read names an entity (``named``). Reverse: the rows of one map
entry that name an entity (``reverse_query``, then ``names`` to keep only the
rows that really do, for a list column). The build, ``vba references`` and
the model's ``references`` query all go through these functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from viano_bug_analysis.enrichment.profile import EnrichmentProfile, Filter, Reference


def holders(
    profile: EnrichmentProfile, entity_type: str, *, part_of_only: bool = False
) -> list[Reference]:
    """The map entries whose column can hold an ID of ``entity_type``, in profile order."""
    return [
        ref
        for ref in profile.references
        if not ref.symbol and entity_type in ref.types() and (ref.part_of or not part_of_only)
    ]


def about(profile: EnrichmentProfile, table: str, row: Mapping[str, Any]) -> tuple[str, Any] | None:
    """Whom a row read is about: the entity whose own table it is, else what the row's
    own ``part_of`` entries name, by the row's semantics.

    An entry counts only where its ``when`` holds on the row: a ``conditions``
    row is about what its SourceTypeOrReferenceId says SourceGroup and
    SourceEntry hold, a ``smart_scripts`` row about the owner its source_type
    names (a negative entryorguid: a spawn). The first such entry in profile
    order that names an ID decides, so a profile lists the source side of a
    table before the rest. None: no entry of the map says what the row is about.
    """
    for entity in profile.entities.values():
        if entity.table == table:
            return entity.entity_type, row.get(entity.column)
    for ref in profile.references:
        if ref.table != table or not ref.part_of or ref.symbol:
            continue
        if ref.column not in row or not when_holds(ref, row):
            continue
        found = named(ref, row[ref.column])
        if found:
            return found[0]
    return None


def reverse_filter(ref: Reference, entity_type: str, value: int) -> Filter:
    """The comparison that finds ``value`` as an ID of ``entity_type`` in ``ref.column``.

    A sign that carries a meaning of its own (PrevQuestID: taken) is asked both
    ways; a sign that picks the type (a spawn GUID) only the way of that type.
    A list column is asked by containment; ``names`` then keeps whole items.
    """
    if ref.separated_by is not None:
        return Filter(ref.column, "contains", str(value))
    if ref.holds == entity_type and ref.negative == entity_type and value > 0:
        return Filter(ref.column, "in", [value, -value])
    if ref.holds == entity_type:
        return Filter(ref.column, "eq", value)
    return Filter(ref.column, "eq", -value)


def reverse_query(
    profile: EnrichmentProfile,
    ref: Reference,
    entity_type: str,
    value: int,
    *,
    limit: int | None = None,
) -> dict[str, Any]:
    """The ``database.rows`` query of the rows of ``ref`` naming this entity."""
    match = reverse_filter(ref, entity_type, value)
    filters = [match, *ref.when]
    query: dict[str, Any] = {
        "kind": "database.rows",
        "table": ref.table,
        "columns": list(profile.columns_of(ref.table)),
        "filters": [
            {"column": f.column, "operator": f.operator, "value": f.value} for f in filters
        ],
        "offset": 0,
        "limit": profile.limits.rows_per_query if limit is None else limit,
    }
    if profile.database is not None:
        query["database"] = profile.database
    return query


def named(ref: Reference, value: Any) -> list[tuple[str, int]]:
    """Forward: the (entity type, ID) pairs a column value names ([] for none).

    ``ignore_values`` mean no reference; a negative value is the magnitude of
    an ID of ``ref.negative``; a list column names each whole item.
    """
    assert ref.holds is not None
    if ref.separated_by is not None:
        if not isinstance(value, str):
            return []
        items = [item.strip() for item in value.split(ref.separated_by)]
        values: list[Any] = [int(item) for item in items if _integer(item)]
    else:
        values = [value]
    found: list[tuple[str, int]] = []
    ignored = {_typed(v) for v in ref.ignore_values}
    for item in values:
        if _typed(item) in ignored or type(item) is not int:
            continue
        if ref.negative is not None and item < 0:
            found.append((ref.negative, -item))
        elif item >= 0 or ref.negative is None:
            found.append((ref.holds, item))
    return found


def names(ref: Reference, row: Mapping[str, Any], entity_type: str, value: int) -> bool:
    """Whether a row of ``ref`` (its ``when`` aside) names this entity."""
    return (entity_type, value) in named(ref, row.get(ref.column))


def when_holds(ref: Reference, row: Mapping[str, Any]) -> bool:
    """A map entry's ``when`` on a row read: the comparison the database made."""
    return all(_filter_holds(f, row) for f in ref.when)


def _filter_holds(f: Filter, row: Mapping[str, Any]) -> bool:
    if f.column not in row:
        return False
    value, wanted = row[f.column], f.value
    if f.operator == "in":
        return any(_typed(value) == _typed(w) for w in wanted)
    if f.operator in ("eq", "ne"):
        return (_typed(value) == _typed(wanted)) == (f.operator == "eq")
    if f.operator == "contains":
        return isinstance(value, str) and str(wanted) in value
    if value is None or type(value) is not type(wanted):
        return False
    order = (value > wanted) - (value < wanted)
    return order in {"lt": (-1,), "le": (-1, 0), "gt": (1,), "ge": (0, 1)}[f.operator]


def constant_pattern(prefixes: Sequence[str], entity_id: int) -> re.Pattern[str]:
    """``PREFIX_NAME = ID`` with any spacing around ``=`` (``QUEST_X=91001``), or
    ``#define PREFIX_NAME ID``; the ID is a whole number, not a part of a longer one.

    Linear: the name is one run of ``[A-Z0-9_]`` and the spacing a run of
    blanks, classes that share no character, so no position is tried twice.
    """
    names = "|".join(re.escape(p) for p in prefixes)
    name = rf"\b(?:{names})[A-Z0-9_]*"
    number = rf"(?<![0-9]){entity_id}(?![0-9A-Za-z_])"
    return re.compile(
        rf"(?P<name>{name})[ \t]*=[ \t]*{number}"
        rf"|#[ \t]*define[ \t]+(?P<defined>{name})[ \t]+{number}"
    )


def _integer(text: str) -> bool:
    digits = text[1:] if text.startswith("-") else text
    return digits.isascii() and digits.isdigit() and len(digits) <= 19


def _typed(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


__all__: Sequence[str] = [
    "about",
    "constant_pattern",
    "holders",
    "named",
    "names",
    "reverse_filter",
    "reverse_query",
    "when_holds",
]
