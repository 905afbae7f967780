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

import json
import os
import re
from pathlib import PurePosixPath
from typing import Any

from viano_bug_analysis.durable import PackageFiles, compact_json, parse_document

STEPS_DIR = PurePosixPath("analysis", "investigation", "steps")
OUTCOMES_DIR = PurePosixPath("analysis", "investigation", "hypotheses")
POLICY_FILE = PurePosixPath("analysis", "investigation", "policy.json")
EVENTS = ("call", "reply", "repair", "decision", "dispatch")
_HYPOTHESIS = re.compile(r"H[1-9][0-9]{0,5}")
_NAME = re.compile(r"(H[1-9][0-9]{0,5})-([0-9]{3})-([0-9]{2})-(" + "|".join(EVENTS) + r")\.json")


class StepLog:
    def __init__(self, package_path: str | os.PathLike[str]) -> None:
        self._files = PackageFiles(package_path)

    def get(self, hypothesis: str, step: int, attempt: int, event: str) -> dict[str, Any] | None:
        return self._files.read_document(STEPS_DIR / _name(hypothesis, step, attempt, event))

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
        return self._files.read_document(OUTCOMES_DIR / _outcome_name(hypothesis))

    def put_outcome(self, hypothesis: str, record: Any) -> None:
        self._files.write_once(OUTCOMES_DIR / _outcome_name(hypothesis), compact_json(record))

    def policy(self) -> bytes | None:
        """The stored investigation policy (``policy.json``) as written, or ``None``.

        Checked here to be a JSON object in its stored form (sorted keys, no
        whitespace, ASCII), so a torn policy names its file like every other.
        """
        data = self._files.read(POLICY_FILE)
        if data is not None:
            parse_document(data, POLICY_FILE, encode=_policy_form)
        return data

    def put_policy(self, data: bytes) -> None:
        self._files.write_once(POLICY_FILE, data)


def investigation_directories() -> tuple[PurePosixPath, ...]:
    """Every directory a running investigation writes into."""
    # Imported here: these stores import the case package machinery, which
    # ``vba status`` does not need in order to read the step log.
    from viano_bug_analysis.investigation.budget import JOURNAL_DIR
    from viano_bug_analysis.investigation.checkpoints import CHECKPOINTS_DIR
    from viano_bug_analysis.investigation.evidence import RECORDS_DIR, RESULTS_DIR
    from viano_bug_analysis.investigation.recovery.audit import CALLS_DIR
    from viano_bug_analysis.project_research.captures import CAPTURES_DIR

    return (
        STEPS_DIR,
        OUTCOMES_DIR,
        RECORDS_DIR,
        RESULTS_DIR,
        PurePosixPath(CAPTURES_DIR.as_posix()),
        PurePosixPath(CALLS_DIR.as_posix()),
        PurePosixPath(*CHECKPOINTS_DIR),
        PurePosixPath(*JOURNAL_DIR),
    )


def check_writable(package_path: str | os.PathLike[str]) -> None:
    """``package_write_failed`` now, before a model call is paid for, if any
    investigation directory cannot take a file (read-only, no permission, disk
    full). Later writes are still checked; this only moves the common failure
    ahead of the first request."""
    PackageFiles(package_path).check_writable(investigation_directories())


def _policy_form(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


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
]
