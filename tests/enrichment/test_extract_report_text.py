"""The bundled Vcore profile finds every entity type the way real reports name them.

Public reports of this lineage link database sites (``npc=23487``,
``quest=…``, ``item=…``, ``spell=…``, ``object=…``) or write phrases such as
"NPC Entry ID: 123" and "spell #45"; the profile extracts each of them with
its type, not only quests.
"""

from __future__ import annotations

from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.extract import MemberLines, extract_mentions

REPORT = {
    "title": "Keg toss does not count",
    "text": (
        "See https://db.example.invalid/?quest=91001 and ?npc=23487, ?item=91200, "
        "?spell=91100, ?object=91020. Also NPC Entry ID: 91010 and spell #91101; "
        "Gameobject ID 180000."
    ),
}


def test_report_text_names_every_entity_type() -> None:
    found = {(m.entity_type, m.entity_id) for m in extract_mentions(vcore_profile(), REPORT, [])}
    assert found == {
        ("quest", 91001),
        ("creature", 23487),
        ("creature", 91010),
        ("item", 91200),
        ("spell", 91100),
        ("spell", 91101),
        ("gameobject", 91020),
        ("gameobject", 180000),
    }


def test_a_bare_number_without_a_type_word_is_no_mention() -> None:
    report = {"title": "t", "text": "Happens after 91001 seconds, see log line 23487."}
    assert extract_mentions(vcore_profile(), report, []) == []


def test_areas_zones_and_area_triggers_are_mentions_of_their_own_type() -> None:
    report = {
        "title": "t",
        "text": "Broken at https://db.example.invalid/?zone=5001 (Area ID: 5002), "
        "subzone 5003, areatrigger 9001 and Area Trigger ID 9002.",
    }
    found = {(m.entity_type, m.entity_id) for m in extract_mentions(vcore_profile(), report, [])}
    assert found == {
        ("area", 5001),
        ("area", 5002),
        ("area", 5003),
        ("areatrigger", 9001),
        ("areatrigger", 9002),
    }


def test_attachment_lines_name_areas_zones_and_area_triggers() -> None:
    # wowdiag-style lines: "zone=5001", "AreaID: 5002", "SubZone=5003", "AreaTrigger=9001";
    # an area trigger is never also read as an area.
    log = [
        (1, "player=Brauhilde map=0 zone=5001"),
        (2, "moved AreaID: 5002 SubZone=5003"),
        (3, "entered AreaTrigger=9001, area_trigger_id=9002"),
        (4, "zone 5004 without = is prose, not a dump field"),
    ]
    member = MemberLines("diag-001", "session.log", lambda: iter(log))
    found = [
        (m.entity_type, m.entity_id, m.where["line"])
        for m in extract_mentions(vcore_profile(), {"title": "t", "text": "x"}, [member])
    ]
    assert found == [
        ("area", 5001, 1),
        ("area", 5002, 2),
        ("area", 5003, 2),
        ("areatrigger", 9001, 3),
        ("areatrigger", 9002, 3),
    ]
