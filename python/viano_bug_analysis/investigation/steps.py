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
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from viano_bug_analysis.durable import write_once

STEPS_DIR = Path("analysis", "investigation", "steps")
OUTCOMES_DIR = Path("analysis", "investigation", "hypotheses")
EVENTS = ("call", "reply", "repair", "decision", "dispatch")
_NAME = re.compile(r"(H[1-9][0-9]{0,5})-([0-9]{3})-([0-9]{2})-(" + "|".join(EVENTS) + r")\.json")


def _compact(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


class StepLog:
    def __init__(self, package_path: Path) -> None:
        self._steps = package_path / STEPS_DIR
        self._outcomes = package_path / OUTCOMES_DIR

    def get(self, hypothesis: str, step: int, attempt: int, event: str) -> dict[str, Any] | None:
        path = self._steps / _name(hypothesis, step, attempt, event)
        try:
            record: dict[str, Any] = orjson.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        return record

    def put(self, hypothesis: str, step: int, attempt: int, event: str, record: Any) -> None:
        write_once(self._steps / _name(hypothesis, step, attempt, event), _compact(record))

    def events(self, hypothesis: str | None = None) -> list[tuple[str, int, int, str]]:
        if not self._steps.is_dir():
            return []
        found = []
        for path in self._steps.iterdir():
            match = _NAME.fullmatch(path.name)
            if match and (hypothesis is None or match.group(1) == hypothesis):
                found.append(
                    (match.group(1), int(match.group(2)), int(match.group(3)), match.group(4))
                )
        return sorted(found, key=lambda e: (e[0], e[1], e[2], EVENTS.index(e[3])))

    def outcome(self, hypothesis: str) -> dict[str, Any] | None:
        try:
            record: dict[str, Any] = orjson.loads(
                (self._outcomes / f"{hypothesis}.json").read_bytes()
            )
        except FileNotFoundError:
            return None
        return record

    def put_outcome(self, hypothesis: str, record: Any) -> None:
        write_once(self._outcomes / f"{hypothesis}.json", _compact(record))


def _name(hypothesis: str, step: int, attempt: int, event: str) -> str:
    name = f"{hypothesis}-{step:03d}-{attempt:02d}-{event}.json"
    if not _NAME.fullmatch(name):
        raise ValueError("invalid step log key")
    return name


__all__ = ["OUTCOMES_DIR", "STEPS_DIR", "StepLog"]
