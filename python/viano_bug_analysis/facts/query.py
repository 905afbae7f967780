"""Facts on demand: enrichment facts by ID, entity, table, kind or text, paged
(minimal stand-in for the fact-vocabulary work's module; same signatures)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NoReturn

from viano_bug_analysis.errors import ToolError
from viano_bug_analysis.facts._compact import compact

FACTS_QUERY_SCHEMA = "case-facts-query-v1"
MAX_LIMIT = 50
_KEYS = frozenset({"ids", "entity", "table", "fact_kind", "text", "offset", "limit"})
_ID = re.compile(r"P([1-9][0-9]{0,8})(?:-P([1-9][0-9]{0,8}))?")


def facts_query(index: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The facts matching every given filter, in fact-ID order, one page."""
    _check(arguments)
    wanted = _ids(arguments.get("ids"))
    entity = arguments.get("entity")
    text = arguments.get("text")
    found = []
    for fact in index.get("facts", ()):
        view = compact(fact)
        if wanted is not None and int(fact["fact_id"][1:]) not in wanted:
            continue
        if "table" in arguments and fact.get("table") != arguments["table"]:
            continue
        if "fact_kind" in arguments and fact["kind"] != arguments["fact_kind"]:
            continue
        if entity is not None and not _names(fact, entity):
            continue
        if text is not None and text.casefold() not in view.casefold():
            continue
        found.append({"fact_id": fact["fact_id"], "kind": fact["kind"], "view": view})
    offset, limit = arguments["offset"], arguments["limit"]
    page = found[offset : offset + limit]
    following = offset + len(page)
    return {
        "facts": page,
        "total": len(found),
        "offset": offset,
        "next_offset": following if following < len(found) else None,
    }


def facts_view(result: Mapping[str, Any]) -> str:
    """The compact text of a result, with how to ask for the next page."""
    lines = [fact["view"] for fact in result["facts"]]
    shown = len(result["facts"])
    lines.append(f"({shown} of {result['total']} facts from offset {result['offset']}")
    if result["next_offset"] is not None:
        lines[-1] += f"; more with offset {result['next_offset']})"
    else:
        lines[-1] += ")"
    return "\n".join(lines)


def _check(arguments: Mapping[str, Any]) -> None:
    unknown = sorted(set(arguments) - _KEYS)
    if unknown:
        _invalid(f"/{unknown[0]}", "unknown property", allowed=sorted(_KEYS))
    for key in ("offset", "limit"):
        value = arguments.get(key)
        if type(value) is not int:
            _invalid(f"/{key}", "required integer")
    if arguments["offset"] < 0:
        _invalid("/offset", "must be >= 0", minimum=0)
    if not 1 <= arguments["limit"] <= MAX_LIMIT:
        _invalid("/limit", f"must be 1 to {MAX_LIMIT}", minimum=1, maximum=MAX_LIMIT)
    for key in ("table", "fact_kind", "text"):
        if key in arguments and not isinstance(arguments[key], str):
            _invalid(f"/{key}", "must be a string")
    entity = arguments.get("entity")
    if entity is not None and not (
        isinstance(entity, Mapping)
        and isinstance(entity.get("type"), str)
        and type(entity.get("id")) is int
    ):
        _invalid("/entity", 'must be {"type": "<entity type>", "id": <integer>}')


def _ids(ids: Any) -> set[int] | None:
    if ids is None:
        return None
    if not isinstance(ids, list) or not ids or len(ids) > MAX_LIMIT:
        _invalid("/ids", f"must be a list of 1 to {MAX_LIMIT} fact IDs such as P12 or P40-P44")
    wanted: set[int] = set()
    for position, item in enumerate(ids):
        match = _ID.fullmatch(item) if isinstance(item, str) else None
        if match is None:
            return _invalid(f"/ids/{position}", "not a fact ID such as P12 or a range P40-P44")
        first = int(match.group(1))
        last = int(match.group(2) or first)
        if last < first or last - first >= 1000:
            _invalid(f"/ids/{position}", "a range goes up, at most 1000 IDs")
        wanted.update(range(first, last + 1))
    return wanted


def _names(fact: Mapping[str, Any], entity: Mapping[str, Any]) -> bool:
    if fact.get("entity_type") == entity["type"] and fact.get("entity_id") == entity["id"]:
        return True
    return any(
        isinstance(row, Mapping) and entity["id"] in row.values() for row in fact.get("rows") or ()
    )


def _invalid(pointer: str, problem: str, **fields: Any) -> NoReturn:
    raise ToolError(
        "invalid_argument",
        f"case.facts arguments {pointer}: {problem}",
        {"pointer": pointer, **fields},
    )


__all__ = ["FACTS_QUERY_SCHEMA", "facts_query", "facts_view"]
