"""An ``Issue`` as a ``case-spec-v1`` document, and the case ID it gets.

The case ID is the repository's name and the issue number
(``TrinityCore/TrinityCore`` #1234 -> ``trinitycore-1234``), else the
report file's stem, else ``issue-<number>``, else ``report``: lowercased,
every character outside ``[a-z0-9._-]`` replaced by ``-`` (runs of them
collapsed), leading characters that are not a letter or digit dropped, and
cut to 64 characters keeping the number.
"""

from __future__ import annotations

from typing import Any

from viano_bug_analysis.case.intake.fields import MAX_SAFE_INTEGER
from viano_bug_analysis.case.intake.forms import Comment, Issue
from viano_bug_analysis.case.intake.revision import find_revision
from viano_bug_analysis.case.intake.sections import parse_sections
from viano_bug_analysis.case.intake.source import too_large

MAX_CASE_ID = 64
MAX_REPORT_TEXT_BYTES = 4 * 1024 * 1024
"""The longest report text with its comments appended, in UTF-8 bytes."""
FALLBACK_ID = "report"
_ALLOWED = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")


def build_spec(issue: Issue, *, stem: str | None, with_comments: bool) -> dict[str, Any]:
    """The case spec of ``issue`` (``stem``: the report file's name without suffix)."""
    sections = parse_sections(issue.body)
    metadata: dict[str, Any] = {"source": _source(issue), "sections": sections}
    revision = find_revision(sections, issue.body)
    if revision is not None:
        metadata["revision"] = revision
    text = issue.body
    if with_comments:
        text = with_comments_appended(issue.body, issue.comments)
        metadata["comments"] = len(issue.comments)
    return {
        "format": "viano-case-spec",
        "format_version": 1,
        "case_id": case_id(issue, stem),
        "phase": "investigation",
        "report": {"title": issue.title, "text": text, "metadata": metadata},
        "hypotheses": [],
        "attachments": [],
    }


def case_id(issue: Issue, stem: str | None) -> str:
    if issue.repository and issue.number is not None:
        return _fit(issue.repository.rsplit("/", 1)[-1], f"-{issue.number}")
    if stem:
        return _fit(stem, "")
    if issue.number is not None:
        return _fit("issue", f"-{issue.number}")
    return FALLBACK_ID


def with_comments_appended(body: str, comments: list[Comment]) -> str:
    """The body as written, then each comment under its own heading with author and time."""
    blocks = []
    for number, comment in enumerate(comments, start=1):
        heading = f"## Comment {number} by {comment.author or 'an unknown author'}"
        if comment.created_at:
            heading += f" at {comment.created_at}"
        blocks.append(f"---\n\n{heading}\n\n{comment.body.strip()}\n")
    if not blocks:
        return body
    gap = "" if not body else "\n" if body.endswith("\n") else "\n\n"
    text = body + gap + "\n".join(blocks)
    if len(text) * 4 > MAX_REPORT_TEXT_BYTES and len(text.encode()) > MAX_REPORT_TEXT_BYTES:
        raise too_large("/comments", MAX_REPORT_TEXT_BYTES, "bytes")
    return text


def _source(issue: Issue) -> dict[str, Any]:
    return {
        "tracker": issue.tracker,
        "url": issue.url,
        "repository": issue.repository,
        "number": issue.number,
        "author": issue.author,
        "labels": list(issue.labels),
        "created_at": issue.created_at,
        "state": issue.state,
    }


def _fit(name: str, suffix: str) -> str:
    """``name + suffix`` made to match the case ID pattern, the suffix kept whole."""
    assert len(suffix) <= 1 + len(str(MAX_SAFE_INTEGER))
    cleaned: list[str] = []
    for char in name.lower():
        char = char if char in _ALLOWED else "-"
        if char == "-" and cleaned and cleaned[-1] == "-":
            continue
        cleaned.append(char)
    head = "".join(cleaned).lstrip("._-")[: MAX_CASE_ID - len(suffix)].rstrip("-")
    if not head:
        return (FALLBACK_ID + suffix) if suffix else FALLBACK_ID
    return head + suffix


__all__ = [
    "FALLBACK_ID",
    "MAX_REPORT_TEXT_BYTES",
    "build_spec",
    "case_id",
    "with_comments_appended",
]
