"""The questions that type an untyped ID and find a name: one IN query per table column.

An ID given without its type ("Hot Rod (ID: 34840)") is asked in every table
where an ID of a possible type exists (the type's own table, or for a type
without one its ``exists_in`` link tables); its type is where it is found.
A name is asked, exactly, in every name column (the entities' name columns
and the locale ``name_tables``); string comparison follows the column's
collation, case-insensitive in this lineage's world DB, and each returned
row is checked again here, ignoring case only, so a collation that also
ignores accents or trailing blanks never makes a different name an exact one.

A list holds at most ``candidates_per_query`` values (ProjectResearch takes
100), and a column is asked in at most ``candidate_batches`` lists; what the
bounds leave out is counted, never silently lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.enrichment.extract import NameMention, UntypedMention
from viano_bug_analysis.enrichment.profile import EnrichmentProfile, NameColumn


@dataclass(frozen=True, slots=True)
class Probe:
    """One IN query: the values asked in ``column`` of ``table``, for ``entity_type``."""

    entity_type: str
    table: str
    column: str  # the column compared with the values
    id_column: str  # the column holding the entity ID (== column for an ID probe)
    values: tuple[Any, ...]
    query: dict[str, Any]


def untyped_probes(
    profile: EnrichmentProfile, untyped: Sequence[UntypedMention]
) -> tuple[list[Probe], int]:
    """The ID probes, in profile order of types and tables, and how many IDs a bound left out."""
    probes: list[Probe] = []
    dropped: set[int] = set()
    for entity_type in _ordered_types(t for u in untyped for t in u.entity_types):
        ids = sorted({u.entity_id for u in untyped if entity_type in u.entity_types})
        batches, rest = _batches(ids, profile)
        dropped.update(rest)
        for table, column in profile.entities[entity_type].id_tables():
            for batch in batches:
                query = _in_query(profile, table, (column,), column, batch)
                probes.append(Probe(entity_type, table, column, column, tuple(batch), query))
    return probes, len(dropped)


def name_probes(
    profile: EnrichmentProfile, names: Sequence[NameMention]
) -> tuple[list[Probe], list[NameMention], int]:
    """The name probes; the names no column can answer; how many names a bound left out."""
    columns = profile.name_columns()
    answerable = {c.entity_type for c in columns}
    unanswerable = [n for n in names if not answerable.intersection(n.entity_types)]
    probes: list[Probe] = []
    dropped: set[str] = set()
    for column in columns:
        wanted: dict[str, str] = {}
        for named in names:
            if column.entity_type in named.entity_types:
                wanted.setdefault(named.name.casefold(), named.name)
        if not wanted:
            continue
        batches, rest = _batches(sorted(wanted.values(), key=str.casefold), profile)
        dropped.update(name.casefold() for name in rest)
        probes.extend(_name_probe(profile, column, batch) for batch in batches)
    return probes, unanswerable, len(dropped)


def found_ids(probe: Probe, rows: Iterable[Mapping[str, Any]]) -> dict[int, int]:
    """ID -> index of the first row holding it, among the values asked."""
    asked = set(probe.values)
    found: dict[int, int] = {}
    for index, row in enumerate(rows):
        value = row.get(probe.column)
        if type(value) is int and value in asked:
            found.setdefault(value, index)
    return found


def found_names(probe: Probe, rows: Iterable[Mapping[str, Any]]) -> dict[str, list[int]]:
    """Casefolded name asked -> indexes of the rows whose name equals it, ignoring case."""
    asked = {str(name).casefold() for name in probe.values}
    found: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        name = row.get(probe.column)
        if isinstance(name, str) and name.casefold() in asked:
            found.setdefault(name.casefold(), []).append(index)
    return found


def _name_probe(profile: EnrichmentProfile, column: NameColumn, names: list[Any]) -> Probe:
    query = _in_query(
        profile, column.table, (column.id_column, column.column), column.column, names
    )
    return Probe(
        column.entity_type, column.table, column.column, column.id_column, tuple(names), query
    )


def _ordered_types(types: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for entity_type in types:
        seen.setdefault(entity_type, None)
    return list(seen)


def _batches(values: list[Any], profile: EnrichmentProfile) -> tuple[list[list[Any]], list[Any]]:
    """The IN lists for ``values`` (at most candidate_batches of them) and what is left out."""
    size, count = profile.limits.candidates_per_query, profile.limits.candidate_batches
    kept = values[: size * count]
    return [kept[i : i + size] for i in range(0, len(kept), size)], values[size * count :]


def _in_query(
    profile: EnrichmentProfile,
    table: str,
    columns: Sequence[str],
    column: str,
    values: Sequence[Any],
) -> dict[str, Any]:
    query: dict[str, Any] = {
        "kind": "database.rows",
        "table": table,
        "columns": list(dict.fromkeys(columns)),
        "filters": [{"column": column, "operator": "in", "value": list(values)}],
        "offset": 0,
        "limit": profile.limits.candidates_per_query,
    }
    if profile.database is not None:
        query["database"] = profile.database
    return query


__all__ = ["Probe", "found_ids", "found_names", "name_probes", "untyped_probes"]
