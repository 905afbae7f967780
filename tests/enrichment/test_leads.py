"""How leads are ranked from the lead-source facts, bounded, and worded.

Classes first (changed since the report, engine check, missing reference,
heuristic, script file), the report's own entities before entities only
reached, a class-specific order, then the fact ID: the same facts always give
the same ranks. ``why`` never carries raw text.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.enrichment.lead_facts import (
    PROVENANCE,
    RAW,
    change,
    mention,
    missing,
    numbered,
    rule_hit,
    script_file,
    with_leads,
)
from viano_bug_analysis.enrichment.leads import (
    DEFAULT_MAX_LEADS,
    lead_line,
    leads_left_out,
    leads_of,
)


def _leads(facts: list[dict[str, Any]], max_leads: int | None = None) -> list[Any]:
    return leads_of(with_leads(facts, max_leads))


def _all_classes() -> list[dict[str, Any]]:
    # Written in the reverse of the rank order, so fact order cannot explain the ranks.
    return numbered(
        {"kind": "project_empty_result", "table": "creature_template", "statement": "none"},
        mention("creature", 5),
        script_file(5, "src/server/scripts/Zone/zone_keg.cpp", "zone"),
        rule_hit(
            "smart_ai_without_rows", "heuristic", "creature", 5, "creature_template", {"entry": 5}
        ),
        missing("creature", 99, "conditions", {"SourceTypeOrReferenceId": 22, "SourceEntry": 5}),
        rule_hit(
            "spellclick_without_rows", "engine", "creature", 5, "creature_template", {"entry": 5}
        ),
        change("a" * 40, ["5"], "2026-01-02T00:00:00Z"),
    )


def test_classes_rank_changes_then_engine_checks_missing_references_heuristics_files() -> None:
    leads = _leads(_all_classes())
    assert [lead["lead"] for lead in leads] == [
        "changed_since_report",
        "engine_check",
        "missing_reference",
        "heuristic",
        "script_file",
    ]
    assert [lead["rank"] for lead in leads] == [1, 2, 3, 4, 5]
    assert [lead["rests_on"] for lead in leads] == [["P7"], ["P6"], ["P5", "P1"], ["P4"], ["P3"]]


def test_each_location_is_a_row_a_file_or_a_commit() -> None:
    by_class = {lead["lead"]: lead for lead in _leads(_all_classes())}
    assert by_class["changed_since_report"]["location"] == {"commit": "a" * 40}
    assert by_class["engine_check"]["location"] == {
        "table": "creature_template",
        "key": {"entry": 5},
    }
    assert by_class["missing_reference"]["location"] == {
        "table": "conditions",
        "key": {"SourceTypeOrReferenceId": 22, "SourceEntry": 5},
    }
    assert by_class["script_file"]["location"] == {"path": "src/server/scripts/Zone/zone_keg.cpp"}
    assert (by_class["heuristic"]["entity_type"], by_class["heuristic"]["entity_id"]) == (
        "creature",
        5,
    )
    assert "entity_type" not in by_class["changed_since_report"]


def test_why_is_one_sentence_without_raw_text() -> None:
    for lead in _leads(_all_classes()):
        why = lead["why"]
        assert "\n" not in why and ". " not in why and not why.endswith(".")
        for piece in ("keg</b>", "Bruni", "Fix the", "npc_keg_master"):
            assert piece not in why, (lead["lead"], why)
    engine = _leads(_all_classes())[1]
    assert "spellclick_without_rows" in engine["why"]
    assert "src/server/game/Globals/ObjectMgr.cpp:812" in engine["why"]
    assert "the report names it" in engine["why"]


def test_the_reports_own_entities_come_before_entities_only_reached() -> None:
    facts = numbered(
        mention("creature", 5),
        rule_hit("r", "engine", "creature", 70, "creature_template", {"entry": 70}),
        rule_hit("r", "engine", "creature", 5, "creature_template", {"entry": 5}),
        # The referencing row is the mentioned creature's own row.
        missing("creature", 80, "creature_template", {"entry": 90}),
        missing("creature", 81, "creature_template", {"entry": 5}),
    )
    leads = _leads(facts)
    assert [(lead["lead"], lead["rests_on"][0]) for lead in leads] == [
        ("engine_check", "P3"),
        ("engine_check", "P2"),
        ("missing_reference", "P5"),
        ("missing_reference", "P4"),
    ]
    assert leads[1]["why"].endswith("reached from the report's entities")


@pytest.mark.parametrize(
    "named",
    [
        {
            "kind": "case_untyped_mention",
            "entity_id": 5,
            "where": {"pointer": "/report/text"},
            "asked_as": ["creature", "quest"],
            "found_as": ["creature"],
            "found_in": [],
        },
        {
            "kind": "project_name_match",
            "name": "Keg Master",
            "where": {"pointer": "/report/title"},
            "match": "exact",
            "matches": [{"entity_type": "creature", "entity_id": 5, "table": "creature_template"}],
            "ambiguous": False,
            "followed": True,
            "candidate": True,
        },
    ],
)
def test_an_untyped_id_or_a_followed_name_is_the_reports_own(named: dict[str, Any]) -> None:
    facts = numbered(
        named,
        rule_hit("r", "heuristic", "creature", 70, "creature_template", {"entry": 70}),
        rule_hit("r", "heuristic", "creature", 5, "creature_template", {"entry": 5}),
    )
    assert [lead["entity_id"] for lead in _leads(facts)] == [5, 70]


def test_a_name_that_was_not_followed_does_not_make_an_entity_the_reports() -> None:
    facts = numbered(
        {
            "kind": "project_name_match",
            "matches": [{"entity_type": "creature", "entity_id": 5}],
            "followed": False,
        },
        rule_hit("r", "heuristic", "creature", 5, "creature_template", {"entry": 5}),
        rule_hit("r", "heuristic", "creature", 3, "creature_template", {"entry": 3}),
    )
    assert [lead["entity_id"] for lead in _leads(facts)] == [3, 5]


def test_ties_are_broken_by_rule_then_entity_then_fact_id_and_repeat_exactly() -> None:
    facts = numbered(
        rule_hit("b_rule", "engine", "creature", 2, "creature_template", {"entry": 2}),
        rule_hit("a_rule", "engine", "creature", 9, "creature_template", {"entry": 9}),
        rule_hit("a_rule", "engine", "creature", 3, "creature_template", {"entry": 3}),
        rule_hit("a_rule", "engine", "creature", 3, "creature_addon", {"guid": 3}),
    )
    leads = _leads(facts)
    assert [lead["rests_on"][0] for lead in leads] == ["P3", "P4", "P2", "P1"]
    assert leads == _leads(facts)


def test_changes_naming_more_terms_first_then_in_history_order() -> None:
    facts = numbered(
        mention("quest", 5),
        change("c" * 40, ["5"], "2026-03-01T00:00:00Z"),
        change("b" * 40, ["5"], "2026-02-01T00:00:00Z"),
        change("d" * 40, ["5", "npc_keg", "QUEST_KEG"], "2026-04-01T00:00:00Z"),
        change("e" * 40, ["npc_keg"], "2026-01-01T00:00:00Z"),
    )
    leads = _leads(facts)
    assert [lead["location"]["commit"][0] for lead in leads] == ["d", "b", "c", "e"]
    assert "ID 5 and 2 more terms" in leads[0]["why"]
    assert "maybe already fixed" in leads[0]["why"]


def test_script_files_by_reason_and_one_lead_per_file_and_entity() -> None:
    facts = numbered(
        script_file(5, "src/server/scripts/Spells/spell_item.cpp", "sibling_prefix", evidence=4),
        script_file(5, "src/server/scripts/Zone/zone_keg.cpp", "zone"),
        script_file(5, "src/server/scripts/Zone/zone_keg.cpp", "constants"),
        script_file(6, "src/server/scripts/Zone/zone_keg.cpp", "constants", evidence=2),
    )
    leads = _leads(facts)
    assert [(lead["location"]["path"].rsplit("/")[-1], lead["entity_id"]) for lead in leads] == [
        ("zone_keg.cpp", 6),  # constants, two lines of evidence
        ("zone_keg.cpp", 5),  # constants and zone: one lead resting on both
        ("spell_item.cpp", 5),  # only siblings of a similar name, however many
    ]
    assert leads[1]["rests_on"] == ["P2", "P3"]
    assert "defines constants" in leads[1]["why"]
    # The path stands in the lead's location; the why does not say it again.
    assert all(lead["location"]["path"] not in lead["why"] for lead in leads)


def test_rows_merely_reached_are_never_leads() -> None:
    facts = numbered(
        mention("creature", 5),
        {
            "kind": "project_rows",
            "table": "creature_template",
            "rows": [{"entry": 5}],
            "provenance": PROVENANCE,
        },
        {"kind": "project_empty_result", "table": "npc_spellclick_spells"},
        {"kind": "project_relationship", "relation": "x", "from": {}, "to": {}},
    )
    assert with_leads(facts) == facts


@pytest.mark.parametrize(("max_leads", "written"), [(None, DEFAULT_MAX_LEADS), (3, 3), (30, 25)])
def test_at_most_max_leads_and_a_coverage_fact_counts_the_rest(
    max_leads: int | None, written: int
) -> None:
    hits = [
        rule_hit(f"r{n:02}", "heuristic", "creature", n, "creature_template", {"entry": n})
        for n in range(25)
    ]
    facts = with_leads(numbered(*hits), max_leads)
    leads = leads_of(facts)
    assert [lead["rank"] for lead in leads] == list(range(1, written + 1))
    assert [lead["rests_on"][0] for lead in leads] == [f"P{n}" for n in range(1, written + 1)]
    limits = [f for f in facts if f.get("reason") == "leads_limit"]
    if written == 25:
        assert limits == []
        return
    assert len(limits) == 1
    assert limits[0]["count"] == 25 - written == leads_left_out(facts)
    assert limits[0]["by_class"] == {"heuristic": 25 - written}
    assert limits[0]["left_out_facts"][0] == f"P{written + 1}"
    # The leads come before the coverage fact, in rank order.
    assert facts[-1] is limits[0] and facts[25]["rank"] == 1


def test_a_lead_line_names_rank_class_location_why_and_what_it_rests_on() -> None:
    lead = _leads(_all_classes())[2]
    line = lead_line(lead)
    assert line.startswith(
        "3. missing reference at conditions SourceEntry=5 SourceTypeOrReferenceId=22: "
        "conditions.ConditionValue1 of conditions"
    )
    assert line.endswith("(rests on P5, P1)")
    assert str(RAW) not in line


def test_a_missing_reference_from_an_entity_id_points_at_the_row_that_should_exist() -> None:
    fact = missing("creature", 99, "conditions", {})
    fact["from"] = {"entity_type": "quest", "entity_id": 5}
    (lead,) = _leads(numbered(fact))
    assert lead["location"] == {"table": "creature_template", "key": {"entry": 99}}
    assert lead["why"].startswith(
        "quest 5 references creature 99, but creature_template.entry has no row for it"
    )


def test_a_change_counts_all_its_changed_lines_not_only_the_page_kept() -> None:
    fact = change("a" * 40, ["5"], "2026-01-02T00:00:00Z")
    fact["changes_total"] = 12
    (lead,) = _leads(numbered(fact))
    assert "changes 12 lines naming ID 5" in lead["why"]
