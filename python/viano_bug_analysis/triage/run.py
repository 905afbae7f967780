"""One triage run: every selected report imported, built and (with an LLM) investigated.

The output folder::

    DIR/.triage.lock            held for the whole run (a second run: triage_busy, exit 7)
    DIR/specs/<case>.json       the case spec vba case import writes
    DIR/cases/<case>/           the case package (vba case build, vba investigate)
    DIR/reports/<case>.html     its case report
    DIR/results/<case>.json     what this run knows of the report (below)
    DIR/index.json, index.html  the backlog on one page (triage.index)

Every step is one the single commands already make resumable and
idempotent, so a run killed anywhere and run again ends where an
uninterrupted run ends: an unchanged spec file is not rewritten, an
unchanged case is not rebuilt (the builder finds the revision of the same
inputs and asks nothing), an interrupted build resumes from its journal, an
investigation from its stored answers (an answer stored is never asked
again). A changed report writes a new spec, so the build makes a new
revision. When its title or body changed after the case was interpreted
(``investigation.interpretation_state``: the package's own record, not this
folder's), the case is marked ``changed_since_verdict`` and investigated
again only with ``reinvestigate``: the same mechanism as ``vba investigate
--reinvestigate`` (a new interpretation of the current revision, its new
hypotheses investigated, a new verdict version; the earlier ones stay in
the package's history). Any other change (labels, state) concludes again
at once and asks nothing.

A result record holds only what the inputs decide (no times, no process
facts), so the index is the same after any interruption. Records, specs and
the index are written whole (temporary file, fsync, rename) through the
package writer. One report's typed error is recorded and the others go on;
anything else is a bug and ends the run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from viano_bug_analysis.case.lock import exclusive_lock
from viano_bug_analysis.durable import PackageFiles
from viano_bug_analysis.errors import TriageError, VbaError
from viano_bug_analysis.investigation.interpretation_state import REPORT_CHANGED
from viano_bug_analysis.jsonio import canonical_bytes, sha256_hex, strict_loads
from viano_bug_analysis.triage.reports import Report

LOCK = ".triage.lock"
SPECS = PurePosixPath("specs")
CASES = PurePosixPath("cases")
REPORTS = PurePosixPath("reports")
RESULTS = PurePosixPath("results")
RESULT_FORMAT = "viano-triage-result"

Event = Callable[[Mapping[str, Any]], None]


@dataclass(frozen=True, slots=True)
class TriageSetup:
    """What every report of a run is built and investigated with."""

    profile: Any  # profiles.Profile
    research_config: Any | None  # project_research.ResearchConfig
    investigation: Any | None  # investigation.config.InvestigationConfig
    jobs: int = 1
    reinvestigate: bool = False

    @property
    def llm_slots(self) -> int:
        llm = getattr(self.investigation, "llm", None)
        return max(1, int(getattr(llm, "max_concurrent", 1) or 1))


def spec_bytes(spec: Mapping[str, Any]) -> bytes:
    """The spec file as ``vba case import`` writes it."""
    from viano_bug_analysis.case.intake import ImportedSpec

    return ImportedSpec(index=None, spec=dict(spec)).data()


class Triage:
    def __init__(self, out_dir: str | Path, setup: TriageSetup, on_event: Event | None = None):
        self.root = Path(out_dir)
        self.setup = setup
        self._files = PackageFiles(self.root)
        self._event = on_event or (lambda _e: None)
        self._llm = threading.Semaphore(setup.llm_slots)
        self._done = 0
        self._lock = threading.Lock()

    def run(self, reports: list[Report]) -> list[dict[str, Any]]:
        """Every report's result record, in the order given; the index is written last."""
        self.root.mkdir(parents=True, exist_ok=True)
        busy = TriageError("triage_busy", "another vba triage run uses this folder", {"lock": LOCK})
        with exclusive_lock(self.root / LOCK, busy):
            for part in (SPECS, CASES, REPORTS, RESULTS):
                self._files.make_dirs(part)
            total = len(reports)
            pool = ThreadPoolExecutor(max_workers=max(1, self.setup.jobs))
            try:
                records = list(pool.map(lambda r: self._one(r, total), reports))
            except KeyboardInterrupt:
                # Ctrl-C: no report not yet started is begun; the ones running
                # are ended with the process (their writes are atomic).
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            pool.shutdown()
            from viano_bug_analysis.triage.index import write_index

            write_index(self.root, self._files, reports, records, self.setup)
        return records

    # -- one report ------------------------------------------------------------------

    def _one(self, report: Report, total: int) -> dict[str, Any]:
        self._say(report.key, "started", total, done=False)
        if report.spec is None:
            assert report.error is not None
            record = _record(
                report.key, None, "failed", error=_error_record(report.error, "import")
            )
        else:
            record = self._case(report)
        self._store(report.key, record)
        self._say(report.key, record["status"], total, done=True)
        return record

    def _case(self, report: Report) -> dict[str, Any]:
        assert report.spec is not None
        key = report.key
        data = spec_bytes(report.spec)
        digest = sha256_hex(data)
        previous = self._stored(key)
        try:
            spec_path = self._write_spec(key, data)
            built = self._build(spec_path, key)
        except VbaError as err:
            return _record(key, digest, "failed", error=_error_record(err, "build"))
        record = _record(key, digest, "built", revision=built.revision)
        # The report a verdict was reached on: its spec's SHA-256 (the
        # interpretation itself adds a case revision, so revisions cannot say).
        verdict_on = previous.get("investigated_spec") if previous is not None else None
        if verdict_on is not None:
            record["investigated_spec"] = verdict_on
        if self.setup.investigation is None:
            return self._with_report(key, record)
        if verdict_on == digest:
            record["status"] = "investigated"  # nothing new to ask
            return self._with_report(key, record)
        try:
            with self._llm:
                state = self._investigate(key)
        except VbaError as err:
            if err.code == REPORT_CHANGED:
                # The package says it: the report was edited after its interpretation
                # (so after any verdict); only --reinvestigate interprets it again.
                record["status"] = "changed_since_verdict"
            else:
                record.update(status="failed", error=_error_record(err, "investigation"))
            return self._with_report(key, record)
        if state == "concluded":
            record.update(status="investigated", investigated_spec=digest)
        else:
            record.update(status="blocked", blocked=state)
        return self._with_report(key, record)

    def _write_spec(self, key: str, data: bytes) -> Path:
        rel = SPECS / f"{key}.json"
        if self._files.read(rel) != data:
            self._files.replace(rel, data)
        return self.root / rel

    def _build(self, spec_path: Path, key: str) -> Any:
        from viano_bug_analysis.case.builder import CaseBuilder
        from viano_bug_analysis.enrichment import research_origin

        package = self.root / CASES / key
        config = self.setup.research_config
        if config is None:
            return CaseBuilder(spec_path, package).build()
        from viano_bug_analysis.project_research import ProjectResearch

        with ProjectResearch(config) as research:
            return CaseBuilder(
                spec_path,
                package,
                profile=self.setup.profile.enrichment,
                project_research=research,
                research_origin=research_origin(config),
            ).build()

    def _investigate(self, key: str) -> str:
        from viano_bug_analysis.investigation.commands import investigate_package

        package = self.root / CASES / key
        config = self.setup.investigation
        assert config is not None
        # One mechanism with `vba investigate --reinvestigate`: the package decides
        # whether its report changed since the interpretation, and a case whose
        # report did not (a new label, say) concludes again asking nothing.
        run = investigate_package(
            package, config, self.setup.profile, _Quiet(), reinvestigate=self.setup.reinvestigate
        )
        if run.outcome is None:
            assert run.interpreted is not None
            return f"blocked:{run.interpreted.code}"
        if run.outcome.state != "concluded":
            return f"blocked:{run.outcome.code}"
        return "concluded"

    def _with_report(self, key: str, record: dict[str, Any]) -> dict[str, Any]:
        from viano_bug_analysis.report.output import report_bytes

        try:
            rel = REPORTS / f"{key}.html"
            prices = getattr(self.setup.investigation, "prices", None)
            data = report_bytes(self.root / CASES / key, "html", prices, written_to=self.root / rel)
        except VbaError as err:
            record["report_error"] = err.code
            return record
        if self._files.read(rel) != data:
            self._files.replace(rel, data)
        record["report"] = rel.as_posix()
        return record

    # -- records ---------------------------------------------------------------------

    def _stored(self, key: str) -> dict[str, Any] | None:
        data = self._files.read(RESULTS / f"{key}.json")
        if data is None:
            return None
        document = strict_loads(data, max_bytes=max(len(data), 1))
        if not isinstance(document, dict) or document.get("format") != RESULT_FORMAT:
            raise TriageError(
                "triage_input_invalid",
                "a stored result record of this folder is not one",
                {"reason": "result_record_invalid", "case_id": key},
            )
        return document

    def _store(self, key: str, record: Mapping[str, Any]) -> None:
        data = canonical_bytes(record) + b"\n"
        rel = RESULTS / f"{key}.json"
        if self._files.read(rel) != data:
            self._files.replace(rel, data)

    def _say(self, key: str, status: str, total: int, *, done: bool) -> None:
        with self._lock:
            if done:
                self._done += 1
            event = {"event": "report", "case": key, "status": status}
            self._event({**event, "done": self._done, "total": total})


def _record(key: str, spec_sha256: str | None, status: str, **fields: Any) -> dict[str, Any]:
    return {
        "format": RESULT_FORMAT,
        "format_version": 1,
        "case": key,
        "spec_sha256": spec_sha256,
        "status": status,
        **fields,
    }


def _error_record(err: VbaError, stage: str) -> dict[str, Any]:
    from viano_bug_analysis.exit_codes import exit_code_for

    # The code, message and details are safe to show by contract (docs/errors.md).
    return {
        "stage": stage,
        "code": err.code,
        "message": err.message,
        "details": dict(err.details),
        "exit_code": int(exit_code_for(err)),
    }


class _Quiet:
    """The investigation's progress line, silenced: the triage reports per case."""

    def __call__(self, _text: str) -> None:
        return None

    def done(self) -> None:
        return None


__all__ = ["LOCK", "RESULT_FORMAT", "Triage", "TriageSetup", "spec_bytes"]
