"""A rejected answer is told what was wrong: the pointer, the property, the rule
and the allowed alternatives, through the one schema-error mapper."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tests.investigation.recovery.recovery_fixtures import (
    CONTEXT,
    CONTRACT,
    LIMITS,
    V1,
    FakeProvider,
    response,
)
from viano_bug_analysis.investigation.recovery import recover_response
from viano_bug_analysis.investigation.recovery.contract import (
    CITATION_UNRESOLVED,
    full_violations,
)
from viano_bug_analysis.investigation.recovery.feedback import rejection_feedback


def recover(document: Any, contract: Any = CONTRACT) -> Any:
    text = document if isinstance(document, str) else json.dumps(document)
    return recover_response(
        text,
        contract=contract,
        policy=V1,
        context=CONTEXT,
        provider=FakeProvider(),
        audit_store=None,
        limits=LIMITS,
    )


def search(**arguments: Any) -> dict[str, Any]:
    query = {"kind": "source.search", "text": "QUEST_", "offset": 0, "limit": 20, **arguments}
    return response(next={"kind": "tool", "operation": "project.query", "arguments": query})


def conclusion(reference: str) -> dict[str, Any]:
    return response(
        evidence=[{"evidence_id": "E3", "role": "supports", "reference": reference}],
        next={"kind": "conclusion", "summary": "Seen."},
    )


def test_a_missing_required_property_is_named_with_its_pointer_and_rule() -> None:
    # The old prompt's own source.search example: case_sensitive is required.
    result = recover(search())
    assert result.reason == "contract_violation"
    assert result.feedback == (
        "/next/arguments/case_sensitive: missing required property 'case_sensitive' at "
        "/next/arguments [rule required].",
    )


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            response(assessment="likely"),
            "/assessment: value at /assessment is not one of the allowed values; allowed: "
            "supported, refuted, undetermined [rule enum].",
        ),
        (
            search(case_sensitive=True, regex=True),
            "/next/arguments/regex: unknown property 'regex' at /next/arguments",
        ),
        (
            response(next={"kind": "tool", "operation": "source.grep", "arguments": {}}),
            "/next/operation: value at /next/operation is not one of the allowed values; "
            "allowed: project.query, source.find_text",
        ),
        (
            response(confidence=2),
            "/confidence: value at /confidence must be at most 1 [rule maximum].",
        ),
        (
            response(hypothesis_id="H7"),
            "/hypothesis_id must be H2, the hypothesis asked.",
        ),
        (
            response(evidence=[{"evidence_id": "E9", "role": "supports", "reference": "/a"}]),
            "/evidence/0/evidence_id: cite only evidence IDs you were shown (shown: E3, E5)",
        ),
    ],
    ids=["enum", "unknown property", "unknown operation", "bound", "hypothesis", "evidence"],
)
def test_each_rejection_says_what_to_change(document: dict[str, Any], expected: str) -> None:
    result = recover(document)
    assert result.status == "rejected"
    assert any(line.startswith(expected) for line in result.feedback), result.feedback


def test_an_unparsable_answer_is_told_to_send_one_json_object() -> None:
    result = recover("I think the quest is broken.")
    assert result.feedback == (
        "The answer was not used because it is not valid JSON: answer with exactly one JSON "
        "object and no text around it.",
    )


def test_a_conclusion_citing_a_missing_pointer_is_rejected_with_the_resolver_hint() -> None:
    def check(evidence_id: str, reference: str) -> str | None:
        if reference == "/rows/0/LogTitle":
            return None
        return f"{evidence_id}: no value at this pointer: {reference}; the deepest ..."

    contract = dataclasses.replace(CONTRACT, citations=check)
    assert full_violations(conclusion("/rows/0/LogTitle"), contract) == []
    result = recover(conclusion("/rows/7"), contract)
    assert result.reason == CITATION_UNRESOLVED
    assert result.feedback == (
        "/evidence/0/reference: E3: no value at this pointer: /rows/7; the deepest ...",
    )
    # A tool step's citations are not a conclusion's: they are not checked.
    assert full_violations(response(), contract) == []


def test_feedback_never_repeats_a_value_of_the_answer() -> None:
    secret = "LEAK-CANARY-value"
    document = search(text=secret, case_sensitive="yes")
    lines = rejection_feedback(document, full_violations(document, CONTRACT), CONTRACT)
    assert lines and not any(secret in line for line in lines)
    assert "must be boolean, not string" in lines[0]


OPERATORS = "allowed operators: eq, ne, lt, le, gt, ge, contains, in"


@pytest.mark.parametrize(
    ("filters", "pointer"),
    [
        ([["LogTitle", "like", "%Wolpertinger%"]], "/next/arguments/filters/0/1"),
        (["LogTitle", "like", "%Wolpertinger%"], "/next/arguments/filters/1"),
        (
            [
                {"column": "id", "operator": "gt", "value": 1},
                {"column": "LogTitle", "operator": "like", "value": "%Wolpertinger%"},
            ],
            "/next/arguments/filters/1/operator",
        ),
    ],
    ids=["triple", "flat", "object"],
)
def test_a_like_filter_is_told_the_operator_s_pointer_and_the_allowed_operators(
    filters: list[Any], pointer: str
) -> None:
    result = recover(response(filters))
    assert result.status == "rejected"
    # The first line names the operator's place, the property, the alternatives and
    # the rule; the schema line about the filter's shape follows.
    assert result.feedback[0] == (
        f"{pointer}: not a filter operator (property operator); {OPERATORS}; write each "
        'filter as {"column": ..., "operator": ..., "value": ...} [rule operator_unknown].'
    )
    assert not any("%Wolpertinger%" in line for line in result.feedback)
    # One line for the operator's place: the schema's enum line says the same.
    assert [line for line in result.feedback if line.startswith(f"{pointer}:")] == [
        result.feedback[0]
    ]


def test_a_snapshot_lookup_with_operator_filters_is_told_its_filters_are_exact_values() -> None:
    lookup = {
        "kind": "tool",
        "operation": "database.lookup",
        "arguments": {
            "source_ref": "db-001",
            "filters": [["LogTitle", "like", "%Wolpertinger%"]],
            "offset": 0,
            "limit": 5,
        },
    }
    result = recover(response(next=lookup))
    assert result.status == "rejected"
    assert result.feedback[0].startswith(
        "/next/arguments/filters: database.lookup has no filter operators: its filters are "
        'one object of exact column values, e.g. {"ID": 90001}; for rows holding a value in '
        "some columns use database.find_references"
    )
    assert OPERATORS not in " ".join(result.feedback)  # no operators to offer here
    # ... and no second line for the same place (the schema's "must be object").
    assert len([x for x in result.feedback if x.startswith("/next/arguments/filters:")]) == 1


def test_a_tool_step_s_rationale_is_optional_and_bounded() -> None:
    step = response()["next"]
    assert recover(response(next={**step, "rationale": "Which rows name the net?"})).accepted
    for bad, rule in [("x" * 501, "maxLength"), (["why"], "type"), ("", "minLength")]:
        result = recover(response(next={**step, "rationale": bad}))
        assert result.status == "rejected"
        lines = [line for line in result.feedback if line.startswith("/next/rationale:")]
        assert len(lines) == 1 and f"[rule {rule}]" in lines[0], result.feedback
        assert "x" * 20 not in " ".join(result.feedback)  # the value is not echoed
