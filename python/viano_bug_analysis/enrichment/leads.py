"""Leads: the few facts that point at a place to look, ranked, ahead of everything else.

A lead is a fact that says *where* a fix may be needed: a commit since the
report that touches its entities, a row the engine's own load checks would
flag, a reference the reference map expected to find and did not, a
heuristic pattern, or the file a missing script would live in. Rows merely
reached are facts, never leads: reaching a row says nothing about it being
wrong.

:func:`add_leads` is the last enrichment phase. It reads the lead-source
facts the earlier phases wrote and appends one ``project_lead`` fact per
lead, in rank order, at most ``max_leads`` (and a ``leads_limit`` coverage
fact with the count left out). The ranking, most telling first:

1. ``changed_since_report`` - "maybe already fixed": if a commit after the
   report's revision changed these entities, the first question is whether
   the bug still exists at all;
2. ``engine_check`` - the engine itself rejects or reports the row when it
   loads the world database, with the source line that checks it;
3. ``missing_reference`` - a reference the map says must resolve names an
   entity with no row;
4. ``heuristic`` - a pattern that often means a bug but that the engine
   accepts;
5. ``script_file`` - where a script that does not exist yet would live: a
   place to write, not a defect found.

Within a class the report's own entities (named in it: a typed mention, an
untyped ID found as that type, an exact name that was followed) come before
entities only reached from them; then a class-specific order (below); the
fact ID of the source fact breaks every remaining tie, so the same facts
always give the same ranks.

Each lead's ``why`` is one sentence built from IDs, table, column and rule
names and paths only: never a row value other than an ID, a source line or
a commit message, so it can be printed and logged anywhere.

The readers of leads (build summary, ``vba status``, ``vba case leads``,
the prompt selection, the MCP ``case_facts`` tool, the case report) use
:func:`leads_of`, :func:`leads_first`, :func:`leads_left_out` and
:func:`lead_line`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from viano_bug_analysis.facts.text import (
    CLASS_NAMES,
    LEAD_KIND,
    LIMIT_REASON,
    is_limit_fact,
    lead_line,
    location_text,
)
from viano_bug_analysis.facts.text import key_text as _key_text

DEFAULT_MAX_LEADS = 20

# Most telling first: the order of this tuple is the first key of the ranking.
LEAD_CLASSES = (
    "changed_since_report",
    "engine_check",
    "missing_reference",
    "heuristic",
    "script_file",
)
# A file whose constants name the entity says more than the zone's file, which
# says more than a file that only holds scripts of a similar name.
_SCRIPT_REASONS = ("constants", "zone", "sibling_prefix")
# At most this many IDs are spelled out in one sentence; the rest are counted.
_SHOWN_TERMS = 3


class PhaseContext(Protocol):
    """The part of ``engine.PhaseContext`` this phase uses: the facts so far, the
    writer of new ones, the profile (``limits.max_leads``, ``entities``). Leads ask
    nothing, so they spend none of the query budget."""

    @property
    def facts(self) -> Sequence[Mapping[str, Any]]: ...

    @property
    def profile(self) -> Any: ...

    def fact(self, kind: str, **fields: Any) -> str: ...


@dataclass
class _Candidate:
    lead: str
    own: bool  # an entity the report names, not one reached from it
    order: tuple[Any, ...]  # the class-specific key
    location: dict[str, Any]
    why: str
    rests_on: list[str]
    entity: tuple[str, Any] | None = None

    def rank_key(self) -> tuple[Any, ...]:
        return (LEAD_CLASSES.index(self.lead), not self.own, self.order, _number(self.rests_on[0]))


def add_leads(ctx: PhaseContext) -> None:
    """Appends the ranked ``project_lead`` facts (and ``leads_limit`` when some are left out)."""
    facts = list(ctx.facts)
    named = _Named(facts, getattr(ctx.profile, "entities", None) or {})
    candidates = _merged(c for fact in facts for c in _candidates(fact, named))
    candidates.sort(key=_Candidate.rank_key)
    limit = _max_leads(ctx.profile)
    for rank, candidate in enumerate(candidates[:limit], start=1):
        fields: dict[str, Any] = {
            "rank": rank,
            "lead": candidate.lead,
            "why": candidate.why,
            "location": candidate.location,
            "rests_on": candidate.rests_on,
        }
        if candidate.entity is not None:
            fields["entity_type"], fields["entity_id"] = candidate.entity
        ctx.fact(LEAD_KIND, **fields)
    left_out = candidates[limit:]
    if left_out:
        by_class: dict[str, int] = {}
        for candidate in left_out:
            by_class[candidate.lead] = by_class.get(candidate.lead, 0) + 1
        ctx.fact(
            "project_context_coverage",
            reason=LIMIT_REASON,
            count=len(left_out),
            limit=limit,
            by_class=by_class,
            left_out_facts=[c.rests_on[0] for c in left_out],
            statement=f"{len(left_out)} more leads ranked below the max_leads bound ({limit}) "
            "were not written; their source facts are still in the index",
        )


# -- readers ------------------------------------------------------------------------------


def leads_of(facts: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The ``project_lead`` facts, by rank."""
    return sorted((f for f in facts if f.get("kind") == LEAD_KIND), key=lambda f: f["rank"])


def leads_first(facts: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Every fact, the ``project_lead`` facts first by rank (:func:`leads_of`), then the
    others in index order: the one order of every listing of a revision's facts."""
    listed = list(facts)
    return [*leads_of(listed), *(f for f in listed if f.get("kind") != LEAD_KIND)]


def leads_left_out(facts: Iterable[Mapping[str, Any]]) -> int:
    """How many ranked leads the ``max_leads`` bound left out."""
    return sum(int(f["count"]) for f in facts if is_limit_fact(f))


# -- candidates ---------------------------------------------------------------------------


def report_entities(facts: Iterable[Mapping[str, Any]]) -> list[tuple[Any, Any]]:
    """(entity type, ID) of what the report itself names: its typed mentions, its
    untyped IDs where the database found them, the names it gave that were
    followed. Everything else a build reaches is reached, not named."""
    named: list[tuple[Any, Any]] = []
    for fact in facts:
        kind = fact.get("kind")
        if kind == "case_mention":
            named.append((fact.get("entity_type"), fact.get("entity_id")))
        elif kind == "case_untyped_mention":
            named += [(t, fact.get("entity_id")) for t in fact.get("found_as") or ()]
        elif kind == "project_name_match" and fact.get("followed"):
            named += [(m.get("entity_type"), m.get("entity_id")) for m in fact.get("matches") or ()]
    return named


class _Named:
    """The report's own entities, and the rows that are theirs."""

    def __init__(self, facts: Sequence[Mapping[str, Any]], entities: Mapping[str, Any]) -> None:
        self.entities: set[tuple[str, tuple[str, Any]]] = set()
        for entity_type, entity_id in report_entities(facts):
            self._add(entity_type, entity_id)
        self.ids = {str(value) for _type, (_name, value) in self.entities}
        # table -> [(entity type, ID column)]: which rows are an entity's own row.
        self.tables: dict[str, list[tuple[str, str]]] = {}
        for entity_type, lookup in entities.items():
            table = getattr(lookup, "table", None)
            if table is not None:
                self.tables.setdefault(table, []).append((entity_type, lookup.column))

    def _add(self, entity_type: Any, entity_id: Any) -> None:
        if isinstance(entity_type, str):
            self.entities.add((entity_type, _typed(entity_id)))

    def has(self, entity_type: Any, entity_id: Any) -> bool:
        return (entity_type, _typed(entity_id)) in self.entities

    def owns_row(self, table: Any, key: Mapping[str, Any]) -> bool:
        return any(
            column in key and self.has(entity_type, key[column])
            for entity_type, column in self.tables.get(str(table), ())
        )

    def entity_row(self, entity_type: str, entity_id: Any) -> dict[str, Any] | None:
        for table, owners in sorted(self.tables.items()):
            for owner, column in owners:
                if owner == entity_type:
                    return {"table": table, "key": {column: entity_id}}
        return None


def _candidates(fact: Mapping[str, Any], named: _Named) -> list[_Candidate]:
    kind = fact.get("kind")
    if kind == "project_change_since_report":
        return [_changed(fact, named)]
    if kind == "project_rule_hit":
        hit = _rule_hit(fact, named)
        return [hit] if hit is not None else []
    if kind == "project_missing_reference":
        return [_missing(fact, named)]
    if kind == "project_script_file_candidate":
        return [_script_file(fact, named)]
    return []


def _changed(fact: Mapping[str, Any], named: _Named) -> _Candidate:
    terms = list(dict.fromkeys(str(t) for t in fact.get("terms") or ()))
    commit = str(fact.get("commit", ""))
    # The fact lists a bounded page of changed lines; changes_total counts them all.
    total = fact.get("changes_total")
    changed = total if isinstance(total, int) else len(fact.get("changes") or ())
    return _Candidate(
        "changed_since_report",
        any(t in named.ids for t in terms),
        # More of the report's terms first; then in history order, the first
        # change after the report being the earliest candidate fix.
        (-len(terms), str(fact.get("author_time", "")), commit),
        {"commit": commit},
        f"commit {commit[:12]}, after the report's revision and before the pinned commit, "
        f"changes {changed} {_plural(changed, 'line')} naming {_terms_text(terms)} of the "
        "report's entities: maybe already fixed",
        [str(fact["fact_id"])],
    )


def _rule_hit(fact: Mapping[str, Any], named: _Named) -> _Candidate | None:
    entity_type, entity_id = fact.get("entity_type"), fact.get("entity_id")
    engine = fact.get("rule_kind") == "engine"
    rows = [r for r in fact.get("rows") or () if isinstance(r, Mapping)]
    source = fact.get("engine_source") if isinstance(fact.get("engine_source"), Mapping) else None
    location: dict[str, Any] | None
    if rows:
        location = {"table": rows[0].get("table"), "key": dict(rows[0].get("key") or {})}
    elif source is not None:
        location = {"path": source.get("path"), "line": source.get("line")}
    else:
        location = named.entity_row(str(entity_type), entity_id)
    if location is None:
        return None  # nothing to point at: the hit stays a fact
    rule = str(fact.get("rule", ""))
    what = f"{entity_type} {entity_id}" if entity_type is not None else location_text(location)
    more = f" (and {len(rows) - 1} more {_plural(len(rows) - 1, 'row')})" if len(rows) > 1 else ""
    if engine:
        checked = (
            f" at {source.get('path')}:{source.get('line')}"
            if source is not None and source.get("path")
            else ""
        )
        why = (
            f"the engine's own load check (rule {rule}{checked}) flags {what}{more} "
            "when it loads the world database"
        )
    else:
        why = (
            f"heuristic rule {rule} matches {what}{more}: a pattern that often means a bug, "
            "though the engine accepts it"
        )
    own = named.has(entity_type, entity_id) or any(
        named.owns_row(r.get("table"), r.get("key") or {}) for r in rows
    )
    return _Candidate(
        "engine_check" if engine else "heuristic",
        own,
        (rule, str(entity_type), _sortable(entity_id)),
        location,
        why + _whose(own),
        [str(fact["fact_id"])],
        _entity(fact),
    )


def _missing(fact: Mapping[str, Any], named: _Named) -> _Candidate:
    source = _mapping(fact.get("from"))
    looked = _mapping(fact.get("looked_in"))
    entity_type, entity_id = fact.get("entity_type"), fact.get("entity_id")
    table, key = source.get("table"), dict(source.get("key") or {})
    if table is not None:
        names = f"{table}.{source.get('column')} of {table} {_key_text(key)} names"
    else:
        # Named by an entity ID, not by a row: the row that should exist is the place.
        names = f"{source.get('entity_type')} {source.get('entity_id')} references"
        table, key = looked.get("table"), {str(looked.get("column")): entity_id}
    own = named.owns_row(table, key) or named.has(entity_type, entity_id)
    rests_on = [str(fact["fact_id"])]
    if isinstance(fact.get("empty_fact"), str):
        rests_on.append(fact["empty_fact"])
    return _Candidate(
        "missing_reference",
        own,
        (str(table), str(source.get("column")), str(entity_type), _sortable(entity_id)),
        {"table": table, "key": key},
        f"{names} {entity_type} {entity_id}, but {looked.get('table')}.{looked.get('column')} "
        "has no row for it" + _whose(own),
        rests_on,
        _entity(fact),
    )


def _script_file(fact: Mapping[str, Any], named: _Named) -> _Candidate:
    reason = str(fact.get("reason", ""))
    path = str(fact.get("path", ""))
    entity = f"{fact.get('entity_type')} {fact.get('entity_id')}"
    evidence = len(fact.get("evidence") or ())
    lines = f"{evidence} {_plural(evidence, 'line')}"
    # Every rendering puts the path before the why ("script file at <path>: ..."):
    # the why says "the file", not the path a second time.
    why = {
        "constants": f"the file defines constants naming {entity} ({lines}): a script for it "
        "would most likely be added there",
        "zone": f"the file is the script file of the zone {entity} is spawned in ({lines}): "
        "a missing script for it would live there",
    }.get(
        reason,
        f"the file registers scripts of the same kind and prefix as the one {entity} needs "
        f"({lines}): a missing script for it would live beside them",
    )
    own = named.has(fact.get("entity_type"), fact.get("entity_id"))
    rank = _SCRIPT_REASONS.index(reason) if reason in _SCRIPT_REASONS else len(_SCRIPT_REASONS)
    return _Candidate(
        "script_file",
        own,
        (rank, -evidence, path),
        {"path": path},
        why + _whose(own),
        [str(fact["fact_id"])],
        _entity(fact),
    )


def _merged(candidates: Iterable[_Candidate]) -> list[_Candidate]:
    """One script-file lead per file and entity: each reason that found it is a fact it
    rests on, the best of them words it."""
    kept: list[_Candidate] = []
    files: dict[tuple[str, Any, Any], _Candidate] = {}
    for candidate in candidates:
        if candidate.lead != "script_file":
            kept.append(candidate)
            continue
        key = (
            str(candidate.location["path"]),
            candidate.entity and candidate.entity[0],
            candidate.entity and _typed(candidate.entity[1]),
        )
        first = files.get(key)
        if first is None:
            files[key] = candidate
            kept.append(candidate)
            continue
        best = first if first.order <= candidate.order else candidate
        first.why, first.order, first.own = best.why, best.order, first.own or candidate.own
        first.rests_on = sorted({*first.rests_on, *candidate.rests_on}, key=_number)
    return kept


# -- small helpers --------------------------------------------------------------------------


def _terms_text(terms: Sequence[str]) -> str:
    """``IDs 5, 6 and 2 more terms``: IDs spelled out, ScriptNames and constants counted."""
    shown = [t for t in terms if t.isdigit()][:_SHOWN_TERMS]
    rest = len(terms) - len(shown)
    parts = [("ID " if len(shown) == 1 else "IDs ") + ", ".join(shown)] if shown else []
    if rest:
        parts.append(f"{rest} {'more ' if shown else ''}{_plural(rest, 'term')}")
    return " and ".join(parts) or "the terms"


def _whose(own: bool) -> str:
    return "; the report names it" if own else "; reached from the report's entities"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _entity(fact: Mapping[str, Any]) -> tuple[str, Any] | None:
    entity_type = fact.get("entity_type")
    return (entity_type, fact.get("entity_id")) if isinstance(entity_type, str) else None


def _max_leads(profile: Any) -> int:
    limit = getattr(getattr(profile, "limits", None), "max_leads", DEFAULT_MAX_LEADS)
    return limit if isinstance(limit, int) and not isinstance(limit, bool) else DEFAULT_MAX_LEADS


def _typed(value: Any) -> tuple[str, Any]:
    # 1 and True (or 1 and "1") are different IDs.
    return (type(value).__name__, value)


def _sortable(value: Any) -> tuple[int, Any]:
    if isinstance(value, int) and not isinstance(value, bool):
        return (0, value)
    return (1, str(value))


def _number(fact_id: str) -> int:
    return int(fact_id[1:]) if fact_id[1:].isdigit() else 0


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"


__all__ = [
    "CLASS_NAMES",
    "DEFAULT_MAX_LEADS",
    "LEAD_CLASSES",
    "LEAD_KIND",
    "LIMIT_REASON",
    "PhaseContext",
    "add_leads",
    "is_limit_fact",
    "lead_line",
    "leads_first",
    "leads_left_out",
    "leads_of",
    "location_text",
]
