"""The case build's facts as the report shows them: the report's entities, then
tables of facts grouped by kind (rows by database table), each row with where
it was read (``case-report-v3``).

Every fact's wording and cells come from its kind (``FactKind.report`` in
facts/registry.py); this module only groups them and finds, for each entity
the case names, its name and which tables hold rows of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from viano_bug_analysis.facts import text as t
from viano_bug_analysis.facts.registry import fact_kind
from viano_bug_analysis.jsonio import canonical_bytes

Fact = Mapping[str, Any]


def fact_tables(facts: Iterable[Fact]) -> list[dict[str, Any]]:
    """One table per kind (per database table for rows), in the order first met: a
    title, the columns, and per row the fact ID, the cells and where it was read."""
    by_id = {str(f["fact_id"]): f for f in facts}
    tables: dict[tuple[str, str], dict[str, Any]] = {}
    for fact in by_id.values():
        view = fact_kind(fact["kind"]).report(fact, by_id)
        table = tables.setdefault(
            (view["kind"], view["table"]),
            {"title": view["table"], "kind": view["kind"], "columns": [], "rows": []},
        )
        for row in view["rows"]:
            for column in row["cells"]:
                if column not in table["columns"]:
                    table["columns"].append(column)
            table["rows"].append(
                {"fact_id": view["fact_id"], "cells": row["cells"], "source": row["source"]}
            )
    for table in tables.values():
        # Cells in the table's column order; a column a row lacks is empty.
        for row in table["rows"]:
            row["cells"] = [row["cells"].get(column, "") for column in table["columns"]]
    return list(tables.values())


def report_entities(facts: Iterable[Fact]) -> list[dict[str, Any]]:
    """The entities the case names (its mentions), one each: type, ID, the name the
    project data gives it, and what exists of it: its own table's rows, and each
    ``table.column`` naming it, with how many rows (an own table without a row says so)."""
    listed = list(facts)
    by_id = {str(f["fact_id"]): f for f in listed}
    names: dict[tuple[str, str], str] = {}
    found: dict[tuple[str, str], dict[str, set[bytes]]] = {}  # table -> the distinct rows
    for fact in listed:
        kind = fact["kind"]
        if kind == "project_entity" and "name" in fact:
            names.setdefault(_key(fact), str(fact["name"]))
        elif kind in {"project_rows", "project_empty_result"} and "table" in fact:
            purpose = fact.get("purpose") or {}
            if purpose.get("kind") == "entity_lookup":
                _add(found, _key(purpose), str(fact["table"]), fact)
        elif kind == "project_relationship" and "entity_type" in fact["from"]:
            # The rows naming the entity: under the column that names it.
            target = by_id.get(str(fact["to"].get("fact", "")))
            if target is not None and target["kind"] == "project_rows":
                where = f"{target['table']}.{fact['to'].get('column')}"
                _add(found, _key(fact["from"]), where, target)
    entities: list[dict[str, Any]] = []
    for fact in listed:
        key = _key(fact) if fact["kind"] == "case_mention" else None
        if key is None or any((e["entity_type"], e["entity_id"]) == key for e in entities):
            continue
        tables = found.get(key, {})
        entities.append(
            {
                "entity_type": key[0],
                "entity_id": key[1],
                "name": names.get(key),
                "exists": [
                    f"{table}: {t.count(len(rows), 'row')}" if rows else f"no row in {table}"
                    for table, rows in tables.items()
                ],
            }
        )
    return entities


def _key(fact: Mapping[str, Any]) -> tuple[str, str]:
    return str(fact["entity_type"]), str(fact["entity_id"])


def _add(
    found: dict[tuple[str, str], dict[str, set[bytes]]],
    key: tuple[str, str],
    where: str,
    fact: Fact,
) -> None:
    """The rows of ``fact`` under ``where``; a row read by two lookups counts once."""
    rows = found.setdefault(key, {}).setdefault(where, set())
    if fact["kind"] == "project_rows":
        rows.update(canonical_bytes(row) for row in fact["rows"])


__all__ = ["fact_tables", "report_entities"]
