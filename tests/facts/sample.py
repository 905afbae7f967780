"""A small enrichment index by hand: one fact of every kind of the vocabulary, shaped as
the builder writes them (tests/facts/test_built_index.py checks real builds)."""

from __future__ import annotations

from typing import Any

SHA = "ab" * 32
DB = {"database": "cata_world", "kind": "database", "snapshot_id": "cata_world@fixture"}


def provenance(pointer: str = "/result/result/rows") -> dict[str, Any]:
    return {
        "capture_path": f"research/project/r0001/captures/{SHA}.json",
        "capture_sha256": SHA,
        "origin": DB,
        "pointer": pointer,
    }


def facts() -> list[dict[str, Any]]:
    where = {"line": 2, "source_ref": "diag-001"}
    match = {"blob": "c" * 40, "line": 13, "path": "src/zone.cpp", "sha256": SHA, "text": "X = 1;"}
    items: list[dict[str, Any]] = [
        {"kind": "case_mention", "entity_type": "quest", "entity_id": 90001, "where": where},
        {"kind": "case_mention", "entity_type": "creature", "entity_id": 90002, "where": where},
        {
            "kind": "case_untyped_mention",
            "entity_id": 7,
            "where": where,
            "found_as": ["item"],
            "asked_as": ["item", "spell"],
        },
        {"kind": "case_unresolved_mention", "form": "achievement", "entity_id": 5, "where": where},
        {"kind": "case_name_candidates", "asked": 2, "not_found": ["Brewfest"], "not_asked": []},
        {
            "kind": "project_rows",
            "table": "quest_template",
            "complete_filtered_rows": True,
            "filters": [{"column": "ID", "operator": "eq", "value": 90001}],
            "purpose": {"kind": "entity_lookup", "entity_type": "quest", "entity_id": 90001},
            "rows": [
                {
                    "ID": 90001,
                    "LogTitle": "Catch the Wolpertinger",
                    "LogDescription": {"text_ref": "P8"},
                    "StartItem": 90003,
                }
            ],
            "provenance": provenance(),
        },
        {
            "kind": "project_entity",
            "entity_type": "quest",
            "entity_id": 90001,
            "name": "Catch the Wolpertinger",
            "provenance": provenance("/result/result/rows/0"),
        },
        {
            "kind": "project_description",
            "role": "quest_objective_text",
            "row_fact": "P6",
            "table": "quest_template",
            "source_column": "LogDescription",
            "text": "Throw the net at a wild wolpertinger.",
            "provenance": provenance(),
        },
        {
            "kind": "project_empty_result",
            "table": "conditions",
            "filters": [{"column": "SourceEntry", "operator": "eq", "value": 90002}],
            "purpose": {"kind": "relationship", "direction": "reverse", "relation": "cond"},
            "statement": "none in this table",
            "provenance": provenance(),
        },
        {
            "kind": "project_relationship",
            "relation": "cond",
            "direction": "reverse",
            "from": {"entity_type": "creature", "entity_id": 90002, "pointer": "/x"},
            "to": {
                "table": "conditions",
                "column": "SourceEntry",
                "value": 90002,
                "fact": "P9",
                "query_sha256": SHA,
            },
            "statement": "a reference of the profile's map",
        },
        {
            "kind": "project_relationship",
            "relation": "quest_start_item",
            "direction": "forward",
            "from": {
                "table": "quest_template",
                "id_column": "ID",
                "id": 90001,
                "column": "StartItem",
                "value": 90003,
                "key": {"ID": 90001},
                "capture_sha256": SHA,
                "pointer": "/result/result/rows/0/StartItem",
            },
            "to": {"entity_type": "item", "value": 90003},
        },
        {
            "kind": "project_name_match",
            "name": "Wild Wolpertinger",
            "where": where,
            "matches": [
                {"entity_type": "creature", "entity_id": 90002, "table": "creature_template"}
            ],
            "ambiguous": False,
            "followed": True,
        },
        {
            "kind": "project_source_hits",
            "symbol": "npc_wild",
            "total": 1,
            "matches": [match],
            "provenance": provenance("/result/result/matches"),
        },
        {
            "kind": "project_source_constant",
            "constant": "NPC_WILD",
            "entity_type": "creature",
            "entity_id": 90002,
            "match": match,
            "provenance": provenance(),
        },
        {
            "kind": "project_context_coverage",
            "reason": "max_depth",
            "relation": "cond",
            "statement": "reference not followed: the max_depth bound was reached",
        },
        {
            "kind": "project_context_coverage",
            "reason": "max_depth",
            "relation": "cond2",
            "statement": "reference not followed: the max_depth bound was reached",
        },
        {
            "kind": "project_context_coverage",
            "reason": "query_refused",
            "code": "table_not_allowed",
            "table": "creature_loot_template",
            "count": 1,
            "query_sha256s": [SHA],
            "statement": "the research service refused the query",
        },
        {
            "kind": "report_revision",
            "reported": "abc123",
            "commit": "d" * 40,
            "statement": "the report's commit is an ancestor of the pinned commit",
        },
        {
            "kind": "project_rule_hit",
            "rule": "spellclick_flag_without_spells",
            "rule_kind": "engine",
            "check": "rows",
            "entity_type": "creature",
            "entity_id": 90002,
            "engine_source": None,
            "rows": [
                {"table": "creature_template", "key": {"entry": 90002}, "provenance": provenance()}
            ],
            "statement": "the creature has the spellclick npcflag and no spells",
        },
        {
            "kind": "project_missing_reference",
            "reference": "quest_required_creature_1",
            "entity_type": "creature",
            "entity_id": 90009,
            "from": {"table": "quest_template", "column": "RequiredNpcOrGo1", "key": {"ID": 90001}},
            "looked_in": {"table": "creature_template", "column": "entry"},
            "statement": "no row",
        },
        {
            "kind": "project_script_file_candidate",
            "entity_type": "spell",
            "entity_id": 90004,
            "path": "src/zone.cpp",
            "reason": "constants",
            "evidence": [match],
            "statement": "a candidate",
        },
        {
            "kind": "project_change_since_report",
            "commit": "e" * 40,
            "author_time": "2024-01-01",
            "summary": "Fix the net",
            "changes": [{"path": "src/zone.cpp", "line": 3}],
            "terms": [90004],
            "statement": "maybe already fixed",
        },
        {
            "kind": "project_lead",
            "rank": 1,
            "lead": "engine_check",
            "why": "the engine flags it",
            "location": {"table": "creature_template", "key": {"entry": 90002}},
            "rests_on": ["P19"],
            "entity_type": "creature",
            "entity_id": 90002,
        },
    ]
    return [{"fact_id": f"P{n}", **fact} for n, fact in enumerate(items, start=1)]


def index(fact_list: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "format": "viano-enrichment-index",
        "format_version": 1,
        "case_id": "BUG-1",
        "analysis_revision": 1,
        "profile": {"name": "vcore", "sha256": SHA},
        "research_origin": {"database": {"databases": ["cata_world"]}},
        "mentions": [],
        "queries": [],
        "facts": facts() if fact_list is None else fact_list,
    }
