"""Admission of a repair call for a response that failed the full contract.

A repair call (``investigation_format_repair_v1``) is admitted only for a
purely structural container error whose fix needs no new decision. This is
the seed's admission section after the first real run:

- the whole filter unit is looked at, and the schema excerpt is resolved
  through the matching action/query alternative (``next.operation``, then the
  query ``kind``);
- an error path inside a flat filter list is lifted to the whole filter
  range ``/next/arguments/filters``;
- scalar targets, incomplete filters, missing values and unknown operators
  get no repair call. ``like`` is never translated into ``contains`` and
  ``%`` is never stripped; the normal rejection path gets the short
  operator-contract hint :data:`OPERATOR_HINT` instead;
- before admission a purely structural trial version is built from the
  existing values (a flat list regrouped into filter objects, a lone object
  wrapped into a list). It must satisfy the whole output structure and the
  preservation rules; it is never executed and never replaces the model's
  repair.

Nothing here carries response content: an :class:`Admission` holds a reason
code, a JSON Pointer, a schema excerpt and a fixed hint text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from jsonschema import ValidationError

from viano_bug_analysis import vocabulary
from viano_bug_analysis.investigation.recovery.normalize import FILTER_OPERATORS, MAX_INPUT_BYTES
from viano_bug_analysis.investigation.recovery.repair import (
    PROMPT_ID,
    RESPONSE_SCHEMA,
    ContractViolation,
    RepairError,
    check_preservation,
    contract_errors,
    flat_filter_groups,
    json_copy,
    pointer_tokens,
    splice,
    to_pointer,
    value_at,
)
from viano_bug_analysis.jsonio import JsonEncodeError, canonical_bytes
from viano_bug_analysis.schemas import load_schema

OPERATOR_HINT: Final = vocabulary.OPERATOR_HINT
"""The short operator-contract hint for the normal rejection path."""

FILTER_RANGE: Final = "/next/arguments/filters"
EVIDENCE_RANGE: Final = "/evidence"

# Reason codes.
ADMITTED: Final = "container_type"
NOT_INVALID: Final = "not_invalid"
INPUT_TOO_LARGE: Final = "input_too_large"
OPERATOR_UNKNOWN: Final = "operator_unknown"
FILTER_INCOMPLETE: Final = "filter_incomplete"
VALUE_MISSING: Final = "value_missing"
SCALAR_TARGET: Final = "scalar_target"
UNKNOWN_ACTION: Final = "unknown_action"
NOT_STRUCTURAL: Final = "not_structural"
TRIAL_INVALID: Final = "trial_invalid"
TRIAL_NOT_PRESERVING: Final = "trial_not_preserving"
PLAN_MALFORMED: Final = "plan_malformed"
PLAN_TARGET_UNSUITABLE: Final = "plan_target_unsuitable"

REASONS: Final = (
    ADMITTED,
    NOT_INVALID,
    INPUT_TOO_LARGE,
    OPERATOR_UNKNOWN,
    FILTER_INCOMPLETE,
    VALUE_MISSING,
    SCALAR_TARGET,
    UNKNOWN_ACTION,
    NOT_STRUCTURAL,
    TRIAL_INVALID,
    TRIAL_NOT_PRESERVING,
    PLAN_MALFORMED,
    PLAN_TARGET_UNSUITABLE,
)

_FILTERED_QUERIES: Final = frozenset({"database.rows", "database.count"})
_FILTER_KEYS: Final = frozenset({"column", "operator", "value"})


@dataclass(frozen=True, slots=True)
class Admission:
    """The decision about one repair call.

    ``target`` is the JSON Pointer the repair would replace (the lifted unit),
    ``schema_excerpt`` the resolved schema for it (only when admitted), and
    ``hint`` a fixed contract text for the normal rejection path, if any.
    """

    admitted: bool
    reason: str
    target: str = ""
    schema_excerpt: dict[str, Any] | None = None
    hint: str | None = None


def admit_repair(
    response: Any,
    error: ValidationError | ContractViolation | str | None = None,
    *,
    schema: str = RESPONSE_SCHEMA,
) -> Admission:
    """Whether a response that failed the contract gets a repair call, and for what.

    ``error`` names the failing place: a ``jsonschema`` error, a
    :class:`~.repair.ContractViolation`, a JSON Pointer, or None for the first
    contract error. The decision looks at the whole response either way.
    ``schema`` is the response schema of the call's contract: the trial and
    the excerpt are taken from it, so an answer of a version that offers more
    operations (``investigation-response-v2``'s ``case.facts``) is judged by
    the contract it was asked for.
    """
    if not isinstance(response, dict):
        return Admission(False, SCALAR_TARGET)
    try:
        # The size of exactly what a repair prompt would copy.
        size = len(canonical_bytes(response))
    except JsonEncodeError:
        return Admission(False, NOT_STRUCTURAL)
    if size > MAX_INPUT_BYTES:
        return Admission(False, INPUT_TOO_LARGE)
    errors = contract_errors(response, schema)
    if not errors:
        return Admission(False, NOT_INVALID)
    focus = _focus(error, errors)
    if any(v.keyword == "unknown_action" for v in errors):
        return Admission(False, UNKNOWN_ACTION, "/next")
    try:
        if _inside(focus, FILTER_RANGE):
            return _admit_filters(response, focus, schema)
        return _admit_other(response, focus, errors, schema)
    except RepairError:  # a malformed error pointer
        return Admission(False, NOT_STRUCTURAL)


def _focus(
    error: ValidationError | ContractViolation | str | None, errors: list[ContractViolation]
) -> str:
    if isinstance(error, ValidationError):
        return to_pointer(list(error.absolute_path))
    if isinstance(error, ContractViolation):
        return error.path
    if isinstance(error, str):
        return error
    return errors[0].path


def _inside(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def _admit_filters(response: dict[str, Any], focus: str, schema: str) -> Admission:
    step = response.get("next")
    arguments = step.get("arguments") if isinstance(step, dict) else None
    if not (
        isinstance(step, dict)
        and step.get("operation") == "project.query"
        and isinstance(arguments, dict)
        and arguments.get("kind") in _FILTERED_QUERIES
    ):
        return Admission(False, NOT_STRUCTURAL, focus)
    filters = arguments.get("filters")
    tokens = pointer_tokens(focus)[3:]  # below the filter range
    # A filter object that is already a filter: its operator or value is the error.
    if isinstance(filters, list) and tokens and tokens[0].isdigit():
        index = int(tokens[0])
        item = filters[index] if index < len(filters) else None
        if isinstance(item, dict):
            return _filter_object(item, f"{FILTER_RANGE}/{index}")
    unit_refusal = _unit_refusal(filters)
    if unit_refusal is not None:
        hint = OPERATOR_HINT if unit_refusal == OPERATOR_UNKNOWN else None
        return Admission(False, unit_refusal, FILTER_RANGE, hint=hint)
    trial_value = _regroup(filters)
    if trial_value is None:
        return Admission(False, NOT_STRUCTURAL, FILTER_RANGE)
    return _trial(response, FILTER_RANGE, trial_value, _filters_excerpt(schema), schema)


def _filter_object(item: dict[str, Any], path: str) -> Admission:
    """A filter written as an object: only its scalars can be wrong, so no repair call."""
    operator = item.get("operator")
    if "operator" in item and operator not in FILTER_OPERATORS:
        return Admission(False, OPERATOR_UNKNOWN, path, hint=OPERATOR_HINT)
    if "value" not in item:
        return Admission(False, VALUE_MISSING, path)
    if not item.keys() >= _FILTER_KEYS:
        return Admission(False, FILTER_INCOMPLETE, path)
    return Admission(False, SCALAR_TARGET, path)


def _unit_refusal(filters: Any) -> str | None:
    """Why the filter unit cannot be restructured without a decision, or None."""
    if isinstance(filters, dict):
        units: list[Any] = [filters]
    elif isinstance(filters, list) and filters and isinstance(filters[0], str):
        units = [filters]  # one flat range
    elif isinstance(filters, list):
        units = list(filters)
    else:
        return SCALAR_TARGET
    for unit in units:
        reason = _single_unit_refusal(unit)
        if reason is not None:
            return reason
    return None


def _single_unit_refusal(unit: Any) -> str | None:
    if isinstance(unit, dict):
        if "operator" in unit and unit["operator"] not in FILTER_OPERATORS:
            return OPERATOR_UNKNOWN
        if "value" not in unit:
            return VALUE_MISSING
        if not unit.keys() >= _FILTER_KEYS:
            return FILTER_INCOMPLETE
        return None
    if not isinstance(unit, list):
        return SCALAR_TARGET
    if any(
        isinstance(item, dict) or (isinstance(item, list) and _has_container(item)) for item in unit
    ):
        return NOT_STRUCTURAL
    if flat_filter_groups(unit) is not None:
        return None
    labelled = len(unit) >= 4 and unit[0] == "column" and unit[2] == "operator"
    operators = unit[3::6] if labelled else unit[1::3]
    if any(not isinstance(op, str) or op not in FILTER_OPERATORS for op in operators):
        return OPERATOR_UNKNOWN
    if (labelled and len(unit) % 6 == 4) or (not labelled and len(unit) % 3 == 2):
        return VALUE_MISSING
    return FILTER_INCOMPLETE


def _has_container(items: list[Any]) -> bool:
    return any(isinstance(item, dict | list) for item in items)


def _regroup(filters: Any) -> list[Any] | None:
    """The structural trial of a filter range: the same values, as filter objects."""
    if isinstance(filters, dict):
        return [json_copy(filters)]
    if not isinstance(filters, list):
        return None
    groups = flat_filter_groups(filters)
    if groups is not None:
        return [_as_filter(group) for group in groups]
    result: list[Any] = []
    for item in filters:
        if isinstance(item, dict):
            result.append(json_copy(item))
            continue
        inner = flat_filter_groups(item) if isinstance(item, list) else None
        if inner is None or len(inner) != 1:
            return None
        result.append(_as_filter(inner[0]))
    return result


def _as_filter(group: tuple[Any, Any, Any]) -> dict[str, Any]:
    column, operator, value = group
    return {"column": column, "operator": operator, "value": json_copy(value)}


def _admit_other(
    response: dict[str, Any], focus: str, errors: list[ContractViolation], schema: str
) -> Admission:
    keyword = next((v.keyword for v in errors if v.path == focus), "")
    if keyword == "required":
        return Admission(False, VALUE_MISSING, focus)
    try:
        value = value_at(response, focus)
    except RepairError:
        return Admission(False, VALUE_MISSING, focus)
    if not isinstance(value, dict | list):
        # A scalar in place of a structure, e.g. a prose sentence instead of an
        # evidence object: completing it would need invented values.
        return Admission(False, SCALAR_TARGET, focus)
    if focus == EVIDENCE_RANGE and isinstance(value, dict):
        # A lone evidence object where the list belongs.
        return _trial(response, focus, [json_copy(value)], _evidence_excerpt(schema), schema)
    return Admission(False, NOT_STRUCTURAL, focus)


def _trial(
    response: dict[str, Any], target: str, trial_value: Any, excerpt: dict[str, Any], schema: str
) -> Admission:
    """Admits only when the structural trial passes the whole contract and preservation."""
    trial = splice(response, target, trial_value)
    if check_preservation(response, trial, target):
        return Admission(False, TRIAL_NOT_PRESERVING, target)
    if contract_errors(trial, schema):
        return Admission(False, TRIAL_INVALID, target)
    return Admission(True, ADMITTED, target, excerpt)


# --- Schema excerpts --------------------------------------------------------


def _filters_excerpt(schema: str) -> dict[str, Any]:
    """``filters`` of the project-query alternative, with its local references inlined."""
    definitions = load_schema(schema)["$defs"]
    # The query schema the response version embeds (v1 embeds project-query-v1, v2 -v2).
    (query,) = (v for k, v in definitions.items() if k.startswith("project-query-"))
    excerpt: dict[str, Any] = _inline({"$ref": "#/$defs/filters"}, query["$defs"])
    return excerpt


def _evidence_excerpt(schema: str) -> dict[str, Any]:
    root = load_schema(schema)
    evidence = {"type": "array", "maxItems": 64, "items": {"$ref": "#/$defs/evidence"}}
    excerpt: dict[str, Any] = _inline(evidence, root["$defs"])
    return excerpt


def _inline(schema: Any, definitions: Mapping[str, Any]) -> Any:
    if isinstance(schema, dict):
        reference = schema.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            return _inline(definitions[reference[len("#/$defs/") :]], definitions)
        return {key: _inline(value, definitions) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_inline(item, definitions) for item in schema]
    return schema


# --- Stored plans -----------------------------------------------------------


def recheck_stored_plan(plan: Mapping[str, Any], *, schema: str = RESPONSE_SCHEMA) -> Admission:
    """Re-checks an old stored repair plan before a new provider call.

    A plan holds ``prompt`` (``investigation_format_repair_v1``), the
    ``response`` object and the ``target`` pointer it repairs; other fields
    (such as its historical prompt text) are kept as they are. The plan is
    admitted again only if today's admission admits the same target. It is
    never rewritten: the caller's mapping is not changed.
    """
    response, target = plan.get("response"), plan.get("target")
    if plan.get("prompt") != PROMPT_ID or not isinstance(response, dict):
        return Admission(False, PLAN_MALFORMED)
    if not isinstance(target, str):
        return Admission(False, PLAN_MALFORMED)
    try:
        value = value_at(response, target)
    except RepairError:
        return Admission(False, PLAN_TARGET_UNSUITABLE, target)
    fresh = admit_repair(json_copy(response), target, schema=schema)
    if not isinstance(value, dict | list):
        hint = fresh.hint if fresh.reason == OPERATOR_UNKNOWN else None
        return Admission(False, PLAN_TARGET_UNSUITABLE, target, hint=hint)
    if not fresh.admitted:
        return fresh
    if fresh.target != target:
        return Admission(False, PLAN_TARGET_UNSUITABLE, target)
    return fresh


__all__ = [
    "ADMITTED",
    "EVIDENCE_RANGE",
    "FILTER_INCOMPLETE",
    "FILTER_RANGE",
    "INPUT_TOO_LARGE",
    "NOT_INVALID",
    "NOT_STRUCTURAL",
    "OPERATOR_HINT",
    "OPERATOR_UNKNOWN",
    "PLAN_MALFORMED",
    "PLAN_TARGET_UNSUITABLE",
    "REASONS",
    "SCALAR_TARGET",
    "TRIAL_INVALID",
    "TRIAL_NOT_PRESERVING",
    "UNKNOWN_ACTION",
    "VALUE_MISSING",
    "Admission",
    "admit_repair",
    "recheck_stored_plan",
]
