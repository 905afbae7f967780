"""The client-data kinds of the fact vocabulary: schema, views, and the brief's entity lines."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.facts.sample import facts, index, provenance
from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.facts.brief import fact_sections
from viano_bug_analysis.facts.index import check_index
from viano_bug_analysis.facts.registry import fact_kind, labels

HASH = re.compile(r"[0-9a-f]{40}")
ORIGIN = {"source": "file", "file": "Spell.dbc", "sha256": "cd" * 32, "record": 3}
SPELL = {
    "kind": "client_record",
    "entity_type": "spell",
    "entity_id": 90004,
    "name": "Throw Net",
    "origin": ORIGIN,
    "effects": [
        {"effect": 6, "effect_name": "SPELL_EFFECT_APPLY_AURA", "aura": 18,
         "aura_name": "SPELL_AURA_MOD_INVISIBILITY"},
        {"effect": 64, "effect_name": "SPELL_EFFECT_TRIGGER_SPELL", "aura": 0,
         "aura_name": None, "trigger_spell": 90048},
    ],
    "provenance": provenance("/result/result/records/0"),
    "statement": "what the client data defines",
}  # fmt: skip
ABSENT = {
    "kind": "client_record_absent",
    "entity_type": "item",
    "entity_ids": [90003],
    "provenance": provenance("/result/result/missing_ids"),
    "statement": "none of these IDs",
}
MATCH = {
    "kind": "client_name_match",
    "phrase": "Grandma's Good Clothes",
    "where": {"pointer": "/report/text", "offset": 12},
    "entity_type": "item",
    "entity_id": 52069,
    "name": "Grandma's Good Clothes",
    "origin": {"source": "file", "file": "Item-sparse.db2", "sha256": "cd" * 32, "record": 0},
    "followed": True,
    "provenance": provenance("/result/result/records/0"),
    "statement": "the case gives this name",
}


def _with_client(*client: dict[str, Any]) -> list[dict[str, Any]]:
    base = facts()
    start = len(base) + 1
    return base + [{"fact_id": f"P{start + i}", **fact} for i, fact in enumerate(client)]


def test_an_index_with_client_facts_is_valid_and_one_without_a_field_is_not() -> None:
    check_index(index(_with_client(SPELL, ABSENT, MATCH)), "index.json")
    broken = {k: v for k, v in SPELL.items() if k != "origin"}
    with pytest.raises(PackageFileError):
        check_index(index(_with_client(broken)), "index.json")


@pytest.mark.parametrize("fact", [SPELL, ABSENT, MATCH], ids=lambda f: f["kind"])
def test_every_client_kind_has_its_views(fact: dict[str, Any]) -> None:
    kind = fact_kind(fact["kind"])
    labelled = {"fact_id": "P1", **fact}
    assert kind.summary(labelled).startswith("client data: ")
    assert not HASH.search(kind.compact(labelled)), "no hash in the model's view"
    assert kind.report(labelled)["label"] == kind.label


def test_a_spell_reads_with_its_effects_by_the_engine_names() -> None:
    line = fact_kind("client_record").summary({"fact_id": "P1", **SPELL})
    assert line == (
        'client data: spell 90004 "Throw Net": SPELL_EFFECT_APPLY_AURA '
        "SPELL_AURA_MOD_INVISIBILITY; SPELL_EFFECT_TRIGGER_SPELL triggers spell 90048 "
        "(Spell.dbc record 3)"
    )


def test_the_stored_prompts_labels_leave_the_client_kinds_out() -> None:
    assert "client_record" in labels() and "client_record" not in labels(stored=True)


def test_the_brief_tells_a_spell_by_its_name_and_effects_and_a_matched_name_as_named() -> None:
    text = fact_sections(index(_with_client(SPELL, ABSENT, MATCH)), max_chars=20_000).text
    lines = text.splitlines()
    [spell] = [line for line in lines if line.startswith("- spell 90004 ")]
    assert spell.startswith('- spell 90004 "Throw Net": ')
    assert "client data: SPELL_EFFECT_APPLY_AURA SPELL_AURA_MOD_INVISIBILITY" in spell
    [item] = [line for line in lines if line.startswith("- item 52069 ")]
    assert '"Grandma\'s Good Clothes": named in the report' in item
    [absent] = [line for line in lines if line.startswith("- item 90003")]
    assert "not in the client data" in absent
    # Told on the entity lines, not again among the other findings.
    assert "client data: " not in text.split("Other findings:", 1)[-1].split("Empty")[0]
