"""Bounded response-format recovery for investigation LLM responses (SPEC §9).

The parts, in the order a response meets them: a strict JSON parse
(:mod:`.strict_json`), the version-1 normalization rules (:mod:`.normalize`),
the whole contract (:mod:`.contract`), repair admission (:mod:`.admission`),
the small repair call (:mod:`.repair`), the append-only call records
(:mod:`.audit`, :mod:`.records`) and notes for the next regular call
(:mod:`.notes`). :func:`recover_response` (:mod:`.flow`) ties them together
under a :class:`RecoveryPolicy`; :class:`RecoveryPipeline` fixes that policy
for the life of one investigation.
"""

from __future__ import annotations

from viano_bug_analysis.investigation.recovery.audit import (
    CALLS_DIR,
    CallRecordStore,
    StoredCallRecord,
    canonical_json,
)
from viano_bug_analysis.investigation.recovery.contract import ResponseContract
from viano_bug_analysis.investigation.recovery.errors import (
    CallRecordError,
    PolicyError,
    RecoveryError,
)
from viano_bug_analysis.investigation.recovery.flow import (
    REJECTION_REASONS,
    REPAIR_REJECTION_REASONS,
    ProviderReply,
    RecoveryContext,
    RecoveryLimits,
    RecoveryResult,
    RepairProvider,
    pending_repair,
    recover_response,
    resume_repair,
)
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
from viano_bug_analysis.investigation.recovery.notes import (
    RecoveryNote,
    prompt_with_context_notes,
    render_recovery_notes,
    with_recovery_notes,
)
from viano_bug_analysis.investigation.recovery.pipeline import RecoveryPipeline
from viano_bug_analysis.investigation.recovery.policy import (
    DEFAULT_RESPONSE_RECOVERY_VERSION,
    RecoveryPolicy,
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
    "CALLS_DIR",
    "DEFAULT_RESPONSE_RECOVERY_VERSION",
    "MAX_INPUT_BYTES",
    "MAX_NORMALIZATIONS",
    "RECOVERY_MARKER",
    "RECOVERY_POLICY_VERSION",
    "REJECTION_REASONS",
    "REPAIR_REJECTION_REASONS",
    "RULE_IDS",
    "AppliedRule",
    "CallRecordError",
    "CallRecordStore",
    "JsonFailure",
    "NormalizationError",
    "NormalizationOutcome",
    "Parsed",
    "PolicyError",
    "ProviderReply",
    "RecoveryContext",
    "RecoveryError",
    "RecoveryLimits",
    "RecoveryNote",
    "RecoveryPipeline",
    "RecoveryPolicy",
    "RecoveryResult",
    "Refusal",
    "RepairProvider",
    "ResponseContract",
    "StoredCallRecord",
    "canonical_json",
    "normalize_response",
    "parse_strict",
    "pending_repair",
    "prompt_with_context_notes",
    "recover_response",
    "recovery_enabled",
    "render_recovery_notes",
    "resume_repair",
    "schema_has_marker",
    "with_recovery_notes",
]
