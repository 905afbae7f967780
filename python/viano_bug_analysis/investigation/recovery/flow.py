"""The recovery flow: from a raw investigation response to one decision.

:func:`recover_response` is the one entry point. It returns either a fully
validated response (``accepted``) or a rejection with a stable reason code —
never a partly valid response, so the caller cannot execute a tool request
taken from beside an invalid assessment. In order:

1. normalize (policy 1 on a marked call) or parse strictly (otherwise);
2. check the whole contract (:func:`~.contract.full_violations`);
3. if only the schema failed, ask admission for a repair call; with budget
   left for one more invalid response, store the plan, call the provider
   once with the ``investigation_format_repair_v1`` prompt, parse the reply
   strictly as ``{"replacement": ...}``, splice it in at the admitted path,
   check preservation and the whole contract again.

Every step leaves an append-only call record when an audit store is given.
Transport errors of the provider are not caught: they keep the caller's
failover and retry rules (the plan record then shows a requested repair
without a repair record, see :func:`pending_repair`).

Counting: a response accepted as it is or after normalization costs no
invalid response. A rejected response costs one, and a repair attempt one
more whatever its outcome, against the same invalid-response limit; an
attempt is made only when ``invalid_responses_left`` allows both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

from viano_bug_analysis.investigation.recovery.admission import (
    Admission,
    admit_repair,
    recheck_stored_plan,
)
from viano_bug_analysis.investigation.recovery.audit import (
    CallRecordStore,
    StoredCallRecord,
    text_bytes,
)
from viano_bug_analysis.investigation.recovery.contract import (
    CHECK_FAILED,
    CITATION_UNRESOLVED,
    CONTRACT_VIOLATION,
    EVIDENCE_NOT_VISIBLE,
    HYPOTHESIS_MISMATCH,
    UNKNOWN_ACTION,
    ResponseContract,
    full_violations,
)
from viano_bug_analysis.investigation.recovery.errors import LIMITS_INVALID, RecoveryError
from viano_bug_analysis.investigation.recovery.feedback import rejection_feedback
from viano_bug_analysis.investigation.recovery.normalize import (
    MAX_INPUT_BYTES,
    AppliedRule,
    NormalizationOutcome,
    normalize_response,
    recovery_enabled,
)
from viano_bug_analysis.investigation.recovery.notes import RecoveryNote
from viano_bug_analysis.investigation.recovery.policy import RecoveryPolicy
from viano_bug_analysis.investigation.recovery.records import (
    investigation_fields,
    outcome_entry,
    rejected_repair_entry,
    repair_fields,
    repair_plan,
)
from viano_bug_analysis.investigation.recovery.repair import (
    FILTER_POSITION_CHANGED,
    NAMED_MAPPING_LOST,
    OUTSIDE_PATH_CHANGED,
    PATH_MISSING,
    PROMPT_ID,
    REPAIR_TOO_LARGE,
    REPLY_NOT_JSON,
    REPLY_NOT_REPLACEMENT,
    SCALAR_MULTISET_CHANGED,
    RepairBinding,
    RepairError,
    build_repair_prompt,
    check_preservation,
    parse_replacement,
    splice,
)
from viano_bug_analysis.jsonio import canonical_bytes

# Rejection reasons of the flow itself.
INVALID_RESPONSE_LIMIT: Final = "invalid_response_limit"
REPAIR_REJECTED: Final = "repair_rejected"
PLAN_REJECTED: Final = "repair_plan_rejected"

REJECTION_REASONS: Final = (
    # The strict parse and normalization (the response never became an object).
    "syntax_error",
    "duplicate_key",
    "non_finite_number",
    "number_too_long",
    "too_deep",
    "invalid_string",
    "input_too_large",
    "not_utf8",
    "not_an_object",
    "too_many_normalizations",
    # The contract (no repair for these, except a pure contract_violation).
    UNKNOWN_ACTION,
    CONTRACT_VIOLATION,
    HYPOTHESIS_MISMATCH,
    EVIDENCE_NOT_VISIBLE,
    CITATION_UNRESOLVED,
    CHECK_FAILED,
    # The repair call.
    REPAIR_TOO_LARGE,
    INVALID_RESPONSE_LIMIT,
    REPAIR_REJECTED,
    PLAN_REJECTED,
)
"""Every ``RecoveryResult.reason`` of a rejection."""

REPAIR_REJECTION_REASONS: Final = (
    REPLY_NOT_JSON,
    REPLY_NOT_REPLACEMENT,
    REPAIR_TOO_LARGE,
    PATH_MISSING,
    OUTSIDE_PATH_CHANGED,
    SCALAR_MULTISET_CHANGED,
    NAMED_MAPPING_LOST,
    FILTER_POSITION_CHANGED,
    UNKNOWN_ACTION,
    CONTRACT_VIOLATION,
    HYPOTHESIS_MISMATCH,
    EVIDENCE_NOT_VISIBLE,
    CITATION_UNRESOLVED,
    CHECK_FAILED,
)
"""Every ``outcome.rejected_repair.reason``."""


@dataclass(frozen=True, slots=True)
class ProviderReply:
    """A repair reply with the response format it was asked in (for its call record)."""

    text: str = field(repr=False)
    response_format: Mapping[str, Any] | None = None


class RepairProvider(Protocol):
    """The model behind the repair call: prompt text and the schema excerpt of the
    value to restructure in, raw reply text (or a :class:`ProviderReply`) out.

    Transport failures are raised, as by the regular adapter; they are not
    invalid responses and recovery lets them through unchanged.
    """

    def __call__(
        self, prompt: str, schema_excerpt: Mapping[str, Any] | None, /
    ) -> str | ProviderReply: ...


@dataclass(frozen=True, slots=True)
class RecoveryLimits:
    """Bounds of one recovery.

    ``invalid_responses_left`` is how many invalid responses the
    investigation may still take, this one included; a repair attempt counts
    as one more. ``max_response_bytes`` is the configured response limit: a
    raw text above it is not kept in the audit, and a rejected repair answer
    is kept only within it and within 65,536 bytes.
    """

    invalid_responses_left: int
    max_response_bytes: int = MAX_INPUT_BYTES

    def __post_init__(self) -> None:
        for name in ("invalid_responses_left", "max_response_bytes"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise RecoveryError(
                    LIMITS_INVALID, "recovery limits must be non-negative integers", {"key": name}
                )

    @property
    def rejected_repair_bytes(self) -> int:
        return min(MAX_INPUT_BYTES, self.max_response_bytes)


@dataclass(frozen=True, slots=True)
class RecoveryContext:
    """The regular call's prompt ID and the binding data a repair prompt may carry.

    ``call_key`` optionally names the provider call (e.g. ``H1:3:2`` for
    hypothesis, step, attempt); it goes into its call records. The audit is
    keyed by record content, so rerunning the same decision finds the records
    already stored; the key keeps two calls apart whose replies and outcomes
    happen to be byte-identical.
    """

    prompt_id: str
    hypothesis: str
    previous_result: str
    call_key: str | None = None
    response_format: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RecoveryResult:
    """The one decision about a response.

    ``response`` is set only when ``status`` is ``accepted``, and then it
    holds the whole contract. ``reason`` is set only for a rejection.
    ``invalid_responses`` is what to charge against the invalid-response
    limit, ``provider_calls`` how many repair calls were made (0 or 1).
    ``feedback`` says, for a rejection, what was wrong in words the model can
    act on (:mod:`.feedback`: pointer, property, rule, alternatives).
    Response content is left out of ``repr``, so a logged result leaks none.
    """

    status: Literal["accepted", "rejected"]
    response: dict[str, Any] | None = field(repr=False)
    applied_rules: tuple[AppliedRule, ...] = ()
    notes_for_next_call: tuple[RecoveryNote, ...] = ()
    reason: str | None = None
    violations: tuple[str, ...] = ()
    hint: str | None = None
    provider_calls: int = 0
    invalid_responses: int = 0
    rejected_repair: Mapping[str, Any] | None = field(default=None, repr=False)
    record_seqs: tuple[int, ...] = ()
    feedback: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        return self.status == "accepted"


def recover_response(
    raw_text: str,
    *,
    contract: ResponseContract,
    policy: RecoveryPolicy,
    context: RecoveryContext,
    provider: RepairProvider,
    audit_store: CallRecordStore | None,
    limits: RecoveryLimits,
) -> RecoveryResult:
    """Decides about one raw investigation response (see the module text)."""
    flow = _Flow(contract, policy, context, provider, audit_store, limits)
    return flow.run(raw_text)


class _Flow:
    def __init__(
        self,
        contract: ResponseContract,
        policy: RecoveryPolicy,
        context: RecoveryContext,
        provider: RepairProvider,
        audit_store: CallRecordStore | None,
        limits: RecoveryLimits,
    ) -> None:
        self.contract = contract
        self.version = policy.response_recovery_version
        self.context = context
        self.provider = provider
        self.store = audit_store
        self.limits = limits
        self.enabled = recovery_enabled(
            schema_marker=contract.schema_marker, policy_version=self.version
        )
        self.seqs: list[int] = []

    def run(self, raw_text: str) -> RecoveryResult:
        outcome = normalize_response(
            raw_text,
            schema_marker=self.contract.schema_marker,
            policy_version=self.version,
            known_columns=self.contract.known_columns,
        )
        rules = outcome.applied_rules
        if outcome.normalized is None:
            assert outcome.error is not None  # exactly one of the two is set
            code = outcome.error.code
            self.record(outcome, outcome_entry("rejected", reason=code, parse_error=outcome.error))
            return self.rejected(code, (code,), rules=rules)
        candidate = outcome.normalized
        violations = full_violations(candidate, self.contract)
        if not violations:
            self.record(outcome, outcome_entry("accepted"))
            notes = tuple(RecoveryNote("normalized", a.rule, a.path) for a in rules)
            return self.accepted(candidate, rules, notes)

        admission = self._admission(candidate, violations)
        if admission is None or not admission.admitted:
            details = (*violations, admission.reason) if admission is not None else violations
            hint = admission.hint if admission is not None else None
            entry = outcome_entry("rejected", reason=violations[0], violations=details, hint=hint)
            self.record(outcome, entry)
            return self.rejected(
                violations[0], tuple(details), rules=rules, hint=hint, candidate=candidate
            )
        if self.limits.invalid_responses_left < 2:
            details = (*violations, admission.reason)
            entry = outcome_entry("rejected", reason=INVALID_RESPONSE_LIMIT, violations=details)
            self.record(outcome, entry)
            return self.rejected(INVALID_RESPONSE_LIMIT, details, rules=rules, candidate=candidate)

        try:
            prompt = self.prompt(candidate, admission)
        except RepairError as error:  # a response too large to copy into a prompt
            entry = outcome_entry("rejected", reason=error.code, violations=(error.code,))
            self.record(outcome, entry)
            return self.rejected(error.code, (error.code,), rules=rules, candidate=candidate)
        plan = repair_plan(admission.target, candidate, prompt)
        entry = outcome_entry(
            "repair_requested",
            reason=violations[0],
            violations=(*violations, admission.reason),
            repair_plan=plan,
        )
        source = self.record(outcome, entry)
        return self.attempt(candidate, admission, prompt, source, rules)

    def attempt(
        self,
        candidate: dict[str, Any],
        admission: Admission,
        prompt: str,
        source: StoredCallRecord | None,
        rules: tuple[AppliedRule, ...],
    ) -> RecoveryResult:
        """The one repair call for an admitted, recorded plan, and its checks."""
        target = admission.target
        answered = self.provider(prompt, admission.schema_excerpt)
        if isinstance(answered, ProviderReply):
            reply, sent_format = answered.text, answered.response_format
        else:
            reply, sent_format = answered, None
        check = _check_reply(candidate, target, reply, self.contract, self.limits)
        if source is not None and self.store is not None:
            result = (
                outcome_entry("accepted")
                if check.rebuilt is not None
                else outcome_entry(
                    "rejected",
                    reason=REPAIR_REJECTED,
                    violations=check.violations,
                    rejected_repair=check.rejected_repair,
                )
            )
            fields = repair_fields(
                reply=reply,
                source_seq=source.seq,
                source_sha256=source.sha256,
                target=target,
                prompt=prompt,
                patch=check.patch if check.rebuilt is not None else None,
                rebuilt=check.rebuilt,
                result=result,
                call_key=self.context.call_key,
                response_format=sent_format,
            )
            self.seqs.append(self.store.append(fields).seq)
        if check.rebuilt is None:
            return self.rejected(
                REPAIR_REJECTED,
                check.violations,
                rules=rules,
                calls=1,
                invalid=2,
                rejected_repair=check.rejected_repair,
                candidate=candidate,
            )
        notes = (
            *(RecoveryNote("normalized", a.rule, a.path) for a in rules),
            RecoveryNote("repaired", PROMPT_ID, target),
        )
        return self.accepted(check.rebuilt, rules, notes, calls=1, invalid=2)

    def _admission(self, candidate: dict[str, Any], violations: list[str]) -> Admission | None:
        # Only a pure schema failure can be structural; invented evidence, a
        # foreign hypothesis, an unknown action or a failed caller check never are.
        if not self.enabled or violations != [CONTRACT_VIOLATION] or not self.contract.repairable:
            return None
        return admit_repair(candidate, schema=self.contract.schema)

    def prompt(self, candidate: dict[str, Any], admission: Admission) -> str:
        binding = RepairBinding(
            hypothesis_id=self.contract.hypothesis_id,
            hypothesis=self.context.hypothesis,
            previous_result=self.context.previous_result,
            visible_evidence_ids=tuple(sorted(self.contract.visible_evidence_ids)),
        )
        return build_repair_prompt(
            _prompt_text(candidate), admission.target, admission.schema_excerpt, binding
        )

    def record(
        self, outcome: NormalizationOutcome, result: Mapping[str, Any]
    ) -> StoredCallRecord | None:
        if self.store is None:
            return None
        fields = investigation_fields(
            prompt_id=self.context.prompt_id,
            version=self.version,
            outcome=outcome,
            text_limit=self.limits.max_response_bytes,
            result=result,
            call_key=self.context.call_key,
            response_format=self.context.response_format,
        )
        stored = self.store.append(fields)
        self.seqs.append(stored.seq)
        return stored

    def accepted(
        self,
        response: dict[str, Any],
        rules: tuple[AppliedRule, ...],
        notes: tuple[RecoveryNote, ...],
        *,
        calls: int = 0,
        invalid: int = 0,
    ) -> RecoveryResult:
        if not self.enabled:
            notes = ()  # policy 0 adds nothing to the next prompt
        return RecoveryResult(
            "accepted",
            response,
            applied_rules=rules,
            notes_for_next_call=notes,
            provider_calls=calls,
            invalid_responses=invalid,
            record_seqs=tuple(self.seqs),
        )

    def rejected(
        self,
        reason: str,
        violations: tuple[str, ...],
        *,
        rules: tuple[AppliedRule, ...],
        hint: str | None = None,
        calls: int = 0,
        invalid: int = 1,
        rejected_repair: Mapping[str, Any] | None = None,
        candidate: Any = None,
    ) -> RecoveryResult:
        # What the model is told: the rules the response breaks (the response
        # itself, not a repair proposal), described by pointer and rule.
        broken = full_violations(candidate, self.contract) if candidate is not None else []
        feedback = rejection_feedback(candidate, broken or violations, self.contract)
        return RecoveryResult(
            "rejected",
            None,
            applied_rules=rules,
            reason=reason,
            violations=violations,
            hint=hint,
            provider_calls=calls,
            invalid_responses=invalid,
            rejected_repair=rejected_repair,
            record_seqs=tuple(self.seqs),
            feedback=feedback,
        )


def _prompt_text(candidate: Mapping[str, Any]) -> str:
    """The generated response as the repair prompt shows it.

    Canonical JSON, so that the prompt (and its ``prompt_sha256``) does not
    depend on key order: a first run sees the keys as the model wrote them, a
    restart sees the stored plan, whose keys come back sorted.
    """
    return canonical_bytes(candidate).decode("utf-8")


@dataclass(frozen=True, slots=True)
class _ReplyCheck:
    rebuilt: dict[str, Any] | None
    patch: dict[str, Any] | None
    violations: tuple[str, ...] = ()
    rejected_repair: Mapping[str, Any] | None = None


def _check_reply(
    candidate: dict[str, Any],
    target: str,
    reply: str,
    contract: ResponseContract,
    limits: RecoveryLimits,
) -> _ReplyCheck:
    """Strict reply parse, splice at the admitted path, preservation, whole contract."""
    limit = limits.rejected_repair_bytes

    def reject(codes: list[str], patch: dict[str, Any] | None) -> _ReplyCheck:
        entry = rejected_repair_entry(
            codes, patch=patch, original_text=reply if patch is None else None, limit=limit
        )
        return _ReplyCheck(None, patch, tuple(codes), entry)

    if len(text_bytes(reply)) > limit:
        return reject([REPAIR_TOO_LARGE], None)  # neither cut nor partly used
    try:
        replacement = parse_replacement(reply)
    except RepairError as error:
        return reject([error.code], None)
    patch = {"path": target, "replacement": replacement}
    rebuilt = splice(candidate, target, replacement)
    violations = check_preservation(candidate, rebuilt, target)
    if violations:
        return reject(violations, patch)
    violations = full_violations(rebuilt, contract)
    if violations:
        return reject(violations, patch)
    return _ReplyCheck(rebuilt, patch)


# --- Resumption ---------------------------------------------------------------


def pending_repair(store: CallRecordStore) -> StoredCallRecord | None:
    """The last record whose requested repair has no repair record yet, if any.

    That happens when the process stopped, or the transport failed, between
    storing the plan and storing the repair call.
    """
    records = store.list()
    answered = {
        r.document["repair"]["source_seq"] for r in records if r.document["repair"] is not None
    }
    for record in reversed(records):
        outcome = record.document["outcome"]
        if outcome["status"] == "repair_requested" and record.seq not in answered:
            return record
    return None


def resume_repair(
    source: StoredCallRecord,
    *,
    contract: ResponseContract,
    policy: RecoveryPolicy,
    context: RecoveryContext,
    provider: RepairProvider,
    audit_store: CallRecordStore,
    limits: RecoveryLimits,
) -> RecoveryResult:
    """Carries out a stored repair plan after a restart.

    The plan is re-checked first (:func:`~.admission.recheck_stored_plan`:
    unsuitable targets and operators stop it before any provider call) and
    is never rewritten; the new repair record carries the hash of the prompt
    actually sent. The original response was already charged, so only the
    attempt itself needs budget here.
    """
    flow = _Flow(contract, policy, context, provider, audit_store, limits)
    plan = source.document["outcome"]["repair_plan"]
    rules = tuple(AppliedRule(a["rule"], a["path"]) for a in source.document["applied_rules"])
    if plan is None or not flow.enabled:
        return flow.rejected(PLAN_REJECTED, (PLAN_REJECTED,), rules=rules, invalid=0)
    admission = recheck_stored_plan(plan, schema=contract.schema)
    if not admission.admitted:
        return flow.rejected(
            PLAN_REJECTED,
            (PLAN_REJECTED, admission.reason),
            rules=rules,
            hint=admission.hint,
            invalid=0,
        )
    if limits.invalid_responses_left < 1:
        return flow.rejected(
            INVALID_RESPONSE_LIMIT, (INVALID_RESPONSE_LIMIT,), rules=rules, invalid=0
        )
    candidate: dict[str, Any] = plan["response"]
    violations = full_violations(candidate, contract)
    if violations != [CONTRACT_VIOLATION]:
        return flow.rejected(PLAN_REJECTED, (PLAN_REJECTED, *violations), rules=rules, invalid=0)
    prompt = flow.prompt(candidate, admission)
    result = flow.attempt(candidate, admission, prompt, source, rules)
    # Only the attempt is charged now: the original response was charged before the stop.
    return dataclasses.replace(result, invalid_responses=1)


__all__ = [
    "INVALID_RESPONSE_LIMIT",
    "PLAN_REJECTED",
    "REJECTION_REASONS",
    "REPAIR_REJECTED",
    "REPAIR_REJECTION_REASONS",
    "ProviderReply",
    "RecoveryContext",
    "RecoveryLimits",
    "RecoveryResult",
    "RepairProvider",
    "pending_repair",
    "recover_response",
    "resume_repair",
]
