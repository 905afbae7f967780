"""The checkpoints of one investigation: append-only, atomic, replayed on open.

A checkpoint is one file ``analysis/checkpoints/<seq>-<kind>.json`` in the case
package, numbered from 1 without gaps and never rewritten. Each holds the
investigation ``state`` after it, the time, and a payload (the confirmed plan,
a reservation key, the hypothesis and step ... whatever the controller needs
to resume). See docs/budget-and-checkpoints.md.

Three modules, one job each: ``append_log`` writes and strictly reads the
numbered files, ``checkpoint_rules`` is the state machine (which step may
follow which), ``manifest_sync`` publishes the current state into the
manifest. This store ties them together under one lock.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from viano_bug_analysis.case.canonical import canonical_bytes
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import CaseError, CheckpointError, PackageFileError
from viano_bug_analysis.investigation.append_log import (
    AppendOnlyLog,
    LogEntry,
    format_time,
    parse_time,
    utc_now,
)
from viano_bug_analysis.investigation.checkpoint_rules import (
    BLOCKED,
    CONCLUDED,
    FORMAT,
    INVALID_LLM_RESPONSES,
    INVESTIGATION,
    KINDS,
    LOCK_CLEARED,
    REOPENED,
    RESEARCH_UNAVAILABLE,
    RESUMABLE_STATES,
    RESUME,
    STATES,
    TECHNICAL_REJECTION,
    TRANSITION,
    TRANSITIONS,
    BlockedStatus,
    Checkpoint,
    TechnicalRejection,
    allowed_transition,
    argument_invalid,
    blocked_status,
    check_operator,
    checkpoint_from,
    transition_refused,
    valid_rejection,
)
from viano_bug_analysis.investigation.manifest_sync import manifest_status, write_manifest_status

CHECKPOINTS_DIR = PackageLayout.CHECKPOINTS


class CheckpointStore:
    """The checkpoints of one case package, read and verified on construction.

    ``now`` is injectable for tests; it must return an aware ``datetime``.
    One store object per package and process: the sequence number lives in
    memory between writes.
    """

    def __init__(
        self,
        package: PackageLayout | str | os.PathLike[str],
        *,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self._log = AppendOnlyLog(
            package, CHECKPOINTS_DIR, KINDS, error=CheckpointError, prefix="checkpoint_log"
        )
        self._now = now
        self._lock = threading.Lock()
        self._history = self._replay()

    @property
    def package_path(self) -> Path:
        return self._log.package_path

    @property
    def layout(self) -> PackageLayout:
        return self._log.layout

    # -- reading -----------------------------------------------------------------

    def history(self) -> list[Checkpoint]:
        """Every checkpoint, oldest first."""
        with self._lock:
            return list(self._history)

    def latest(self) -> Checkpoint | None:
        """The newest record of any kind, technical rejections included."""
        with self._lock:
            return self._history[-1] if self._history else None

    def current(self) -> Checkpoint | None:
        """The newest record that set the state (not a technical rejection): the
        one whose state, blocked status and payload a resuming controller uses."""
        with self._lock:
            return self._current()

    @property
    def state(self) -> str | None:
        current = self.current()
        return None if current is None else current.state

    # -- writing -----------------------------------------------------------------

    def advance(
        self,
        to_state: str,
        *,
        code: str | None = None,
        resume_state: str | None = None,
        retry_not_before: datetime | None = None,
        feedback_lock: str | None = None,
        operator: str | None = None,
        **payload: Any,
    ) -> Checkpoint:
        """Records a move to ``to_state`` with ``payload`` (canonical JSON values).

        From ``blocked`` this is an operator resume and requires ``operator``
        and ``to_state`` equal to the stored ``resume_state`` (see ``resume``).
        A move to ``blocked`` requires ``code`` and ``resume_state``.
        """
        with self._lock:
            current = self._current()
            if current is not None and current.state == BLOCKED:
                if to_state != current.resume_state:
                    raise transition_refused("a blocked case resumes only into its resume_state")
                if code or resume_state or retry_not_before or feedback_lock:
                    raise argument_invalid("a resume carries no blocking fields")
                return self._resume(current, operator, payload)
            if operator is not None:
                raise argument_invalid("an operator is only recorded when resuming", "operator")
            from_state = None if current is None else current.state
            if to_state not in STATES:
                raise argument_invalid("unknown state", "to_state")
            if not allowed_transition(from_state, to_state, payload):
                raise transition_refused(
                    "this transition is not allowed",
                    from_state=from_state or "none",
                    to_state=to_state,
                )
            blocked = None
            if to_state == BLOCKED:
                blocked = blocked_status(code, resume_state, retry_not_before, feedback_lock)
            elif code or resume_state or retry_not_before or feedback_lock:
                raise argument_invalid("blocking fields belong to a move to 'blocked'")
            return self._append(TRANSITION, to_state, blocked, None, dict(payload), None)

    def resume(self, operator: str, **payload: Any) -> Checkpoint:
        """An operator resumes a blocked case into its ``resume_state``.

        Refused before ``retry_not_before`` and while a feedback lock is set.
        The blocked checkpoint's payload (for example the confirmed plan and
        its reservation key) is carried into the resume checkpoint; keys given
        here are added on top.
        """
        with self._lock:
            current = self._current()
            if current is None or current.state != BLOCKED:
                raise CheckpointError("checkpoint_not_blocked", "the case is not blocked")
            return self._resume(current, operator, payload)

    def clear_feedback_lock(self, operator: str) -> Checkpoint:
        """An operator clears the feedback lock of a blocked case (recorded)."""
        check_operator(operator)
        with self._lock:
            current = self._current()
            if current is None or current.blocked is None or current.blocked.feedback_lock is None:
                raise CheckpointError(
                    "checkpoint_no_feedback_lock", "the case has no feedback lock to clear"
                )
            unlocked = BlockedStatus(
                current.blocked.code,
                current.blocked.resume_state,
                current.blocked.retry_not_before,
                None,
            )
            return self._append(
                LOCK_CLEARED, BLOCKED, unlocked, operator, current.payload_dict(), None
            )

    def record_technical_rejection(
        self,
        code: str,
        *,
        hypothesis: str | None = None,
        step: int | None = None,
        request_sha256: str | None = None,
    ) -> Checkpoint:
        """Records a technical rejection without changing the state.

        There is deliberately no payload: a technical rejection never ends a
        hypothesis or changes an evidence rating, so it has nowhere to say so.
        """
        rejection = TechnicalRejection(code, hypothesis, step, request_sha256)
        if not valid_rejection(rejection.to_record()):
            raise argument_invalid("invalid technical rejection fields", "code")
        with self._lock:
            current = self._current()
            if current is None or current.state != INVESTIGATION:
                raise transition_refused(
                    "technical rejections are recorded during an investigation"
                )
            return self._append(TECHNICAL_REJECTION, INVESTIGATION, None, None, {}, rejection)

    def sync_manifest(self) -> bool:
        """Writes the current state into ``manifest.json`` (``phase``, ``status``).

        Returns whether the file changed. Call it after ``advance``: the
        checkpoint is the truth, the manifest a summary that a crash between
        the two leaves one step behind until the next call.
        """
        current = self.current()
        if current is None:
            raise CheckpointError("checkpoint_log_empty", "there is no checkpoint to publish")
        phase, status = manifest_status(current)
        return write_manifest_status(self.layout, phase=phase, status=status)

    # -- internals ---------------------------------------------------------------

    def _current(self) -> Checkpoint | None:
        for checkpoint in reversed(self._history):
            if checkpoint.kind != TECHNICAL_REJECTION:
                return checkpoint
        return None

    def _resume(
        self, current: Checkpoint, operator: str | None, payload: Mapping[str, Any]
    ) -> Checkpoint:
        if operator is None:
            raise CheckpointError(
                "checkpoint_operator_required", "leaving 'blocked' needs an operator resume"
            )
        check_operator(operator)
        blocked = current.blocked
        assert blocked is not None
        if blocked.feedback_lock is not None:
            raise CheckpointError(
                "checkpoint_feedback_locked",
                "the case waits for operator feedback; clear the lock first",
                {"feedback_lock": blocked.feedback_lock},
            )
        now = format_time(self._now())
        if blocked.retry_not_before is not None and now < blocked.retry_not_before:
            raise CheckpointError(
                "checkpoint_retry_too_early",
                "the retry time of the blocked checkpoint has not come yet",
                {"retry_not_before": blocked.retry_not_before},
            )
        carried = {**current.payload_dict(), **payload}
        return self._append(RESUME, blocked.resume_state, None, operator, carried, None, now)

    def _append(
        self,
        kind: str,
        state: str,
        blocked: BlockedStatus | None,
        operator: str | None,
        payload: dict[str, Any],
        rejection: TechnicalRejection | None,
        time: str | None = None,
    ) -> Checkpoint:
        try:
            canonical_bytes(payload)
        except CaseError as err:
            raise argument_invalid("the payload is not a canonical JSON value", "payload") from err
        seq = len(self._history) + 1
        document = {
            "format": FORMAT,
            "format_version": 1,
            "seq": seq,
            "kind": kind,
            "time": time or format_time(self._now()),
            "state": state,
            "blocked": None if blocked is None else blocked.to_record(),
            "operator": operator,
            "payload": payload,
            "rejection": None if rejection is None else rejection.to_record(),
        }
        checkpoint = checkpoint_from(document, self._current(), self._log)
        try:
            self._log.append(seq, kind, document)
        except (CheckpointError, PackageFileError):
            # The entry may or may not be on disk (e.g. the directory fsync
            # failed after the link): re-read so memory matches the disk.
            self._history = self._replay()
            raise
        self._history.append(checkpoint)
        return checkpoint

    def _replay(self) -> list[Checkpoint]:
        history: list[Checkpoint] = []
        current: Checkpoint | None = None
        for entry in self._log.read():
            checkpoint = checkpoint_from(entry.document, current, self._log)
            history.append(checkpoint)
            if checkpoint.kind != TECHNICAL_REJECTION:
                current = checkpoint
        return history


__all__ = [
    "BLOCKED",
    "CHECKPOINTS_DIR",
    "CONCLUDED",
    "INVALID_LLM_RESPONSES",
    "INVESTIGATION",
    "KINDS",
    "REOPENED",
    "RESEARCH_UNAVAILABLE",
    "RESUMABLE_STATES",
    "STATES",
    "TRANSITIONS",
    "AppendOnlyLog",
    "BlockedStatus",
    "Checkpoint",
    "CheckpointError",
    "CheckpointStore",
    "LogEntry",
    "TechnicalRejection",
    "format_time",
    "manifest_status",
    "parse_time",
    "write_manifest_status",
]
