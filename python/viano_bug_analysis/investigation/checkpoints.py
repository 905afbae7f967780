"""Append-only, atomic checkpoints of an investigation, and the manifest status.

A checkpoint is one file ``analysis/checkpoints/<seq>-<kind>.json`` in the case
package, numbered from 1 without gaps and never rewritten. Each holds the
investigation ``state`` after it, the time, and a payload (the confirmed plan,
a reservation key, the hypothesis and step ... whatever the controller needs
to resume). See docs/budget-and-checkpoints.md.

States and allowed moves (``TRANSITIONS``)::

    (empty)        -> investigation
    investigation  -> investigation | blocked | concluded
    blocked        -> <resume_state>      only by an operator resume
    concluded      -> (nothing: terminal)

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

The append-only file mechanics (``AppendOnlyLog``) are shared with the budget
journal (``budget.py``).
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from viano_bug_analysis.case.canonical import (
    MAX_SAFE_INTEGER,
    JsonRejected,
    canonical_bytes,
    parse_json,
)
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import CaseError, CheckpointError, PackageFileError, VbaError
from viano_bug_analysis.schemas import schema_validator

# -- append-only files -------------------------------------------------------------

SEQ_DIGITS = 8
MAX_SEQ = 10**SEQ_DIGITS - 1
_ENTRY_NAME = re.compile(r"([0-9]{8})-([a-z][a-z_]{0,31})\.json")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")


def format_time(moment: datetime) -> str:
    """UTC, fixed width, so that stored times compare correctly as strings."""
    if moment.tzinfo is None:
        raise ValueError("a timezone-aware datetime is required")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def is_time(value: object) -> bool:
    return isinstance(value, str) and _TIME.fullmatch(value) is not None


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One verified entry: its number, kind and parsed document."""

    seq: int
    kind: str
    document: dict[str, Any]


class AppendOnlyLog:
    """A directory of numbered, write-once JSON files inside a package.

    Writing: the canonical JSON bytes go to a hidden temporary file in the same
    directory, are fsynced, then hard-linked to ``<seq>-<kind>.json``
    (``os.link`` never replaces an existing file), the temporary name is
    removed and the directory fsynced. A crash leaves either no entry or the
    complete one, plus possibly a hidden temporary file, which readers skip.

    Reading is strict: every visible file must be named ``<seq>-<kind>.json``
    with a known kind, hold canonical JSON whose ``seq`` and ``kind`` match
    the name, and the numbers must run 1, 2, ... without gap or repeat.
    Anything else is corruption (``<prefix>_corrupt``), never skipped: a torn
    or foreign file must not be replayed as if it were valid.
    """

    def __init__(
        self,
        package: PackageLayout | str | os.PathLike[str],
        relative_dir: PurePosixPath,
        kinds: frozenset[str],
        *,
        error: type[VbaError],
        prefix: str,
        max_entry_bytes: int = 1024 * 1024,
    ) -> None:
        self.layout = PackageLayout.of(package)
        self.package_path = self.layout.root
        self.relative_dir = relative_dir
        self.directory = self.layout.path(relative_dir)
        self.kinds = kinds
        self._error = error
        self._prefix = prefix
        self._max_entry_bytes = max_entry_bytes

    def corrupt(self, reason: str, **details: Any) -> VbaError:
        return self._error(
            f"{self._prefix}_corrupt",
            f"the {self._prefix.replace('_', ' ')} is corrupt: {reason}",
            {"reason": reason, **details},
        )

    def read(self) -> list[LogEntry]:
        """Every entry in order, verified. A missing directory is an empty log."""
        directory = self._checked_directory(create=False)
        if directory is None:
            return []
        found: dict[int, str] = {}
        with os.scandir(directory) as listing:
            names = [entry.name for entry in listing]
        for name in names:
            if name.startswith("."):
                continue  # a temporary file left by an interrupted write
            match = _ENTRY_NAME.fullmatch(name)
            if match is None or match.group(2) not in self.kinds:
                raise self.corrupt("unexpected file in the log directory")
            seq = int(match.group(1))
            if seq in found:
                raise self.corrupt("two entries share a sequence number", seq=seq)
            found[seq] = match.group(2)
        if sorted(found) != list(range(1, len(found) + 1)):
            raise self.corrupt("the sequence numbers have a gap")
        return [self._read_entry(directory, seq, found[seq]) for seq in sorted(found)]

    def _read_entry(self, directory: Path, seq: int, kind: str) -> LogEntry:
        name = f"{seq:0{SEQ_DIGITS}d}-{kind}.json"
        try:
            fd = os.open(directory / name, _OPEN_FLAGS)
        except OSError as err:
            raise self.corrupt(
                "an entry cannot be opened", seq=seq, kind=type(err).__name__
            ) from None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise self.corrupt("an entry is not a regular file", seq=seq)
            data = handle.read(self._max_entry_bytes + 1)
        if len(data) > self._max_entry_bytes:
            raise self.corrupt("an entry is larger than the limit", seq=seq)
        try:
            document = parse_json(data)
            canonical = canonical_bytes(document)
        except (JsonRejected, CaseError):
            raise self.corrupt("an entry is not canonical JSON", seq=seq) from None
        if canonical != data:
            raise self.corrupt("an entry is not canonical JSON", seq=seq)
        if not isinstance(document, dict):
            raise self.corrupt("an entry is not a JSON object", seq=seq)
        if document.get("seq") != seq or document.get("kind") != kind:
            raise self.corrupt("an entry's seq or kind differs from its name", seq=seq)
        return LogEntry(seq, kind, document)

    def append(self, seq: int, kind: str, document: Mapping[str, Any]) -> None:
        """Writes entry ``seq`` once. ``document`` must carry the same seq and kind."""
        if kind not in self.kinds or not 1 <= seq <= MAX_SEQ:
            raise ValueError("unknown kind or sequence number out of range")
        if document.get("seq") != seq or document.get("kind") != kind:
            raise ValueError("the document's seq and kind must match the entry")
        data = canonical_bytes(dict(document))
        if len(data) > self._max_entry_bytes:
            raise self._error(
                f"{self._prefix}_entry_too_large",
                "the entry is larger than the limit",
                {"limit": self._max_entry_bytes},
            )
        try:
            self._write_once(seq, kind, data)
        except FileExistsError:
            # Another writer (a second store object or process) got there first.
            raise self._error(
                f"{self._prefix}_conflict",
                "an entry with this sequence number was written by someone else",
                {"seq": seq},
            ) from None
        except OSError as err:
            raise self._error(
                f"{self._prefix}_write_failed",
                "the entry could not be written",
                {"seq": seq, "kind": type(err).__name__},
            ) from None

    def _write_once(self, seq: int, kind: str, data: bytes) -> None:
        # The package's one durable writer: contained (no symlink is followed),
        # and a refusal is package_write_failed naming the entry.
        self._checked_directory(create=True)
        rel = self.relative_dir / f"{seq:0{SEQ_DIGITS}d}-{kind}.json"
        if not self.layout.files.write_new(rel, data):
            raise FileExistsError(rel.as_posix())

    def _checked_directory(self, *, create: bool) -> Path | None:
        if not self.layout.is_package_dir():
            raise self._error(
                f"{self._prefix}_package_missing", "the case package directory does not exist"
            )
        # Containment lives in PackageFiles (a symlinked analysis/ is
        # package_path_outside); a file where the directory belongs is corruption.
        files = self.layout.files
        if create:
            files.make_dirs(self.relative_dir)
        elif not files.is_dir(self.relative_dir):
            return None
        return self.directory


# -- checkpoints ---------------------------------------------------------------------


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

RESEARCH_UNAVAILABLE = "RESEARCH_UNAVAILABLE"
INVALID_LLM_RESPONSES = "INVALID_LLM_RESPONSES"

TRANSITION = "transition"
RESUME = "resume"
LOCK_CLEARED = "lock_cleared"
TECHNICAL_REJECTION = "technical_rejection"
KINDS = frozenset({TRANSITION, RESUME, LOCK_CLEARED, TECHNICAL_REJECTION})

CHECKPOINTS_DIR = PackageLayout.CHECKPOINTS
MANIFEST_SCHEMA = "case-manifest-v1"
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
                    raise _refused("a blocked case resumes only into its resume_state")
                if code or resume_state or retry_not_before or feedback_lock:
                    raise _argument("a resume carries no blocking fields")
                return self._resume(current, operator, payload)
            if operator is not None:
                raise _argument("an operator is only recorded when resuming", "operator")
            from_state = None if current is None else current.state
            if to_state not in STATES:
                raise _argument("unknown state", "to_state")
            if to_state not in TRANSITIONS[from_state]:
                raise _refused(
                    "this transition is not allowed",
                    from_state=from_state or "none",
                    to_state=to_state,
                )
            blocked = None
            if to_state == BLOCKED:
                blocked = _blocked_status(code, resume_state, retry_not_before, feedback_lock)
            elif code or resume_state or retry_not_before or feedback_lock:
                raise _argument("blocking fields belong to a move to 'blocked'")
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
        _check_operator(operator)
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
        if not _valid_rejection(rejection.to_record()):
            raise _argument("invalid technical rejection fields", "code")
        with self._lock:
            current = self._current()
            if current is None or current.state != INVESTIGATION:
                raise _refused("technical rejections are recorded during an investigation")
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
        _check_operator(operator)
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
            raise _argument("the payload is not a canonical JSON value", "payload") from err
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
        checkpoint = _checkpoint_from(document, self._current(), self._log)
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
            checkpoint = _checkpoint_from(entry.document, current, self._log)
            history.append(checkpoint)
            if checkpoint.kind != TECHNICAL_REJECTION:
                current = checkpoint
        return history


# -- validation ----------------------------------------------------------------------


def _checkpoint_from(
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
            state in TRANSITIONS[before]
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
    if not isinstance(value, dict) or not _valid_rejection(value):
        raise _Invalid
    return TechnicalRejection(
        value["code"], value["hypothesis"], value["step"], value["request_sha256"]
    )


def _valid_rejection(value: Mapping[str, Any]) -> bool:
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


def _blocked_status(
    code: str | None,
    resume_state: str | None,
    retry_not_before: datetime | None,
    feedback_lock: str | None,
) -> BlockedStatus:
    if not (isinstance(code, str) and _BLOCK_CODE.fullmatch(code)):
        raise _argument("a blocked checkpoint needs a code like RESEARCH_UNAVAILABLE", "code")
    if resume_state not in RESUMABLE_STATES:
        raise _argument("resume_state must be a resumable state", "resume_state")
    retry = None
    if retry_not_before is not None:
        if not isinstance(retry_not_before, datetime) or retry_not_before.tzinfo is None:
            raise _argument("retry_not_before must be an aware datetime", "retry_not_before")
        retry = format_time(retry_not_before)
    if feedback_lock is not None and not (
        isinstance(feedback_lock, str) and _LOWER_ID.fullmatch(feedback_lock)
    ):
        raise _argument("feedback_lock is a lowercase reason id", "feedback_lock")
    return BlockedStatus(code, resume_state, retry, feedback_lock)


def _check_operator(operator: object) -> None:
    if not (isinstance(operator, str) and _OPERATOR.fullmatch(operator)):
        raise _argument("the operator is 1-128 characters [A-Za-z0-9._@-]", "operator")


def _argument(reason: str, argument: str = "") -> CheckpointError:
    return CheckpointError(
        "checkpoint_argument_invalid",
        f"invalid checkpoint argument: {reason}",
        {"argument": argument, "reason": reason},
    )


def _refused(reason: str, **details: Any) -> CheckpointError:
    return CheckpointError(
        "checkpoint_transition_refused",
        f"checkpoint refused: {reason}",
        {"reason": reason, **details},
    )


# -- manifest ------------------------------------------------------------------------


def manifest_status(checkpoint: Checkpoint) -> tuple[str, dict[str, Any]]:
    """The manifest ``phase`` and ``status`` that a checkpoint stands for.

    A blocked case keeps the phase it will resume into, with a blocked status.
    """
    if checkpoint.blocked is not None:
        return checkpoint.blocked.resume_state, {
            "state": "blocked",
            "code": checkpoint.blocked.code,
            "resume_state": checkpoint.blocked.resume_state,
        }
    return checkpoint.state, {"state": "active"}


def write_manifest_status(
    package: PackageLayout | str | os.PathLike[str], *, phase: str, status: Mapping[str, Any]
) -> bool:
    """Rewrites ``manifest.json`` with a new ``phase`` and ``status``, atomically.

    The package is loaded and checked first (``load_package``), the new
    manifest must match ``case-manifest-v1``, and it is written as canonical
    JSON to a temporary file that replaces the manifest in one ``rename``.
    Returns False when the manifest already says this (nothing is written).
    """
    layout = PackageLayout.of(package)
    manifest = dict(load_package(layout.root).manifest)
    manifest["phase"] = phase
    manifest["status"] = dict(status)
    if not schema_validator(MANIFEST_SCHEMA).is_valid(manifest):
        raise _argument("the phase or status does not fit the manifest schema", "status")
    data = canonical_bytes(manifest)
    if layout.files.read(PackageLayout.MANIFEST) == data:
        return False
    # The manifest is the one file that is updated in place: replace it whole.
    layout.files.replace(PackageLayout.MANIFEST, data)
    return True


__all__ = [
    "BLOCKED",
    "CHECKPOINTS_DIR",
    "CONCLUDED",
    "INVALID_LLM_RESPONSES",
    "INVESTIGATION",
    "KINDS",
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
