"""The enrichment journal: every query step of one revision, recorded once.

Step *k* is the *k*-th query the enrichment asks. Its record names the
query's SHA-256 and the capture that answered it (or the refusal code). A
rerun after an interruption replays recorded steps from their captures
instead of asking again, so no query runs twice and no capture is written
twice. A capture stored just before an interruption, whose step record was
not yet written, is adopted by the rerun for the same query (a kill between
the two writes costs no second query either).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import Any

from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import EnrichmentError, JsonDecodeError
from viano_bug_analysis.jsonio import canonical_bytes, strict_loads
from viano_bug_analysis.project_research import (
    Capture,
    CaptureStore,
    ResearchError,
    ResearchUnavailable,
    query_sha256,
)
from viano_bug_analysis.project_research.protocol import Research

STEP_FORMAT = "viano-enrichment-step"
StepHook = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class StepOutcome:
    step: int
    query_sha256: str
    capture: Capture | None  # None: the query was refused
    refused_code: str | None
    replayed: bool  # answered from the journal or an adopted capture, not asked again


class StepJournal:
    """Runs queries for one revision's enrichment, journaled under ``directory``."""

    def __init__(
        self,
        package: PackageLayout | str | os.PathLike[str],
        relative_dir: PurePath,
        research: Research,
        *,
        hook: StepHook | None = None,
    ) -> None:
        layout = PackageLayout.of(package)
        self._files = layout.files
        self._steps_rel = PurePosixPath(relative_dir.as_posix(), "steps")
        self._captures = CaptureStore(layout, relative_dir / "captures")
        self._research = research
        self._hook = hook or (lambda _point: None)
        self._records = self._load_records()
        referenced = {r["capture_sha256"] for r in self._records if r["capture_sha256"]}
        self._orphans = {
            capture.document["result"]["query_sha256"]: capture
            for capture in self._captures.list()
            if capture.sha256 not in referenced
        }
        self._next = 1
        self.asked = 0  # queries actually sent to ProjectResearch by this process

    @property
    def captures_dir(self) -> Path:
        return self._captures.directory

    def run(self, query: Mapping[str, Any]) -> StepOutcome:
        step = self._next
        self._next += 1
        sha = query_sha256(query)
        if step <= len(self._records):
            return self._replay(self._records[step - 1], step, sha)
        capture = self._orphans.pop(sha, None)
        replayed = capture is not None
        refused: str | None = None
        if capture is None:
            try:
                self.asked += 1
                capture = self._research.capture(query)
            except ResearchUnavailable:
                raise  # an outage stops the build; the rerun resumes at this step
            except ResearchError as err:
                refused = err.code
            if capture is not None:
                self._captures.put(capture)
                self._hook(f"step-{step}-captured")
        record = {
            "format": STEP_FORMAT,
            "format_version": 1,
            "step": step,
            "query_sha256": sha,
            "capture_sha256": capture.sha256 if capture else None,
            "refused_code": refused,
        }
        self._files.write_once(self._step_rel(step), canonical_bytes(record))
        self._records.append(record)
        self._hook(f"step-{step}-recorded")
        return StepOutcome(step, sha, capture, refused, replayed)

    def finished_cleanly(self) -> None:
        """After the run: a journal longer than the replay means the plan changed."""
        if self._next - 1 != len(self._records):
            raise EnrichmentError(
                "journal_mismatch",
                "the enrichment journal holds more steps than this build asked",
                {"steps": len(self._records)},
            )

    def _replay(self, record: Mapping[str, Any], step: int, sha: str) -> StepOutcome:
        if record["query_sha256"] != sha:
            raise EnrichmentError(
                "journal_mismatch",
                "a journaled step asked another query than this build would",
                {"step": step},
            )
        if record["capture_sha256"] is None:
            return StepOutcome(step, sha, None, record["refused_code"], True)
        capture = self._captures.get(record["capture_sha256"])
        return StepOutcome(step, sha, capture, None, True)

    def _step_rel(self, step: int) -> PurePosixPath:
        return self._steps_rel / f"{step:05d}.json"

    def _load_records(self) -> list[dict[str, Any]]:
        names = sorted(
            name
            for name in self._files.list(self._steps_rel) or ()
            if name.endswith(".json") and name[:-5].isdigit()
        )
        records: list[dict[str, Any]] = []
        for expected, name in enumerate(names, start=1):
            if name != f"{expected:05d}.json":
                raise EnrichmentError(
                    "journal_corrupt", "the enrichment journal has a gap", {"step": expected}
                )
            data = self._files.read(self._steps_rel / name) or b""
            try:
                record = strict_loads(data, max_bytes=max(len(data), 1))
            except JsonDecodeError:
                record = None
            if not _valid_record(record, expected) or canonical_bytes(record) != data:
                raise EnrichmentError(
                    "journal_corrupt", "a journal record is invalid", {"step": expected}
                )
            records.append(record)  # type: ignore[arg-type]  # _valid_record: an object
        return records


def _valid_record(record: Any, step: int) -> bool:
    if not isinstance(record, dict):
        return False
    if set(record) != {
        "format",
        "format_version",
        "step",
        "query_sha256",
        "capture_sha256",
        "refused_code",
    }:
        return False
    has_capture = isinstance(record["capture_sha256"], str)
    return (
        record["format"] == STEP_FORMAT
        and record["format_version"] == 1
        and record["step"] == step
        and isinstance(record["query_sha256"], str)
        and has_capture != isinstance(record["refused_code"], str)
    )


__all__ = ["Research", "StepHook", "StepJournal", "StepOutcome"]
