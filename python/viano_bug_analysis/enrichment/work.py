"""What the enrichment queue holds: one query's work, where a reference comes from, a
refused target, and the pure helpers that order and describe them."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.enrichment.profile import EntityLookup, Reference
from viano_bug_analysis.project_research import query_sha256

SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,255}")
ROWS_POINTER = "/result/result/rows"
MATCHES_POINTER = "/result/result/matches"

RunQuery = Callable[[Mapping[str, Any]], StepOutcome]
Progress = Callable[[str], None]


@dataclass
class Origin:
    """Where a reference is followed from: one value in one returned row (forward),
    or an entity ID (reverse: the rows naming it).

    An entity origin (``entity_type`` set, ``table`` None) carries the capture
    and pointer the ID was read from when a reference reached it; a mentioned
    ID has none (its case_mention fact says where it stands).
    """

    reference: Reference
    table: str | None
    key: dict[str, Any]  # the row's key columns (empty for an entity origin)
    value: Any
    capture_sha256: str | None
    pointer: str | None
    entity_type: str | None = None


@dataclass
class Refusal:
    code: str | None
    target: dict[str, Any]  # table or source symbol
    purposes: list[dict[str, Any]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)


@dataclass
class Work:
    depth: int
    query: dict[str, Any]
    table: str | None  # None for a source query
    lookup: EntityLookup | None
    purpose: dict[str, Any]
    origins: list[Origin] = field(default_factory=list)


def typed(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


def work_class(work: Work) -> int:
    """Which of one depth's queries go first when the budget may not reach them all:
    entity lookups and forward references (what an entity is), then the source
    (its constants and scripts), then the rows belonging to it (part_of), then
    the other rows naming it."""
    purpose = work.purpose
    if purpose["kind"] == "relationship" and purpose.get("direction") == "reverse":
        return 2 if purpose.get("part_of") else 3
    return 1 if work.table is None else 0


def reference_purpose(ref: Reference, direction: str) -> dict[str, Any]:
    purpose: dict[str, Any] = {"kind": "relationship", "relation": ref.name, "direction": direction}
    if direction == "reverse" and ref.part_of:
        purpose["part_of"] = True
    return purpose


def query_key(query: Mapping[str, Any]) -> str:
    return query_sha256(query)


def match_view(m: Mapping[str, Any]) -> dict[str, Any]:
    return {k: m[k] for k in ("path", "line", "blob", "sha256", "text")}


def describe(work: Work) -> str:
    purpose = work.purpose
    if purpose["kind"] == "constant_search":
        return f"{purpose['entity_type']} {purpose['entity_id']} as a C++ constant"
    if purpose["kind"] == "entity_lookup":
        return f"{purpose['entity_type']} {purpose['entity_id']}"
    if purpose["kind"] == "candidate_lookup":
        return f"{purpose['count']} candidates in {work.table}.{purpose['column']}"
    if "relation" not in purpose:  # a build phase's own query
        return str(purpose["kind"]).replace("_", " ")
    target = work.table or f"symbol {work.query['symbol']}"
    return f"{purpose['relation']} -> {target}"
