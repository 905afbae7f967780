"""The reports of one triage run: an issue list or a folder of issues, selected.

ISSUES is what ``vba case import`` reads, many at once:

* a JSON array of issues (``gh issue list --state all --limit 1000 --json
  number,title,body,url,state,labels,author,createdAt,updatedAt``; the GitHub
  REST and GitLab forms work too), or one issue object;
* a folder: every ``*.json``, ``*.md``, ``*.markdown`` and ``*.txt`` file in
  it (not below it), in name order, each one issue or a list.

Each report becomes the case spec ``vba case import`` would write
(``intake.specs_from_source``), so a report imports the same way alone and
in a batch. Pull requests are left out as there. Two reports that give the
same case ID are refused before anything runs (``triage_input_invalid``).
A report the importer refuses does not stop the others: it is kept as a
failed report with its typed error, named by file and position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viano_bug_analysis.case.intake import specs_from_source
from viano_bug_analysis.case.intake.source import read_source
from viano_bug_analysis.errors import TriageError, VbaError

FOLDER_SUFFIXES = (".json", ".md", ".markdown", ".txt")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(T[0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?")


@dataclass(frozen=True, slots=True)
class Report:
    """One report to triage: its case spec, or the error that kept it from one."""

    key: str
    """The case ID, or ``<file>#<index>`` for a report that could not be imported."""
    spec: dict[str, Any] | None
    error: VbaError | None = None
    updated_at: str | None = None
    labels: tuple[str, ...] = field(default_factory=tuple)

    @property
    def source(self) -> dict[str, Any]:
        if self.spec is None:
            return {}
        source: dict[str, Any] = self.spec["report"]["metadata"].get("source") or {}
        return source


def read_reports(issues: str | Path) -> list[Report]:
    """Every report ISSUES gives, in order."""
    path = Path(issues)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in FOLDER_SUFFIXES)
        if not files:
            raise TriageError(
                "triage_input_invalid",
                "the folder holds no issue files (*.json, *.md, *.markdown, *.txt)",
                {"reason": "empty_folder"},
            )
    else:
        files = [path]
    reports: list[Report] = []
    for file in files:
        reports += _reports_of(file, single=len(files) == 1 and not path.is_dir())
    seen: dict[str, str] = {}
    for report in reports:
        if report.spec is None:
            continue
        lowered = report.key.lower()
        if lowered in seen:
            raise TriageError(
                "triage_input_invalid",
                "two reports give the same case ID",
                {"reason": "duplicate_case_id", "case_id": report.key},
            )
        seen[lowered] = report.key
    return reports


def _reports_of(file: Path, *, single: bool) -> list[Report]:
    try:
        source = read_source(file)
    except VbaError as err:
        if single:
            raise
        return [Report(key=f"{file.name}#0", spec=None, error=err)]
    raw = source.value if source.is_json and isinstance(source.value, list) else [source.value]
    try:
        specs, _skipped = specs_from_source(source)
    except VbaError as err:
        if single and not isinstance(source.value, list):
            raise
        index = err.details.get("index")
        if not isinstance(source.value, list) or not isinstance(index, int):
            return [Report(key=f"{file.name}#0", spec=None, error=err)]
        # One bad item of a list: the others are imported one by one.
        return _items_one_by_one(file, source, err)
    reports = []
    for imported in specs:
        item = raw[imported.index or 0] if source.is_json else None
        reports.append(
            Report(
                key=imported.case_id,
                spec=imported.spec,
                updated_at=_text_field(item, "updatedAt", "updated_at"),
                labels=tuple(imported.spec["report"]["metadata"]["source"].get("labels") or ()),
            )
        )
    return reports


def _items_one_by_one(file: Path, source: Any, first: VbaError) -> list[Report]:
    from dataclasses import replace

    reports: list[Report] = []
    for index, item in enumerate(source.value):
        single = replace(source, value=[item])
        try:
            specs, _skipped = specs_from_source(single)
        except VbaError as err:
            err.details["index"] = index
            reports.append(Report(key=f"{file.name}#{index}", spec=None, error=err))
            continue
        for imported in specs:
            spec = _renumbered(imported.spec, source, index)
            reports.append(
                Report(
                    key=spec["case_id"],
                    spec=spec,
                    updated_at=_text_field(item, "updatedAt", "updated_at"),
                    labels=tuple(spec["report"]["metadata"]["source"].get("labels") or ()),
                )
            )
    del first  # each item's own error is kept instead
    return reports


def _renumbered(spec: dict[str, Any], source: Any, index: int) -> dict[str, Any]:
    """A list item imported alone gets the case ID it gets in its list."""
    if spec["report"]["metadata"]["source"].get("number") is not None:
        return spec
    from viano_bug_analysis.case.intake.forms import issue_from_json
    from viano_bug_analysis.case.intake.spec import case_id

    stem = f"{source.stem or 'issue'}-{index + 1}"
    return {**spec, "case_id": case_id(issue_from_json(source.value[index]), stem)}


def _text_field(item: Any, *names: str) -> str | None:
    if not isinstance(item, dict):
        return None
    for name in names:
        value = item.get(name)
        if isinstance(value, str):
            return value
    return None


@dataclass(frozen=True, slots=True)
class Selection:
    """``--only``, ``--since`` and ``--label``: all given must hold."""

    only: frozenset[str] = frozenset()
    since: str | None = None
    labels: frozenset[str] = frozenset()

    @classmethod
    def parse(
        cls, only: str | None = None, since: str | None = None, labels: list[str] | None = None
    ) -> Selection:
        picked = frozenset(p.strip().lower() for p in (only or "").split(",") if p.strip())
        if only is not None and not picked:
            raise TriageError(
                "triage_selection_invalid",
                "--only takes issue numbers or case IDs, comma-separated",
                {"option": "--only"},
            )
        if since is not None and not _DATE.fullmatch(since):
            raise TriageError(
                "triage_selection_invalid",
                "--since takes a date (YYYY-MM-DD) or an ISO timestamp",
                {"option": "--since"},
            )
        return cls(picked, since, frozenset(label.lower() for label in labels or ()))

    def keeps(self, report: Report) -> bool:
        source = report.source
        if self.only:
            number = source.get("number")
            names = {report.key.lower(), str(number) if number is not None else ""}
            if not names & self.only:
                return False
        if self.since is not None:
            when = report.updated_at or source.get("created_at")
            # ISO 8601 timestamps of one tracker compare as text.
            if not isinstance(when, str) or when[: len(self.since)] < self.since:
                return False
        return not self.labels or bool({label.lower() for label in report.labels} & self.labels)


__all__ = ["FOLDER_SUFFIXES", "Report", "Selection", "read_reports"]
