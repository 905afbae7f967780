"""Whom a rule hit is about: the row's own semantics, read from the reference map.

A ``conditions`` row is about what its SourceTypeOrReferenceId says SourceGroup
and SourceEntry hold, a ``smart_scripts`` row about the owner its source_type
names; never the first entry of the table whatever its ``when`` says (a spell
click condition reported as an item). The world is in memory (``world_fakes``):
each row carries a ScriptName that no script registers, so
``script_name_without_script`` hits it, and the hit and its lead name the
entity the row is about.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.enrichment.world_fakes import FakeWorld, creature, gameobject, quest
from viano_bug_analysis.enrichment import parse_profile, references, vcore_profile
from viano_bug_analysis.enrichment.engine import Enricher
from viano_bug_analysis.enrichment.extract import Mention
from viano_bug_analysis.enrichment.leads import LEAD_KIND, add_leads
from viano_bug_analysis.enrichment.rule_phase import rules_phase

PROFILE_PATH = (
    Path(__file__).parents[2] / "python/viano_bug_analysis/profiles/vcore/enrichment.toml"
)
C, GO, Q, SPELL, ITEM, SPAWN = 94001, 94030, 94010, 94100, 94200, 700001
SCRIPT = "cond_keg_runner_check"
# A heuristic on SmartAI rows that names no entity type: the row says whom it is about.
SMART_RULE = b"""
[[rules]]
id = "smart_spell_hit_fixture"
kind = "heuristic"
statement = "a SmartAI row reacting to a spell hit"
table = "smart_scripts"
when = [{ column = "event_type", operator = "eq", value = 8 }]
check = "match"
"""


def condition(source_type: int, group: int, entry: int, **columns: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "SourceTypeOrReferenceId": source_type,
        "SourceGroup": group,
        "SourceEntry": entry,
        "SourceId": 0,
        "ElseGroup": 0,
        "ConditionTypeOrReference": 0,
        "ConditionTarget": 0,
        "ConditionValue1": 0,
        "ConditionValue2": 0,
        "ConditionValue3": 0,
        "NegativeCondition": 0,
        "ScriptName": SCRIPT,
        "Comment": "",
    }
    return {**row, **columns}


def smart(source_type: int, entryorguid: int) -> dict[str, Any]:
    row: dict[str, Any] = {c: 0 for c in vcore_profile().columns_of("smart_scripts")}
    return {**row, "entryorguid": entryorguid, "source_type": source_type, "event_type": 8}


# (what the row is, the mention that makes the build read it, the row, whom it is about)
CONDITIONS = [
    ("loot item", ("item", ITEM), condition(1, 94500, ITEM), ("item", ITEM)),
    (
        "implicit target of a spell, on a creature",
        ("creature", C),
        condition(13, 1, SPELL, ConditionTypeOrReference=31, ConditionValue1=3, ConditionValue2=C),
        ("spell", SPELL),
    ),
    ("spell click", ("creature", C), condition(18, C, SPELL), ("spell", SPELL)),
    ("vehicle spell", ("creature", C), condition(21, C, SPELL), ("spell", SPELL)),
    ("quest available", ("quest", Q), condition(19, 0, Q), ("quest", Q)),
    ("vendor item", ("item", ITEM), condition(23, C, ITEM), ("creature", C)),
    (
        "SmartAI event of a creature",
        ("creature", C),
        condition(22, 1, C, SourceId=0),
        ("creature", C),
    ),
    (
        "SmartAI event of a spawn",
        ("creature_spawn", SPAWN),
        condition(22, 1, -SPAWN, SourceId=0),
        ("creature_spawn", SPAWN),
    ),
    (
        "spawn of a gameobject",
        ("gameobject", GO),
        condition(29, 5, GO),
        ("gameobject", GO),
    ),
    (
        "spell area, on a quest",
        ("quest", Q),
        condition(28, SPELL, 94501, ConditionTypeOrReference=8, ConditionValue1=Q),
        ("spell", SPELL),
    ),
]
SMART = [
    ("creature entry", ("creature", C), smart(0, C), ("creature", C)),
    ("creature spawn", ("creature_spawn", SPAWN), smart(0, -SPAWN), ("creature_spawn", SPAWN)),
    ("gameobject entry", ("gameobject", GO), smart(1, GO), ("gameobject", GO)),
    ("quest", ("quest", Q), smart(5, Q), ("quest", Q)),
    (
        "timed action list",
        ("smart_action_list", 9400100),
        smart(9, 9400100),
        ("smart_action_list", 9400100),
    ),
]
OWN_TABLES = {
    "creature_template": [creature(C)],
    "gameobject_template": [gameobject(GO)],
    "quest_template": [quest(Q)],
}


def _facts(
    table: str, row: dict[str, Any], mention: tuple[str, int], extra: bytes = b""
) -> list[dict[str, Any]]:
    world = FakeWorld({**OWN_TABLES, table: [row]}, {})
    enricher = Enricher(
        parse_profile(PROFILE_PATH.read_bytes() + extra),
        world,
        capture_path=lambda sha: f"captures/{sha}.json",
        phases=[rules_phase, add_leads],
    )
    where = {"pointer": "/report/text", "offset": 0}
    return enricher.run([Mention(mention[0], mention[1], where)]).facts


def _hit(facts: list[dict[str, Any]], rule: str, table: str) -> dict[str, Any]:
    hits = [
        f
        for f in facts
        if f["kind"] == "project_rule_hit" and f["rule"] == rule and f["rows"][0]["table"] == table
    ]
    assert len(hits) == 1, [f["rule"] for f in facts if f["kind"] == "project_rule_hit"]
    return hits[0]


@pytest.mark.parametrize(("what", "mention", "row", "entity"), CONDITIONS, ids=lambda c: c)
def test_a_hit_on_a_conditions_row_is_about_what_its_source_type_says(
    what: str, mention: tuple[str, int], row: dict[str, Any], entity: tuple[str, int]
) -> None:
    facts = _facts("conditions", row, mention)
    hit = _hit(facts, "script_name_without_script", "conditions")
    assert (hit["entity_type"], hit["entity_id"]) == entity, what
    lead = next(f for f in facts if f["kind"] == LEAD_KIND and f["rests_on"] == [hit["fact_id"]])
    assert (lead["entity_type"], lead["entity_id"]) == entity
    assert f"flags {entity[0]} {entity[1]} " in lead["why"]


@pytest.mark.parametrize(("what", "mention", "row", "entity"), SMART, ids=lambda c: c)
def test_a_hit_on_a_smart_scripts_row_is_about_the_owner_its_source_type_names(
    what: str, mention: tuple[str, int], row: dict[str, Any], entity: tuple[str, int]
) -> None:
    facts = _facts("smart_scripts", row, mention, SMART_RULE)
    hit = _hit(facts, "smart_spell_hit_fixture", "smart_scripts")
    assert (hit["entity_type"], hit["entity_id"]) == entity, what


def test_a_row_no_entry_of_the_map_explains_is_about_no_entity() -> None:
    profile = vcore_profile()
    # Source type 20 (quest marks) is not in the map, and no condition type is set.
    row = condition(20, 0, Q)
    assert references.about(profile, "conditions", row) is None
    # The same row with a spell click source type: the entry whose `when` holds decides.
    assert references.about(profile, "conditions", {**row, "SourceTypeOrReferenceId": 18}) == (
        "spell",
        Q,
    )
