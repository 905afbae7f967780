"""Untyped IDs and names are typed by the database: one IN query per table column.

An ID the report gives without its type is asked in every table where an ID
of a possible type exists, once, whatever the number of IDs; its type is
where it is found (several types are one fact listing each), and an ID
found nowhere stays an untyped mention. A name is asked exactly in every
name column (the locale tables too); an exact name of a few entities is
followed like a mention, an ambiguous one says so. Bounds drop candidates
visibly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import orjson

from viano_bug_analysis.enrichment import parse_profile
from viano_bug_analysis.enrichment.engine import Enricher
from viano_bug_analysis.enrichment.extract import extract
from viano_bug_analysis.enrichment.journal import StepOutcome

PROFILE = b"""
format = "viano-enrichment-profile"
format_version = 1
profile = "p"

[limits]
candidates_per_query = 3
candidate_batches = 2
name_fanout = 2

[entities.quest]
table = "quest_template"
column = "ID"
columns = ["ID", "LogTitle"]
name_column = "LogTitle"

[entities.creature]
table = "creature_template"
column = "entry"
columns = ["entry", "name"]
name_column = "name"

[entities.spell]
exists_in = [{table = "spell_script_names", column = "spell_id"}]

[mentions]
[[mentions.untyped]]
entity_types = ["quest", "creature", "spell"]
pattern = '(?i)\\bid[ \\t]*:?[ \\t]*(\\d{1,9})'

[mentions.names]
entity_types = ["quest", "creature"]
connectors = ["of", "the"]

[[mentions.name_tables]]
entity_type = "quest"
table = "quest_template_locale"
id_column = "ID"
column = "Title"
"""

TABLES: dict[str, list[dict[str, Any]]] = {
    "quest_template": [
        {"ID": 34840, "LogTitle": "Life Savings"},
        {"ID": 500, "LogTitle": "Twin Trouble"},
        {"ID": 501, "LogTitle": "Twin Trouble"},
        {"ID": 502, "LogTitle": "Twin Trouble"},
    ],
    "creature_template": [
        {"entry": 34840, "name": "Hot Rod"},
        {"entry": 77, "name": "Sanitron 500"},
    ],
    "spell_script_names": [{"spell_id": 68735, "ScriptName": "spell_x"}],
    "quest_template_locale": [{"ID": 600, "locale": "deDE", "Title": "Ersparnisse"}],
}


class InResearch:
    """Answers eq and in filters over TABLES, like ProjectResearch would."""

    def __init__(self, refused: Mapping[str, str] | None = None) -> None:
        self.refused = dict(refused or {})
        self.asked: list[dict[str, Any]] = []

    def __call__(self, query: Mapping[str, Any]) -> StepOutcome:
        self.asked.append(dict(query))
        digest = hashlib.sha256(orjson.dumps(query, option=orjson.OPT_SORT_KEYS)).hexdigest()
        if query["kind"].startswith("source."):
            result = {"matches": [], "files_unsearched": 0, "total": 0}
            answer = {"format_version": 2, "coverage": {"complete": True}, "result": result}
            found = SimpleNamespace(sha256=digest, result=answer, origin={})
            return StepOutcome(len(self.asked), digest, found, None, False)  # type: ignore[arg-type]
        table = query["table"]
        if table in self.refused:
            return StepOutcome(len(self.asked), digest, None, self.refused[table], False)
        rows = [row for row in TABLES.get(table, []) if _holds(row, query["filters"])]
        rows = [{c: row.get(c) for c in query["columns"]} for row in rows]
        capture = SimpleNamespace(
            sha256=digest,
            result={"result": {"rows": rows[: query["limit"]], "complete_filtered_rows": True}},
            origin={"provider": "fake"},
        )
        return StepOutcome(len(self.asked), digest, capture, None, False)  # type: ignore[arg-type]


def _holds(row: Mapping[str, Any], filters: list[dict[str, Any]]) -> bool:
    for f in filters:
        value = row.get(f["column"])
        if f["operator"] == "eq" and value != f["value"]:
            return False
        if f["operator"] == "in":
            wanted = [v.casefold() if isinstance(v, str) else v for v in f["value"]]
            if (value.casefold() if isinstance(value, str) else value) not in wanted:
                return False
    return True


def _enrich(text: str, refused: Mapping[str, str] | None = None) -> tuple[list[Any], InResearch]:
    profile = parse_profile(PROFILE)
    research = InResearch(refused)
    found = extract(profile, {"title": "t", "text": text}, [])
    facts = Enricher(profile, research, capture_path=lambda s: s).run(found).facts
    return facts, research


def _kind(facts: list[Any], kind: str) -> list[dict[str, Any]]:
    return [f for f in facts if f["kind"] == kind]


def test_untyped_ids_are_asked_once_per_table_and_typed_by_where_they_exist() -> None:
    facts, research = _enrich("ID: 34840, then id 68735 and id 999")
    in_queries = [q for q in research.asked if q["filters"][0]["operator"] == "in"]
    assert sorted(q["table"] for q in in_queries) == [
        "creature_template",
        "quest_template",
        "spell_script_names",
    ]
    assert all(sorted(q["filters"][0]["value"]) == [999, 34840, 68735] for q in in_queries)
    untyped = {f["entity_id"]: f["found_as"] for f in _kind(facts, "case_untyped_mention")}
    assert untyped == {34840: ["creature", "quest"], 68735: ["spell"], 999: []}
    # Found IDs are enriched like mentions of each type they exist as.
    lookups = {
        (f["purpose"]["entity_type"], f["purpose"]["entity_id"])
        for f in _kind(facts, "project_rows")
        if f["purpose"].get("kind") == "entity_lookup"
    }
    assert lookups == {("quest", 34840), ("creature", 34840)}


def test_an_id_found_nowhere_stays_an_untyped_mention_with_provenance_for_the_rest() -> None:
    facts, _ = _enrich("id 999")
    [fact] = _kind(facts, "case_untyped_mention")
    assert fact["found_as"] == [] and fact["found_in"] == []
    facts, _ = _enrich("id 68735")
    [fact] = _kind(facts, "case_untyped_mention")
    assert fact["found_in"][0]["provenance"]["pointer"] == "/result/result/rows/0/spell_id"


def test_names_are_asked_exactly_once_per_name_column_the_locale_table_too() -> None:
    facts, research = _enrich("Bring Hot Rod to the garage, then read Ersparnisse twice.")
    name_queries = [
        q
        for q in research.asked
        if q["filters"][0]["operator"] == "in" and isinstance(q["filters"][0]["value"][0], str)
    ]
    assert {q["table"] for q in name_queries} == {
        "creature_template",
        "quest_template",
        "quest_template_locale",
    }
    # One query per column and batch of candidates_per_query names.
    assert all(len(q["filters"][0]["value"]) <= 3 for q in name_queries)
    matches = {f["name"]: f for f in _kind(facts, "project_name_match")}
    assert matches["Hot Rod"]["matches"][0]["entity_id"] == 34840
    assert matches["Hot Rod"]["followed"] is True
    assert matches["Ersparnisse"]["matches"][0]["table"] == "quest_template_locale"


def test_an_ambiguous_name_says_so_and_is_not_followed_past_the_fanout() -> None:
    facts, research = _enrich('The quest "Twin Trouble" breaks.')
    [match] = _kind(facts, "project_name_match")
    assert match["ambiguous"] is True and match["followed"] is False
    assert len(match["matches"]) == 3
    assert not any(q["filters"][0]["operator"] == "eq" for q in research.asked)


def test_names_that_match_nothing_are_listed_once() -> None:
    facts, _ = _enrich("Talk to Nobody Special now.")
    [summary] = _kind(facts, "case_name_candidates")
    assert "Nobody Special" in summary["not_found"]


def test_candidates_past_the_bound_are_counted_not_lost() -> None:
    facts, research = _enrich("id 1, id 2, id 3, id 4, id 5, id 6, id 7, id 8")
    asked = [q["filters"][0]["value"] for q in research.asked if q["table"] == "quest_template"]
    assert asked == [[1, 2, 3], [4, 5, 6]]
    [dropped] = [f for f in facts if f.get("reason") == "candidates_dropped"]
    assert dropped["what"] == "untyped" and dropped["count"] == 2


def test_a_refused_candidate_table_is_a_coverage_fact_and_the_rest_still_answers() -> None:
    facts, _ = _enrich("ID: 34840", refused={"quest_template": "table_not_allowed"})
    [fact] = _kind(facts, "case_untyped_mention")
    assert fact["found_as"] == ["creature"]
    refused = [f for f in facts if f.get("reason") == "query_refused"]
    assert refused[0]["table"] == "quest_template"


def test_every_database_query_refused_is_said_in_one_fact() -> None:
    refused = dict.fromkeys(TABLES, "table_not_allowed")
    refused.update(creature_template="table_not_allowed", quest_template="table_not_allowed")
    facts, _ = _enrich("ID: 34840", refused=refused)
    [fact] = [f for f in facts if f.get("reason") == "database_unreadable"]
    assert fact["codes"] == {"table_not_allowed": fact["count"]}


def test_a_hostile_report_stays_within_max_queries_with_one_query_per_candidate_column() -> None:
    from viano_bug_analysis.enrichment import vcore_profile

    profile = vcore_profile()
    line = " ".join(f"quest {n} Hot Rod{n % 9} Keg Master (ID: {n}) guid {n}" for n in range(2000))
    text = (line + "\n") * 50  # about 1 MB, 100,000 numbers
    found = extract(profile, {"title": "t", "text": text}, [])
    research = InResearch()
    run = Enricher(profile, research, capture_path=lambda s: s).run(found)
    assert len(run.queries) <= profile.limits.max_queries
    candidate_queries = [q for q in run.queries if q["purpose"]["kind"] == "candidate_lookup"]
    id_tables = {
        (t, c)
        for rule in profile.mentions.untyped
        for e in rule.entity_types
        for t, c in profile.entities[e].id_tables()
    }
    columns = len(id_tables) + len(profile.name_columns())
    assert len(candidate_queries) <= columns * profile.limits.candidate_batches
    dropped = {f["what"]: f["count"] for f in run.facts if f.get("reason") == "candidates_dropped"}
    assert dropped["mentions"] > 0 and dropped["untyped"] > 0
