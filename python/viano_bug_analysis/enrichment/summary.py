"""A readable, terminal-sized summary of enrichment facts (for ``vba case build``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

MAX_TEXT = 100


def summarize(facts: Iterable[Mapping[str, Any]]) -> list[str]:
    by_id = {fact["fact_id"]: fact for fact in facts}
    lines: list[str] = []
    for fact in by_id.values():
        line = _line(fact, by_id)
        if line:
            lines.append(f"[{fact['fact_id']}] {line}")
    return lines


def _line(fact: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]]) -> str | None:
    kind = fact["kind"]
    if kind == "case_mention":
        where = fact["where"]
        place = where.get("pointer") or f"{where['source_ref']} line {where['line']}"
        return f"mentioned: {fact['entity_type']} {fact['entity_id']} ({place})"
    if kind == "project_entity":
        name = f'"{fact["name"]}"' if "name" in fact else "(no name in the table)"
        return f"{fact['entity_type']} {fact['entity_id']}: {name}"
    if kind == "project_name_match":
        return (
            f"name match ({fact['match']}, a candidate): {fact['entity_type']} "
            f'{fact["entity_id"]} "{fact["name"]}" for "{fact["searched"]}"'
        )
    if kind == "project_description":
        return f"{fact['role']} ({fact['table']}.{fact['source_column']}): {_cut(fact['text'])}"
    if kind == "project_rows":
        return f"{len(fact['rows'])} row(s) of {fact['table']} where {_filters(fact['filters'])}"
    if kind == "project_relationship":
        source, target = fact["from"], fact["to"]
        where = target.get("table") or f"symbol {target.get('symbol')}"
        named = ""
        target_fact = by_id.get(target.get("fact", ""))
        if target_fact is not None and target_fact["kind"] == "project_empty_result":
            named = " (none in this table)" if "table" in target else " (no source line)"
        if "table" in source:
            origin = f"{source['table']} {source['id_column']}={source['id']}"
            if source["column"] != source["id_column"]:
                origin += f" {source['column']}={source['value']}"
        else:
            origin = f"{source['entity_type']} {source['entity_id']}"
        return f"{fact['relation']}: {origin} -> {where}{named}"
    if kind == "project_source_hits":
        first = fact["matches"][0]
        return (
            f"symbol {fact['symbol']}: {fact['total']} line(s) at the pinned commit, "
            f"first {first['path']}:{first['line']}"
        )
    if kind == "project_source_constant":
        match = fact["match"]
        return (
            f"constant {fact['constant']} = {fact['entity_type']} {fact['entity_id']} "
            f"at {match['path']}:{match['line']}"
        )
    if kind == "project_empty_result":
        if "table" in fact:
            return f"none in this table: {fact['table']} where {_filters(fact['filters'])}"
        return f"no source line names symbol {fact['symbol']}"
    if kind == "project_context_coverage":
        return "coverage: " + _coverage(fact)
    return None


def _coverage(fact: Mapping[str, Any]) -> str:
    """Reason, code, the table (or symbol, or relation) it concerns, and how many."""
    line = str(fact["reason"])
    if fact.get("code"):
        line += f" {fact['code']}"
    query = fact.get("query", {})
    table = fact.get("table") or query.get("table")
    if table and fact.get("column"):
        table = f"{table}.{fact['column']}"
    target = (
        table
        or (f"symbol {fact['symbol']}" if "symbol" in fact else None)
        or (f"symbol {query['symbol']}" if "symbol" in query else None)
        or (f"text {fact['text']!r}" if "text" in fact else None)
        or (f"text {query['text']!r}" if "text" in query else None)
        or fact.get("source")
    )
    relation = fact.get("relation") or fact.get("purpose", {}).get("relation")
    line += ": " + ", ".join(str(part) for part in (target, relation) if part)
    if "count" in fact:
        one = fact["count"] == 1
        if fact["reason"] == "query_refused":
            line += f" ({fact['count']} quer{'y' if one else 'ies'})"
        else:
            line += f" ({fact['count']} value{'' if one else 's'})"
    elif "returned" in fact:
        line += f" ({fact['returned']} returned)"
    return line


def _filters(filters: Iterable[Mapping[str, Any]]) -> str:
    return " and ".join(f"{f['column']} {f['operator']} {f['value']!r}" for f in filters)


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_TEXT else flat[: MAX_TEXT - 1] + "…"
