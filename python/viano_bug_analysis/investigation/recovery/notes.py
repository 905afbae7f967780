"""Notes about an applied recovery, for the next regular investigation call.

When a response was accepted only after normalization (or a repair), the
model should hear about it — but not through an extra correction call. The
note rides along in the next regular prompt: :func:`render_recovery_notes`
turns the notes into a short text section, and :func:`with_recovery_notes`
appends it to a prompt.

A note names a rule ID (or the repair prompt ID) and a JSON Pointer, nothing
else: never any response text. Without notes the section is empty and the
prompt stays byte-for-byte what it was, which is also what a historical
context gives that was stored before recovery existed (it has no notes, no
marker, no audit and no repair descriptor).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from viano_bug_analysis.investigation.recovery.errors import NOTES_INVALID, RecoveryError
from viano_bug_analysis.investigation.recovery.normalize import RULE_IDS
from viano_bug_analysis.investigation.recovery.repair import PROMPT_ID

NOTES_KEY: Final = "recovery_notes"
"""Where a stored investigation context keeps the notes for its next call."""

NoteKind = Literal["normalized", "repaired"]
_POINTER: Final = re.compile(r"(/([^~/]|~[01])*)*\Z")
_MAX_NOTES: Final = 32  # 16 normalizations and one repair fit with room to spare
_MAX_POINTER: Final = 512

SECTION_HEADING: Final = "Format note about your previous answer:"
_SECTION_INTRO: Final = (
    "It was accepted only after these structural corrections; its values were not "
    "changed. Please answer in the exact response format."
)


@dataclass(frozen=True, slots=True)
class RecoveryNote:
    """One applied correction: a normalization rule or the repair call, and where."""

    kind: NoteKind
    code: str
    path: str

    def __post_init__(self) -> None:
        allowed = RULE_IDS if self.kind == "normalized" else (PROMPT_ID,)
        if self.kind not in ("normalized", "repaired") or self.code not in allowed:
            raise RecoveryError(NOTES_INVALID, "a recovery note names an unknown rule")
        if (
            not isinstance(self.path, str)
            or len(self.path) > _MAX_POINTER
            or not _POINTER.match(self.path)
        ):
            raise RecoveryError(NOTES_INVALID, "a recovery note path is not a JSON Pointer")

    def to_mapping(self) -> dict[str, str]:
        return {"kind": self.kind, "code": self.code, "path": self.path}

    @classmethod
    def from_mapping(cls, stored: Any) -> RecoveryNote:
        if not isinstance(stored, Mapping) or set(stored) != {"kind", "code", "path"}:
            raise RecoveryError(NOTES_INVALID, "a stored recovery note is malformed")
        kind, code, path = stored["kind"], stored["code"], stored["path"]
        if kind not in ("normalized", "repaired") or not isinstance(code, str):
            raise RecoveryError(NOTES_INVALID, "a stored recovery note is malformed")
        return cls(kind, code, path)


def render_recovery_notes(notes: Sequence[RecoveryNote]) -> str:
    """The prompt section for ``notes``; the empty string when there are none."""
    if not notes:
        return ""
    if len(notes) > _MAX_NOTES:
        raise RecoveryError(NOTES_INVALID, "too many recovery notes", {"limit": _MAX_NOTES})
    lines = [SECTION_HEADING, _SECTION_INTRO]
    for note in notes:
        where = note.path or "(the whole answer)"
        lines.append(f"- {note.code} at {where}")
    return "\n".join(lines)


def with_recovery_notes(prompt: str, notes: Sequence[RecoveryNote]) -> str:
    """``prompt`` with the notes section appended; ``prompt`` itself when there are no notes."""
    section = render_recovery_notes(notes)
    if not section:
        return prompt
    return f"{prompt}\n\n{section}"


def notes_from_context(context: Mapping[str, Any]) -> tuple[RecoveryNote, ...]:
    """The notes a stored investigation context holds for its next call.

    A context from before recovery has no ``recovery_notes`` key and so no
    notes; the other recovery fields (marker, audit, repair descriptor) do not
    reach the prompt at all.
    """
    stored = context.get(NOTES_KEY)
    if stored is None:
        return ()
    if not isinstance(stored, list):
        raise RecoveryError(NOTES_INVALID, "stored recovery notes are not a list")
    return tuple(RecoveryNote.from_mapping(item) for item in stored)


def prompt_with_context_notes(prompt: str, context: Mapping[str, Any]) -> str:
    """The next regular prompt for a stored context: unchanged unless it holds notes."""
    return with_recovery_notes(prompt, notes_from_context(context))


__all__ = [
    "NOTES_KEY",
    "SECTION_HEADING",
    "NoteKind",
    "RecoveryNote",
    "notes_from_context",
    "prompt_with_context_notes",
    "render_recovery_notes",
    "with_recovery_notes",
]
