"""What a rejected answer is told, in words a model can act on.

:func:`rejection_feedback` turns the violated rules of a rejected response
into short lines: the JSON Pointer at fault, the property, the rule and the
allowed alternatives. Schema failures are described by the package's one
schema-error mapper (:mod:`viano_bug_analysis.schema_errors`), with the
``next`` step resolved through the alternative its ``kind``/``operation``
selects, as the contract itself resolves it. The lines echo pointers,
property names and alternatives from the schema, the visible evidence IDs
and the hints of the citation resolver; never a value of the response.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from viano_bug_analysis.investigation.recovery.contract import (
    CHECK_FAILED,
    CITATION_UNRESOLVED,
    CONTRACT_VIOLATION,
    EVIDENCE_NOT_VISIBLE,
    HYPOTHESIS_MISMATCH,
    UNKNOWN_ACTION,
    ResponseContract,
    unresolved_citations,
)
from viano_bug_analysis.investigation.recovery.repair import (
    RESPONSE_SCHEMA,
    SNAPSHOT_OPERATIONS,
    next_alternative,
)
from viano_bug_analysis.schema_errors import Violation, describe_first
from viano_bug_analysis.vocabulary import FILTER_OPERATORS, OPERATOR_HINT

FILTER_RANGE: Final = "/next/arguments/filters"

MAX_LINES: Final = 6
"""At most this many feedback lines per rejected answer."""

_PARSE_WORDS: Final = {
    "syntax_error": "it is not valid JSON",
    "duplicate_key": "an object in it has the same key twice",
    "non_finite_number": "it has NaN or Infinity, which JSON does not allow",
    "number_too_long": "it has a number with too many digits",
    "too_deep": "it is nested too deeply",
    "invalid_string": "it has an invalid string (a control character or a lone surrogate)",
    "input_too_large": "it is too large",
    "not_utf8": "it is not UTF-8 text",
    "not_an_object": "it is not a JSON object",
    "too_many_normalizations": "it needed too many format corrections",
}

_CHECK_WORDS: Final = {
    "project_research_disabled": (
        "/next/operation: project.query is not available in this investigation (no live "
        "project research); use one of the snapshot operations: " + ", ".join(SNAPSHOT_OPERATIONS)
    ),
}


def rejection_feedback(
    candidate: Any, violations: Sequence[str], contract: ResponseContract
) -> tuple[str, ...]:
    """The feedback lines for a rejected response (``candidate`` is None when unparsed)."""
    lines: list[str] = []
    for code in violations:
        if code in _PARSE_WORDS:
            lines.append(
                f"The answer was not used because {_PARSE_WORDS[code]}: answer with exactly one "
                "JSON object and no text around it."
            )
    if isinstance(candidate, dict):
        if HYPOTHESIS_MISMATCH in violations:
            lines.append(f"/hypothesis_id must be {contract.hypothesis_id}, the hypothesis asked.")
        if EVIDENCE_NOT_VISIBLE in violations:
            lines.append(_not_visible(candidate, contract))
        if UNKNOWN_ACTION in violations or CONTRACT_VIOLATION in violations:
            # A filter the model wrote with an operator of its own (`like`) is told
            # the allowed ones first: the schema line alone names only its shape.
            # The schema's line for that same place would say it again: left out.
            hints = _filter_operator(candidate.get("next"))
            lines += [line for _, line in hints]
            said = {pointer for pointer, _ in hints}
            lines += [
                describe(found)
                for found in schema_violations(candidate)
                if (found.pointer or "/") not in said
            ]
        if CITATION_UNRESOLVED in violations:
            lines += [
                f"{pointer}: {hint}" for pointer, hint in unresolved_citations(candidate, contract)
            ]
        if CHECK_FAILED in violations:
            lines += [_CHECK_WORDS[code] for code in violations if code in _CHECK_WORDS]
    return tuple(dict.fromkeys(lines))[:MAX_LINES]


def describe(violation: Violation) -> str:
    """One violation as a sentence: the pointer, the rule and what is allowed."""
    text = violation.message
    if violation.property is not None and violation.property not in text:
        text += f" (property {violation.property})"
    return f"{violation.pointer or '/'}: {text} [rule {violation.rule}]."


def schema_violations(response: Mapping[str, Any]) -> list[Violation]:
    """The first schema failure outside ``next`` and the first inside it (resolved
    through the alternative its ``kind``/``operation`` selects), where there are."""
    from viano_bug_analysis.schemas import schema_validator

    validator = schema_validator(RESPONSE_SCHEMA)
    step = response.get("next")
    # Everything but the next step first, with a step that is surely valid in its place.
    outer = dict(response)
    if "next" in outer:
        outer["next"] = {"kind": "conclusion", "summary": "-"}
    found = [v for v in (describe_first(validator, outer),) if v is not None]
    if "next" not in response:
        return found
    reference = next_alternative(step)
    if reference is None:
        return [*found, _unknown_action(step)]
    inner = describe_first(validator.evolve(schema={"$ref": reference}), step, ["next"])
    return found if inner is None else [*found, inner]


def _filter_operator(step: Any) -> list[tuple[str, str]]:
    """(pointer, line) for the first filter whose operator is no filter operator, in
    any form the normalizer knows (object, triple, flat list); for a snapshot lookup,
    whose filters are exact values, what to write instead. Names no value of the answer."""
    arguments = step.get("arguments") if isinstance(step, dict) else None
    filters = arguments.get("filters") if isinstance(arguments, dict) else None
    if not isinstance(filters, list):
        return []
    if step.get("operation") == "database.lookup":
        return [
            (
                FILTER_RANGE,
                f"{FILTER_RANGE}: database.lookup has no filter operators: its filters are one "
                'object of exact column values, e.g. {"ID": 90001}; for rows holding a value in '
                "some columns use database.find_references, for a text source.find_text "
                "[rule type].",
            )
        ]
    for pointer, operator in _operators(filters):
        if not (isinstance(operator, str) and operator in FILTER_OPERATORS):
            return [
                (
                    pointer,
                    f"{pointer}: not a filter operator (property operator); {OPERATOR_HINT}; "
                    'write each filter as {"column": ..., "operator": ..., "value": ...} '
                    "[rule operator_unknown].",
                )
            ]
    return []


def _operators(filters: list[Any]) -> list[tuple[str, Any]]:
    """(pointer, operator) of each filter: objects, [column, operator, value] triples,
    or one flat list of triples."""
    if filters and not isinstance(filters[0], dict | list):
        return [(f"{FILTER_RANGE}/{i}", filters[i]) for i in range(1, len(filters), 3)]
    found: list[tuple[str, Any]] = []
    for index, item in enumerate(filters):
        if isinstance(item, dict) and "operator" in item:
            found.append((f"{FILTER_RANGE}/{index}/operator", item["operator"]))
        elif isinstance(item, list) and len(item) == 3:
            found.append((f"{FILTER_RANGE}/{index}/1", item[1]))
    return found


def _unknown_action(step: Any) -> Violation:
    if not isinstance(step, dict):
        return Violation("/next", "type", "value at /next must be object", "next", ("object",))
    if step.get("kind") not in ("tool", "conclusion"):
        allowed = ("tool", "conclusion")
        return Violation(
            "/next/kind",
            "enum",
            "value at /next/kind is not one of the allowed values; allowed: tool, conclusion",
            "kind",
            allowed,
        )
    operations = ("project.query", *SNAPSHOT_OPERATIONS)
    return Violation(
        "/next/operation",
        "enum",
        "value at /next/operation is not one of the allowed values; allowed: "
        + ", ".join(operations),
        "operation",
        operations,
    )


def _not_visible(candidate: Mapping[str, Any], contract: ResponseContract) -> str:
    shown = ", ".join(sorted(contract.visible_evidence_ids, key=_id_order)) or "none yet"
    evidence = candidate.get("evidence")
    items = evidence if isinstance(evidence, list) else []
    at = next(
        (
            f"/evidence/{index}/evidence_id"
            for index, item in enumerate(items)
            if isinstance(item, dict)
            and isinstance(item.get("evidence_id"), str)
            and item["evidence_id"] not in contract.visible_evidence_ids
        ),
        "/evidence",
    )
    return f"{at}: cite only evidence IDs you were shown (shown: {shown}) [rule visible_evidence]."


def _id_order(evidence_id: str) -> int:
    digits = evidence_id[1:]
    return int(digits) if digits.isdigit() and len(digits) < 12 else 0


__all__ = ["MAX_LINES", "describe", "rejection_feedback", "schema_violations"]
