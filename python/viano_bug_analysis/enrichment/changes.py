"""Changed since the report: a build phase that asks ``source.changes``.

When the report's revision (the ``report_revision`` fact of
``case/report_revision.py``) is an ancestor of the commit research reads, the
commits between them whose changes add or remove a line naming one of the
report's entities may already have fixed it. The phase collects the words
that name those entities from the facts so far, in this order, at most
``MAX_TERMS``:

1. the report's own IDs: typed mentions (``case_mention``), untyped IDs that
   exist as some type (``case_untyped_mention`` with ``found_as``), entities a
   name was followed to (``project_name_match`` with ``followed``);
2. the ScriptName values of the rows read (``project_rows``);
3. the constants assigned an entity's ID in the source
   (``project_source_constant``).

IDs below ``MIN_ID`` are left out: a one- or two-digit literal stands on
countless unrelated lines. It asks one query (further pages only while the
query budget lasts, at most ``MAX_PAGES``), states one
``project_change_since_report`` fact per commit listed and one coverage fact
when the answer is incomplete. Nothing is asked when the relation is anything
else (the same commit, a descendant, diverged or unrelated history, unknown)
or when source research itself reads the report's commit
(``--at-report-revision``).

A change is lexical: a commit that touches a line naming the entity is where
to look first, not proof that it fixed anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from viano_bug_analysis.enrichment.engine import AskingPhase
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.project_research import Capture
from viano_bug_analysis.project_research.result_versions import current_body

FACT_KIND = "project_change_since_report"
QUERY_KIND = "source.changes"
MAX_TERMS = 32
MIN_ID = 100
PAGE = 50
MAX_PAGES = 4
_TERM = re.compile(r"[A-Za-z0-9_]{1,256}")
_SCRIPT_NAME = "ScriptName"


class PhaseContext(Protocol):
    """What the phase needs of the enrichment (``engine.PhaseContext``)."""

    @property
    def facts(self) -> Sequence[Mapping[str, Any]]: ...

    def ask(self, query: Mapping[str, Any], purpose: Mapping[str, Any]) -> StepOutcome | None: ...

    def fact(self, kind: str, **fields: Any) -> str: ...

    def provenance(self, capture: Capture, pointer: str) -> dict[str, Any]: ...


def changes_since_report(revision: Mapping[str, Any] | None) -> AskingPhase:
    """The phase for a build whose revision step stated ``revision`` (None: none); the
    reference map keeps its pages (``MAX_PAGES``) of max_queries for it when it will ask."""
    since = _since(revision)

    def phase(ctx: PhaseContext) -> None:
        if since is None:
            return
        terms = collect_terms(ctx.facts)
        if terms:
            _ask_and_state(ctx, since, terms)

    return AskingPhase(phase, lambda _profile: 0 if since is None else MAX_PAGES)


def _since(revision: Mapping[str, Any] | None) -> str | None:
    """The report's commit when it lies before the commit research reads."""
    if revision is None or revision.get("relation") != "ancestor":
        return None
    if revision.get("source_pinned_to") != "configured_commit":
        return None
    commit = revision.get("commit")
    return commit if isinstance(commit, str) else None


def collect_terms(facts: Sequence[Mapping[str, Any]]) -> list[str]:
    """The words naming the report's entities, the report's own IDs first."""
    found: dict[str, None] = {}
    for group in (report_ids(facts), script_names(facts), _constants(facts)):
        for term in group:
            if len(found) >= MAX_TERMS:
                return list(found)
            if _TERM.fullmatch(term):
                found.setdefault(term, None)
    return list(found)


def report_ids(facts: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """The report's own IDs (at least ``MIN_ID``): typed mentions, untyped IDs found
    as some type, entities a name was followed to."""
    for fact in facts:
        kind = fact.get("kind")
        if kind == "case_mention":
            ids: list[Any] = [fact.get("entity_id")]
        elif kind == "case_untyped_mention" and fact.get("found_as"):
            ids = [fact.get("entity_id")]
        elif kind == "project_name_match" and fact.get("followed"):
            ids = [m.get("entity_id") for m in fact.get("matches") or ()]
        else:
            continue
        for entity_id in ids:
            if type(entity_id) is int and entity_id >= MIN_ID:
                yield str(entity_id)


def script_names(facts: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """The ScriptName values of the rows read."""
    for fact in facts:
        if fact.get("kind") != "project_rows":
            continue
        for row in fact.get("rows") or ():
            value = row.get(_SCRIPT_NAME) if isinstance(row, Mapping) else None
            if isinstance(value, str) and value:
                yield value


def _constants(facts: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    for fact in facts:
        if fact.get("kind") == "project_source_constant" and isinstance(fact.get("constant"), str):
            yield fact["constant"]


def _ask_and_state(ctx: PhaseContext, since: str, terms: list[str]) -> None:
    purpose = {"kind": "changes_since_report", "since": since}
    offset: int | None = 0
    pages = 0
    while offset is not None and pages < MAX_PAGES:
        query = {
            "kind": QUERY_KIND,
            "since": since,
            "terms": terms,
            "offset": offset,
            "limit": PAGE,
        }
        outcome = ctx.ask(query, {**purpose, "page": pages + 1})
        if outcome is None or outcome.capture is None:
            return  # the budget or a refusal: the engine states either
        pages += 1
        capture = outcome.capture
        result = current_body(capture.result)  # a replayed capture may be version 1
        for index, commit in enumerate(result["commits"]):
            _commit_fact(ctx, capture, result, index, commit)
        if not result["examined_in_full"] and pages == 1:
            _coverage_fact(ctx, capture, result)
        offset = result["next_offset"]
    if offset is not None:
        ctx.fact(
            "project_context_coverage",
            reason="changes_pages_limit",
            since=since,
            listed_commits=offset,
            statement=f"more commits since the report's revision change these entities' lines "
            f"than the {MAX_PAGES * PAGE} the build lists",
        )


def _commit_fact(
    ctx: PhaseContext,
    capture: Capture,
    result: Mapping[str, Any],
    index: int,
    commit: Mapping[str, Any],
) -> None:
    changes = [
        {
            "path": c["path"],
            "side": c["side"],
            "line": c["line"],
            "text": c["text"],
            "blob": c["blob"],
            "term": c["term"],
        }
        for c in commit["changes"]
    ]
    named = {c["term"] for c in changes}
    terms = [t for t in result["terms"] if t in named]
    added = sum(1 for c in changes if c["side"] == "added")
    removed = len(changes) - added
    ctx.fact(
        FACT_KIND,
        since=result["since"],
        pinned=result["pinned_commit"],
        commit=commit["commit"],
        summary=commit["summary"],
        author_time=commit["author_time"],
        terms=terms,
        changes=changes,
        changes_total=commit["changes_total"],
        provenance=ctx.provenance(capture, f"/result/commits/{index}"),
        statement=f"maybe already fixed: commit {commit['commit'][:12]}, after the report's "
        f"revision, adds {added} and removes {removed} line(s) naming {', '.join(terms)}"
        + (f" ({commit['changes_total']} in all)" if commit["changes_total"] > len(changes) else "")
        + "; a lexical change, not proof of a fix",
    )


def _coverage_fact(ctx: PhaseContext, capture: Capture, result: Mapping[str, Any]) -> None:
    ctx.fact(
        "project_context_coverage",
        reason="changes_incomplete",
        since=result["since"],
        incomplete_reasons=list(result["examination_gaps"]),
        range_commits=result["range_commits"],
        commits_examined=result["commits_examined"],
        files_skipped=dict(result["skipped"]["by_reason"]),
        provenance=ctx.provenance(capture, "/result"),
        statement="the changes since the report's revision were not all compared ("
        + ", ".join(result["examination_gaps"])
        + "); a commit left out may change these entities' lines too",
    )


__all__ = [
    "FACT_KIND",
    "MAX_TERMS",
    "MIN_ID",
    "QUERY_KIND",
    "changes_since_report",
    "collect_terms",
    "report_ids",
    "script_names",
]
