"""The "already fixed?" facts as text: one place for every renderer (the build
summary's lead block, ``vba case leads``, the triage column, the case report).

Every line reads from the facts' fields (subject, date, author, files, link,
reasons), never from their statements, so a renderer can lay them out anew.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from viano_bug_analysis.enrichment.fixes.kinds import CANDIDATE_KIND, SEARCH_KIND
from viano_bug_analysis.facts.text import fix_candidate_line

FIX_KINDS = frozenset({CANDIDATE_KIND, SEARCH_KIND})
VERDICT_ORDER = {"fixed_by": 0, "maybe": 1, "none": 2}
"""How the triage column sorts: fixed by, then maybe, then none."""


def is_fix_fact(fact: Mapping[str, Any]) -> bool:
    return fact.get("kind") in FIX_KINDS


def candidates_of(facts: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The candidate facts, the source's before the upstream's, each by rank."""
    found = [f for f in facts if f.get("kind") == CANDIDATE_KIND]
    return sorted(found, key=lambda f: (f.get("repository") != "source", f.get("rank", 0)))


def search_of(facts: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The source's ``project_fix_search`` fact (None: the build read no history)."""
    for fact in facts:
        if fact.get("kind") == SEARCH_KIND and fact.get("repository") == "source":
            return fact
    return None


def candidate_line(fact: Mapping[str, Any]) -> str:
    """``1. maybe fixed by 1a2b3c4d5e6f "subject" (2024-03-05, Dee, 1 file) <link>: why``
    (``facts.text``: the brief words it the same way)."""
    return fix_candidate_line(fact)


def search_line(fact: Mapping[str, Any]) -> str:
    return str(fact.get("statement") or "")


def fix_lines(facts: Sequence[Mapping[str, Any]]) -> list[str]:
    """``[P12] ...`` per search and candidate fact: the searches, then the candidates."""
    lines = [f"[{f['fact_id']}] {search_line(f)}" for f in facts if f.get("kind") == SEARCH_KIND]
    lines += [f"[{f['fact_id']}] {candidate_line(f)}" for f in candidates_of(facts)]
    return lines


def fix_column(facts: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The triage index's "fixed?" cell: the verdict and the first candidate; None
    when the build read no history."""
    search = search_of(facts)
    if search is None:
        return None
    verdict = str(search.get("verdict"))
    first = next((f for f in candidates_of(facts) if f.get("repository") == "source"), None)
    cell: dict[str, Any] = {"verdict": verdict, "sort": VERDICT_ORDER.get(verdict, 2)}
    if first is not None and verdict != "none":
        cell.update(
            commit=first.get("commit"),
            subject=first.get("subject"),
            link=first.get("link"),
            why=[r["detail"] for r in first.get("reasons") or ()],
        )
    return cell


_REPORT_FIELDS = (
    "rank",
    "verdict",
    "repository",
    "commit",
    "subject",
    "date",
    "author",
    "files_changed",
    "files",
    "link",
    "timing",
)


def report_section(facts: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The case report's ``already_fixed`` member (case-report-v1); None when the
    build read no history."""
    search = search_of(facts)
    if search is None:
        return None
    return {
        "verdict": search["verdict"],
        "statement": search_line(search),
        "candidates": [
            {
                "fact_id": str(f["fact_id"]),
                **{key: f.get(key) for key in _REPORT_FIELDS},
                "reasons": [
                    {"code": r["code"], "weight": r["weight"], "detail": r["detail"]}
                    for r in f.get("reasons") or ()
                ],
            }
            for f in candidates_of(facts)
        ],
    }


__all__ = [
    "FIX_KINDS",
    "VERDICT_ORDER",
    "candidate_line",
    "candidates_of",
    "fix_column",
    "fix_lines",
    "is_fix_fact",
    "report_section",
    "search_of",
]
