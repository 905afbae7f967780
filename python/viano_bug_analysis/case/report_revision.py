"""The revision a report was filed against, resolved in the repository and related
to the commit research is pinned to (docs/case-enrichment.md, "The reported revision").

The spec names it in ``report.metadata.revision``: ``{"commit": "<hex>", "from":
"...", "url": "..."}`` as ``vba case import`` writes it, or a plain hex string in
a hand-written spec. The build asks ``source.revision`` once, as a journaled
step (a resumed build replays it), and records one ``report_revision`` fact.

``vba case build --at-report-revision`` (``pin_to_report_revision``) pins source
research to the report's commit for that case: the revision's research origin
names that commit, the database stays as configured, and the fact names both
commits. The relation in the fact is always the one to the configured commit:
the pinned build routes its ``source.revision`` step to research at the
configured commit (``RevisionPin``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.errors import EnrichmentError
from viano_bug_analysis.project_research import Capture, ProjectResearch
from viano_bug_analysis.project_research.config import ResearchConfig
from viano_bug_analysis.project_research.protocol import Research
from viano_bug_analysis.project_research.result_versions import current_body

FACT_KIND = "report_revision"
QUERY_KIND = "source.revision"
_HEX = re.compile(r"[0-9a-fA-F]{7,40}")
_ORIGIN_TEXT_CHARS = 200  # "from" and "url" are provenance notes, not report text

RunStep = Callable[[Mapping[str, Any]], StepOutcome]


@dataclass(frozen=True, slots=True)
class ReportedRevision:
    """What the spec says; ``commit`` is None when the value is no commit ID."""

    commit: str | None
    found_in: str | None = None
    url: str | None = None


def reported_revision(report: Mapping[str, Any]) -> ReportedRevision | None:
    """The spec's revision, lower-cased; None when the spec names none."""
    metadata = report.get("metadata")
    value = metadata.get("revision") if isinstance(metadata, Mapping) else None
    if value is None:
        return None
    found_in = url = None
    if isinstance(value, Mapping):
        found_in, url = _note(value.get("from")), _note(value.get("url"))
        value = value.get("commit")
    if isinstance(value, str) and _HEX.fullmatch(value):
        return ReportedRevision(value.lower(), found_in, url)
    return ReportedRevision(None, found_in, url)


def revision_query(commit: str) -> dict[str, Any]:
    return {"kind": QUERY_KIND, "revision": commit}


@dataclass(frozen=True, slots=True)
class RevisionPin:
    """Source research pinned to the report's commit; ``research`` reads the
    configured commit and answers the build's ``source.revision`` step."""

    configured_commit: str
    report_commit: str
    research: Research


class PinnedResearch:
    """The case's research, with ``source.revision`` asked at the configured commit."""

    def __init__(self, research: Research, pin: RevisionPin) -> None:
        self._research = research
        self._pin = pin

    def capture(self, query: Mapping[str, Any]) -> Capture:
        if query.get("kind") == QUERY_KIND:
            return self._pin.research.capture(query)
        return self._research.capture(query)


def pin_to_report_revision(
    report: Mapping[str, Any], config: ResearchConfig, research: ProjectResearch
) -> tuple[ResearchConfig, RevisionPin]:
    """The configuration with source research at the report's commit, resolved
    through ``research`` (at the configured commit). Refused when the spec names
    no revision or one that does not name exactly one commit of the repository."""
    reported = reported_revision(report)
    if reported is None:
        raise EnrichmentError(
            "report_revision_missing",
            "--at-report-revision needs the revision the report was filed against: "
            "the spec has no report.metadata.revision",
            {"pointer": "/report/metadata/revision"},
        )
    if reported.commit is None:
        raise _unresolved("malformed", "is not 7 to 40 hexadecimal digits")
    result = research.query(revision_query(reported.commit))["result"]
    if result["resolution"] == "ambiguous":
        raise _unresolved(
            "ambiguous",
            f"names {result['candidate_count']} commits of the repository; "
            "give more digits of it in the spec",
            candidate_count=result["candidate_count"],
        )
    if result["resolution"] != "resolved":
        raise _unresolved(result["resolution"], "names no commit of the configured repository")
    assert config.source is not None  # the query above needs the source
    pinned = replace(config, source=replace(config.source, commit=result["commit"]))
    return pinned, RevisionPin(config.source.commit, result["commit"], research)


def _unresolved(reason: str, what: str, **details: int) -> EnrichmentError:
    return EnrichmentError(
        "report_revision_unresolved",
        f"--at-report-revision: the report's revision {what}",
        {"pointer": "/report/metadata/revision", "reason": reason, **details},
    )


@dataclass
class RevisionStep:
    """The fact (without its ID) and the query record of the build's revision step."""

    fact: dict[str, Any] | None = None
    queries: list[dict[str, Any]] = field(default_factory=list)

    def facts(self, first_free: int) -> list[dict[str, Any]]:
        """The fact numbered after the enrichment's own (``P<first_free>``)."""
        if self.fact is None:
            return []
        return [{"fact_id": f"P{first_free}", **self.fact}]


def journaled_revision_step(
    run: RunStep,
    report: Mapping[str, Any],
    research_origin: Mapping[str, Any],
    pin: RevisionPin | None,
    capture_path: Callable[[str], str],
) -> RevisionStep:
    """Asks ``source.revision`` through the journal when the spec names a revision
    and research has a source; a value that is no commit ID is a fact without a query."""
    reported = reported_revision(report)
    git = research_origin.get("git")
    if reported is None or not isinstance(git, Mapping):
        return RevisionStep()
    research_commit = str(git["commit"])
    fact: dict[str, Any] = {
        "kind": FACT_KIND,
        "reported": reported.commit,
        "reported_from": reported.found_in,
        "reported_url": reported.url,
        "configured_commit": pin.configured_commit if pin else research_commit,
        "research_commit": research_commit,
        "source_pinned_to": "report_revision" if pin else "configured_commit",
    }
    if reported.commit is None:
        fact.update(_unanswered("malformed"))
        fact["statement"] = statement(fact, pinned=pin is not None)
        return RevisionStep(fact)
    outcome = run(revision_query(reported.commit))
    record = {
        "step": outcome.step,
        "query_sha256": outcome.query_sha256,
        "capture_sha256": outcome.capture.sha256 if outcome.capture else None,
        "refused_code": outcome.refused_code,
        "depth": 0,
        "purpose": {"kind": FACT_KIND},
    }
    if outcome.capture is None:
        fact.update(_unanswered("refused"), refused_code=outcome.refused_code)
        fact["statement"] = statement(fact, pinned=pin is not None)
        return RevisionStep(fact, [record])
    capture = outcome.capture
    result = current_body(capture.result)  # a replayed capture may be version 1
    fact.update(
        {
            "resolution": result["resolution"],
            "commit": result["commit"],
            "candidate_count": result["candidate_count"],
            "candidates": result["candidates"],
            "relation": result["relation"],
            "pinned_only": result["pinned_only"],
            "reported_only": result["reported_only"],
            "merge_bases": result["merge_bases"],
            # The fact keeps its names (its model-facing shape is unchanged); the
            # result's are walk_finished and walk_stopped_by since version 2.
            "complete": result["walk_finished"],
            "incomplete_reason": result["walk_stopped_by"],
            "statement": statement(result, pinned=pin is not None),
            "provenance": {
                "capture_sha256": capture.sha256,
                "capture_path": capture_path(capture.sha256),
                "pointer": "/result",
                "origin": dict(capture.origin),
            },
        }
    )
    return RevisionStep(fact, [record])


def statement(result: Mapping[str, Any], *, pinned: bool) -> str:
    """The relation in words. It is always the one to the configured commit, which
    is the commit research reads unless the build was pinned to the report's."""
    target = "the configured commit" if pinned else "the pinned commit"
    before, after = result.get("pinned_only"), result.get("reported_only")
    bases = result.get("merge_bases") or []
    words = {
        "same": f"the same commit as {target}",
        "ancestor": f"ancestor, {_commits(before)} before {target}",
        "descendant": f"descendant, {_commits(after)} after {target}",
        "diverged": f"diverged from {target} at merge base "
        f"{bases[0][:12] if bases else '?'}: {_commits(after)} on the report's side, "
        f"{_commits(before)} on the other",
        "unrelated": f"no common history with {target}",
        "undetermined": f"relation to {target} unknown ({_stopped_by(result)})",
        "ambiguous": f"ambiguous: {result.get('candidate_count')} commits start with it",
        "not_in_repository": f"not a commit of the repository ({result.get('resolution')})",
        None: "not looked up: not a commit ID of 7 to 40 hexadecimal digits"
        if result.get("resolution") == "malformed"
        else f"not looked up: the query was refused ({result.get('refused_code')})",
    }[result.get("relation")]
    if pinned:
        words += "; source research reads the report's commit (--at-report-revision)"
    return words


def _stopped_by(result: Mapping[str, Any]) -> Any:
    # A project result (version 2) says walk_stopped_by, the fact incomplete_reason.
    return result.get("walk_stopped_by", result.get("incomplete_reason"))


def _commits(n: int | None) -> str:
    return f"{n} commit{'' if n == 1 else 's'}"


def _unanswered(resolution: str) -> dict[str, Any]:
    return {
        "resolution": resolution,
        "commit": None,
        "relation": None,
        "pinned_only": None,
        "reported_only": None,
        "merge_bases": [],
        "complete": False,
    }


def _note(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    return value[:_ORIGIN_TEXT_CHARS]


__all__ = [
    "FACT_KIND",
    "PinnedResearch",
    "ReportedRevision",
    "RevisionPin",
    "RevisionStep",
    "journaled_revision_step",
    "pin_to_report_revision",
    "reported_revision",
    "revision_query",
    "statement",
]
