"""Already fixed? The build phase that names the commits that may have fixed the report.

For every report, not only those naming a revision:

1. **Where to look.** The pinned commit's first-parent line, at most
   ``[limits] history_commits`` commits (``fixes.source``). The candidates are
   the commits after the report's revision when it is one of them; else, from
   the report's date (``created_at`` of the tracker export), the commits after
   the last one at or before it (an estimate: the reporter's server may be
   older) plus ``history_before_report`` older ones (a fix may predate the
   report); else the whole line read.
2. **What they changed.** One ``source.changes`` query over those commits
   for the lines naming the report's IDs, ScriptNames and traced functions
   (journaled like every query, so its answer carries provenance).
3. **Why.** ``evidence.rank`` scores each commit with its reasons and gives
   the verdict: ``fixed_by``, ``maybe`` or ``none`` (nothing claimed).

States one ``project_fix_candidate`` fact per listed candidate (subject,
date, author, files, link and reasons as fields, so any renderer shows them),
one ``project_fix_search`` fact with the verdict and where it looked, and a
``project_context_coverage`` fact for what it did not examine. With
``[source.upstream]`` the upstream's line is searched the same way; a
candidate there that the pinned history lacks is a cherry-pick candidate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from viano_bug_analysis.enrichment.engine import AskingPhase
from viano_bug_analysis.enrichment.fixes.clues import ReportClues, report_clues
from viano_bug_analysis.enrichment.fixes.evidence import (
    Candidate,
    KeyMap,
    LineChange,
    Ranking,
    rank,
)
from viano_bug_analysis.enrichment.fixes.kinds import CANDIDATE_KIND, SEARCH_KIND
from viano_bug_analysis.enrichment.fixes.source import HistorySource
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.facts.text import count
from viano_bug_analysis.project_research import Capture
from viano_bug_analysis.project_research.git_history import (
    HistoryCommit,
    anchor_at,
    parse_report_time,
)
from viano_bug_analysis.project_research.result_versions import current_body

MAX_LISTED = 5
"""Most candidates stated per repository (all are ranked)."""
FILES_LISTED = 10
PAGE = 50
MAX_PAGES = 4
MAX_SECTION_READS = 16
"""Most (commit, file) pairs whose changed functions are read for one report: the
newest candidates that change a file the report's log names."""


class PhaseContext(Protocol):
    @property
    def facts(self) -> Sequence[Mapping[str, Any]]: ...

    @property
    def profile(self) -> Any: ...

    def ask(self, query: Mapping[str, Any], purpose: Mapping[str, Any]) -> StepOutcome | None: ...

    def fact(self, kind: str, **fields: Any) -> str: ...

    def provenance(self, capture: Capture, pointer: str) -> dict[str, Any]: ...


def fix_candidates(
    report: Mapping[str, Any],
    sources: Sequence[HistorySource],
    revision: Mapping[str, Any] | None = None,
) -> AskingPhase:
    """The phase for a case's report and its ``report_revision`` fact (None: the
    report names no revision); no sources (no ``[source]``): it does nothing."""

    def phase(ctx: PhaseContext) -> None:
        if not sources:
            return
        main = sources[0]
        clues = report_clues(report, ctx.facts, repository_url=main.url, revision=revision)
        pinned_subjects = _run(ctx, clues, main, pinned=None)
        for upstream in sources[1:]:
            _run(ctx, clues, upstream, pinned=pinned_subjects)

    return AskingPhase(phase, lambda _profile: MAX_PAGES if sources else 0)


def _run(
    ctx: PhaseContext,
    clues: ReportClues,
    source: HistorySource,
    *,
    pinned: Mapping[str, str] | None,
) -> dict[str, str]:
    """Searches one history; returns its commits by ID and by subject (the pinned
    line's, so that an upstream fix already cherry-picked is not named again)."""
    window = source.window()
    commits = list(window.commits)
    candidates, basis, anchor = _candidates(clues, commits, source.limits.history_before_report)
    changes = _changes(ctx, clues, candidates, source)
    headers = _trace_headers(ctx, clues, candidates, source)
    ranking = rank(
        clues,
        candidates,
        changes,
        key_columns=_key_columns(ctx.profile),
        history=commits,
        headers=headers,
    )
    listed = [c for c in ranking.candidates if _listable(ranking, c)]
    if pinned is not None:
        listed = [c for c in listed if not _in_pinned(c, pinned)]
    for index, candidate in enumerate(listed[:MAX_LISTED], start=1):
        _candidate_fact(ctx, source, candidate, index, ranking, basis, anchor, commits)
    verdict = ("fixed_by" if any(c.names_report for c in listed) else "maybe") if listed else "none"
    ctx.fact(
        SEARCH_KIND,
        repository=source.role,
        verdict=verdict,
        basis=basis,
        anchor=anchor.commit if anchor is not None else None,
        anchor_estimated=basis == "report_date",
        commits_read=len(commits),
        candidates_examined=len(candidates),
        candidates_ranked=len(listed),
        reverted=[{"commit": c, "reverted_by": by} for c, by in ranking.reverted],
        provenance={"origin": source.origin, "read": "first_parent_log"},
        statement=_search_statement(source, verdict, basis, len(candidates)),
    )
    if window.more and len(candidates) == len(commits):
        ctx.fact(
            "project_context_coverage",
            reason="fix_history_limit",
            repository=source.role,
            commits_read=len(commits),
            limit=source.limits.history_commits,
            statement=f"only the newest {len(commits)} commits of the {source.role}'s "
            "first-parent line were read for fixes ([limits] history_commits); an older "
            "commit may have fixed it",
        )
    out = {c.commit: c.commit for c in commits}
    out.update({f"subject:{c.subject}": c.commit for c in commits})
    return out


def _candidates(
    clues: ReportClues, commits: Sequence[HistoryCommit], before: int
) -> tuple[list[HistoryCommit], str, HistoryCommit | None]:
    """The commits to rank, the basis of the window and its anchor commit."""
    if clues.revision is not None:
        for index, commit in enumerate(commits):
            if commit.commit == clues.revision:
                return list(commits[:index]), "report_revision", commit
    when = parse_report_time(clues.created_at)
    if when is not None:
        at = anchor_at(commits, when)
        if at is not None:
            return list(commits[: at + before]), "report_date", commits[at]
        return list(commits), "report_date", None
    return list(commits), "whole_window", None


def _listable(ranking: Ranking, candidate: Candidate) -> bool:
    if ranking.verdict == "none":
        return False
    if candidate.names_report:
        return True
    return candidate.score >= 20 and candidate.claims()


def _in_pinned(candidate: Candidate, pinned: Mapping[str, str]) -> bool:
    return candidate.commit.commit in pinned or f"subject:{candidate.commit.subject}" in pinned


def _timing(
    commit: HistoryCommit,
    basis: str,
    anchor: HistoryCommit | None,
    commits: Sequence[HistoryCommit],
) -> str:
    if anchor is None:
        # A date older than every commit read: all of them came after the report.
        return "after_report_date" if basis == "report_date" else "unknown"
    position = {c.commit: i for i, c in enumerate(commits)}
    if position.get(commit.commit, 0) < position.get(anchor.commit, 0):
        return "after_revision" if basis == "report_revision" else "after_report_date"
    return "before_report"


_TIMING_WORDS = {
    "after_revision": "after the report's revision",
    "after_report_date": "after the report's date (estimated)",
    "before_report": "before this report: the reporter's server may be older",
    "unknown": "at an unknown time relative to the report",
}


def _candidate_fact(
    ctx: PhaseContext,
    source: HistorySource,
    candidate: Candidate,
    index: int,
    ranking: Ranking,
    basis: str,
    anchor: HistoryCommit | None,
    commits: Sequence[HistoryCommit],
) -> None:
    commit = candidate.commit
    upstream = source.role == "upstream"
    verdict = "fixed_by" if candidate.names_report else "maybe"
    if upstream:
        verdict = "upstream_" + verdict
    timing = _timing(commit, basis, anchor, commits)
    short = commit.commit[:12]
    if upstream:
        head = f"fixed upstream in {short}, not in your pinned history (a cherry-pick candidate)"
    elif verdict == "fixed_by":
        head = f"fixed by {short}: its message names the report"
    else:
        head = f"maybe fixed by {short}"
    ctx.fact(
        CANDIDATE_KIND,
        rank=index,
        verdict=verdict,
        repository=source.role,
        commit=commit.commit,
        subject=commit.subject,
        date=commit.date,
        author=commit.author,
        files_changed=commit.files_total,
        files=[f.path for f in commit.files[:FILES_LISTED]],
        link=source.link(commit.commit),
        score=candidate.score,
        reasons=[
            {"code": r.code, "weight": r.weight, "detail": r.detail} for r in candidate.reasons
        ],
        mass_change=candidate.mass,
        timing=timing,
        provenance={"origin": source.origin, "commit": commit.commit, "read": "first_parent_log"},
        statement=f'{head} ("{commit.subject[:120]}", {commit.date[:10]}, {commit.author}), '
        f"{_TIMING_WORDS[timing]}: "
        + "; ".join(r.detail for r in candidate.reasons)
        + ("" if verdict.endswith("fixed_by") else "; a lead to check, not proof of a fix"),
    )


def _search_statement(source: HistorySource, verdict: str, basis: str, examined: int) -> str:
    where = {
        "report_revision": "the commits after the report's revision",
        "report_date": "the commits around the report's date, an estimate of its revision",
        "whole_window": "the newest commits of the line, as the report names no revision or date",
    }[basis]
    outcome = {
        "fixed_by": "a commit names the report",
        "maybe": "commits that may have fixed it are ranked with their reasons",
        "none": "no commit carries a reason to claim a fix",
    }[verdict]
    read = f"{count(examined, 'commit')} of the {source.role}'s history read"
    return f"already fixed? {read} ({where}): {outcome}"


def _key_columns(profile: Any) -> KeyMap:
    """Where a row's key is an entity, from the profile: each entity type's own ID
    columns (``entities``) and the reference map's columns with the type they hold
    (``references``); each table's text columns (the entities' names, ``texts``)."""
    types: dict[tuple[str, str], set[str]] = {}
    for entity in (getattr(profile, "entities", None) or {}).values():
        for table, column in entity.id_tables():
            types.setdefault((table.casefold(), column.casefold()), set()).add(
                entity.entity_type.casefold()
            )
    for reference in getattr(profile, "references", None) or ():
        if isinstance(reference.holds, str):
            key = (reference.table.casefold(), reference.column.casefold())
            types.setdefault(key, set()).add(reference.holds.casefold())
    texts: dict[str, set[str]] = {}
    for entity in (getattr(profile, "entities", None) or {}).values():
        if entity.table is not None and entity.name_column is not None:
            texts.setdefault(entity.table.casefold(), set()).add(entity.name_column.casefold())
    for text in getattr(profile, "texts", None) or ():
        texts.setdefault(text.table.casefold(), set()).add(text.column.casefold())
    return KeyMap(
        frozenset(column for _table, column in types),
        {key: frozenset(held) for key, held in types.items()},
        {table: frozenset(columns) for table, columns in texts.items()},
    )


def _trace_headers(
    ctx: PhaseContext,
    clues: ReportClues,
    candidates: Sequence[HistoryCommit],
    source: HistorySource,
) -> dict[tuple[str, str], tuple[str, ...] | None]:
    """For the candidates that change a file the report's log names, the headers of
    the sections they changed there (``sections``): which functions they changed.
    Only when the log names functions; at most ``MAX_SECTION_READS`` pairs."""
    if not clues.functions or not clues.files:
        return {}
    files = set(clues.files)
    basenames = {f.rsplit("/", 1)[-1] for f in clues.files}
    pairs = [
        (commit, changed.path)
        for commit in candidates
        for changed in commit.files
        if changed.path in files or changed.path.rsplit("/", 1)[-1] in basenames
    ]
    if len(pairs) > MAX_SECTION_READS:
        ctx.fact(
            "project_context_coverage",
            reason="fix_sections_limit",
            repository=source.role,
            count=len(pairs) - MAX_SECTION_READS,
            limit=MAX_SECTION_READS,
            statement=f"the functions changed in files the report's log names were read for "
            f"the newest {MAX_SECTION_READS} of {len(pairs)} candidate changes of the "
            f"{source.role}'s history; the older ones count as touching the file only",
        )
    return {
        (commit.commit, path): source.changed_headers(commit, path)
        for commit, path in pairs[:MAX_SECTION_READS]
    }


Page = tuple[Mapping[str, Any], dict[str, Any]]
"""One ``source.changes`` page: the provider's answer and the provenance of a fact
about it."""
PageReader = Callable[[Mapping[str, Any], int], Page | None]
"""Reads one page (the query, its 1-based number); None when it was not read."""


def _page_reader(ctx: PhaseContext, source: HistorySource) -> PageReader:
    """The configured source's pages are research's journaled queries (each answer a
    capture); research reads no other repository, so the upstream's come from its
    own provider (``HistorySource.changes``), the same answer of the same repository
    reader, unjournaled like its first-parent log."""
    if source.role == "source":

        def asked(query: Mapping[str, Any], page: int) -> Page | None:
            outcome = ctx.ask(query, {"kind": "fix_candidates", "page": page})
            if outcome is None or outcome.capture is None:
                return None
            body = current_body(outcome.capture.result)
            return body, ctx.provenance(outcome.capture, "/result")

        return asked

    def read(query: Mapping[str, Any], _page: int) -> Page:
        body = source.changes(
            since=query["since"],
            terms=list(query["terms"]),
            offset=query["offset"],
            limit=query["limit"],
        )
        return body, {"origin": source.origin, "read": "source_changes", "since": query["since"]}

    return read


def _changes(
    ctx: PhaseContext,
    clues: ReportClues,
    candidates: Sequence[HistoryCommit],
    source: HistorySource,
) -> dict[str, list[LineChange]]:
    """The candidates' changed lines naming the report's terms, by commit, read from
    the repository the candidates belong to."""
    terms = clues.terms()
    if not terms or not candidates:
        return {}
    oldest = candidates[-1]
    # since..pinned: the oldest candidate's parent; a root commit has none, and its
    # own changes (the first import) are left out of the diff reasons.
    since = oldest.parents[0] if oldest.parents else oldest.commit
    if since == candidates[0].commit:
        return {}
    read = _page_reader(ctx, source)
    found: dict[str, list[LineChange]] = {}
    offset: int | None = 0
    pages = 0
    while offset is not None and pages < MAX_PAGES:
        query = {
            "kind": "source.changes",
            "since": since,
            "terms": terms,
            "offset": offset,
            "limit": PAGE,
        }
        answer = read(query, pages + 1)
        if answer is None:
            break
        result, provenance = answer
        pages += 1
        for commit in result["commits"]:
            found.setdefault(commit["commit"], []).extend(
                LineChange(c["path"], c["side"], c["text"], c["term"]) for c in commit["changes"]
            )
        if pages == 1 and not result["examined_in_full"]:
            ctx.fact(
                "project_context_coverage",
                reason="fix_changes_incomplete",
                repository=source.role,
                incomplete_reasons=list(result["examination_gaps"]),
                provenance=provenance,
                statement=f"not every candidate commit's changed lines in the {source.role}'s "
                "history were compared ("
                + ", ".join(result["examination_gaps"])
                + "); reasons read from the diff may be missing for some",
            )
        offset = result["next_offset"]
    return found


__all__ = ["CANDIDATE_KIND", "SEARCH_KIND", "fix_candidates"]
