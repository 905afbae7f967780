"""The case brief's fact sections: what the enrichment found, compact and in a budget.

In this order: the report's entities (one line each), the leads (the best
"already fixed?" candidates and the verdict first), the rows
found (small tables grouped by the entity they belong to), the other
findings, the empty lookups (one line per entity) and the coverage notes
(one line per reason, counted). A relationship fact is folded into the line
of the result it reached; a fact is named by its label, never by a hash.

``fact_sections`` is a pure function of the index: the same index and
``max_chars`` give the same text. What does not fit is left out whole,
lowest value first: rows of entities the report does not name, then the
empty lookups, then the other findings (with the entities the build only
reached and the leads about them), then the rows of the report's own
entities (one rows fact at a time, an entity's first rows last), then the
coverage lines; the report's entities and the leads about them are kept first. The left-out facts
are listed in ``left_out`` and counted by kind on the last line, which says
how to ask for them (``facts/query.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.facts import client_text
from viano_bug_analysis.facts import text as t
from viano_bug_analysis.facts.registry import coverage_line, fact_kind, row_table

Fact = Mapping[str, Any]
Entity = tuple[str, str]  # (type, ID as text): IDs of any JSON type compare as written

# Drop order: a part of a higher number is left out before a lower one.
KEEP, COVERAGE, NAMED_ROWS, FINDINGS, NAMED_EMPTY, OTHER_EMPTY, OTHER_ROWS = range(7)
# A result reached from many rows names the first few of them.
MAX_ORIGINS = 3
_ROW_KINDS = frozenset({"project_rows", "project_empty_result"})
_FOLDED = frozenset({"project_relationship", "project_entity", "project_description"})
_FIX_SEARCH, _FIX_CANDIDATE = t.FIX_SEARCH_KIND, t.FIX_CANDIDATE_KIND
# Told on the entity lines: what the client data says an entity is (client_text).
_CLIENT_KINDS = frozenset({"client_record", "client_record_absent", "client_name_match"})


@dataclass(frozen=True)
class FactSections:
    text: str
    shown: tuple[str, ...]
    left_out: tuple[str, ...]


@dataclass(frozen=True)
class TableAccess:
    read: tuple[str, ...]
    refused: Mapping[str, tuple[str, ...]]
    absent: tuple[str, ...]


@dataclass
class _Part:
    section: int
    drop: int
    order: tuple[Any, ...]
    lines: list[str]
    ids: set[str] = field(default_factory=set)
    entity: Entity | None = None  # an entity line: what relationships to it fold into
    # A one-line part that ends with the labels of every fact it stands for (folded ones
    # too, so they are added when rendered).
    labelled: bool = False
    title: str | None = None  # the line a run of parts with this title starts under

    def size(self) -> int:
        return sum(len(line) + 1 for line in self.lines)


_HEADINGS = (
    'Entities of the report (type ID "name": what the build found):',
    "Leads (where to look first; a lead is not a finding):",
    "Rows found (by entity; P-labels name the facts):",
    "Other findings:",
    "Empty lookups (nothing in these tables):",
    "Coverage (what the build did not read):",
)
ENTITIES, LEADS, ROWS, FINDINGS_SECTION, EMPTY, COVERAGE_SECTION = range(6)


def table_access(index: Mapping[str, Any]) -> TableAccess:
    """The tables the build read, the ones refused (by reason code) and the absent ones."""
    read: set[str] = set()
    refused: dict[str, set[str]] = {}
    for fact in index.get("facts", []):
        kind = fact.get("kind")
        if kind in _ROW_KINDS and "table" in fact:
            read.add(str(fact["table"]))
        # A refused source search names no table.
        elif _refused(fact) and fact.get("table"):
            refused.setdefault(str(fact.get("code")), set()).add(str(fact["table"]))
    absent = refused.pop("table_not_found", set())
    return TableAccess(
        tuple(sorted(read)),
        {code: tuple(sorted(tables)) for code, tables in sorted(refused.items())},
        tuple(sorted(absent)),
    )


def _refused(fact: Fact) -> bool:
    return fact.get("kind") == "project_context_coverage" and fact.get("reason") == "query_refused"


def fact_sections(index: Mapping[str, Any], *, max_chars: int) -> FactSections:
    facts: list[Fact] = list(index.get("facts", []))
    for fact in facts:
        fact_kind(fact.get("kind"))  # a closed vocabulary: an unknown kind is an error
    parts = FactGroups(facts).parts()
    all_ids = [str(f["fact_id"]) for f in facts]
    kinds = {str(f["fact_id"]): str(f["kind"]) for f in facts}
    kept = _fit(parts, all_ids, kinds, max_chars)
    shown = {i for p in kept for i in p.ids}
    left = tuple(i for i in all_ids if i not in shown)
    text = _render(kept, left, kinds)
    if len(text) > max_chars:  # nothing fits but the notice, in its short form or not at all
        short = f"Left out for room: {t.count(len(left), 'fact')}; ask case.facts."
        text = short if len(short) <= max_chars else ""
    return FactSections(text, tuple(i for i in all_ids if i in shown), left)


def _fit(
    parts: list[_Part], all_ids: list[str], kinds: Mapping[str, str], max_chars: int
) -> list[_Part]:
    ordered = sorted(parts, key=lambda p: (p.section, p.order))
    # Lowest value first: highest drop class, then the last in its section.
    drops = sorted(ordered, key=lambda p: (-p.drop, -p.section, tuple(-_sort(x) for x in p.order)))

    def without(count: int) -> list[_Part]:
        gone = {id(p) for p in drops[:count]}
        return [p for p in ordered if id(p) not in gone]

    def size(kept: list[_Part]) -> int:
        return len(_render(kept, _left(kept, all_ids), kinds))

    # The fewest parts to leave out, found by bisection (each render is linear).
    low, high = 0, len(drops)
    while low < high:
        middle = (low + high) // 2
        if size(without(middle)) <= max_chars:
            high = middle
        else:
            low = middle + 1
    kept = without(low)
    # A smaller part of lower value may still fit where a larger one did not.
    room = max_chars - size(kept)
    for part in drops[:low][::-1]:
        if part.size() + len(part.title or "") + 2 > room:
            continue
        trial = sorted([*kept, part], key=lambda p: (p.section, p.order))
        if (length := size(trial)) <= max_chars:
            kept, room = trial, max_chars - length
    return kept


def _sort(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _left(kept: list[_Part], all_ids: list[str]) -> tuple[str, ...]:
    shown = {i for p in kept for i in p.ids}
    return tuple(i for i in all_ids if i not in shown)


def _render(parts: Sequence[_Part], left: Sequence[str], kinds: Mapping[str, str]) -> str:
    lines: list[str] = []
    current, title = -1, None
    for part in parts:
        if part.section != current:
            current, title = part.section, None
            lines.append(_HEADINGS[current])
        if part.title is not None and part.title != title:
            lines.append(part.title)
        title = part.title
        lines += part.lines
        if part.labelled and part.ids:
            lines[-1] += f" ({t.labels(part.ids)})"
    if left:
        lines.append(_left_line(left, kinds))
    return "\n".join(lines)


def _left_line(left: Sequence[str], kinds: Mapping[str, str]) -> str:
    """What was left out, counted by kind (the labels are in ``left_out``)."""
    per_kind: dict[str, int] = {}
    for fact_id in left:
        per_kind[kinds[fact_id]] = per_kind.get(kinds[fact_id], 0) + 1
    counted = ", ".join(f"{n} {kind}" for kind, n in sorted(per_kind.items()))
    return (
        f"Left out for room: {t.count(len(left), 'fact')} ({counted}); ask case.facts by "
        "entity, table, fact_kind, text or ids to read them."
    )


class FactGroups:
    """The index grouped: which entity each result belongs to, what reached what."""

    def __init__(self, facts: list[Fact]) -> None:
        self.facts = facts
        self.by_id = {str(f["fact_id"]): f for f in facts}
        self.reached_by: dict[str, list[Fact]] = {}
        self.named: dict[Entity, set[str]] = {}  # named by the report -> mention labels
        self.names: dict[Entity, str] = {}
        self.entity_facts: dict[Entity, set[str]] = {}
        self.descriptions: dict[str, list[Fact]] = {}
        # entity -> its client_record (name, effects) and the facts told with it
        self.client: dict[Entity, Fact] = {}
        self.client_facts: dict[Entity, set[str]] = {}
        self.absent: set[Entity] = set()
        for fact in facts:
            kind = fact["kind"]
            if kind in _CLIENT_KINDS:
                self._client_fact(fact)
            if kind == "project_relationship" and "fact" in fact["to"]:
                self.reached_by.setdefault(str(fact["to"]["fact"]), []).append(fact)
            elif kind == "case_mention":
                self.named.setdefault(_entity(fact), set()).add(str(fact["fact_id"]))
            elif kind == "case_untyped_mention":
                for found in fact.get("found_as") or ():
                    key = (str(found), str(fact["entity_id"]))
                    self.named.setdefault(key, set()).add(str(fact["fact_id"]))
            elif kind == "project_name_match" and fact.get("followed"):
                for m in fact["matches"]:
                    key = (str(m["entity_type"]), str(m["entity_id"]))
                    self.named.setdefault(key, set()).add(str(fact["fact_id"]))
            elif kind == "project_entity":
                key = _entity(fact)
                if "name" in fact:
                    self.names.setdefault(key, str(fact["name"]))
                self.entity_facts.setdefault(key, set()).add(str(fact["fact_id"]))
            elif kind == "project_description" and "row_fact" in fact:
                self.descriptions.setdefault(str(fact["row_fact"]), []).append(fact)

    def _client_fact(self, fact: Fact) -> None:
        kind, fid = fact["kind"], str(fact["fact_id"])
        if kind == "client_record_absent":
            for entity_id in fact["entity_ids"]:
                key = (str(fact["entity_type"]), str(entity_id))
                self.absent.add(key)
                self.client_facts.setdefault(key, set()).add(fid)
            return
        key = _entity(fact)
        if kind == "client_name_match" and fact.get("followed"):
            self.named.setdefault(key, set()).add(fid)
        elif kind == "client_record":
            self.client.setdefault(key, fact)
        if fact.get("name"):
            self.names.setdefault(key, str(fact["name"]))
        self.client_facts.setdefault(key, set()).add(fid)

    def owner(self, fact: Fact) -> Entity | None:
        """The entity a rows or empty result belongs to."""
        purpose = fact.get("purpose") or {}
        if purpose.get("kind") == "entity_lookup":
            return (str(purpose["entity_type"]), str(purpose["entity_id"]))
        for rel in self.reached_by.get(str(fact["fact_id"]), []):
            if "entity_type" in rel["to"]:
                return (str(rel["to"]["entity_type"]), str(rel["to"]["value"]))
            if "entity_type" in rel["from"]:
                return (str(rel["from"]["entity_type"]), str(rel["from"]["entity_id"]))
        return None

    def parts(self) -> list[_Part]:
        parts: list[_Part] = []
        rows_of: dict[Entity | None, list[Fact]] = {}
        empty_of: dict[Entity | None, list[Fact]] = {}
        coverage: dict[str, list[Fact]] = {}
        used: set[str] = set()
        for fact in self.facts:
            fid, kind = str(fact["fact_id"]), fact["kind"]
            if kind == "project_rows":
                rows_of.setdefault(self.owner(fact), []).append(fact)
            elif kind == "project_empty_result":
                empty_of.setdefault(self.owner(fact), []).append(fact)
            elif kind == "project_context_coverage" and not t.is_limit_fact(fact):
                coverage.setdefault(_reason(fact), []).append(fact)
            elif kind == t.LEAD_KIND or t.is_limit_fact(fact) or _fix_lead(fact):
                parts.append(self._lead(fact))
                used.add(fid)
        entities = self._entities(rows_of, empty_of)
        for order, (entity, line, ids) in enumerate(entities):
            # An entity the build only reached gives way before the leads and the rows of
            # the report's own entities: a small budget keeps what the report is about.
            drop = KEEP if entity in self.named else FINDINGS
            parts.append(_Part(ENTITIES, drop, (order,), [line], ids, entity, labelled=True))
        rank: dict[Entity | None, int] = {e: order for order, (e, _l, _i) in enumerate(entities)}
        for owner, found in rows_of.items():
            parts += self._rows(owner, found, rank)
        for owner, empty in empty_of.items():
            parts.append(self._empty(owner, empty, rank))
        for order, (reason, items) in enumerate(sorted(coverage.items())):
            ids = {str(f["fact_id"]) for f in items}
            line = f"- {_coverage_line(reason, items)}"
            parts.append(_Part(COVERAGE_SECTION, COVERAGE, (order,), [line], ids, labelled=True))
        covered = {i for p in parts for i in p.ids} | used
        for fact in self.facts:
            fid = str(fact["fact_id"])
            if fid in covered or fact["kind"] in _FOLDED:
                continue
            if fact["kind"] in {"case_mention", "case_untyped_mention", "project_name_match"}:
                continue  # told on the entity lines
            line = "- " + fact_kind(fact["kind"]).compact(fact).replace("\n", "\n  ")
            parts.append(_Part(FINDINGS_SECTION, FINDINGS, (t.number(fid),), [line], {fid}))
        # Relationships and entity facts ride with the part of what they reached.
        self._fold(parts)
        return parts

    # -- parts --------------------------------------------------------------------------

    def _lead(self, fact: Fact) -> _Part:
        if _fix_lead(fact):
            # "Already fixed?" is asked first: the best candidate of each repository
            # (its subject and reasons), then the search's verdict, ahead of the ranked
            # leads; in that order they stay when room is short.
            search = fact["kind"] == _FIX_SEARCH
            # Without the web link: the model reads the commit by its ID.
            text = str(fact["statement"]) if search else t.fix_candidate_line(fact, link=False)
            line = f"- {fact['fact_id']} {text}"
            order = (-1 if search else -2, 0 if fact.get("repository") == "source" else 1)
            return _Part(LEADS, KEEP, order, [line], {str(fact["fact_id"])})
        if fact["kind"] == t.LEAD_KIND:
            line = f"- {fact['fact_id']} {t.lead_line(fact)}"
            # A lead about an entity the build only reached (a load-check hit three
            # references away) says less about this report than the rows of the
            # entities it names: it gives way before them, as a reached entity does.
            reached = fact.get("entity_type") is not None and _entity(fact) not in self.named
            drop = FINDINGS if reached else KEEP
            return _Part(LEADS, drop, (int(fact["rank"]),), [line], {str(fact["fact_id"])})
        line = f"- {fact_kind(fact['kind']).compact(fact)}"
        return _Part(LEADS, KEEP, (1 << 30,), [line], {str(fact["fact_id"])})

    def _entities(
        self, rows_of: Mapping[Entity | None, list[Fact]], empty_of: Mapping[Entity | None, Any]
    ) -> list[tuple[Entity, str, set[str]]]:
        known = list(self.named)
        known += [e for e in rows_of if e is not None and e not in self.named]
        # A reached spell or item without rows: what the client data says it is.
        known += [e for e in self.client_facts if e not in self.named and e not in rows_of]
        out = []
        for entity in known:
            ids = set(self.named.get(entity, ())) | self.entity_facts.get(entity, set())
            ids |= self.client_facts.get(entity, set())
            name = f' "{self.names[entity]}"' if entity in self.names else ""
            how = "named in the report" if entity in self.named else "reached"
            found = rows_of.get(entity, [])
            tables = t.unique(str(f["table"]) for f in found)
            what = f"rows in {', '.join(tables)}" if tables else "no row found"
            empty = len(empty_of.get(entity, ()))
            if empty:
                what += f"; nothing in {t.count(empty, 'other table')}"
            what += self._client_text(entity)
            out.append((entity, f"- {entity[0]} {entity[1]}{name}: {how}; {what}", ids))
        # The report's own entities first, then the reached ones, each in order found.
        return sorted(out, key=lambda e: (e[0] not in self.named, known.index(e[0])))

    def _client_text(self, entity: Entity) -> str:
        """What the client data says the entity is: its spell effects, or that it has none."""
        record = self.client.get(entity)
        if record is not None:
            effects = client_text.effects_text(record, client_text.BRIEF_EFFECTS)
            return f"; client data: {effects}" if effects else "; in the client data"
        if entity in self.absent:
            return "; not in the client data"
        return ""

    def _rows(
        self, entity: Entity | None, found: list[Fact], rank: Mapping[Any, int]
    ) -> list[_Part]:
        """One part per rows fact under the entity's title: what does not fit goes by
        fact, the entity's first rows last."""
        title = _title(entity, self.names)
        drop = NAMED_ROWS if entity in self.named else OTHER_ROWS
        parts = []
        for fact in found:
            fid = str(fact["fact_id"])
            ids = {fid}
            reached = t.unique(
                t.origin(r["from"]) for r in self.reached_by.get(fid, []) if "table" in r["from"]
            )
            head = "  " + fact_kind("project_rows").compact(fact).split("\n", 1)[0]
            if reached:
                more = (
                    f" and {len(reached) - MAX_ORIGINS} more" if len(reached) > MAX_ORIGINS else ""
                )
                head += f" (reached from {'; '.join(reached[:MAX_ORIGINS])}{more})"
            lines = [head, *row_table(fact["rows"], indent="    ")]
            for text in self.descriptions.get(fid, []):
                ids.add(str(text["fact_id"]))
                lines.append(f"    {fact_kind('project_description').compact(text)}")
            order = (rank.get(entity, 1 << 30), t.number(fid))
            parts.append(_Part(ROWS, drop, order, lines, ids, title=title))
        return parts

    def _empty(self, entity: Entity | None, empty: list[Fact], rank: Mapping[Any, int]) -> _Part:
        ids = {str(f["fact_id"]) for f in empty}
        where = t.unique(str(f.get("table") or f"symbol {f.get('symbol')}") for f in empty)
        who = f"{entity[0]} {entity[1]}" if entity else "other lookups"
        line = f"- {who}: nothing in {', '.join(where)}"
        drop = NAMED_EMPTY if entity in self.named else OTHER_EMPTY
        order = (rank.get(entity, 1 << 30), _first(ids))
        return _Part(EMPTY, drop, order, [line], ids, labelled=True)

    def _fold(self, parts: list[_Part]) -> None:
        owner = {i: p for p in parts for i in p.ids}
        entity_lines = {p.entity: p for p in parts if p.entity is not None}
        for fact in self.facts:
            fid = str(fact["fact_id"])
            if fid in owner:
                continue
            kind = fact["kind"]
            target: str | None = None
            if kind == "project_relationship":
                target = fact["to"].get("fact")
            elif kind == "project_description":
                target = fact.get("row_fact")
            if kind == "project_relationship" and "entity_type" in fact["to"] and target is None:
                about = (str(fact["to"]["entity_type"]), str(fact["to"]["value"]))
                entity_line = entity_lines.get(about)
                if entity_line is not None:
                    entity_line.ids.add(fid)
                    owner[fid] = entity_line
                    continue
            if target is not None and str(target) in owner:
                part = owner[str(target)]
                part.ids.add(fid)
                owner[fid] = part
            elif kind in _FOLDED:
                # Nothing to ride with (a relationship to an entity without a table):
                # an own line among the other findings.
                line = "- " + fact_kind(kind).compact(fact).replace("\n", "\n  ")
                part = _Part(FINDINGS_SECTION, FINDINGS, (t.number(fid),), [line], {fid})
                parts.append(part)
                owner[fid] = part


def _fix_lead(fact: Fact) -> bool:
    """The source's "already fixed?" verdict and each repository's first candidate (a
    "fixed by" or the best "maybe"); the other candidates are other findings."""
    kind = fact.get("kind")
    if kind == _FIX_SEARCH:
        return fact.get("repository") == "source"
    return kind == _FIX_CANDIDATE and fact.get("rank") == 1


def _entity(fact: Fact) -> Entity:
    return (str(fact["entity_type"]), str(fact["entity_id"]))


def _title(entity: Entity | None, names: Mapping[Entity, str]) -> str:
    if entity is None:
        return "other rows:"
    name = f' "{names[entity]}"' if entity in names else ""
    return f"{entity[0]} {entity[1]}{name}:"


def _first(ids: Iterable[str]) -> int:
    return min((t.number(i) for i in ids), default=0)


def _reason(fact: Fact) -> str:
    reason = str(fact.get("reason"))
    return f"{reason} {fact['code']}" if fact.get("code") else reason


def _coverage_line(reason: str, items: Sequence[Fact]) -> str:
    if reason == "max_depth":
        relations = t.unique(str(f.get("relation")) for f in items if f.get("relation"))
        return (
            f"max_depth: {t.count(len(items), 'reference')} not followed (the depth bound); "
            f"relations: {', '.join(relations[:6])}" + (", …" if len(relations) > 6 else "")
        )
    if reason == "value_not_followed":
        rows = sum(int(f.get("count", 0)) for f in items)
        tables = t.unique(str(f.get("table")) for f in items)
        return (
            f"value_not_followed: {t.count(len(items), 'column')} held only no-reference values "
            f"({t.count(rows, 'row')}) in {', '.join(tables)}"
        )
    if len(items) == 1:
        # The prompt's wording, fixed with its bytes (the build summary's may change).
        return coverage_line(items[0]).removeprefix("coverage: ")
    return f"{reason}: {t.count(len(items), 'note')}"


__all__ = ["FactSections", "TableAccess", "fact_sections", "table_access"]
