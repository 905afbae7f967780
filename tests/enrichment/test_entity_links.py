"""References followed from an entity ID (reverse), and what a refused table becomes.

A report that names a quest must still reach the quest's givers and
conditions when ``quest_template`` itself is missing or refused: those link
tables are keyed by the quest ID, not by a quest_template row. The refused
table becomes one coverage fact naming the table and the code, however many
lookups it refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from viano_bug_analysis.enrichment import parse_profile
from viano_bug_analysis.enrichment.engine import Enricher
from viano_bug_analysis.enrichment.extract import Mention
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.enrichment.summary import summarize

PROFILE = b"""
format = "viano-enrichment-profile"
format_version = 1
profile = "p"

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

[tables.spell_linked_spell]
columns = ["spell_trigger", "spell_effect", "type"]

[tables.creature_queststarter]
columns = ["id", "quest"]

[[references]]
name = "quest_starter_link"
table = "creature_queststarter"
column = "quest"
holds = "quest"

[[references]]
name = "quest_starter"
table = "creature_queststarter"
column = "id"
holds = "creature"

[[references]]
name = "spell_linked"
table = "spell_linked_spell"
column = "spell_trigger"
holds = "spell"
part_of = true
"""

ROWS: dict[str, list[dict[str, Any]]] = {
    "creature_queststarter": [{"id": 70, "quest": "?"}],
    "creature_template": [{"entry": 70, "name": "Giver"}],
    "spell_linked_spell": [{"spell_trigger": 9, "spell_effect": 10, "type": 0}],
}


class FakeResearch:
    """Answers like ProjectResearch: quest_template is refused, the rest has rows."""

    def __init__(self, refused: Mapping[str, str]) -> None:
        self.refused = refused
        self.asked: list[dict[str, Any]] = []

    def __call__(self, query: Mapping[str, Any]) -> StepOutcome:
        self.asked.append(dict(query))
        digest = hashlib.sha256(orjson.dumps(query, option=orjson.OPT_SORT_KEYS)).hexdigest()
        table = query["table"]
        if table in self.refused:
            return StepOutcome(len(self.asked), digest, None, self.refused[table], False)
        value = query["filters"][0]["value"]
        rows = [
            {k: (value if v == "?" else v) for k, v in row.items()} for row in ROWS.get(table, [])
        ]
        capture = SimpleNamespace(
            sha256=digest,
            result={"result": {"rows": rows, "complete_filtered_rows": True}},
            origin={"provider": "fake"},
        )
        return StepOutcome(len(self.asked), digest, capture, None, False)  # type: ignore[arg-type]


def _run(mentions: list[Mention], refused: Mapping[str, str]) -> tuple[list[Any], FakeResearch]:
    research = FakeResearch(refused)
    enricher = Enricher(parse_profile(PROFILE), research, capture_path=lambda s: f"captures/{s}")
    return enricher.run(mentions).facts, research


def _mention(entity_type: str, entity_id: int) -> Mention:
    return Mention(entity_type, entity_id, {"pointer": "/report/text", "offset": 0})


def test_a_refused_entity_table_does_not_stop_its_link_tables() -> None:
    facts, research = _run(
        [_mention("quest", 5), _mention("quest", 6)], {"quest_template": "table_not_found"}
    )
    asked = [(q["table"], q["filters"][0]["value"]) for q in research.asked]
    assert ("creature_queststarter", 5) in asked and ("creature_queststarter", 6) in asked
    givers = [f for f in facts if f["kind"] == "project_entity" and f["entity_type"] == "creature"]
    assert [g["entity_id"] for g in givers] == [70]
    links = [f for f in facts if f["kind"] == "project_relationship"]
    starts = [
        f["from"]
        for f in links
        if f["relation"] == "quest_starter_link" and f["direction"] == "reverse"
    ]
    assert {(s["entity_type"], s["entity_id"]) for s in starts} == {("quest", 5), ("quest", 6)}


def test_a_refused_table_is_one_coverage_fact_naming_table_code_and_count() -> None:
    facts, _ = _run(
        [_mention("quest", 5), _mention("quest", 6)], {"quest_template": "table_not_found"}
    )
    refused = [f for f in facts if f.get("reason") == "query_refused"]
    assert len(refused) == 1
    assert refused[0]["table"] == "quest_template"
    assert refused[0]["code"] == "table_not_found"
    assert refused[0]["count"] == 2
    lines = [line for line in summarize(facts) if "query_refused" in line]
    assert len(lines) == 1
    assert "quest_template" in lines[0] and "table_not_found" in lines[0] and "2" in lines[0]


def test_an_entity_without_a_table_only_starts_its_links() -> None:
    facts, research = _run([_mention("spell", 9)], {})
    assert [q["table"] for q in research.asked] == ["spell_linked_spell"]
    rows = [f for f in facts if f["kind"] == "project_rows"]
    assert rows[0]["rows"] == [{"spell_trigger": 9, "spell_effect": 10, "type": 0}]
    assert not [f for f in facts if f["kind"] == "project_entity"]


def test_no_two_facts_are_identical() -> None:
    facts, _ = _run([_mention("quest", 5), _mention("quest", 5)], {"quest_template": "x"})
    bodies = [orjson.dumps({k: v for k, v in f.items() if k != "fact_id"}) for f in facts]
    assert len(bodies) == len(set(bodies))


def test_an_id_reached_through_a_row_starts_its_entity_links_too() -> None:
    # spell 9 links spell 10; the hop names entity_type spell, so spell 10's own
    # links (spell_linked_spell keyed by 10) are asked as well.
    hop = b"""
[[references]]
name = "linked_effect"
table = "spell_linked_spell"
column = "spell_effect"
holds = "spell"
"""
    research = FakeResearch({})
    profile = parse_profile(PROFILE + hop)
    Enricher(profile, research, capture_path=lambda s: s).run([_mention("spell", 9)])
    asked = [(q["table"], q["filters"][0]["value"]) for q in research.asked]
    assert ("spell_linked_spell", 10) in asked


def test_every_coverage_line_of_the_summary_names_its_table() -> None:
    research = FakeResearch({})
    profile = parse_profile(PROFILE + b"\n[limits]\nmax_queries = 1\n")
    facts = Enricher(profile, research, capture_path=lambda s: s).run([_mention("quest", 5)]).facts
    # The coverage block: one line per reason, naming what it concerns.
    lines = [line for line in summarize(facts) if "] max_queries" in line]
    assert len(lines) == 1 and "creature_queststarter" in lines[0]


def test_a_value_meaning_no_reference_is_counted_under_its_table_and_column(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(ROWS, "creature_queststarter", [{"id": 0, "quest": "?"}])
    facts, _ = _run([_mention("quest", 5)], {})
    ignored = [f for f in facts if f.get("reason") == "value_not_followed"]
    assert [(f["table"], f["column"], f["relation"], f["count"]) for f in ignored] == [
        ("creature_queststarter", "id", "quest_starter", 1)
    ]
    lines = [line for line in summarize(facts) if "no reference" in line]
    assert lines == [
        f"[{ignored[0]['fact_id']}] no reference: in creature_queststarter, id (1 row) is "
        "a no-reference value (ignore_values), nothing to follow"
    ]


def test_a_query_answered_before_gives_its_target_fact_to_a_later_origin() -> None:
    # creature 70 is mentioned, so its row is read first; the quest's starter row
    # reaches the same query later, and its relationship names the same entity rows.
    facts, _ = _run([_mention("quest", 5), _mention("creature", 70)], {})
    rows = [f for f in facts if f["kind"] == "project_rows" and f["table"] == "creature_template"]
    starter = [
        f
        for f in facts
        if f["kind"] == "project_relationship"
        and f["relation"] == "quest_starter"
        and f["direction"] == "forward"
        and f["from"]["key"] == {"id": 70, "quest": 5}
    ]
    assert len(rows) == 1 and len(starter) == 1
    assert starter[0]["to"]["fact"] == rows[0]["fact_id"]
