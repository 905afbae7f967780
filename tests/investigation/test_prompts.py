"""The JSON inside a prompt is jsonio's canonical text, so any stored value can be shown;
stored calls of every version rebuild byte for byte."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from viano_bug_analysis import jsonio
from viano_bug_analysis.investigation.prompts import (
    CURRENT_PROJECT_VERSION,
    CURRENT_VERSION,
    build_messages,
    prompt_text,
)

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


V1_CONTEXT: dict[str, Any] = {
    "case_id": "case-1",
    "analysis_revision": 1,
    "report": {"title": "t", "text": "x"},
    "hypothesis": {"id": "H1", "statement": "s"},
    "other_hypotheses": [{"id": "H2", "statement": "o", "evidence_ids": ["E2"]}],
    "sources": [{"source_ref": "src-001", "role": "source_file", "member": "a.cpp"}],
    "project_context": {
        "selection": "all",
        "left_out": {"duplicate_results": []},
        "facts": [{"id": "P1"}],
    },
    "evidence": [
        {
            "evidence_id": "E1",
            "kind": "snapshot_query",
            "request": {"operation": "source.find_text"},
            "payload": {"result": {"lines": [{"line": 1, "text": "a"}]}},
        }
    ],
    "feedback": ["Your previous answer was rejected (syntax_error)."],
    "step": 2,
    "max_steps": 4,
}


@pytest.mark.parametrize(
    ("version", "sha256"),
    [
        # Computed with the code before version 2 existed.
        ("investigation_v1", "ae9e991809999960d663fe9fb22e167499f382f9c8da9d16627feae6cd7cd235"),
        (
            "investigation_project_v1",
            "44a1f41c6880cdb95c4e0296278e987c68bdfe7a812286c324fc6099a252658d",
        ),
    ],
)
def test_a_stored_v1_call_still_rebuilds_byte_for_byte(version: str, sha256: str) -> None:
    text = prompt_text(build_messages(version, V1_CONTEXT))
    assert hashlib.sha256(text.encode()).hexdigest() == sha256


def test_new_calls_use_version_2_and_it_differs_from_version_1() -> None:
    assert (CURRENT_VERSION, CURRENT_PROJECT_VERSION) == (
        "investigation_v2",
        "investigation_project_v3",
    )
    v1 = build_messages("investigation_v1", V1_CONTEXT)
    v2 = build_messages(CURRENT_VERSION, V1_CONTEXT)
    assert v1 != v2 and "cite in E1:" in v2[1]["content"]
    with pytest.raises(ValueError):
        build_messages("investigation_v9", V1_CONTEXT)
