"""The JSON inside a prompt is jsonio's canonical text, so any stored value can be shown;
stored calls of every version rebuild byte for byte."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis import jsonio
from viano_bug_analysis.investigation.prompts import (
    CURRENT_PROJECT_VERSION,
    CURRENT_VERSION,
    PROMPT_VERSIONS,
    build_messages,
    prompt_text,
)
from viano_bug_analysis.project_research.captures import Capture, model_view

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


def test_new_calls_use_version_3_and_it_differs_from_version_1() -> None:
    assert (CURRENT_VERSION, CURRENT_PROJECT_VERSION) == (
        "investigation_v3",
        "investigation_project_v5",
    )
    v1 = build_messages("investigation_v1", V1_CONTEXT)
    current = {
        **V1_CONTEXT,
        "evidence": [{**V1_CONTEXT["evidence"][0], "view": "{}"}],
        "ledger": [{"evidence_id": "E1", "line": "E1 (H1) source.find_text: 1 lines"}],
    }
    v3 = build_messages(CURRENT_VERSION, current)
    assert v1 != v3 and "cite in E1:" in v3[1]["content"]
    with pytest.raises(ValueError):
        build_messages("investigation_v9", V1_CONTEXT)


# A stored call whose evidence is a version 1 git search (its answer still says
# result.complete): project-result-v2 renamed that field, the prompts did not change.
V1_SEARCH = "05e1e5172e8bb10259578e24d5b59715791fd2e3ae34cd9c8859989c7df4adba"
V1_CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "project-captures-v1"


def _v1_search_context() -> dict[str, Any]:
    capture = Capture.from_bytes((V1_CAPTURES / f"{V1_SEARCH}.json").read_bytes(), V1_SEARCH)
    return {
        **_context(model_view(capture.result)),
        "project_context": V1_CONTEXT["project_context"],
        "evidence": [
            {
                "evidence_id": "E1",
                "kind": "project_query",
                "request": dict(capture.request),
                "payload": model_view(capture.result),
            }
        ],
    }


@pytest.mark.parametrize(
    ("version", "sha256"),
    [
        # Computed with the code before project-result-v2 existed.
        (
            "investigation_project_v1",
            "dfed0aefc095bcd7691cb33cb4ac01790ce6dd1459ebea75be8d6f86a80c6a1e",
        ),
        (
            "investigation_project_v2",
            "91e232168de5b0c29f10bcc951b9923f751f9ce86a8d62baf21493dbe6a384b4",
        ),
        (
            "investigation_project_v3",
            "fa5815136c3ccef1fe1611d314db6c0969683ec155d189fb2fa716f28d452860",
        ),
    ],
)
def test_a_stored_call_with_a_version_1_git_answer_rebuilds_byte_for_byte(
    version: str, sha256: str
) -> None:
    context = _v1_search_context()
    assert '"complete":false' in jsonio.canonical_bytes(context["evidence"][0]["payload"]).decode()
    text = prompt_text(build_messages(version, context))
    assert hashlib.sha256(text.encode()).hexdigest() == sha256


def test_no_prompt_text_names_a_field_version_2_renamed() -> None:
    # Why no prompt version changed: the rules never describe the provider's fields.
    empty = {**_context({}), "evidence": []}
    for version in PROMPT_VERSIONS:
        system = build_messages(version, empty)[0]["content"]
        for name in ("complete", "incomplete_reason", "files_unsearched", "walk_finished"):
            assert name not in system, (version, name)
