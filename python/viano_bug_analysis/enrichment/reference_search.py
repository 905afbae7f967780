"""Every place the live project uses one ID as one entity type (``vba references``).

Three groups, each answered by ordinary ProjectResearch queries, so every
row and line shown is part of a capture with its own provenance:

* **database**: for each map entry holding the type (``references.holders``)
  its ``database.rows`` query (``references.reverse_query``), rows kept only
  where ``references.names`` says the row names the ID. The count is exact:
  a complete first page is its own count; otherwise a scalar column is counted
  by ``database.count`` with the same filters (every row it counts names the
  ID), and a list column (``separated_by``, asked by ``contains``, which also
  matches longer numbers) is paged through up to the research row window and
  its whole items counted; past the window the count is marked inexact and is
  the ``contains`` count, an upper bound.
* **literal**: lines of the pinned commit where the ID's digits stand as a
  whole word (``git grep -w``). ``source.symbol`` takes identifiers only, so
  the digits are searched literally and each line checked with
  ``text_search.contains_word``; every page of the literal search is read up
  to ``source_pages``, so the count is exact unless that bound is reached
  (then it is a lower bound and the literal total an upper one).
* **constants**: among those lines, the ones assigning the ID to a constant of
  the type's ``constant_prefixes`` (``references.constant_pattern``, below the
  type's ``constant_path_prefix`` as the build asks), and for each constant
  the lines naming it (``source.symbol``, whose total is exact).

A group whose provider the configuration lacks is reported as unavailable,
not as empty; an outage (``ResearchUnavailable``) ends the whole search.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.enrichment import references
from viano_bug_analysis.enrichment.origin import query_database, research_origin
from viano_bug_analysis.enrichment.profile import EnrichmentProfile, Reference
from viano_bug_analysis.enrichment.profile_check import Schema, resolve_columns
from viano_bug_analysis.errors import EnrichmentError
from viano_bug_analysis.project_research.captures import Capture
from viano_bug_analysis.project_research.config import ResearchConfig
from viano_bug_analysis.project_research.errors import ResearchError
from viano_bug_analysis.project_research.protocol import Research
from viano_bug_analysis.project_research.result_versions import CURRENT_VERSION, current_body
from viano_bug_analysis.snapshot.text_search import contains_word
from viano_bug_analysis.vocabulary import ENTITY_TYPE_ALIASES, entity_type_named

FORMAT = "viano-references"
SCHEMA = "references-v2"
ROWS_POINTER = "/result/result/rows"
MATCHES_POINTER = "/result/result/matches"
MAX_ID = 2**63 - 1
# Refusals that concern one map entry's table or column in this database.
ENTRY_REFUSALS = frozenset(
    {"table_not_allowed", "table_not_found", "unknown_column", "database_ambiguous"}
)


@dataclass(frozen=True, slots=True)
class Bounds:
    """How much one search reads and shows.

    ``page`` and ``row_window`` must not exceed the research configuration's
    ``limits.page`` and ``limits.rows`` (``for_research`` takes them from it).
    """

    shown: int = 20  # rows or lines listed per group; counts go past it
    page: int = 100
    row_window: int = 1000
    source_pages: int = 20

    @classmethod
    def for_research(cls, limits: Any, *, shown: int = 20) -> Bounds:
        return cls(shown=shown, page=limits.page, row_window=limits.rows)


@dataclass(slots=True)
class _Collected:
    captures: dict[str, Capture] = field(default_factory=dict)

    def keep(self, capture: Capture) -> Capture:
        self.captures.setdefault(capture.sha256, capture)
        return capture


def check_request(profile: EnrichmentProfile, entity_type: str, value: Any) -> str:
    """The profile's entity type ``entity_type`` names (an operator's alias such as
    ``npc`` included, ``vocabulary.ENTITY_TYPE_ALIASES``); else
    ``entity_type_unknown`` (naming the profile's types) or ``entity_id_invalid``."""
    entity_type = entity_type_named(entity_type, profile.entities)
    if entity_type not in profile.entities:
        allowed = ", ".join(sorted(profile.entities))
        aliases = ", ".join(
            f"{alias} = {target}"
            for alias, target in ENTITY_TYPE_ALIASES.items()
            if target in profile.entities
        )
        raise EnrichmentError(
            "entity_type_unknown",
            f"the profile has no entity type of this name; allowed: {allowed}"
            + (f" (also: {aliases})" if aliases else ""),
            {"argument": "type", "allowed": sorted(profile.entities)},
        )
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ID:
        raise EnrichmentError(
            "entity_id_invalid",
            f"the ID must be a whole number from 1 to {MAX_ID}",
            {"argument": "id", "minimum": 1, "maximum": MAX_ID},
        )
    return entity_type


def live_profile(
    profile: EnrichmentProfile, config: ResearchConfig, schema: Schema
) -> EnrichmentProfile:
    """The profile as the build reads this database: in the configured world
    database, with the column names its tables use (``column_alternatives``)."""
    placed = profile.in_database(query_database(profile.database, research_origin(config)))
    return placed.with_columns(resolve_columns(placed, schema))


def find_references(
    profile: EnrichmentProfile,
    research: Research,
    entity_type: str,
    value: int,
    bounds: Bounds | None = None,
) -> dict[str, Any]:
    """The ``references-v2`` document of ``value`` as ``entity_type`` (snapshots: null)."""
    check_request(profile, entity_type, value)
    bounds = bounds or Bounds()
    collected = _Collected()
    asked = (profile, research, entity_type, value, bounds, collected)
    database = _unavailable_or(lambda: _database(*asked))
    source = _unavailable_or(lambda: _source(*asked))
    return {
        "format": FORMAT,
        "format_version": CURRENT_VERSION,
        "profile": profile.name,
        "entity_type": entity_type,
        "id": value,
        "shown": bounds.shown,
        "database": database,
        "source": source,
        "snapshots": None,
        "captures": [
            {"sha256": sha, "capture": dict(c.document)}
            for sha, c in sorted(collected.captures.items())
        ],
    }


def _unavailable_or(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        answer: dict[str, Any] = run()
    except ResearchError as err:
        if err.code != "provider_not_configured":
            raise
        return {"available": False, "reason": err.code, "provider": err.details.get("provider")}
    return answer


# -- database -----------------------------------------------------------------------------


def _database(
    profile: EnrichmentProfile,
    research: Research,
    entity_type: str,
    value: int,
    bounds: Bounds,
    collected: _Collected,
) -> dict[str, Any]:
    entries = []
    for ref in references.holders(profile, entity_type):
        try:
            entries.append(_entry(profile, research, ref, entity_type, value, bounds, collected))
        except ResearchError as err:
            if err.code not in ENTRY_REFUSALS:
                raise
            # This database lacks what the entry reads (vba profile check says
            # which); the other entries still answer.
            refused = {"refused": err.code, "count": 0, "count_exact": False, "rows": []}
            entries.append({**_entry_head(ref), **refused})
    return {
        "available": True,
        "total": sum(e["count"] for e in entries),
        "total_exact": all(e["count_exact"] for e in entries),
        "refused": sum(1 for e in entries if "refused" in e),
        "entries": entries,
    }


def _entry_head(ref: Reference) -> dict[str, Any]:
    return {
        "reference": ref.name,
        "table": ref.table,
        "column": ref.column,
        "when": [{"column": f.column, "operator": f.operator, "value": f.value} for f in ref.when],
        "negative_means": ref.negative_means,
        "list": ref.separated_by is not None,
    }


def _entry(
    profile: EnrichmentProfile,
    research: Research,
    ref: Reference,
    entity_type: str,
    value: int,
    bounds: Bounds,
    collected: _Collected,
) -> dict[str, Any]:
    first = min(bounds.shown, bounds.page) if ref.separated_by is None else bounds.page
    query = references.reverse_query(profile, ref, entity_type, value, limit=max(first, 1))
    pages = [collected.keep(research.capture(query))]
    if ref.separated_by is not None:
        while (nxt := pages[-1].result["result"]["next_offset"]) is not None:
            if nxt + bounds.page > bounds.row_window:
                break
            pages.append(collected.keep(research.capture({**query, "offset": nxt})))
    rows = [
        _row(profile, ref, capture, index, row)
        for capture in pages
        for index, row in enumerate(capture.result["result"]["rows"])
        if references.names(ref, row, entity_type, value)
    ]
    read_all = pages[-1].result["result"]["next_offset"] is None
    count_capture: Capture | None = None
    if read_all:
        count, exact = len(rows), True
    else:
        count_query = {k: v for k, v in query.items() if k not in ("columns", "offset", "limit")}
        count_query["kind"] = "database.count"
        count_capture = collected.keep(research.capture(count_query))
        count = int(count_capture.result["result"]["count"])
        # A list column's contains count also has rows naming a longer number.
        exact = ref.separated_by is None
    return {
        **_entry_head(ref),
        "origin": dict(pages[0].origin),
        "count": count,
        "count_exact": exact,
        "rows": rows[: bounds.shown],
        "captures": [c.sha256 for c in pages],
        "count_capture": count_capture.sha256 if count_capture is not None else None,
    }


def _row(
    profile: EnrichmentProfile,
    ref: Reference,
    capture: Capture,
    index: int,
    row: Mapping[str, Any],
) -> dict[str, Any]:
    return {
        "key": {c: row.get(c) for c in profile.key_of(ref.table)},
        "value": row.get(ref.column),
        "row": dict(row),
        "capture_sha256": capture.sha256,
        "pointer": f"{ROWS_POINTER}/{index}",
    }


# -- source -------------------------------------------------------------------------------


def _source(
    profile: EnrichmentProfile,
    research: Research,
    entity_type: str,
    value: int,
    bounds: Bounds,
    collected: _Collected,
) -> dict[str, Any]:
    digits = str(value)
    query: dict[str, Any] = {
        "kind": "source.search",
        "text": digits,
        "case_sensitive": True,
        "offset": 0,
        "limit": bounds.page,
    }
    pages: list[Capture] = []
    words: list[dict[str, Any]] = []
    undecided = 0
    unsearched = 0
    while True:
        capture = collected.keep(research.capture(query))
        pages.append(capture)
        result = capture.result
        # Every page searched the same files: the count is the same on each.
        unsearched = max(unsearched, current_body(result)["files_unsearched"])
        for index, match in enumerate(result["result"]["matches"]):
            if contains_word(match["text"], digits):
                words.append(_line(capture, index, match))
            elif match["text_truncated"]:
                undecided += 1  # the digits may stand beyond the cut
        nxt = result["result"]["next_offset"]
        if nxt is None or len(pages) >= bounds.source_pages:
            break
        query = {**query, "offset": nxt}
    literal_total = pages[0].result["result"]["total"]
    read_all = pages[-1].result["result"]["next_offset"] is None
    literal = {
        "text": digits,
        "count": len(words),
        "count_exact": read_all and undecided == 0,
        "files_unsearched": unsearched,
        "literal_lines": literal_total,
        "lines_read": sum(len(p.result["result"]["matches"]) for p in pages),
        "lines": words[: bounds.shown],
        "captures": [c.sha256 for c in pages],
    }
    constants = _constants(profile, research, entity_type, value, words, bounds, collected)
    return {"available": True, "origin": dict(pages[0].origin), "literal": literal, **constants}


def _constants(
    profile: EnrichmentProfile,
    research: Research,
    entity_type: str,
    value: int,
    words: Sequence[Mapping[str, Any]],
    bounds: Bounds,
    collected: _Collected,
) -> dict[str, Any]:
    entity = profile.entities[entity_type]
    if not entity.constant_prefixes:
        return {"constant_prefixes": [], "constants": []}
    typed = references.constant_pattern(entity.constant_prefixes, value)
    where = entity.constant_path_prefix or ""
    defined: dict[str, list[Mapping[str, Any]]] = {}
    for line in words:
        if not line["path"].startswith(where):
            continue
        found = typed.search(line["text"])
        if found is not None:
            defined.setdefault(found.group("name") or found.group("defined"), []).append(line)
    constants = []
    for name, lines in sorted(defined.items()):
        query = {"kind": "source.symbol", "symbol": name, "offset": 0, "limit": bounds.page}
        capture = collected.keep(research.capture(query))
        result = capture.result["result"]
        constants.append(
            {
                "name": name,
                "defined_at": list(lines),
                # The symbol search counts every line past its page; only a
                # file it could not search (too large, not UTF-8) leaves it short.
                "count": result["total"],
                "count_exact": current_body(capture.result)["files_unsearched"] == 0,
                "lines": [_line(capture, i, m) for i, m in enumerate(result["matches"])][
                    : bounds.shown
                ],
                "captures": [capture.sha256],
            }
        )
    return {"constant_prefixes": list(entity.constant_prefixes), "constants": constants}


def _line(capture: Capture, index: int, match: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "path": match["path"],
        "line": match["line"],
        "text": match["text"],
        "text_truncated": match["text_truncated"],
        "blob": match["blob"],
        "sha256": match["sha256"],
        "capture_sha256": capture.sha256,
        "pointer": f"{MATCHES_POINTER}/{index}",
    }


__all__ = ["FORMAT", "SCHEMA", "Bounds", "check_request", "find_references", "live_profile"]
