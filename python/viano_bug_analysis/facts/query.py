"""Facts on demand: a paged query over an enrichment index, in the brief's compact views.

Whatever the brief left out stays in reach: facts by label or label range,
by entity, by table, by kind or by text, every filter given must hold, in
fact-ID order, ``limit`` at a time with the offset of the next page. The
arguments are ``case-facts-query-v1``; a bad one is a ``facts_query_invalid``
error naming the pointer, the property and the allowed values (an unknown
kind: ``unknown_fact_kind``). The same function answers the investigation's
``case.facts`` operation and the ``case_facts_query`` MCP tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from viano_bug_analysis.errors import FactError
from viano_bug_analysis.facts import text as t
from viano_bug_analysis.facts.brief import FactGroups
from viano_bug_analysis.facts.registry import fact_kind
from viano_bug_analysis.schema_errors import check
from viano_bug_analysis.schemas import load_schema

FACTS_QUERY_SCHEMA = "case-facts-query-v1"
DEFAULT_LIMIT = 20
# The schema's maximum of ``limit``, said where the tool is described.
MAX_LIMIT: int = load_schema(FACTS_QUERY_SCHEMA)["properties"]["limit"]["maximum"]

Fact = Mapping[str, Any]


def facts_query(index: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``{"facts": [{"fact_id", "kind", "view"}], "total", "offset", "next_offset"}``."""
    if (found := check(FACTS_QUERY_SCHEMA, dict(arguments))) is not None:
        raise FactError(
            "facts_query_invalid", f"the facts query is invalid: {found.message}", found.details()
        )
    wanted = _ids(arguments["ids"]) if "ids" in arguments else None
    kind = fact_kind(arguments["fact_kind"]).name if "fact_kind" in arguments else None
    facts: list[Fact] = list(index.get("facts", []))
    parts = FactGroups(facts)
    entity = arguments.get("entity")
    about = _about(parts, facts, (entity["type"], str(entity["id"]))) if entity else None
    table = arguments.get("table")
    needle = str(arguments.get("text", "")).casefold()
    matched: list[dict[str, Any]] = []
    for fact in facts:
        fid = str(fact["fact_id"])
        view = fact_kind(fact.get("kind")).compact(fact)
        if wanted is not None and t.number(fid) not in wanted:
            continue
        if kind is not None and fact["kind"] != kind:
            continue
        if about is not None and fid not in about:
            continue
        if table is not None and table not in _tables(fact):
            continue
        if needle and needle not in view.casefold():
            continue
        matched.append({"fact_id": fid, "kind": fact["kind"], "view": view})
    offset = int(arguments.get("offset", 0))
    limit = int(arguments.get("limit", DEFAULT_LIMIT))
    page = matched[offset : offset + limit]
    following = offset + limit
    return {
        "facts": page,
        "total": len(matched),
        "offset": offset,
        "next_offset": following if following < len(matched) else None,
    }


def facts_view(result: Mapping[str, Any]) -> str:
    """The compact text of an answer: one block per fact, then where the next page starts."""
    facts = result["facts"]
    offset, total = int(result["offset"]), int(result["total"])
    if not facts:
        head = f"no fact matches ({total} in all)" if total else "no fact matches"
        return head + (f"; offset {offset} is past the end" if total and offset >= total else "")
    lines = [f"facts {offset + 1}-{offset + len(facts)} of {total}:"]
    lines += [str(f["view"]) for f in facts]
    if result.get("next_offset") is not None:
        lines.append(f"more: ask again with offset {result['next_offset']}")
    return "\n".join(lines)


def _ids(items: Iterable[str]) -> set[int]:
    wanted: set[int] = set()
    for position, item in enumerate(items):
        first, _, last = item.partition("-")
        start, end = t.number(first), t.number(last or first)
        if end < start:
            raise FactError(
                "facts_query_invalid",
                f"the facts query is invalid: /ids/{position}: a range ends before it starts",
                {"path": f"/ids/{position}", "rule": "range_order", "property": "ids"},
            )
        wanted.update(range(start, end + 1))
    return wanted


def _about(parts: FactGroups, facts: list[Fact], entity: tuple[str, str]) -> set[str]:
    """The fact IDs about ``entity``: its own facts, its rows, what reached it or came from it."""
    found: set[str] = set()
    for fact in facts:
        fid, kind = str(fact["fact_id"]), fact["kind"]
        own = "entity_type" in fact and (str(fact["entity_type"]), str(fact.get("entity_id"))) == (
            entity
        )
        if own or (
            kind in {"project_rows", "project_empty_result"} and parts.owner(fact) == entity
        ):
            found.add(fid)
        elif kind == "project_relationship":
            ends = [fact["to"], fact["from"]]
            if any(
                (str(end.get("entity_type")), str(end.get("value", end.get("entity_id")))) == entity
                for end in ends
            ):
                found.add(fid)
        elif (
            kind == "case_untyped_mention"
            and entity[1] == str(fact["entity_id"])
            and entity[0] in (fact.get("found_as") or ())
        ):
            found.add(fid)
    for fact in facts:  # a description rides with its row
        if fact["kind"] == "project_description" and str(fact.get("row_fact")) in found:
            found.add(str(fact["fact_id"]))
    return found


def _tables(fact: Fact) -> set[str]:
    tables = {str(fact["table"])} if "table" in fact else set()
    for end in ("from", "to", "looked_in"):
        if isinstance(fact.get(end), Mapping) and "table" in fact[end]:
            tables.add(str(fact[end]["table"]))
    for row in fact.get("rows", []) if fact["kind"] == "project_rule_hit" else ():
        tables.add(str(row.get("table")))
    location = fact.get("location")
    if isinstance(location, Mapping) and "table" in location:
        tables.add(str(location["table"]))
    return tables


__all__ = ["DEFAULT_LIMIT", "FACTS_QUERY_SCHEMA", "MAX_LIMIT", "facts_query", "facts_view"]
