"""Notes for the next regular call, and unchanged prompts for historical contexts."""

from __future__ import annotations

from typing import Any

import pytest

from viano_bug_analysis.investigation.recovery import (
    RULE_IDS,
    RecoveryError,
    RecoveryNote,
    prompt_with_context_notes,
    render_recovery_notes,
    with_recovery_notes,
)
from viano_bug_analysis.investigation.recovery.notes import NOTES_KEY, SECTION_HEADING
from viano_bug_analysis.investigation.recovery.repair import PROMPT_ID

PROMPT = "You investigate one hypothesis.\n\nAnswer with exactly one JSON object."
NOTES = (
    RecoveryNote("normalized", "strip_outer_fence", ""),
    RecoveryNote("normalized", "filter_from_triple", "/next/arguments/filters/0"),
    RecoveryNote("repaired", PROMPT_ID, "/evidence"),
)


def test_without_notes_the_section_is_empty_and_the_prompt_unchanged() -> None:
    assert render_recovery_notes(()) == ""
    assert with_recovery_notes(PROMPT, ()) is PROMPT


@pytest.mark.parametrize(
    "context",
    [
        {},
        {"case_id": "C1", "hypotheses": ["H1"]},
        # Recovery fields other than notes never reach the prompt.
        {"x-viano-response-recovery": 1, "audit": {"seq": 3}, "repair": {"target": "/evidence"}},
        {NOTES_KEY: []},
    ],
)
def test_contexts_without_notes_give_byte_identical_prompts(context: dict[str, Any]) -> None:
    rebuilt = prompt_with_context_notes(PROMPT, context)
    assert rebuilt.encode() == PROMPT.encode()


def test_the_section_names_rule_ids_and_pointers_only() -> None:
    section = render_recovery_notes(NOTES)
    assert section.splitlines()[0] == SECTION_HEADING
    assert "- strip_outer_fence at (the whole answer)" in section
    assert "- filter_from_triple at /next/arguments/filters/0" in section
    assert f"- {PROMPT_ID} at /evidence" in section
    assert with_recovery_notes(PROMPT, NOTES) == PROMPT + "\n\n" + section


def test_stored_notes_round_trip_through_a_context() -> None:
    context = {NOTES_KEY: [note.to_mapping() for note in NOTES]}
    assert prompt_with_context_notes(PROMPT, context) == with_recovery_notes(PROMPT, NOTES)


@pytest.mark.parametrize("rule", RULE_IDS)
def test_every_rule_id_is_a_valid_note(rule: str) -> None:
    assert RecoveryNote("normalized", rule, "/next").code == rule


@pytest.mark.parametrize(
    ("kind", "code", "path"),
    [
        ("normalized", "translate_like", "/next"),
        ("normalized", PROMPT_ID, "/next"),
        ("repaired", "strip_outer_fence", "/next"),
        ("guessed", "strip_outer_fence", "/next"),
        ("normalized", "strip_outer_fence", "next"),
        ("normalized", "strip_outer_fence", "/a~2"),
        ("normalized", "strip_outer_fence", "/" + "x" * 600),
    ],
)
def test_notes_hold_only_known_codes_and_pointers(kind: Any, code: str, path: str) -> None:
    with pytest.raises(RecoveryError) as raised:
        RecoveryNote(kind, code, path)
    assert raised.value.code == "recovery_notes_invalid"


@pytest.mark.parametrize(
    "stored",
    [
        "strip_outer_fence",
        [{"kind": "normalized", "code": "strip_outer_fence"}],
        [{"kind": "normalized", "code": "strip_outer_fence", "path": "", "text": "x"}],
        [{"kind": "normalized", "code": 1, "path": ""}],
    ],
)
def test_malformed_stored_notes_are_refused(stored: Any) -> None:
    with pytest.raises(RecoveryError):
        prompt_with_context_notes(PROMPT, {NOTES_KEY: stored})


def test_the_number_of_notes_is_bounded() -> None:
    with pytest.raises(RecoveryError):
        render_recovery_notes([NOTES[0]] * 33)
