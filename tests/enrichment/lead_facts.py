"""Synthetic lead-source facts in the shapes of docs/case-enrichment.md ("Leads"), and a
stand-in for the enrichment phase context, so the ranking is tested without a build."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from viano_bug_analysis.enrichment.leads import add_leads
from viano_bug_analysis.enrichment.profile import EntityLookup

PROVENANCE = {
    "capture_sha256": "c" * 64,
    "capture_path": "research/rev1/captures/" + "c" * 64 + ".json",
    "pointer": "/result/result/rows/0",
    "origin": {"kind": "database", "database": "world", "snapshot_id": "world@test"},
}
ENTITIES = {
    "creature": EntityLookup("creature", "creature_template", "entry", ("entry",), None),
    "quest": EntityLookup("quest", "quest_template", "ID", ("ID",), None),
}
# Raw text that must never reach a lead's why: a commit message, a source line, a name.
RAW = "Fix the <b>keg</b> run; 'Bruni' said so"


class FakePhase:
    """The phase context of the Enricher: the facts so far, a writer, the profile."""

    def __init__(self, facts: Sequence[Mapping[str, Any]], max_leads: int | None = None) -> None:
        self.facts: list[dict[str, Any]] = [dict(f) for f in facts]
        limits = SimpleNamespace() if max_leads is None else SimpleNamespace(max_leads=max_leads)
        self.profile = SimpleNamespace(limits=limits, entities=ENTITIES)

    def fact(self, kind: str, **fields: Any) -> str:
        fact_id = f"P{len(self.facts) + 1}"
        self.facts.append({"fact_id": fact_id, "kind": kind, **fields})
        return fact_id


def numbered(*facts: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"fact_id": f"P{n}", **fact} for n, fact in enumerate(facts, start=1)]


def with_leads(
    facts: Sequence[dict[str, Any]], max_leads: int | None = None
) -> list[dict[str, Any]]:
    phase = FakePhase(facts, max_leads)
    add_leads(phase)
    return phase.facts


def mention(entity_type: str, entity_id: int) -> dict[str, Any]:
    return {
        "kind": "case_mention",
        "entity_type": entity_type,
        "entity_id": entity_id,
        "where": {"pointer": "/report/text", "offset": 0},
        "how": "typed",
        "statement": "the case inputs name this ID",
    }


def rule_hit(
    rule: str, kind: str, entity_type: str, entity_id: int, table: str, key: dict[str, Any]
) -> dict[str, Any]:
    return {
        "kind": "project_rule_hit",
        "rule": rule,
        "rule_kind": kind,
        "entity_type": entity_type,
        "entity_id": entity_id,
        "rows": [{"table": table, "key": key, "provenance": PROVENANCE}],
        "engine_source": {
            "path": "src/server/game/Globals/ObjectMgr.cpp",
            "line": 812,
            "blob": "b" * 40,
            "sha256": "d" * 64,
            "text": RAW,
        }
        if kind == "engine"
        else None,
        "statement": f"rule {rule}: {RAW}",
    }


def missing(entity_type: str, entity_id: int, table: str, key: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "project_missing_reference",
        "reference": "conditions_creature",
        "from": {
            "table": table,
            "key": key,
            "column": "ConditionValue1",
            "value": entity_id,
            "provenance": PROVENANCE,
        },
        "entity_type": entity_type,
        "entity_id": entity_id,
        "looked_in": {"table": "creature_template", "column": "entry"},
        "empty_fact": "P1",
        "statement": "a forward reference whose target has no row",
    }


def script_file(entity_id: int, path: str, reason: str, evidence: int = 1) -> dict[str, Any]:
    match = {"path": path, "line": 10, "blob": "e" * 40, "sha256": "f" * 64, "text": RAW}
    return {
        "kind": "project_script_file_candidate",
        "entity_type": "creature",
        "entity_id": entity_id,
        "script_name": "npc_keg_master",
        "path": path,
        "reason": reason,
        "evidence": [match] * evidence,
        "provenance": PROVENANCE,
        "statement": "where a missing script would live",
    }


def change(commit: str, terms: list[str], author_time: str) -> dict[str, Any]:
    return {
        "kind": "project_change_since_report",
        "since": "1" * 40,
        "pinned": "2" * 40,
        "commit": commit,
        "summary": RAW,
        "author_time": author_time,
        "terms": terms,
        "changes": [
            {
                "path": "sql/updates/world/2026_01_01_00.sql",
                "side": "added",
                "line": 3,
                "text": RAW,
                "blob": "a" * 40,
                "term": terms[0],
            }
        ],
        "provenance": PROVENANCE,
        "statement": "maybe already fixed: " + RAW,
    }
