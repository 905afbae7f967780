"""Every rule of the bundled profile: a world where it hits and one where it does not.

The world is in memory (``world_fakes``); the engine sources hold each engine
rule's log message, so a hit carries the line it stands on. A case names the
rule, the mentions that make the build read the rows, the tables with the
rule's condition true (positive) and the tables with it false (negative).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.enrichment.world_fakes import FakeWorld, creature, gameobject, quest, spawn
from viano_bug_analysis.enrichment import parse_profile, vcore_profile
from viano_bug_analysis.enrichment.engine import Enricher
from viano_bug_analysis.enrichment.extract import Mention
from viano_bug_analysis.enrichment.rule_phase import rules_phase
from viano_bug_analysis.errors import EnrichmentError

Tables = dict[str, list[dict[str, Any]]]
PROFILE_PATH = (
    Path(__file__).parents[2] / "python/viano_bug_analysis/profiles/vcore/enrichment.toml"
)

REGISTERED = {"src/server/scripts/Events/fair.cpp": "    RegisterCreatureAI(npc_keg_runner);\n"}
DEFINED_ONLY = {
    "src/server/scripts/Events/fair.cpp": "struct npc_keg_runner : public ScriptedAI\n{\n};\n"
}
DEFINED_AND_ADDED = {
    "src/server/scripts/Events/fair.cpp": "struct npc_keg_runner : public ScriptedAI\n{\n};\n"
    "void AddSC_fair()\n{\n    RegisterCreatureAI(npc_keg_runner);\n}\n"
}
# The profile's map does not reach vehicle_template_accessory yet: a map entry for the test.
VEHICLE_ENTRY = b"""
[[references]]
name = "creature_vehicle_accessories"
table = "vehicle_template_accessory"
column = "entry"
holds = "creature"
part_of = true
"""


def _engine_sources() -> dict[str, str]:
    """Each anchor's file, its log messages on lines 11, 12, ... in profile order."""
    files: dict[str, list[str]] = {}
    for rule in vcore_profile().rules:
        if rule.anchor is not None:
            lines = files.setdefault(rule.anchor.path, ["// engine"] * 10)
            if not any(rule.anchor.text in line for line in lines):
                lines.append(f'    LOG_ERROR("sql.sql", "{rule.anchor.text}");')
    return {path: "\n".join(lines) + "\n" for path, lines in files.items()}


@dataclass
class Case:
    rule: str
    mentions: list[tuple[str, int]]
    positive: Tables
    negative: Tables
    files: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {})
    entity: tuple[str, int] | None = None
    extra_profile: bytes = b""
    notes: dict[str, Any] = field(default_factory=dict)


C, Q, GO = 94001, 94010, 94030


def _slot_cases() -> list[Case]:
    cases = []
    for n in range(1, 5):
        cases.append(
            Case(
                f"quest_required_npc_or_go_{n}_without_count",
                [("quest", Q)],
                {"quest_template": [quest(Q, **{f"RequiredNpcOrGo{n}": C})]},
                {
                    "quest_template": [
                        quest(Q, **{f"RequiredNpcOrGo{n}": C, f"RequiredNpcOrGoCount{n}": 1})
                    ]
                },
                entity=("quest", Q),
            )
        )
    for n in range(1, 7):
        cases.append(
            Case(
                f"quest_required_item_{n}_without_count",
                [("quest", Q)],
                {"quest_template": [quest(Q, **{f"RequiredItemId{n}": 94200})]},
                {
                    "quest_template": [
                        quest(Q, **{f"RequiredItemId{n}": 94200, f"RequiredItemCount{n}": 2})
                    ]
                },
                entity=("quest", Q),
            )
        )
    return cases


def _exists(
    rule: str,
    mention: tuple[str, int],
    link: Tables,
    target: Tables,
    missing: tuple[str, int] | None = None,
) -> Case:
    """A row read names an entity (the mentioned one unless ``missing``): its own row
    missing, then present."""
    return Case(rule, [mention], dict(link), {**link, **target}, entity=missing or mention)


CASES = [
    Case(
        "spellclick_flag_without_spells",
        [("creature", C)],
        {"creature_template": [creature(C, npcflag=16777216 | 2)]},
        {
            "creature_template": [creature(C, npcflag=16777216)],
            "npc_spellclick_spells": [{"npc_entry": C, "spell_id": 94100}],
        },
        entity=("creature", C),
    ),
    Case(
        "vehicle_accessory_without_spellclick",
        [("creature", C)],
        {
            "creature_template": [creature(C)],
            "vehicle_template_accessory": [{"entry": C, "accessory_entry": 94002, "seat_id": 0}],
        },
        {
            "creature_template": [creature(C)],
            "vehicle_template_accessory": [{"entry": C, "accessory_entry": 94002, "seat_id": 0}],
            "npc_spellclick_spells": [{"npc_entry": C, "spell_id": 94100}],
        },
        entity=("creature", C),
        extra_profile=VEHICLE_ENTRY,
    ),
    _exists(
        "spellclick_unknown_creature",
        ("creature", C),
        {"npc_spellclick_spells": [{"npc_entry": C, "spell_id": 94100}]},
        {"creature_template": [creature(C)]},
    ),
    _exists(
        "creature_addon_unknown_creature",
        ("creature", C),
        {"creature_template_addon": [{"entry": C, "auras": ""}]},
        {"creature_template": [creature(C)]},
    ),
    Case(
        "kill_credit_unknown_creature",
        [("creature", C)],
        {"creature_template": [creature(C, KillCredit1=94999)]},
        {"creature_template": [creature(C, KillCredit1=94002), creature(94002)]},
        entity=("creature", C),
    ),
    Case(
        "spawn_unknown_creature",
        [("creature_spawn", 700001)],
        {"creature": [spawn(700001, 94005)]},
        {"creature": [spawn(700001, 94005)], "creature_template": [creature(94005)]},
        entity=("creature", 94005),
    ),
    Case(
        "spawn_unknown_gameobject",
        [("gameobject_spawn", 700002)],
        {"gameobject": [spawn(700002, 94035)]},
        {"gameobject": [spawn(700002, 94035)], "gameobject_template": [gameobject(94035)]},
        entity=("gameobject", 94035),
    ),
    *[
        Case(
            f"quest_{role}_without_questgiver_flag",
            [("quest", Q)],
            {
                "quest_template": [quest(Q)],
                f"creature_quest{role}": [{"id": C, "quest": Q}],
                "creature_template": [creature(C, npcflag=1)],
            },
            {
                "quest_template": [quest(Q)],
                f"creature_quest{role}": [{"id": C, "quest": Q}],
                "creature_template": [creature(C, npcflag=3)],
            },
            entity=("creature", C),
        )
        for role in ("starter", "ender")
    ],
    *[
        Case(
            f"gameobject_quest_{role}_not_questgiver",
            [("quest", Q)],
            {
                "quest_template": [quest(Q)],
                f"gameobject_quest{role}": [{"id": GO, "quest": Q}],
                "gameobject_template": [gameobject(GO, type=10)],
            },
            {
                "quest_template": [quest(Q)],
                f"gameobject_quest{role}": [{"id": GO, "quest": Q}],
                "gameobject_template": [gameobject(GO, type=2)],
            },
            entity=("gameobject", GO),
        )
        for role in ("starter", "ender")
    ],
    Case(
        "quest_relation_unknown_quest",
        [("creature", C)],
        {
            "creature_template": [creature(C, npcflag=2)],
            "creature_queststarter": [{"id": C, "quest": Q}],
        },
        {
            "creature_template": [creature(C, npcflag=2)],
            "creature_queststarter": [{"id": C, "quest": Q}],
            "quest_template": [quest(Q)],
        },
        entity=("quest", Q),
    ),
    *[
        _exists(
            f"quest_{role}_unknown_creature",
            ("quest", Q),
            {"quest_template": [quest(Q)], f"creature_quest{role}": [{"id": C, "quest": Q}]},
            {"creature_template": [creature(C, npcflag=2)]},
            ("creature", C),
        )
        for role in ("starter", "ender")
    ],
    *[
        _exists(
            f"quest_{role}_unknown_gameobject",
            ("quest", Q),
            {"quest_template": [quest(Q)], f"gameobject_quest{role}": [{"id": GO, "quest": Q}]},
            {"gameobject_template": [gameobject(GO)]},
            ("gameobject", GO),
        )
        for role in ("starter", "ender")
    ],
    *[
        Case(
            rule,
            [("quest", Q)],
            {"quest_template": [quest(Q, **own)], **addon},
            {"quest_template": [quest(Q, **own), quest(94011)], **addon},
            entity=("quest", 94011),
        )
        for rule, own, addon in (
            (
                "quest_previous_unknown",
                {},
                {"quest_template_addon": [{"ID": Q, "PrevQuestID": -94011}]},
            ),
            ("quest_next_unknown", {}, {"quest_template_addon": [{"ID": Q, "NextQuestID": 94011}]}),
            ("quest_reward_next_unknown", {"RewardNextQuest": 94011}, {}),
        )
    ],
    Case(
        "quest_required_creature_unknown",
        [("quest", Q)],
        {"quest_template": [quest(Q, RequiredNpcOrGo1=94097, RequiredNpcOrGoCount1=1)]},
        {
            "quest_template": [quest(Q, RequiredNpcOrGo1=94097, RequiredNpcOrGoCount1=1)],
            "creature_template": [creature(94097)],
        },
        entity=("creature", 94097),
    ),
    Case(
        "quest_required_gameobject_unknown",
        [("quest", Q)],
        {"quest_template": [quest(Q, RequiredNpcOrGo2=-94096, RequiredNpcOrGoCount2=1)]},
        {
            "quest_template": [quest(Q, RequiredNpcOrGo2=-94096, RequiredNpcOrGoCount2=1)],
            "gameobject_template": [gameobject(94096)],
        },
        entity=("gameobject", 94096),
    ),
    *_slot_cases(),
    *[
        _exists(
            rule,
            mention,
            {
                "conditions": [
                    {
                        "SourceTypeOrReferenceId": source,
                        "SourceGroup": 0,
                        "SourceEntry": entry,
                        "SourceId": 0,
                        "ElseGroup": 0,
                        "ConditionTypeOrReference": ctype,
                        "ConditionTarget": 0,
                        "ConditionValue1": value,
                        "ConditionValue2": 0,
                    }
                ]
            },
            target,
        )
        for rule, mention, source, entry, ctype, value, target in (
            (
                "condition_quest_available_unknown",
                ("quest", Q),
                19,
                Q,
                8,
                94011,
                {"quest_template": [quest(Q)]},
            ),
            (
                "condition_unknown_quest",
                ("quest", Q),
                17,
                94100,
                8,
                Q,
                {"quest_template": [quest(Q)]},
            ),
            (
                "condition_near_creature_unknown",
                ("creature", C),
                17,
                94100,
                29,
                C,
                {"creature_template": [creature(C)]},
            ),
            (
                "condition_near_gameobject_unknown",
                ("gameobject", GO),
                17,
                94100,
                30,
                GO,
                {"gameobject_template": [gameobject(GO)]},
            ),
        )
    ],
    _exists(
        "smart_scripts_unknown_creature",
        ("creature", C),
        {"smart_scripts": [{"entryorguid": C, "source_type": 0, "id": 0, "link": 0}]},
        {"creature_template": [creature(C, AIName="SmartAI")]},
    ),
    _exists(
        "smart_scripts_unknown_gameobject",
        ("gameobject", GO),
        {"smart_scripts": [{"entryorguid": GO, "source_type": 1, "id": 0, "link": 0}]},
        {"gameobject_template": [gameobject(GO, AIName="SmartGameObjectAI")]},
    ),
    Case(
        "smart_scripts_creature_not_smartai",
        [("creature", C)],
        {
            "creature_template": [creature(C, AIName="")],
            "smart_scripts": [{"entryorguid": C, "source_type": 0, "id": 0, "link": 0}],
        },
        {
            "creature_template": [creature(C, AIName="SmartAI")],
            "smart_scripts": [{"entryorguid": C, "source_type": 0, "id": 0, "link": 0}],
        },
        entity=("creature", C),
    ),
    Case(
        "smart_scripts_gameobject_not_smartai",
        [("gameobject", GO)],
        {
            "gameobject_template": [gameobject(GO, AIName="")],
            "smart_scripts": [{"entryorguid": GO, "source_type": 1, "id": 0, "link": 0}],
        },
        {
            "gameobject_template": [gameobject(GO, AIName="SmartGameObjectAI")],
            "smart_scripts": [{"entryorguid": GO, "source_type": 1, "id": 0, "link": 0}],
        },
        entity=("gameobject", GO),
    ),
    Case(
        "script_name_without_script",
        [("creature", C)],
        {"creature_template": [creature(C, ScriptName="npc_keg_runner")]},
        {"creature_template": [creature(C, ScriptName="npc_keg_runner")]},
        files=({}, REGISTERED),
        entity=("creature", C),
    ),
    Case(
        "script_class_not_added",
        [("creature", C)],
        {"creature_template": [creature(C, ScriptName="npc_keg_runner")]},
        {"creature_template": [creature(C, ScriptName="npc_keg_runner")]},
        files=(DEFINED_ONLY, DEFINED_AND_ADDED),
        entity=("creature", C),
    ),
    Case(
        "smartai_without_rows",
        [("creature", C)],
        {"creature_template": [creature(C, AIName="SmartAI")]},
        {
            "creature_template": [creature(C, AIName="SmartAI")],
            "smart_scripts": [{"entryorguid": C, "source_type": 0, "id": 0, "link": 0}],
        },
        entity=("creature", C),
    ),
    Case(
        "smartgameobjectai_without_rows",
        [("gameobject", GO)],
        {"gameobject_template": [gameobject(GO, AIName="SmartGameObjectAI")]},
        {
            "gameobject_template": [gameobject(GO, AIName="SmartGameObjectAI")],
            "smart_scripts": [{"entryorguid": GO, "source_type": 1, "id": 0, "link": 0}],
        },
        entity=("gameobject", GO),
    ),
    Case(
        "gossip_flag_without_menu",
        [("creature", C)],
        {"creature_template": [creature(C, npcflag=1)]},
        {"creature_template": [creature(C, npcflag=1, ScriptName="npc_keg_runner")]},
        files=(REGISTERED, REGISTERED),
        entity=("creature", C),
    ),
    Case(
        "gossip_menu_without_rows",
        [("creature", C)],
        {"creature_template": [creature(C, npcflag=1, gossip_menu_id=94300)]},
        {
            "creature_template": [creature(C, npcflag=1, gossip_menu_id=94300)],
            "gossip_menu": [{"MenuID": 94300, "TextID": 1}],
        },
        entity=("creature", C),
    ),
    Case(
        "quest_without_starter",
        [("quest", Q)],
        {"quest_template": [quest(Q)]},
        {
            "quest_template": [quest(Q)],
            "game_event_gameobject_quest": [{"eventEntry": 1, "id": GO, "quest": Q}],
        },
        entity=("quest", Q),
    ),
]


def _profile(extra: bytes = b"") -> Any:
    return parse_profile(PROFILE_PATH.read_bytes() + extra)


def _run(
    case: Case, tables: Tables, files: Mapping[str, str], kinds: str | None = "project_rule_hit"
) -> list[dict[str, Any]]:
    """The facts of the build of ``tables`` of this kind (``None``: all of them)."""
    world = FakeWorld(tables, {**_engine_sources(), **files})
    enricher = Enricher(
        _profile(case.extra_profile),
        world,
        capture_path=lambda sha: f"captures/{sha}.json",
        phases=[rules_phase],
    )
    mentions = [Mention(t, i, {"pointer": "/report/text", "offset": 0}) for t, i in case.mentions]
    return [f for f in enricher.run(mentions).facts if kinds is None or f["kind"] == kinds]


def test_every_rule_of_the_bundled_profile_has_a_case() -> None:
    assert sorted(r.id for r in vcore_profile().rules) == sorted(c.rule for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.rule)
def test_the_rule_hits_where_its_condition_holds(case: Case) -> None:
    hits = [h for h in _run(case, case.positive, case.files[0]) if h["rule"] == case.rule]
    assert hits, case.rule
    hit = hits[0]
    rule = next(r for r in vcore_profile().rules if r.id == case.rule)
    assert hit["rule_kind"] == rule.kind
    assert (hit["entity_type"], hit["entity_id"]) == case.entity
    assert hit["rows"] and all("provenance" in row and "key" in row for row in hit["rows"])
    assert hit["rows"][0]["provenance"]["pointer"].startswith("/result/result/rows/")
    if rule.kind == "engine":
        assert rule.anchor is not None
        source = hit["engine_source"]
        assert source["path"] == rule.anchor.path
        assert rule.anchor.text in source["text"] and source["line"] > 10
        assert set(source) == {"path", "line", "blob", "sha256", "text"}
    else:
        assert hit["engine_source"] is None


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.rule)
def test_the_rule_is_silent_where_its_condition_does_not_hold(case: Case) -> None:
    facts = _run(case, case.negative, case.files[1], kinds=None)
    # Silent on rows it read: a rule that never saw its rows proves nothing.
    rule = next(r for r in vcore_profile().rules if r.id == case.rule)
    assert any(f["kind"] == "project_rows" and f["table"] in rule.tables for f in facts)
    assert not [f for f in facts if f["kind"] == "project_rule_hit" and f["rule"] == case.rule]


def test_a_hit_is_stated_once_however_often_its_row_is_read() -> None:
    case = CASES[0]
    hits = [h for h in _run(case, case.positive, {}) if h["rule"] == case.rule]
    assert len(hits) == 1


def test_an_engine_rule_whose_message_is_not_in_the_file_says_so() -> None:
    case = CASES[0]
    world = FakeWorld(case.positive, {})
    enricher = Enricher(_profile(), world, capture_path=lambda s: s, phases=[rules_phase])
    facts = enricher.run([Mention("creature", C, {"pointer": "/report/text", "offset": 0})]).facts
    hit = next(f for f in facts if f["kind"] == "project_rule_hit")
    assert hit["engine_source"] is None
    assert any(f.get("reason") == "rule_anchor_not_found" for f in facts)


BASE = b"""
format = "viano-enrichment-profile"
format_version = 1
profile = "p"

[entities.creature]
table = "creature_template"
column = "entry"
columns = ["entry", "npcflag", "ScriptName"]

[tables.npc_spellclick_spells]
columns = ["npc_entry", "spell_id"]

[[references]]
name = "creature_script_name"
table = "creature_template"
column = "ScriptName"
symbol = true
"""


HEAD = 'id = "r"\nkind = "heuristic"\nstatement = "s"\n'
ON_TABLE = HEAD + 'table = "creature_template"\n'


@pytest.mark.parametrize(
    ("rule", "key"),
    [
        (
            ON_TABLE.replace("heuristic", "engine") + 'check = "match"',
            "rules[0].anchor",
        ),
        (
            ON_TABLE + 'check = "rows"',
            "rules[0].lookups",
        ),
        (
            HEAD + 'check = "exists"\nreferences = ["nope"]',
            "rules[0].references[0]",
        ),
        (
            'id = "r"\nkind = "heuristic"\nstatement = "s"\ncheck = "exists"\n'
            'references = ["creature_script_name"]',
            "rules[0].references[0]",
        ),
        (
            'id = "r"\nkind = "heuristic"\nstatement = "s"\ntable = "creature_template"\n'
            'check = "match"\nwhen = [{ column = "AIName", operator = "eq", value = "" }]',
            "rules[0].when",
        ),
        (
            'id = "r"\nkind = "heuristic"\nstatement = "s"\ntable = "creature_template"\n'
            'check = "match"\nwhen = [{ column = "npcflag", operator = "mask_any", value = 0 }]',
            "rules[0].when[0].value",
        ),
        (
            ON_TABLE + 'check = "rows"\n'
            'lookups = [{ table = "npc_spellclick_spells", column = "x", from = "entry" }]',
            "rules[0].lookups[0]",
        ),
        (
            'id = "r"\nkind = "heuristic"\nstatement = "s"\ntable = "creature_template"\n'
            'check = "maybe"',
            "rules[0].check",
        ),
    ],
)
def test_a_rule_the_profile_cannot_evaluate_is_refused_naming_its_key(rule: str, key: str) -> None:
    with pytest.raises(EnrichmentError) as caught:
        parse_profile(BASE + b"\n[[rules]]\n" + rule.encode() + b"\n")
    assert caught.value.code == "profile_invalid"
    assert caught.value.details["key"] == key


def test_two_rules_with_one_id_are_refused() -> None:
    rule = b"[[rules]]\n" + (ON_TABLE + 'check = "match"\n').encode()
    with pytest.raises(EnrichmentError) as caught:
        parse_profile(BASE + b"\n" + rule + rule)
    assert caught.value.details["key"] == "rules[1].id"


def test_a_scripts_pattern_without_the_name_placeholder_is_refused() -> None:
    scripts = (
        b'[scripts]\npath_prefix = "src/"\nnames = ["Register"]\n'
        b'added = ["new {name}"]\ndefined = "class {name}"\n'
    )
    with pytest.raises(EnrichmentError) as caught:
        parse_profile(BASE + b"\n" + scripts)
    assert caught.value.details["key"] == "scripts"
