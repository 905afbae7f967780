"""The backlog on one page: ``DIR/index.json`` and ``DIR/index.html``.

One row per report, in the order of the issue list: its title and link, the
tracker state and labels, what the run did (``status``), the number of
leads and the first one, "maybe already fixed" when a lead is a change
since the report's revision, "fixed?" (``fixed``: fixed by / maybe / none and
the first candidate commit, from ``enrichment/fixes``), the verdict per
hypothesis when investigated, tokens and cost, and links to the package and its case report.

Two derived columns, each with the reason it holds:

* ``duplicates``: reports that name the same entity (what the report
  itself names: ``leads.report_entities``) share a group; a group is the
  connected set of reports linked by shared entities, named by its first
  report;
* ``needs_info``: what a diagnosis needs and the report does not give: no
  revision (``no_revision``), no steps to reproduce (``no_steps``: no
  answered section about steps or reproducing, and no numbered list), or
  custom changes declared (``custom_modules``: an answered section about
  custom changes or modules that is not "none"), and, once built, a
  revision that is not a commit of the configured repository
  (``revision_unknown``: a report from another fork, a mistyped hash).
  Steps count when numbered, bulleted (two or more items) or under a
  "Steps to reproduce:" line.

``state`` is normalised (``open``, ``closed``) for sorting and filtering;
the spec keeps the tracker's own spelling. ``repository`` is the one the
issue number belongs to.

The index is a pure function of the reports and what the folder holds (no
times, no durations), so a killed and rerun triage writes the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from viano_bug_analysis.durable import PackageFiles
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.triage.reports import Report

INDEX_JSON = PurePosixPath("index.json")
INDEX_HTML = PurePosixPath("index.html")
FORMAT = "viano-triage-index"

_STEPS_HEADING = re.compile(r"step|reproduc", re.IGNORECASE)
_CUSTOM_HEADING = re.compile(r"custom|module|modif", re.IGNORECASE)
_NOTHING = re.compile(r"^\W*(no|none|nope|nothing|n/?a|-+|no custom\b.*|vanilla)\W*$", re.I)
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+\S", re.MULTILINE)
# Steps written without numbers: a bulleted list of two or more items, or a
# "Steps to reproduce:" line (a label, not a heading) with text under it.
_BULLET = re.compile(r"^\s*[-*+\u2022]\s+\S", re.MULTILINE)
_STEPS_LABEL = re.compile(
    r"^[ \t]*\W{0,3}(?:steps?\b[^\n]{0,30}|how to reproduce|to reproduce|reproduction|repro)"
    r"[ \t]*:?[ \t]*\n\s*\S",
    re.IGNORECASE | re.MULTILINE,
)
# The trackers' spellings of an issue's state (gh OPEN, GitLab opened, ...), one
# word each for sorting and filtering; the spec keeps the tracker's own.
_STATES = {
    "open": "open",
    "opened": "open",
    "reopened": "open",
    "closed": "closed",
    "locked": "closed",
    "merged": "closed",
    "resolved": "closed",
}


def needs_info(spec: Mapping[str, Any]) -> list[str]:
    """The reasons a report lacks what a diagnosis needs (empty: it has it)."""
    report = spec["report"]
    metadata = report.get("metadata") or {}
    sections: Mapping[str, Any] = metadata.get("sections") or {}
    reasons = []
    if not metadata.get("revision"):
        reasons.append("no_revision")
    steps = any(_STEPS_HEADING.search(h) and v for h, v in sections.items())
    if not steps and not _has_steps(report.get("text") or ""):
        reasons.append("no_steps")
    declared = [v for h, v in sections.items() if _CUSTOM_HEADING.search(h) and isinstance(v, str)]
    if any(not _NOTHING.match(v.strip()) for v in declared):
        reasons.append("custom_modules")
    return reasons


def _has_steps(text: str) -> bool:
    return bool(
        _NUMBERED.search(text) or len(_BULLET.findall(text)) >= 2 or _STEPS_LABEL.search(text)
    )


def normalized_state(state: Any) -> str | None:
    """``open`` or ``closed`` for the trackers' spellings; any other word in lower case."""
    if not isinstance(state, str) or not state.strip():
        return None
    word = state.strip().lower()
    return _STATES.get(word, word)


def index_document(
    root: Path, reports: Sequence[Report], records: Sequence[Mapping[str, Any]], setup: Any
) -> dict[str, Any]:
    rows = [
        _row(root, report, record, setup) for report, record in zip(reports, records, strict=True)
    ]
    groups = _duplicate_groups(rows)
    for row in rows:
        row["duplicates"] = groups.get(row["case"])
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return {
        "format": FORMAT,
        "format_version": 1,
        "profile": getattr(setup.profile, "name", None),
        "reports": len(rows),
        "by_status": dict(sorted(counts.items())),
        "rows": [{k: v for k, v in row.items() if k != "_entities"} for row in rows],
    }


def write_index(
    root: Path,
    files: PackageFiles,
    reports: Sequence[Report],
    records: Sequence[Mapping[str, Any]],
    setup: Any,
) -> dict[str, Any]:
    from viano_bug_analysis.triage.html import render_index

    document = index_document(root, reports, records, setup)
    for rel, data in (
        (INDEX_JSON, canonical_bytes(document) + b"\n"),
        (INDEX_HTML, render_index(document).encode("utf-8")),
    ):
        if files.read(rel) != data:
            files.replace(rel, data)
    return document


def _row(root: Path, report: Report, record: Mapping[str, Any], setup: Any) -> dict[str, Any]:
    source = report.source
    spec = report.spec or {}
    row: dict[str, Any] = {
        "case": report.key,
        "title": (spec.get("report") or {}).get("title"),
        "url": source.get("url"),
        # The number is the tracker's within this repository (a list may mix forks).
        "repository": source.get("repository"),
        "number": source.get("number"),
        "state": normalized_state(source.get("state")),
        "labels": list(report.labels),
        "status": record["status"],
        "error": record.get("error"),
        "needs_info": needs_info(spec) if spec else [],
        "package": None,
        "report": record.get("report"),
        "revision": record.get("revision"),
        "queries": None,
        "leads": 0,
        "first_lead": None,
        "maybe_fixed": None,
        "fixed": None,
        "verdict": None,
        "usage": None,
        "_entities": [],
    }
    package_dir = root / "cases" / report.key
    if record.get("revision") is None or not package_dir.is_dir():
        return row
    row["package"] = f"cases/{report.key}"
    row.update(_package_columns(package_dir, setup))
    if row.pop("_revision_unknown"):
        row["needs_info"] = [*row["needs_info"], "revision_unknown"]
    return row


def _package_columns(package_dir: Path, setup: Any) -> dict[str, Any]:
    from viano_bug_analysis.case.package import load_package
    from viano_bug_analysis.enrichment.fixes.render import fix_column
    from viano_bug_analysis.enrichment.leads import lead_line, leads_of, report_entities
    from viano_bug_analysis.investigation.project_context import load_index

    package = load_package(package_dir)
    index = load_index(package)
    facts = index["facts"] if index is not None else []
    leads = leads_of(facts)
    changed = [lead for lead in leads if lead["lead"] == "changed_since_report"]
    columns: dict[str, Any] = {
        "revision": package.analysis_revision,
        # What the revision's enrichment asked (the same after any rerun).
        "queries": len(index.get("queries") or ()) if index is not None else None,
        "leads": len(leads),
        "first_lead": lead_line(leads[0]) if leads else None,
        "maybe_fixed": (
            {"commit": changed[0]["location"].get("commit"), "why": changed[0]["why"]}
            if changed
            else None
        ),
        # The report names a revision the repository does not hold (another fork?).
        "_revision_unknown": any(
            f.get("kind") == "report_revision" and f.get("relation") == "not_in_repository"
            for f in facts
        ),
        # Already fixed? fixed by / maybe / none, with the first candidate (None: no
        # history was read).
        "fixed": fix_column(facts),
        "_entities": sorted(
            {(t, int(i)) for t, i in report_entities(facts) if isinstance(t, str) and _id(i)}
        ),
    }
    if setup.investigation is not None:
        columns.update(_investigation_columns(package_dir, setup))
    return columns


def _id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, str) and value.isdigit()
    )


def _investigation_columns(package_dir: Path, setup: Any) -> dict[str, Any]:
    from viano_bug_analysis.investigation.commands import status_document

    status = status_document(package_dir)
    usage = status["usage"]
    tokens = {
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
    }
    prices = setup.investigation.prices  # [llm] price_per_million_*: one cost rule
    if prices is not None:
        tokens["cost"] = prices.cost(tokens["prompt_tokens"], tokens["completion_tokens"])
    verdict = status["hypotheses"] or None
    return {"verdict": verdict, "usage": tokens}


def _duplicate_groups(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each report in a group of two or more: the group's name, its other reports
    and the entities that link it to them."""
    by_entity: dict[tuple[str, int], list[int]] = {}
    for index, row in enumerate(rows):
        for entity in row["_entities"]:
            by_entity.setdefault(tuple(entity), []).append(index)
    parent = list(range(len(rows)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for members in by_entity.values():
        for other in members[1:]:
            a, b = find(members[0]), find(other)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for index in range(len(rows)):
        groups.setdefault(find(index), []).append(index)
    found: dict[str, dict[str, Any]] = {}
    for first, members in groups.items():
        if len(members) < 2:
            continue
        for index in members:
            mine = {tuple(e) for e in rows[index]["_entities"]}
            shared = sorted(
                {e for j in members if j != index for e in map(tuple, rows[j]["_entities"])} & mine
            )
            found[rows[index]["case"]] = {
                "group": rows[first]["case"],
                "with": [rows[j]["case"] for j in members if j != index],
                "shared": [{"entity_type": t, "entity_id": i} for t, i in shared],
            }
    return found


__all__ = [
    "FORMAT",
    "INDEX_HTML",
    "INDEX_JSON",
    "index_document",
    "needs_info",
    "normalized_state",
    "write_index",
]
