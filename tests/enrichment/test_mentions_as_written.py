"""Mentions as players and testers write them, read by the bundled Vcore profile.

Each defect found on real tracker reports has a regression test here: a
typed ID never crosses a line break or takes a list number, a screenshot's
file name or a path is never a name, an ID without a type word is a
candidate, names without quotes are asked, a type word types a whole list,
database-site links, chat links and GM commands name their type, and a
spawn GUID is a spawn.
"""

from __future__ import annotations

from typing import Any

import pytest

from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.extract import Extraction, extract


def _found(text: str, title: str = "t") -> Extraction:
    return extract(vcore_profile(), {"title": title, "text": text}, [])


def _typed(text: str) -> set[tuple[str, int]]:
    return {(m.entity_type, m.entity_id) for m in _found(text).mentions}


def _untyped(text: str) -> dict[int, tuple[str, ...]]:
    return {u.entity_id: u.entity_types for u in _found(text).untyped}


def _names(text: str) -> list[str]:
    return [n.name for n in _found(text).names]


def test_a_type_word_never_reaches_across_a_line_break_into_a_list_number() -> None:
    text = "Steps:\n1. Take the quest\n2. Go to Traitor's Cove\n3. Talk to the npc\n4. Nothing"
    assert _typed(text) == set()


def test_crlf_and_lone_cr_line_breaks_end_a_line_as_well() -> None:
    assert _typed("accept quest\r\n2. walk") == set()
    assert _typed("accept quest\r2. walk") == set()
    assert _typed("quest 14071\r\nnpc 36440") == {("quest", 14071), ("creature", 36440)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NPC 50372, 49044, 49128 do not attack", {50372, 49044, 49128}),
        ("npc 36440/36450 share the bug", {36440, 36450}),
        ("creatures 1001, 1002 and 1003", {1001, 1002, 1003}),
        ("mobs #5001 & #5002", {5001, 5002}),
    ],
)
def test_a_type_word_types_every_id_of_the_list_after_it(text: str, expected: set[int]) -> None:
    assert _typed(text) == {("creature", n) for n in expected}


def test_a_quest_list_with_and_and_plural_type_words() -> None:
    assert _typed("quests 14071 and 14075 are both broken") == {
        ("quest", 14071),
        ("quest", 14075),
    }


def test_a_list_stops_at_the_end_of_the_line() -> None:
    assert _typed("npc 100, 200,\n300 apples") == {("creature", 100), ("creature", 200)}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.wowhead.com/quest=14071", ("quest", 14071)),
        ("https://www.wowhead.com/cata/quest=14071/life-savings", ("quest", 14071)),
        ("https://de.wowhead.com/npc=34840/hot-rod#comments", ("creature", 34840)),
        ("https://cata.wowhead.com/?npc=34840", ("creature", 34840)),
        ("https://www.wowhead.com/object=195188", ("gameobject", 195188)),
        ("https://www.wowhead.com/zone=4737", ("area", 4737)),
        ("http://wotlk.evowow.com/?spell=68735", ("spell", 68735)),
        ("https://cata-twinhead.twinstar.cz/?item=46856", ("item", 46856)),
        ("https://www.wowdb.com/npcs/34840-hot-rod", ("creature", 34840)),
    ],
)
def test_database_site_links_name_their_type(url: str, expected: tuple[str, int]) -> None:
    found = _found(f"See {url}.")
    assert {(m.entity_type, m.entity_id) for m in found.mentions} == {expected}
    assert found.mentions[0].how in {"link", "pattern"}


def test_a_link_to_a_type_the_profile_lacks_stays_unresolved() -> None:
    found = _found(
        "https://www.wowhead.com/achievement=4958/the-first-rule "
        "https://www.wowhead.com/faction=1133"
    )
    assert found.mentions == []
    assert {(u.form, u.entity_id) for u in found.unresolved} == {
        ("wowhead:achievement", 4958),
        ("wowhead:faction", 1133),
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (".quest add 14395", ("quest", 14395)),
        ("`.npc add 36440`", ("creature", 36440)),
        ("`.npc add temp 36440`", ("creature", 36440)),
        (".additem 46856 5", ("item", 46856)),
        (".cast 68735", ("spell", 68735)),
        (".cast self 68735", ("spell", 68735)),
        (".cast target 68735 triggered", ("spell", 68735)),
        (".go creature id 34840", ("creature", 34840)),
        (".go creature 6882", ("creature_spawn", 6882)),
        (".go gameobject id 195188", ("gameobject", 195188)),
        (".go gameobject 7711", ("gameobject_spawn", 7711)),
        (".gob add 195188", ("gameobject", 195188)),
        ("!learn 2061", ("spell", 2061)),
        ("type .quest add |cffffff00|Hquest:14395:80|h[Hot Rod]|h|r", ("quest", 14395)),
    ],
)
def test_gm_commands_name_their_argument_s_type(text: str, expected: tuple[str, int]) -> None:
    assert _typed(text) == {expected}


def test_a_spawn_guid_command_is_not_also_a_creature_entry() -> None:
    assert ("creature", 6882) not in _typed("then .go creature 6882 and look")


def test_an_abbreviation_counts_where_the_server_would_read_it_so() -> None:
    # Unique among the server's commands at that level, however short.
    assert _typed(".go c 34840") == {("creature_spawn", 34840)}
    assert _typed(".q a 12459") == {("quest", 12459)}
    assert _typed(".go cre id 34840") == {("creature", 34840)}
    # ".c" could be .cast, .character, .cheat …; ".l" .learn, .list, .lookup …
    assert _typed(".c 68735") == set()
    assert _typed(".l 55") == set()


def test_additem_with_a_name_asks_the_name_as_an_item() -> None:
    found = _found("`.additem [Keys to the Hot Rod]`")
    assert [(n.name, n.entity_types) for n in found.names] == [("Keys to the Hot Rod", ("item",))]


def test_chat_links_carry_their_type() -> None:
    text = "|Hitem:46856:0:0:0|h[Keys]|h and |Hcreature_entry:34840|h[Hot Rod]|h"
    assert _typed(text) == {("item", 46856), ("creature", 34840)}


@pytest.mark.parametrize(
    "text",
    [
        "Hot Rod (ID: 34840) will not start",
        "Hot Rod (34840) will not start",
        "Hot Rod #34840 will not start",
        "[Hot Rod] (34840) will not start",
        "Entry: 34840",
    ],
)
def test_an_id_without_a_type_word_is_a_candidate_of_every_type(text: str) -> None:
    assert list(_untyped(text)) == [34840]
    assert _typed(text) == set()


@pytest.mark.parametrize(
    "text",
    [
        "see PR #1234",
        "fixed in issue #4321",
        "map id 571 is Northrend",
        "event id 24",
        "released in Cataclysm (2010)",
        "build 15595",
    ],
)
def test_numbers_that_are_no_entity_are_no_candidates(text: str) -> None:
    assert _untyped(text) == {}


def test_a_guid_alone_is_a_spawn_of_either_kind_and_a_typed_guid_is_one_spawn() -> None:
    assert _untyped("guid 6882 is stuck") == {6882: ("creature_spawn", "gameobject_spawn")}
    assert _typed("Creature (GUID: 500123) has no entry") == {("creature_spawn", 500123)}
    assert _untyped("Creature (GUID: 500123) has no entry") == {}


def test_unquoted_names_in_running_text_are_asked() -> None:
    names = _names("The goblin gives you the quest Decontamination. Then board Sanitron 500.")
    assert "Decontamination" in names
    assert "Sanitron 500" in names


def test_a_sentence_start_word_is_dropped_from_a_name() -> None:
    names = _names("Kill Hot Rod and loot it.")
    assert "Hot Rod" in names


def test_quoted_bracketed_and_bold_names_are_asked() -> None:
    names = _names('Talk to "Nevin Twistwrench", then [Keg Master Bruni] and **Sassy Hardwrench**')
    assert {"Nevin Twistwrench", "Keg Master Bruni", "Sassy Hardwrench"} <= set(names)


@pytest.mark.parametrize(
    "text",
    [
        "![WoWScrnShot_071220_161927](https://user-images.example/a.png)",
        "[WoWScrnShot_071220_161927](https://user-images.example/a.png)",
        "the fix is in core/script and src/server/scripts/Kalimdor/zone_azshara.cpp",
        "call `Player::RewardQuest` here",
        "```\nTable Hot Rod Zone broken\n```",
        "https://Example.Invalid/Hot/Rod",
        "SmartScript::ProcessAction fails",
    ],
)
def test_images_links_paths_code_and_identifiers_are_never_names(text: str) -> None:
    assert _names(text) == []


def test_acronyms_are_not_names() -> None:
    names = _names("the NPC says GM only")
    assert not {"NPC", "GM", "NPC says GM"} & set(names)


def test_every_where_points_at_the_digits_in_the_field() -> None:
    text = "line one\nnpc 36440 here"
    [mention] = _found(text).mentions
    offset: Any = mention.where["offset"]
    assert mention.where["pointer"] == "/report/text"
    assert text[offset : offset + 5] == "36440"


def test_a_hostile_report_stays_bounded() -> None:
    profile = vcore_profile()
    line = " ".join(f"quest {n} Npc Name{n % 50} (ID: {n}) guid {n}" for n in range(1, 2000))
    text = (line + "\n") * 5
    found = extract(profile, {"title": "t", "text": text}, [])
    bound = profile.limits.mentions_per_rule
    assert len([m for m in found.mentions if m.entity_type == "quest"]) <= bound
    assert len(found.untyped) <= bound * len(profile.mentions.untyped)
    assert found.dropped["mentions"] > 0
    assert found.dropped["untyped"] > 0


def test_template_headings_and_bold_labels_are_not_names() -> None:
    text = "### Current Behaviour\nbroken\n**Current behaviour:** broken\n**Sassy Hardwrench**"
    assert _names(text) == ["Sassy Hardwrench"]


@pytest.mark.parametrize(
    "text",
    ["it pulls mobs 20 yards away", "the spell 3 times in a row", "npc 2 seconds later"],
)
def test_a_number_with_a_unit_is_a_quantity_not_an_id(text: str) -> None:
    assert _typed(text) == set()


def test_an_issue_reference_after_a_typed_id_is_not_a_list_item() -> None:
    assert _typed("see https://wowhead.com/spell=69971 and #2345") == {("spell", 69971)}
    assert _typed("spell 69971 and #2345 too") == {("spell", 69971)}
    assert _typed("spell #45 and #46") == {("spell", 45), ("spell", 46)}


def test_older_cores_go_object_takes_a_spawn_guid() -> None:
    assert _typed(".go object 88421") == {("gameobject_spawn", 88421)}


def test_a_name_after_a_type_word_and_a_colon_is_asked_as_written() -> None:
    names = _names("Quest: The Coast is Clear - cannot loot")
    assert "The Coast is Clear" in names
    assert not [name for name in names if name.endswith("-")]
    assert _names("I finished the quest.") == []


def test_a_step_number_and_a_command_can_share_the_dot() -> None:
    text = "1.quest add 14071\n2.go gameobject 7711\n3.go creature id 34840"
    assert _typed(text) == {("quest", 14071), ("gameobject_spawn", 7711), ("creature", 34840)}


@pytest.mark.parametrize(
    "text", ["Where Did It Go? (34840) is broken", "[Quest] Life Savings [34840] fails"]
)
def test_an_id_in_brackets_or_after_a_question_title_is_a_candidate(text: str) -> None:
    assert list(_untyped(text)) == [34840]


def test_server_status_lines_name_no_entity() -> None:
    text = "Realmlist (Realm Id: 3) configured\nConnected players: 1. Update time diff: 100ms"
    assert _untyped(text) == {} and _typed(text) == set()


def test_a_dash_may_stand_between_the_type_word_and_the_id() -> None:
    text = "Quest - 25523, NPC - 39710/40723, Quest item - 52716."
    assert _typed(text) == {
        ("quest", 25523),
        ("creature", 39710),
        ("creature", 40723),
        ("item", 52716),
    }


def test_an_id_in_spaced_brackets_beside_a_name() -> None:
    assert list(_untyped("the item Paxton's Prayer Book [ 65733 ] crashes")) == [65733]
