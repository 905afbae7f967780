"""The checkpoint state machine: states, record kinds, and what a legal step is.

Pure rules, no files: ``checkpoints.CheckpointStore`` stores what they allow
(see docs/budget-and-checkpoints.md).

States and allowed moves (``TRANSITIONS``)::

    (empty)        -> investigation
    investigation  -> investigation | blocked | concluded
    blocked        -> <resume_state>      only by an operator resume
    concluded      -> investigation       only as ``event: reopened`` (a later case
                                          revision added hypotheses; ``allowed_transition``)

A ``blocked`` checkpoint carries ``code`` (``RESEARCH_UNAVAILABLE``,
``INVALID_LLM_RESPONSES``, ...), ``resume_state``, and optionally
``retry_not_before`` and ``feedback_lock``. A resume before the retry time, or
while a feedback lock is set, is refused; only an operator can clear the lock,
and that is itself a recorded checkpoint.

A *technical rejection* (a refused tool call, a research error) is its own
record kind. It carries a code and references (hypothesis, step, request
hash) and nothing else: no payload and no state change, so it cannot end a
hypothesis or change an evidence rating. The reader rejects any such record
that tries to carry more.

The same rules check a checkpoint before it is written (``CheckpointStore``)
and every stored one when the log is replayed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from viano_bug_analysis.case.canonical import MAX_SAFE_INTEGER, canonical_bytes, parse_json
from viano_bug_analysis.errors import CheckpointError, VbaError
from viano_bug_analysis.investigation.append_log import AppendOnlyLog, format_time, is_time

INVESTIGATION = "investigation"
BLOCKED = "blocked"
CONCLUDED = "concluded"
STATES = frozenset({INVESTIGATION, BLOCKED, CONCLUDED})
RESUMABLE_STATES = frozenset({INVESTIGATION})

# Moves ``advance`` makes on its own. Leaving ``blocked`` is not listed: it
# needs an operator (``resume``), and ``concluded`` is terminal.
TRANSITIONS: Mapping[str | None, frozenset[str]] = MappingProxyType(
    {
        None: frozenset({INVESTIGATION}),
        INVESTIGATION: frozenset({INVESTIGATION, BLOCKED, CONCLUDED}),
        BLOCKED: frozenset(),
        CONCLUDED: frozenset(),
    }
)

# The one move out of ``concluded``: a case revision added hypotheses after the
# others concluded, and the investigation goes on with them. It names the
# revision, so a reopening is tied to the case change that caused it.
REOPENED = "reopened"


def allowed_transition(before: str | None, state: str, payload: Mapping[str, Any]) -> bool:
    """Whether ``advance`` may move from ``before`` to ``state`` with ``payload``."""
    if state in TRANSITIONS[before]:
        return True
    return (
        before == CONCLUDED
        and state == INVESTIGATION
        and payload.get("event") == REOPENED
        and type(payload.get("analysis_revision")) is int
    )


RESEARCH_UNAVAILABLE = "RESEARCH_UNAVAILABLE"
INVALID_LLM_RESPONSES = "INVALID_LLM_RESPONSES"

TRANSITION = "transition"
RESUME = "resume"
LOCK_CLEARED = "lock_cleared"
TECHNICAL_REJECTION = "technical_rejection"
KINDS = frozenset({TRANSITION, RESUME, LOCK_CLEARED, TECHNICAL_REJECTION})

FORMAT = "viano-checkpoint"
_BLOCK_CODE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
_LOWER_ID = re.compile(r"[a-z][a-z0-9_]{0,63}")
_OPERATOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,127}")
_HYPOTHESIS = re.compile(r"H[1-9][0-9]{0,5}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_DOC_KEYS = frozenset(
    {"format", "format_version", "seq", "kind", "time", "state", "blocked", "operator"}
    | {"payload", "rejection"}
)
_REJECTION_KEYS = frozenset({"code", "hypothesis", "step", "request_sha256"})


@dataclass(frozen=True, slots=True)
class BlockedStatus:
    """Why a case is blocked and how it may resume."""

    code: str
    resume_state: str
    retry_not_before: str | None = None  # a stored time string (format_time)
    feedback_lock: str | None = None  # a reason id; set means "operator must clear"

    def to_record(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "resume_state": self.resume_state,
            "retry_not_before": self.retry_not_before,
            "feedback_lock": self.feedback_lock,
        }


@dataclass(frozen=True, slots=True)
class TechnicalRejection:
    """A refused tool call or research error. References only, no verdicts."""

    code: str
    hypothesis: str | None = None
    step: int | None = None
    request_sha256: str | None = None

    def to_record(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "hypothesis": self.hypothesis,
            "step": self.step,
            "request_sha256": self.request_sha256,
        }


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One stored checkpoint. ``payload`` is a read-only view."""

    seq: int
    kind: str
    state: str
    time: str
    blocked: BlockedStatus | None
    operator: str | None
    payload: Mapping[str, Any] = field(repr=False)
    rejection: TechnicalRejection | None

    @property
    def resume_state(self) -> str | None:
        return None if self.blocked is None else self.blocked.resume_state

    def payload_dict(self) -> dict[str, Any]:
        """A private, mutable deep copy of the payload."""
        copied: dict[str, Any] = parse_json(canonical_bytes(dict(self.payload)))
        return copied


def checkpoint_from(
    document: Mapping[str, Any], previous: Checkpoint | None, log: AppendOnlyLog
) -> Checkpoint:
    """The checkpoint in ``document``, after checking its fields and that it is a
    legal step from ``previous`` (the newest state-setting checkpoint)."""

    def bad(reason: str) -> VbaError:
        return log.corrupt(reason, seq=document.get("seq") if isinstance(document, dict) else 0)

    if set(document) != _DOC_KEYS or document["format"] != FORMAT:
        raise bad("a checkpoint has unexpected fields")
    if document["format_version"] != 1 or not is_time(document["time"]):
        raise bad("a checkpoint has an unknown version or a bad time")
    kind, state, time = document["kind"], document["state"], document["time"]
    operator, payload = document["operator"], document["payload"]
    try:
        blocked = _parse_blocked(document["blocked"])
        rejection = _parse_rejection(document["rejection"])
    except _Invalid:
        raise bad("a checkpoint has invalid blocked or rejection fields") from None
    if state not in STATES or not isinstance(payload, dict):
        raise bad("a checkpoint has an unknown state or a payload that is not an object")
    if operator is not None and not (isinstance(operator, str) and _OPERATOR.fullmatch(operator)):
        raise bad("a checkpoint names an invalid operator")
    if not _legal_step(kind, state, time, blocked, operator, payload, rejection, previous):
        raise bad("a checkpoint is not an allowed step from the one before")
    return Checkpoint(
        seq=document["seq"],
        kind=kind,
        state=state,
        time=time,
        blocked=blocked,
        operator=operator,
        payload=MappingProxyType(parse_json(canonical_bytes(payload))),
        rejection=rejection,
    )


def _legal_step(
    kind: str,
    state: str,
    time: str,
    blocked: BlockedStatus | None,
    operator: str | None,
    payload: dict[str, Any],
    rejection: TechnicalRejection | None,
    previous: Checkpoint | None,
) -> bool:
    before = None if previous is None else previous.state
    held = None if previous is None else previous.blocked
    if kind == TRANSITION:
        return (
            allowed_transition(before, state, payload)
            and (blocked is not None) == (state == BLOCKED)
            and operator is None
            and rejection is None
        )
    if kind == RESUME:
        return (
            held is not None
            and held.feedback_lock is None
            and (held.retry_not_before is None or time >= held.retry_not_before)
            and state == held.resume_state
            and blocked is None
            and operator is not None
            and rejection is None
        )
    if kind == LOCK_CLEARED:
        return (
            held is not None
            and held.feedback_lock is not None
            and state == BLOCKED
            and blocked == BlockedStatus(held.code, held.resume_state, held.retry_not_before)
            and operator is not None
            and rejection is None
        )
    # A technical rejection: no state change, no payload, no operator.
    return (
        kind == TECHNICAL_REJECTION
        and before == INVESTIGATION
        and state == INVESTIGATION
        and blocked is None
        and operator is None
        and payload == {}
        and rejection is not None
    )


class _Invalid(Exception):
    """A stored field is malformed (turned into ``checkpoint_log_corrupt``)."""


def _parse_blocked(value: object) -> BlockedStatus | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {
        "code",
        "resume_state",
        "retry_not_before",
        "feedback_lock",
    }:
        raise _Invalid
    code, resume_state = value["code"], value["resume_state"]
    retry, lock = value["retry_not_before"], value["feedback_lock"]
    if not (isinstance(code, str) and _BLOCK_CODE.fullmatch(code)):
        raise _Invalid
    if resume_state not in RESUMABLE_STATES or not (retry is None or is_time(retry)):
        raise _Invalid
    if lock is not None and not (isinstance(lock, str) and _LOWER_ID.fullmatch(lock)):
        raise _Invalid
    return BlockedStatus(code, resume_state, retry, lock)


def _parse_rejection(value: object) -> TechnicalRejection | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not valid_rejection(value):
        raise _Invalid
    return TechnicalRejection(
        value["code"], value["hypothesis"], value["step"], value["request_sha256"]
    )


def valid_rejection(value: Mapping[str, Any]) -> bool:
    if set(value) != _REJECTION_KEYS:
        return False
    code, hypothesis = value["code"], value["hypothesis"]
    step, digest = value["step"], value["request_sha256"]
    return (
        isinstance(code, str)
        and _LOWER_ID.fullmatch(code) is not None
        and (
            hypothesis is None
            or (isinstance(hypothesis, str) and bool(_HYPOTHESIS.fullmatch(hypothesis)))
        )
        and (step is None or (type(step) is int and 0 <= step <= MAX_SAFE_INTEGER))
        and (digest is None or (isinstance(digest, str) and bool(_SHA256.fullmatch(digest))))
    )


def blocked_status(
    code: str | None,
    resume_state: str | None,
    retry_not_before: datetime | None,
    feedback_lock: str | None,
) -> BlockedStatus:
    if not (isinstance(code, str) and _BLOCK_CODE.fullmatch(code)):
        raise argument_invalid(
            "a blocked checkpoint needs a code like RESEARCH_UNAVAILABLE", "code"
        )
    if resume_state not in RESUMABLE_STATES:
        raise argument_invalid("resume_state must be a resumable state", "resume_state")
    retry = None
    if retry_not_before is not None:
        if not isinstance(retry_not_before, datetime) or retry_not_before.tzinfo is None:
            raise argument_invalid("retry_not_before must be an aware datetime", "retry_not_before")
        retry = format_time(retry_not_before)
    if feedback_lock is not None and not (
        isinstance(feedback_lock, str) and _LOWER_ID.fullmatch(feedback_lock)
    ):
        raise argument_invalid("feedback_lock is a lowercase reason id", "feedback_lock")
    return BlockedStatus(code, resume_state, retry, feedback_lock)


def check_operator(operator: object) -> None:
    if not (isinstance(operator, str) and _OPERATOR.fullmatch(operator)):
        raise argument_invalid("the operator is 1-128 characters [A-Za-z0-9._@-]", "operator")


def argument_invalid(reason: str, argument: str = "") -> CheckpointError:
    return CheckpointError(
        "checkpoint_argument_invalid",
        f"invalid checkpoint argument: {reason}",
        {"argument": argument, "reason": reason},
    )


def transition_refused(reason: str, **details: Any) -> CheckpointError:
    return CheckpointError(
        "checkpoint_transition_refused",
        f"checkpoint refused: {reason}",
        {"reason": reason, **details},
    )


__all__ = [
    "BLOCKED",
    "CONCLUDED",
    "FORMAT",
    "INVALID_LLM_RESPONSES",
    "INVESTIGATION",
    "KINDS",
    "LOCK_CLEARED",
    "REOPENED",
    "RESEARCH_UNAVAILABLE",
    "RESUMABLE_STATES",
    "RESUME",
    "STATES",
    "TECHNICAL_REJECTION",
    "TRANSITION",
    "TRANSITIONS",
    "BlockedStatus",
    "Checkpoint",
    "TechnicalRejection",
    "allowed_transition",
    "argument_invalid",
    "blocked_status",
    "check_operator",
    "checkpoint_from",
    "transition_refused",
    "valid_rejection",
]
