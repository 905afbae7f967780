"""The JSON inside a prompt is jsonio's canonical text, so any stored value can be shown."""

from __future__ import annotations

from typing import Any

from viano_bug_analysis import jsonio
from viano_bug_analysis.investigation.prompts import build_messages

BIG = 2**70  # a DECIMAL(30) or BIGINT UNSIGNED value from a research result


def _context(payload: Any) -> dict[str, Any]:
    return {
        "case_id": "case-1",
        "analysis_revision": 1,
        "report": {"title": "t", "text": "x"},
        "hypothesis": {"id": "H1", "statement": "s"},
        "sources": [],
        "evidence": [
            {
                "evidence_id": "E1",
                "kind": "project",
                "request": {"kind": "database.rows", "filters": [["id", "eq", BIG]]},
                "payload": payload,
            }
        ],
        "step": 1,
        "max_steps": 4,
    }


def test_evidence_with_an_integer_beyond_64_bits_is_shown_exactly() -> None:
    payload = {"rows": [{"id": BIG, "name": "Élan"}]}
    user = build_messages("investigation_v1", _context(payload))[1]["content"]
    assert jsonio.canonical_bytes(payload).decode() in user
    assert str(BIG) in user
