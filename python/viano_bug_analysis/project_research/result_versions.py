"""Project results of either version, read by the version 2 names.

``project-result-v1`` used ``complete`` for four meanings: the coverage one
(``coverage.complete``: every answer to the query is in this result) and,
inside the git provider's ``result``, three others. ``project-result-v2``
keeps ``complete`` for the coverage meaning alone and names the others by
what they say (docs/project-research-v1.md, "Result versions"):

=====================================  ===================================
version 1 (``result``)                 version 2 (``result``)
=====================================  ===================================
search kinds: ``complete`` (bool)      ``files_unsearched`` (count; 0 for
                                       the old ``true``)
``source.changes``: ``complete``,      ``examined_in_full``,
``incomplete_reasons``                 ``examination_gaps``
``source.revision``: ``complete``,     ``walk_finished``,
``incomplete_reason``                  ``walk_stopped_by``
``references``: a references-v1        a references-v2 document:
document, ``source.literal.complete``  ``source.literal.files_unsearched``
=====================================  ===================================

New answers are always version 2. A stored version 1 capture is never
rewritten (its file name is the SHA-256 of its bytes): it verifies against
its own schemas, exactly as stored, and a consumer that reads fields of a
provider's answer reads them through ``current_body``, which gives the
version 2 names for either version. The view is for reading only; it is
never stored, hashed or cited (citations point into the stored answer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from viano_bug_analysis.project_research.git_coverage import COVERAGE_GAPS

CURRENT_VERSION: Final = 2
VERSIONS: Final = (1, 2)
SEARCH_KINDS: Final = frozenset(
    {"source.search", "source.symbol", "source.registration", "source.schema"}
)


def current_body(result: Mapping[str, Any]) -> Mapping[str, Any]:
    """The provider's answer of a project result (``result["result"]``) by the
    version 2 names; a version 2 answer is returned as it is."""
    body: Mapping[str, Any] = result["result"]
    if result.get("format_version") != 1:
        return body
    kind = result["query"]["kind"]
    if kind in SEARCH_KINDS:
        return _renamed(body, complete=("files_unsearched", unsearched_of(body)))
    if kind == "source.revision":
        return _renamed(
            body,
            complete=("walk_finished", body["complete"]),
            incomplete_reason=("walk_stopped_by", body["incomplete_reason"]),
        )
    if kind == "source.changes":
        return _renamed(
            body,
            complete=("examined_in_full", body["complete"]),
            incomplete_reasons=("examination_gaps", list(body["incomplete_reasons"])),
        )
    if kind == "references":
        return _references(body)
    return body


def unsearched_of(body: Mapping[str, Any]) -> int:
    """Files a search answer skipped for a reason that could hide a hit, from
    its skip counts (``by_reason`` counts every skipped file, listed or not)."""
    by_reason: Mapping[str, int] = (body.get("skipped") or {}).get("by_reason", {})
    return sum(n for reason, n in by_reason.items() if reason in COVERAGE_GAPS)


def _renamed(body: Mapping[str, Any], **renames: tuple[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in body.items() if k not in renames}
    out.update(dict(renames.values()))
    return out


def _references(body: Mapping[str, Any]) -> dict[str, Any]:
    # The literal's count of unsearched files is the largest of its pages'
    # (every page of one search has the same selection, so the same count).
    source = body["source"]
    if not source.get("available"):
        return {**body, "format_version": CURRENT_VERSION}
    parts = {part["sha256"]: part["capture"]["result"] for part in body["captures"]}
    literal = dict(source["literal"])
    literal.pop("complete", None)
    literal["files_unsearched"] = max(
        (unsearched_of(parts[sha]["result"]) for sha in literal["captures"] if sha in parts),
        default=0,
    )
    return {**body, "format_version": CURRENT_VERSION, "source": {**source, "literal": literal}}


__all__ = ["CURRENT_VERSION", "SEARCH_KINDS", "VERSIONS", "current_body", "unsearched_of"]
