"""Repair admission: the seed's admission rules after the first real run."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viano_bug_analysis.investigation.recovery import admission as admission_module
from viano_bug_analysis.investigation.recovery.admission import (
    ADMITTED,
    EVIDENCE_RANGE,
    FILTER_INCOMPLETE,
    FILTER_RANGE,
    INPUT_TOO_LARGE,
    NOT_INVALID,
    NOT_STRUCTURAL,
    OPERATOR_HINT,
    OPERATOR_UNKNOWN,
    PLAN_MALFORMED,
    PLAN_TARGET_UNSUITABLE,
    REASONS,
    SCALAR_TARGET,
    TRIAL_INVALID,
    TRIAL_NOT_PRESERVING,
    UNKNOWN_ACTION,
    VALUE_MISSING,
    Admission,
    admit_repair,
    recheck_stored_plan,
)
from viano_bug_analysis.investigation.recovery.normalize import FILTER_OPERATORS
from viano_bug_analysis.investigation.recovery.repair import (
    PROMPT_ID,
    ContractViolation,
    contract_errors,
    flat_filter_groups,
)
from viano_bug_analysis.schemas import load_schema, schema_validator

WOLPERTINGER = ["LogTitle", "like", "%Wolpertinger%"]


def query(filters: Any, kind: str = "database.rows") -> dict[str, Any]:
    arguments: dict[str, Any] = {"kind": kind, "table": "Logs", "filters": filters}
    if kind == "database.rows":
        arguments.update(columns=["id", "LogTitle"], offset=0, limit=20)
    return arguments


def response(filters: Any = None, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "hypothesis_id": "H1",
        "assessment": "undetermined",
        "confidence": 0.4,
        "evidence": [{"evidence_id": "E1", "role": "supports", "reference": "/rows/0/name"}],
        "next": {
            "kind": "tool",
            "operation": "project.query",
            "arguments": query(
                [{"column": "id", "operator": "eq", "value": 1}] if filters is None else filters
            ),
        },
    }
    base.update(changes)
    return base


def filters_schema() -> dict[str, Any]:
    defs: dict[str, Any] = load_schema("investigation-response-v1")["$defs"]["project-query-v1"][
        "$defs"
    ]
    return defs


# --- the seed's real-run case ------------------------------------------------


def test_like_is_not_admitted_and_gets_the_operator_hint() -> None:
    original = response(WOLPERTINGER)
    kept = copy.deepcopy(original)
    admission = admit_repair(original)
    assert admission == Admission(False, OPERATOR_UNKNOWN, FILTER_RANGE, None, OPERATOR_HINT)
    assert admission.hint == "allowed operators: eq, ne, lt, le, gt, ge, contains, in"
    # Nothing is translated, no % is stripped: the response is left as it was.
    assert original == kept
    assert "Wolpertinger" not in repr(admission)


def test_the_single_string_error_path_is_lifted_to_the_filter_range() -> None:
    # The first real run's repair wrongly aimed at the string filters[0].
    original = response(WOLPERTINGER)
    for focus in (
        f"{FILTER_RANGE}/0",
        f"{FILTER_RANGE}/2",
        ContractViolation(f"{FILTER_RANGE}/1", "type"),
    ):
        admission = admit_repair(original, focus)
        assert admission.target == FILTER_RANGE
        assert admission.reason == OPERATOR_UNKNOWN


@pytest.mark.parametrize("operator", ["like", "LIKE", "=", "Eq", "contains ", "ilike", 1, None])
def test_no_unknown_operator_is_admitted(operator: Any) -> None:
    admission = admit_repair(response(["name", operator, "Wolpertinger"]))
    assert not admission.admitted
    assert admission.reason == OPERATOR_UNKNOWN
    assert admission.hint == OPERATOR_HINT


def test_an_unknown_operator_in_a_filter_object_is_a_scalar_problem() -> None:
    filters = [{"column": "LogTitle", "operator": "like", "value": "%Wolpertinger%"}]
    admission = admit_repair(response(filters))
    assert admission == Admission(False, OPERATOR_UNKNOWN, f"{FILTER_RANGE}/0", None, OPERATOR_HINT)


def test_an_unknown_operator_anywhere_in_the_unit_blocks_the_whole_unit() -> None:
    flat = ["id", "eq", 1, "LogTitle", "like", "%W%"]
    assert admit_repair(response(flat)).reason == OPERATOR_UNKNOWN
    nested = [["id", "eq", 1], ["LogTitle", "like", "%W%"]]
    assert admit_repair(response(nested)).reason == OPERATOR_UNKNOWN


# --- admitted container errors ---------------------------------------------


@pytest.mark.parametrize(
    "filters",
    [
        ["name", "contains", "Wolpertinger", "id", "gt", 100],
        [["name", "contains", "Wolpertinger"], ["id", "gt", 100]],
        [{"column": "name", "operator": "contains", "value": "Wolpertinger"}, ["id", "gt", 100]],
        ["column", "name", "operator", "contains", "value", "Wolpertinger"],
        {"column": "name", "operator": "contains", "value": "Wolpertinger"},
        ["id", "in", [1, 2, 3]],
    ],
)
def test_a_purely_structural_filter_error_is_admitted(filters: Any) -> None:
    admission = admit_repair(response(filters))
    assert admission.admitted
    assert admission.reason == ADMITTED
    assert admission.target == FILTER_RANGE
    assert admission.hint is None


def test_the_schema_excerpt_is_resolved_through_the_query_alternative() -> None:
    admission = admit_repair(response(["name", "contains", "x", "id", "gt", 1]))
    excerpt = admission.schema_excerpt
    assert excerpt is not None
    defs = filters_schema()
    assert excerpt["type"] == "array"
    assert excerpt["maxItems"] == defs["filters"]["maxItems"]
    assert excerpt["items"]["required"] == ["column", "operator", "value"]
    assert excerpt["items"]["properties"]["operator"] == defs["filter"]["properties"]["operator"]
    # Self-contained: every local reference is inlined.
    assert "$ref" not in json.dumps(excerpt)


def test_a_count_query_is_admitted_too() -> None:
    original = response()
    original["next"]["arguments"] = query(["id", "gt", 5, "id", "lt", 9], kind="database.count")
    assert admit_repair(original).admitted


def test_a_lone_evidence_object_is_wrapped() -> None:
    evidence = {"evidence_id": "E1", "role": "supports", "reference": "/rows/0/name"}
    admission = admit_repair(response(evidence=evidence))
    assert admission.admitted
    assert admission.target == EVIDENCE_RANGE
    assert admission.schema_excerpt is not None
    assert admission.schema_excerpt["items"]["required"] == ["evidence_id", "role", "reference"]


# --- refusals -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("filters", "reason", "target"),
    [
        (["id", "eq"], VALUE_MISSING, FILTER_RANGE),
        (["column", "id", "operator", "eq"], VALUE_MISSING, FILTER_RANGE),
        (["id", "eq", 1, "name"], FILTER_INCOMPLETE, FILTER_RANGE),
        (["id"], FILTER_INCOMPLETE, FILTER_RANGE),
        ([["id", "eq"]], VALUE_MISSING, FILTER_RANGE),
        ([{"column": "id", "operator": "eq"}], VALUE_MISSING, f"{FILTER_RANGE}/0"),
        ([{"column": "id", "value": 1}], FILTER_INCOMPLETE, f"{FILTER_RANGE}/0"),
        ([{"id": 1}], VALUE_MISSING, f"{FILTER_RANGE}/0"),
        ("id = 1", SCALAR_TARGET, FILTER_RANGE),
        ([{"column": "id", "operator": "eq", "value": 1}, "id = 2"], SCALAR_TARGET, FILTER_RANGE),
        (["id", {"operator": "eq"}, 1], NOT_STRUCTURAL, FILTER_RANGE),
    ],
)
def test_incomplete_filters_and_missing_values_are_not_admitted(
    filters: Any, reason: str, target: str
) -> None:
    admission = admit_repair(response(filters))
    assert (admission.admitted, admission.reason, admission.target) == (False, reason, target)
    assert admission.schema_excerpt is None


def test_a_wrong_scalar_in_a_filter_object_is_a_scalar_target() -> None:
    admission = admit_repair(response([{"column": "id", "operator": "eq", "value": [1]}]))
    assert (admission.admitted, admission.reason) == (False, SCALAR_TARGET)


def test_a_prose_sentence_instead_of_an_evidence_object_is_not_admitted() -> None:
    prose = "E1 shows that the title is cut after the first word."
    admission = admit_repair(response(evidence=[prose]))
    assert admission == Admission(False, SCALAR_TARGET, "/evidence/0")
    assert "title" not in repr(admission)


@pytest.mark.parametrize(
    ("changes", "target"),
    [({"confidence": "0.4"}, "/confidence"), ({"hypothesis_id": 1}, "/hypothesis_id")],
)
def test_scalar_targets_are_not_admitted(changes: dict[str, Any], target: str) -> None:
    admission = admit_repair(response(**changes))
    assert admission == Admission(False, SCALAR_TARGET, target)


def test_a_missing_required_field_is_not_admitted() -> None:
    original = response()
    del original["confidence"]
    assert admit_repair(original).reason == VALUE_MISSING


def test_an_unknown_action_is_not_admitted() -> None:
    original = response(["id", "eq", 1, "id", "eq", 2])
    original["next"]["operation"] = "database.execute"
    assert admit_repair(original) == Admission(False, UNKNOWN_ACTION, "/next")


def test_an_unknown_query_kind_is_not_a_filter_repair() -> None:
    original = response(["id", "eq", 1, "id", "eq", 2])
    original["next"]["arguments"]["kind"] = "database.delete"
    assert admit_repair(original, FILTER_RANGE).reason == NOT_STRUCTURAL


def test_a_lookup_filter_list_is_not_turned_into_a_mapping() -> None:
    original = response()
    original["next"] = {
        "kind": "tool",
        "operation": "database.lookup",
        "arguments": {
            "source_ref": "db:main",
            "filters": ["id", "eq", 1],
            "offset": 0,
            "limit": 10,
        },
    }
    admission = admit_repair(original, FILTER_RANGE)
    assert not admission.admitted


def test_the_trial_must_satisfy_the_whole_output_structure() -> None:
    flat = ["name", "contains", "x", "id", "gt", 1]
    # Another, unchanged error elsewhere: a repair call would be hopeless.
    admission = admit_repair(response(flat, confidence=1.5), FILTER_RANGE)
    assert admission == Admission(False, TRIAL_INVALID, FILTER_RANGE)
    # The regrouped filters themselves break the filter contract.
    for bad in (["bad column", "eq", 1], ["name", "contains", 5], ["id", "in", 3]):
        assert admit_repair(response(bad)).reason == TRIAL_INVALID


def test_a_malformed_error_pointer_is_not_admitted() -> None:
    assert admit_repair(response(["id", "eq", 1]), f"{FILTER_RANGE}/~2").reason == NOT_STRUCTURAL


def test_a_valid_response_needs_no_repair() -> None:
    assert admit_repair(response()) == Admission(False, NOT_INVALID)


def test_an_oversized_response_is_not_copied_into_a_repair_call() -> None:
    big = response(["name", "contains", "x" * 70_000])
    assert admit_repair(big).reason == INPUT_TOO_LARGE


def test_the_error_can_come_from_the_schema_validator() -> None:
    original = response({"column": "id", "operator": "eq", "value": 1})
    sub = schema_validator("investigation-response-v1").evolve(
        schema={"$ref": "#/$defs/next_project_query"}
    )
    error = next(iter(sub.iter_errors(original["next"])))
    error.path.appendleft("next")  # relative to the response
    assert admit_repair(original, error).admitted


def test_reason_codes_are_listed() -> None:
    assert len(set(REASONS)) == len(REASONS)
    assert {OPERATOR_UNKNOWN, SCALAR_TARGET, VALUE_MISSING, FILTER_INCOMPLETE} <= set(REASONS)


# --- stored plans ----------------------------------------------------------------


def plan(original: dict[str, Any], target: str) -> dict[str, Any]:
    return {
        "prompt": PROMPT_ID,
        "response": original,
        "target": target,
        "prompt_text": "historical prompt text, kept verbatim",
    }


def test_the_first_runs_stored_plan_is_rechecked_without_rewriting() -> None:
    stored = plan(response(WOLPERTINGER), f"{FILTER_RANGE}/0")
    kept = copy.deepcopy(stored)
    admission = recheck_stored_plan(stored)
    assert not admission.admitted
    assert admission.reason == PLAN_TARGET_UNSUITABLE
    assert admission.hint == OPERATOR_HINT
    assert stored == kept


def test_a_stored_plan_for_the_whole_range_with_like_is_refused() -> None:
    stored = plan(response(WOLPERTINGER), FILTER_RANGE)
    admission = recheck_stored_plan(stored)
    assert (admission.admitted, admission.reason) == (False, OPERATOR_UNKNOWN)
    assert admission.hint == OPERATOR_HINT


def test_a_sound_stored_plan_stays_admitted() -> None:
    stored = plan(response(["id", "eq", 1, "name", "contains", "x"]), FILTER_RANGE)
    admission = recheck_stored_plan(stored)
    assert admission.admitted and admission.target == FILTER_RANGE


@pytest.mark.parametrize(
    ("filters", "target"),
    [
        (["id", "eq", 1, "name", "contains", "x"], f"{FILTER_RANGE}/0"),  # a scalar
        ([["id", "eq", 1], ["name", "contains", "x"]], f"{FILTER_RANGE}/0"),  # not the unit
        (["id", "eq", 1, "name", "contains", "x"], "/next/arguments/filters/9"),  # gone
        (["id", "eq", 1, "name", "contains", "x"], "/confidence"),  # scalar
    ],
)
def test_stored_plans_with_unsuitable_targets_are_refused(filters: Any, target: str) -> None:
    admission = recheck_stored_plan(plan(response(filters), target))
    assert (admission.admitted, admission.reason) == (False, PLAN_TARGET_UNSUITABLE)


@pytest.mark.parametrize(
    "stored",
    [
        {"prompt": "investigation_format_repair_v0", "response": {}, "target": "/next"},
        {"prompt": PROMPT_ID, "response": "text", "target": "/next"},
        {"prompt": PROMPT_ID, "response": {}, "target": 3},
        {},
    ],
)
def test_malformed_stored_plans_are_refused(stored: dict[str, Any]) -> None:
    assert recheck_stored_plan(stored).reason == PLAN_MALFORMED


# --- property: admission never admits what its own trial cannot back -----------

_item = st.one_of(
    st.sampled_from(["id", "name", "LogTitle", "eq", "contains", "like", "in", "column", "value"]),
    st.integers(-5, 5),
    st.none(),
    st.booleans(),
    st.lists(st.integers(0, 3), max_size=2),
)


@settings(deadline=None)
@given(st.lists(_item, max_size=9))
def test_admission_of_fuzzed_filter_lists_is_sound(filters: list[Any]) -> None:
    original = response(filters)
    kept = copy.deepcopy(original)
    admission = admit_repair(original)
    assert admission.reason in REASONS
    assert original == kept
    if admission.admitted:
        assert admission.target == FILTER_RANGE
        # Only contract operators are ever admitted; the trial regroups existing values.
        groups = flat_filter_groups(filters)
        assert groups is not None
        assert all(operator in FILTER_OPERATORS for _, operator, _ in groups)
        assert contract_errors(original)


def test_a_trial_that_does_not_preserve_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    changed = [{"column": "id", "operator": "eq", "value": 2}]
    monkeypatch.setattr(admission_module, "_regroup", lambda filters: changed)
    admission = admit_repair(response(["id", "eq", 1]))
    assert admission == Admission(False, TRIAL_NOT_PRESERVING, FILTER_RANGE)


def test_a_stored_plan_of_a_version_2_answer_is_rechecked_by_version_2() -> None:
    evidence = {"evidence_id": "E1", "role": "supports", "reference": "/rows/0/name"}
    facts = {
        "kind": "tool",
        "operation": "case.facts",
        "arguments": {"ids": ["P12"], "offset": 0, "limit": 5},
    }
    plan = {"prompt": PROMPT_ID, "response": response(evidence=evidence, next=facts)}
    plan["target"] = EVIDENCE_RANGE
    assert recheck_stored_plan(plan).reason == UNKNOWN_ACTION  # version 1 has no case.facts
    admitted = recheck_stored_plan(plan, schema="investigation-response-v2")
    assert admitted.admitted and admitted.target == EVIDENCE_RANGE
