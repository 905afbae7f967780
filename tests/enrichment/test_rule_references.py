"""Every map entry of a rule that reads several: a world where it hits and one where it does not.

test_consistency_rules gives each rule one positive and one negative case on
one of its entries; a rule over nine ScriptName columns can still be wrong on
the other eight. Here each entry of each such rule of the bundled profile gets
both, and a negative case counts only where the build read the rule's row
(a silent rule on rows it never saw proves nothing).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.enrichment.test_consistency_rules import (
    DEFINED_AND_ADDED,
    DEFINED_ONLY,
    REGISTERED,
    Case,
    Tables,
    _run,
)
from tests.enrichment.world_fakes import creature, gameobject, quest, spawn
from viano_bug_analysis.enrichment import vcore_profile

C, GO, Q, SPELL, ITEM, AT = 94001, 94030, 94010, 94100, 94200, 94600
CREATURE_SPAWN, GAMEOBJECT_SPAWN = 700001, 700002
NAME = "npc_keg_runner"
RULES = {rule.id: rule for rule in vcore_profile().rules}
REFERENCES = {ref.name: ref for ref in vcore_profile().references}


def _condition(**columns: Any) -> dict[str, Any]:
    row: dict[str, Any] = {c: 0 for c in vcore_profile().columns_of("conditions")}
    row.update(Comment="", ScriptName="")
    return {**row, **columns}


# Per script-name entry: the mention that makes the build read the row, and the row.
SCRIPT_ROWS: dict[str, tuple[tuple[str, int], Tables]] = {
    "creature_script_name": (
        ("creature", C),
        {"creature_template": [creature(C, ScriptName=NAME)]},
    ),
    "gameobject_script_name": (
        ("gameobject", GO),
        {"gameobject_template": [gameobject(GO, ScriptName=NAME)]},
    ),
    "spell_script_name": (
        ("spell", SPELL),
        {"spell_script_names": [{"spell_id": SPELL, "ScriptName": NAME}]},
    ),
    "item_script_name": (
        ("item", ITEM),
        {"item_script_names": [{"Id": ITEM, "ScriptName": NAME}]},
    ),
    "areatrigger_script_name": (
        ("areatrigger", AT),
        {"areatrigger_scripts": [{"entry": AT, "ScriptName": NAME}]},
    ),
    "quest_addon_script_name": (
        ("quest", Q),
        {
            "quest_template": [quest(Q)],
            "quest_template_addon": [
                {
                    "ID": Q,
                    "PrevQuestID": 0,
                    "NextQuestID": 0,
                    "ExclusiveGroup": 0,
                    "BreadcrumbForQuestId": 0,
                    "SpecialFlags": 0,
                    "SourceSpellID": 0,
                    "ScriptName": NAME,
                }
            ],
        },
    ),
    "condition_script_name": (
        ("creature", C),
        {
            "creature_template": [creature(C)],
            "conditions": [
                _condition(
                    SourceTypeOrReferenceId=18, SourceGroup=C, SourceEntry=SPELL, ScriptName=NAME
                )
            ],
        },
    ),
    "creature_spawn_script_name": (
        ("creature_spawn", CREATURE_SPAWN),
        {
            "creature": [spawn(CREATURE_SPAWN, C, ScriptName=NAME)],
            "creature_template": [creature(C)],
        },
    ),
    "gameobject_spawn_script_name": (
        ("gameobject_spawn", GAMEOBJECT_SPAWN),
        {
            "gameobject": [spawn(GAMEOBJECT_SPAWN, GO, ScriptName=NAME)],
            "gameobject_template": [gameobject(GO)],
        },
    ),
}
SCRIPT_FILES = {
    "script_name_without_script": ({}, REGISTERED),
    "script_class_not_added": (DEFINED_ONLY, DEFINED_AND_ADDED),
}


def _script_cases() -> list[tuple[Case, str]]:
    cases = []
    for rule_id, files in SCRIPT_FILES.items():
        for name in RULES[rule_id].references:
            mention, tables = SCRIPT_ROWS[name]
            cases.append((Case(rule_id, [mention], tables, tables, files=files), name))
    return cases


def _quest_relation_cases() -> list[tuple[Case, str]]:
    cases = []
    for name in RULES["quest_relation_unknown_quest"].references:
        table = REFERENCES[name].table
        giver = ("creature", C) if table.startswith("creature") else ("gameobject", GO)
        own = creature(C, npcflag=2) if giver[0] == "creature" else gameobject(GO)
        link: Tables = {f"{giver[0]}_template": [own], table: [{"id": giver[1], "quest": Q}]}
        positive, negative = link, {**link, "quest_template": [quest(Q)]}
        cases.append((Case("quest_relation_unknown_quest", [giver], positive, negative), name))
    return cases


def _required_cases() -> list[tuple[Case, str]]:
    cases = []
    for rule_id, value, target in (
        ("quest_required_creature_unknown", 94097, {"creature_template": [creature(94097)]}),
        ("quest_required_gameobject_unknown", -94096, {"gameobject_template": [gameobject(94096)]}),
    ):
        for name in RULES[rule_id].references:
            n = REFERENCES[name].column[-1]
            row = quest(Q, **{f"RequiredNpcOrGo{n}": value, f"RequiredNpcOrGoCount{n}": 1})
            own: Tables = {"quest_template": [row]}
            cases.append((Case(rule_id, [("quest", Q)], own, {**own, **target}), name))
    return cases


CASES = [*_script_cases(), *_quest_relation_cases(), *_required_cases()]


def _ids(case: tuple[Case, str]) -> str:
    return f"{case[0].rule}-{case[1]}"


def test_every_entry_of_every_rule_over_several_entries_has_its_case() -> None:
    covered = {(case.rule, name) for case, name in CASES}
    several = {
        (rule.id, name)
        for rule in RULES.values()
        if len(rule.references) > 1
        for name in rule.references
    }
    assert several <= covered


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_the_rule_hits_the_row_of_this_entry(case: tuple[Case, str]) -> None:
    rule_case, name = case
    table = REFERENCES[name].table
    hits = [
        h
        for h in _run(rule_case, rule_case.positive, rule_case.files[0])
        if h["rule"] == rule_case.rule and h["rows"][0]["table"] == table
    ]
    assert hits, (rule_case.rule, name)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_the_rule_is_silent_on_the_row_of_this_entry_it_read(case: tuple[Case, str]) -> None:
    rule_case, name = case
    table = REFERENCES[name].table
    facts = _run(rule_case, rule_case.negative, rule_case.files[1], kinds=None)
    assert any(f["kind"] == "project_rows" and f["table"] == table for f in facts), name
    assert not [
        f
        for f in facts
        if f["kind"] == "project_rule_hit"
        and f["rule"] == rule_case.rule
        and f["rows"][0]["table"] == table
    ]
