"""Bounded response-format recovery for investigation LLM responses (SPEC §9).

This package holds the deterministic part: a strict JSON parse
(:mod:`.strict_json`) and the version-1 normalization rules
(:mod:`.normalize`). Repair admission and the small repair call build on it.
"""

from __future__ import annotations

from viano_bug_analysis.investigation.recovery.normalize import (
    MAX_INPUT_BYTES,
    MAX_NORMALIZATIONS,
    RECOVERY_POLICY_VERSION,
    RULE_IDS,
    AppliedRule,
    NormalizationError,
    NormalizationOutcome,
    Refusal,
    normalize_response,
    recovery_enabled,
)
from viano_bug_analysis.investigation.recovery.strict_json import (
    JsonFailure,
    Parsed,
    parse_strict,
)

RECOVERY_MARKER = "x-viano-response-recovery"
"""The request-schema keyword that marks a call as recovery-enabled (value 1)."""


def schema_has_marker(schema: object) -> bool:
    """Whether a request schema carries ``"x-viano-response-recovery": 1``."""
    if not isinstance(schema, dict):
        return False
    marker = schema.get(RECOVERY_MARKER)
    return type(marker) is int and marker == 1


__all__ = [
    "MAX_INPUT_BYTES",
    "MAX_NORMALIZATIONS",
    "RECOVERY_MARKER",
    "RECOVERY_POLICY_VERSION",
    "RULE_IDS",
    "AppliedRule",
    "JsonFailure",
    "NormalizationError",
    "NormalizationOutcome",
    "Parsed",
    "Refusal",
    "normalize_response",
    "parse_strict",
    "recovery_enabled",
    "schema_has_marker",
]
