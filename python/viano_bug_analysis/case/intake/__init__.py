"""A tracker report turned into a ``case-spec-v1``: ``vba case import`` (docs/case-import.md).

    from viano_bug_analysis.case.intake import import_report

    summary = import_report("issue.json", output="BUG-7/case-spec.json")
    summary = import_report("issues.json", out_dir="specs", with_comments=True)

``specs_from_source`` does the reading without writing anything (each spec
checked against the schema as ``vba case create`` checks it); ``import_report``
then writes each spec atomically. A list is checked whole before the first
file is written, so a bad item (named by its index) leaves no file behind.
Every refusal is a ``ReportImportError`` (or ``CaseError`` from the final
schema check), never a parser exception.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viano_bug_analysis.case.inputs import check_spec
from viano_bug_analysis.case.intake.forms import Issue, issue_from_json, issue_from_text
from viano_bug_analysis.case.intake.output import Outcome, write_spec
from viano_bug_analysis.case.intake.source import ReportSource, invalid, read_source
from viano_bug_analysis.case.intake.spec import build_spec
from viano_bug_analysis.errors import ReportImportError


@dataclass(frozen=True, slots=True)
class ImportedSpec:
    index: int | None
    """The item's position in a list; None for a single issue."""
    spec: dict[str, Any]

    @property
    def case_id(self) -> str:
        return str(self.spec["case_id"])

    def data(self) -> bytes:
        """The spec file's bytes: indented JSON (non-ASCII kept), one newline at the end."""
        return (json.dumps(self.spec, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


@dataclass(frozen=True, slots=True)
class Skipped:
    index: int
    number: int | None
    reason: str = "pull_request"


@dataclass
class ImportSummary:
    specs: list[tuple[ImportedSpec, Path, Outcome]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "specs": [
                {"index": s.index, "case_id": s.case_id, "path": str(p), "status": o}
                for s, p, o in self.specs
            ],
            "skipped": [
                {"index": s.index, "number": s.number, "reason": s.reason} for s in self.skipped
            ],
        }


def import_report(
    report: str | os.PathLike[str],
    *,
    output: str | os.PathLike[str] | None = None,
    out_dir: str | os.PathLike[str] | None = None,
    with_comments: bool = False,
    include_pull_requests: bool = False,
    force: bool = False,
    on_spec: Callable[[ImportedSpec, Path, Outcome], None] | None = None,
) -> ImportSummary:
    """Reads ``report`` and writes its spec to ``output``, or one spec per issue into ``out_dir``.

    Exactly one of ``output`` and ``out_dir``; a list needs ``out_dir``, where
    each spec is ``<case_id>.json``. ``on_spec`` is told of each file as it is
    done, so a caller can say what was written before a later item failed
    (a refused overwrite, the disk full): the files before it stay.
    """
    if (output is None) == (out_dir is None):
        raise ValueError("give exactly one of output and out_dir")
    source = read_source(report)
    if output is not None and isinstance(source.value, list):
        raise invalid("", "list_needs_out_dir", "is a list of issues: use --out-dir DIR, not -o")
    specs, skipped = specs_from_source(
        source, with_comments=with_comments, include_pull_requests=include_pull_requests
    )
    summary = ImportSummary(skipped=skipped)
    for imported in specs:
        target = (
            Path(output)
            if output is not None
            else Path(out_dir or ".") / f"{imported.case_id}.json"
        )
        try:
            outcome = write_spec(imported.data(), target, force=force)
        except ReportImportError as err:
            if imported.index is not None:
                err.details["index"] = imported.index
            raise
        summary.specs.append((imported, target, outcome))
        if on_spec is not None:
            on_spec(imported, target, outcome)
    return summary


def specs_from_source(
    source: ReportSource, *, with_comments: bool = False, include_pull_requests: bool = False
) -> tuple[list[ImportedSpec], list[Skipped]]:
    """Every spec the report gives, checked, and the pull requests left out."""
    if not source.is_json:
        issue = issue_from_text(source.text)
        return [_checked(issue, None, source.stem, with_comments)], []
    if not isinstance(source.value, list):
        issue = issue_from_json(source.value)
        if issue.pull_request and not include_pull_requests:
            raise invalid(
                "/pull_request",
                "pull_request",
                "is a pull request: --include-pull-requests imports it",
            )
        return [_checked(issue, None, source.stem, with_comments)], []
    specs: list[ImportedSpec] = []
    skipped: list[Skipped] = []
    taken: set[str] = set()
    for index, item in enumerate(source.value):
        issue = _item(item, index)
        if issue.pull_request and not include_pull_requests:
            skipped.append(Skipped(index=index, number=issue.number))
            continue
        # Items without a number would share the file's stem: number them by position.
        stem = f"{source.stem or 'issue'}-{index + 1}"
        imported = _checked(issue, index, stem, with_comments)
        if imported.case_id.lower() in taken:
            raise invalid(
                f"/{index}",
                "duplicate_case_id",
                f"item {index} gives the case ID of an earlier item",
                index=index,
            )
        taken.add(imported.case_id.lower())
        specs.append(imported)
    return specs, skipped


def _item(item: Any, index: int) -> Issue:
    try:
        return issue_from_json(item, f"/{index}")
    except ReportImportError as err:
        err.details["index"] = index
        raise


def _checked(
    issue: Issue, index: int | None, stem: str | None, with_comments: bool
) -> ImportedSpec:
    spec = build_spec(issue, stem=stem, with_comments=with_comments)
    check_spec(spec)
    return ImportedSpec(index=index, spec=spec)


__all__ = ["ImportSummary", "ImportedSpec", "Skipped", "import_report", "specs_from_source"]
