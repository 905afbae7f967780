"""Client data as enrichment facts: mentioned spells and items by ID and by name."""

from __future__ import annotations

from pathlib import Path

from tests.project_research.research_fakes import make_config
from tests.project_research.test_client_data import SOURCE_TOML, HeaderGit, research  # noqa: F401
from viano_bug_analysis.enrichment.client_facts import names_in_client_data, records_of_entities
from viano_bug_analysis.project_research import ProjectResearch


def test_mentioned_spells_become_records_with_effects_and_absences(
    research: ProjectResearch,  # noqa: F811
) -> None:
    found = records_of_entities(
        research.capture,
        [("spell", 75048), ("spell", 4), ("quest", 1), ("spell", 75048), ("item", 7)],
    )
    assert found.refused == []
    # Spell 4: spell_dbc was not read (no [database]), so its absence is not a fact.
    record, absent = found.facts
    assert record.kind == "client_record"
    assert record.fields["name"] == "Stealth"
    assert record.fields["effects"][0]["aura_name"] == "SPELL_AURA_MOD_INVISIBILITY"
    assert record.capture.result["result"]["records"][0]["id"] == 75048
    assert record.pointer == "/result/result/records/0"
    assert absent.kind == "client_record_absent"
    assert (absent.fields["entity_type"], absent.fields["entity_ids"]) == ("item", [7])


def test_names_in_the_report_resolve_to_spells_and_items(
    research: ProjectResearch,  # noqa: F811
) -> None:
    found = names_in_client_data(
        research.capture, ["Rescue Drowning Watchman", "grandma's good clothes", "a sheep"]
    )
    assert [(f.fields["entity_type"], f.fields["entity_id"]) for f in found.facts] == [
        ("spell", 1),
        ("item", 52069),
    ]
    assert found.facts[1].fields["phrase"] == "grandma's good clothes"


def test_without_client_data_the_lookups_are_refused_and_no_fact_is_made(tmp_path: Path) -> None:
    unconfigured = ProjectResearch(make_config(tmp_path, SOURCE_TOML), git=HeaderGit())
    found = records_of_entities(unconfigured.capture, [("spell", 1), ("item", 2)])
    assert found.facts == []
    assert found.refused == [
        ("spell", "provider_not_configured"),
        ("item", "provider_not_configured"),
    ]
