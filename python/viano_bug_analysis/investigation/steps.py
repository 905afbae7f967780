"""The investigation step log: one write-once file per event of a step.

``analysis/investigation/steps/<H>-<step>-<attempt>-<event>.json`` where the
event is ``call`` (the prompt version and the context it was built from,
written before the request is sent), ``reply`` (the model's answer and token
usage), ``repair`` (the answer to a repair call, stored before it is
settled or used, so that it is never requested twice), ``decision`` (what
recovery and validation made of it) and
``dispatch`` (the evidence the confirmed tool call produced, or its
technical rejection). ``analysis/investigation/hypotheses/<H>.json`` holds a
hypothesis's final outcome. A rerun reads these instead of doing the work
again, which is what makes a killed investigation resumable without a lost
or repeated request.

Every file goes through ``durable.PackageFiles``: written once, never through
a symbolic link, and read back strictly. A torn or garbled file (not JSON,
not an object, not the exact bytes written) is ``package_corrupt`` naming the
file relative to the package; nothing is skipped or repaired.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath
from typing import Any

from viano_bug_analysis.durable import PackageLayout, compact_json, parse_document
from viano_bug_analysis.errors import PackageFileError

STEPS_DIR = PackageLayout.STEPS
OUTCOMES_DIR = PackageLayout.HYPOTHESES
POLICY_FILE = PackageLayout.POLICY
EVENTS = ("call", "reply", "repair", "decision", "dispatch")
_HYPOTHESIS = re.compile(r"H[1-9][0-9]{0,5}")
_NAME = re.compile(r"(H[1-9][0-9]{0,5})-([0-9]{3})-([0-9]{2})-(" + "|".join(EVENTS) + r")\.json")


class StepLog:
    def __init__(self, package: PackageLayout | str | os.PathLike[str]) -> None:
        self._files = PackageLayout.of(package).files

    def get(self, hypothesis: str, step: int, attempt: int, event: str) -> dict[str, Any] | None:
        rel = STEPS_DIR / _name(hypothesis, step, attempt, event)
        record = self._files.read_document(rel)
        if record is not None and not _SHAPES[event](record):
            raise not_a_record(rel, f"not a {event} record")
        return record

    def put(self, hypothesis: str, step: int, attempt: int, event: str, record: Any) -> None:
        self._files.write_once(
            STEPS_DIR / _name(hypothesis, step, attempt, event), compact_json(record)
        )

    def events(self, hypothesis: str | None = None) -> list[tuple[str, int, int, str]]:
        names = self._files.list(STEPS_DIR)
        found = []
        for name in names or ():
            match = _NAME.fullmatch(name)
            if match and (hypothesis is None or match.group(1) == hypothesis):
                found.append(
                    (match.group(1), int(match.group(2)), int(match.group(3)), match.group(4))
                )
        return sorted(found, key=lambda e: (e[0], e[1], e[2], EVENTS.index(e[3])))

    def outcome(self, hypothesis: str) -> dict[str, Any] | None:
        rel = OUTCOMES_DIR / _outcome_name(hypothesis)
        record = self._files.read_document(rel)
        if record is not None and not _is_outcome(record, hypothesis):
            raise not_a_record(rel, "not an outcome record")
        return record

    def put_outcome(self, hypothesis: str, record: Any) -> None:
        self._files.write_once(OUTCOMES_DIR / _outcome_name(hypothesis), compact_json(record))

    def policy(self) -> bytes | None:
        """The stored investigation policy (``policy.json``) as written, or ``None``.

        Checked here to be a JSON object in the stored form of every package
        document (``jsonio.canonical_bytes``, as the controller writes it), so
        a torn policy names its file like every other.
        """
        data = self._files.read(POLICY_FILE)
        if data is not None:
            parse_document(data, POLICY_FILE)
        return data

    def put_policy(self, data: bytes) -> None:
        self._files.write_once(POLICY_FILE, data)


def investigation_directories() -> tuple[PurePosixPath, ...]:
    """Every directory a running investigation writes into."""
    return PackageLayout.INVESTIGATION_DIRECTORIES


def check_writable(package: PackageLayout | str | os.PathLike[str]) -> None:
    """``package_write_failed`` now, before a model call is paid for, if any
    investigation directory cannot take a file (read-only, no permission, disk
    full). Later writes are still checked; this only moves the common failure
    ahead of the first request."""
    PackageLayout.of(package).check_writable()


# What every reader of a record indexes without looking: a record that lacks
# it is as damaged as a torn one (a KeyError later would be a traceback).
def _is_call(record: dict[str, Any]) -> bool:
    return isinstance(record.get("prompt_version"), str) and isinstance(record.get("context"), dict)


def is_reply(record: dict[str, Any]) -> bool:
    """A stored model answer (``{"chat": ...}``), as the step log and the case
    interpretation's log both keep it."""
    chat = record.get("chat")
    if not (isinstance(chat, dict) and isinstance(chat.get("content"), str)):
        return False
    # The caller settles the call's reservation from the stored usage.
    usage = chat.get("usage")
    return usage is None or (isinstance(usage, dict) and type(usage.get("total_tokens")) is int)


def is_decision(record: dict[str, Any]) -> bool:
    """What every stored decision holds, in the step log and the case
    interpretation's log alike (each log adds its own fields)."""
    status, response = record.get("status"), record.get("response")
    return (
        status in ("accepted", "rejected")
        and (isinstance(response, dict) if status == "accepted" else response is None)
        and type(record.get("invalid_responses")) is int
    )


def not_a_record(rel: PurePosixPath, reason: str) -> PackageFileError:
    """``package_corrupt`` for a stored record that lacks what its readers index."""
    return PackageFileError(
        "package_corrupt",
        f"a stored package file is damaged: {reason}",
        {"path": rel.as_posix(), "reason": reason},
    )


def _is_decision(record: dict[str, Any]) -> bool:
    return is_decision(record) and isinstance(record.get("notes"), list)


def _is_dispatch(record: dict[str, Any]) -> bool:
    if "rejected" in record:
        return isinstance(record["rejected"], str)
    return isinstance(record.get("evidence_id"), str) and isinstance(record.get("new"), bool)


def _is_outcome(record: dict[str, Any], hypothesis: str) -> bool:
    return (
        record.get("hypothesis_id") == hypothesis
        and isinstance(record.get("reason"), str)
        and isinstance(record.get("assessment"), str)
        and isinstance(record.get("evidence"), list)
    )


_SHAPES = {
    "call": _is_call,
    "reply": is_reply,
    "repair": is_reply,  # the answer to a repair call, stored like a reply
    "decision": _is_decision,
    "dispatch": _is_dispatch,
}


def _outcome_name(hypothesis: str) -> str:
    if not _HYPOTHESIS.fullmatch(hypothesis):
        raise ValueError("invalid hypothesis id")
    return f"{hypothesis}.json"


def _name(hypothesis: str, step: int, attempt: int, event: str) -> str:
    name = f"{hypothesis}-{step:03d}-{attempt:02d}-{event}.json"
    if not _NAME.fullmatch(name):
        raise ValueError("invalid step log key")
    return name


__all__ = [
    "OUTCOMES_DIR",
    "POLICY_FILE",
    "STEPS_DIR",
    "StepLog",
    "check_writable",
    "investigation_directories",
    "is_decision",
    "is_reply",
    "not_a_record",
]
