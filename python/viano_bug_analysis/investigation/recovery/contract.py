"""The original contract a response must satisfy before anything runs.

A candidate — parsed, normalized or rebuilt by a repair — is accepted only if
it holds the whole contract: the ``investigation-response-v1`` schema
(resolved through the matching ``next`` alternative), the current hypothesis,
only visible evidence IDs, a conclusion's citations resolving in the stored
evidence (``citation_unresolved``, when the caller gives a ``citations``
check), and the caller's own checks (budget and tool arguments belong to the
controller and come in as ``extra_checks``). A
partial pass is worth nothing: the flow never takes a valid tool request
from beside an invalid assessment.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from viano_bug_analysis.investigation.recovery.repair import (
    RESPONSE_SCHEMA,
    RESPONSE_SCHEMAS,
    contract_errors,
)

# Violation codes.
UNKNOWN_ACTION: Final = "unknown_action"
CONTRACT_VIOLATION: Final = "contract_violation"
HYPOTHESIS_MISMATCH: Final = "hypothesis_mismatch"
EVIDENCE_NOT_VISIBLE: Final = "evidence_not_visible"
CHECK_FAILED: Final = "check_failed"
CITATION_UNRESOLVED: Final = "citation_unresolved"

ExtraCheck = Callable[[Mapping[str, Any]], Sequence[str]]
"""A caller's check of a schema-valid response: the violated codes, empty if it holds."""

CitationCheck = Callable[[str, str], str | None]
"""``(evidence_id, reference)`` to None when the citation resolves in the stored
evidence, else a hint naming what does exist (no response content)."""


@dataclass(frozen=True, slots=True)
class ResponseContract:
    """What the response of one investigation call must satisfy.

    ``schema_marker`` says that the call's request schema carries
    ``x-viano-response-recovery: 1`` (the bundled investigation-response-v1
    does). ``known_columns`` maps a table to its columns, where known, for the
    filter rules. ``extra_checks`` run only on a response that already holds
    the schema, hypothesis and evidence rules. ``schema`` is the bundled
    response schema; only the investigation's own has a repair call (its
    admission knows that schema's structure), any other is parsed, normalized
    and checked the same way but never repaired.
    """

    hypothesis_id: str
    visible_evidence_ids: frozenset[str]
    schema_marker: bool = True
    known_columns: Mapping[str, Collection[str]] | None = None
    extra_checks: tuple[ExtraCheck, ...] = field(default=())
    citations: CitationCheck | None = None
    schema: str = RESPONSE_SCHEMA

    @property
    def repairable(self) -> bool:
        # Both versions of the investigation's own schema: version 2 only widens version 1.
        return self.schema in RESPONSE_SCHEMAS


def cited_evidence_ids(response: Mapping[str, Any]) -> Iterator[str]:
    """Every ``evidence_id`` string the response cites, also in a misshapen ``evidence``."""
    evidence = response.get("evidence")
    items = evidence if isinstance(evidence, list) else [evidence]
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("evidence_id"), str):
            yield item["evidence_id"]


def binding_violations(response: Mapping[str, Any], contract: ResponseContract) -> list[str]:
    """Hypothesis and evidence rules, which hold or fail regardless of structure.

    Checked before any repair, so that no repair call is spent on a response
    that invents evidence or answers for another hypothesis.
    """
    violations = []
    hypothesis = response.get("hypothesis_id")
    if isinstance(hypothesis, str) and hypothesis != contract.hypothesis_id:
        violations.append(HYPOTHESIS_MISMATCH)
    if any(eid not in contract.visible_evidence_ids for eid in cited_evidence_ids(response)):
        violations.append(EVIDENCE_NOT_VISIBLE)
    return violations


def full_violations(response: Any, contract: ResponseContract) -> list[str]:
    """Every violated rule of the whole contract, as codes in check order (empty: it holds)."""
    if not isinstance(response, dict):
        return [CONTRACT_VIOLATION]
    schema_errors = contract_errors(response, contract.schema)
    # The binding rules come first: an invented E-ID says more than the
    # structural error beside it, and either way there is no repair.
    violations = binding_violations(response, contract)
    if any(error.keyword == UNKNOWN_ACTION for error in schema_errors):
        violations.append(UNKNOWN_ACTION)
    elif schema_errors:
        violations.append(CONTRACT_VIOLATION)
    if violations:
        return violations
    if unresolved_citations(response, contract):
        return [CITATION_UNRESOLVED]
    for check in contract.extra_checks:
        failed = list(check(response))
        if failed:
            # The caller's own codes follow, so its rejection path can explain them.
            return [CHECK_FAILED, *failed]
    return []


def unresolved_citations(
    response: Mapping[str, Any], contract: ResponseContract
) -> list[tuple[str, str]]:
    """``(pointer in the response, hint)`` of each citation of a conclusion that does
    not resolve; empty for a tool step, without a check, or when all resolve."""
    step = response.get("next")
    evidence = response.get("evidence")
    if contract.citations is None or not isinstance(step, dict) or not isinstance(evidence, list):
        return []
    if step.get("kind") != "conclusion":
        return []
    found = []
    for index, item in enumerate(evidence):
        if not isinstance(item, dict):
            continue
        evidence_id, reference = item.get("evidence_id"), item.get("reference")
        if isinstance(evidence_id, str) and isinstance(reference, str):
            hint = contract.citations(evidence_id, reference)
            if hint is not None:
                found.append((f"/evidence/{index}/reference", hint))
    return found


__all__ = [
    "CHECK_FAILED",
    "CITATION_UNRESOLVED",
    "CONTRACT_VIOLATION",
    "EVIDENCE_NOT_VISIBLE",
    "HYPOTHESIS_MISMATCH",
    "UNKNOWN_ACTION",
    "CitationCheck",
    "ExtraCheck",
    "ResponseContract",
    "binding_violations",
    "cited_evidence_ids",
    "full_violations",
    "unresolved_citations",
]
