"""Readable, terminal-sized summaries of enrichment facts (for ``vba case build``).

``summarize`` is the compact default: one line per finding, each starting
with the labels of every fact it stands for, so any ``P`` label can be
looked up in it. A relationship is folded into the line of the rows (or
source lines) it reached; the empty lookups of one entity share one line;
"no reference" values are one line per table. ``summarize_all`` is one
line per fact (``vba case build --verbose``). Both are pure functions of
the facts.

Leads come before all of it: ``lead_summary`` is the "Leads" block (a head
line, then one line per lead in rank order, and the ``leads_limit`` fact
when some were left out). Those facts are in the block only, so the block
and either listing together still show every fact label exactly once.

``summary_sections`` orders the compact summary by what an operator acts on:
the report's revision, then what could not be read (refused queries, the
lookups they stopped, collapsed to one line per entity; an unreadable
history), then what the enrichment did not follow (one line per coverage
reason, with counts), then the findings. Lines that would repeat (the same
entity's rows reached twice, the same text) are one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.enrichment.fixes.render import fix_lines, is_fix_fact
from viano_bug_analysis.enrichment.leads import (
    LEAD_KIND,
    is_limit_fact,
    lead_line,
    leads_left_out,
    leads_of,
)
from viano_bug_analysis.facts.registry import coverage_group, fact_kind, reverse_lookup
from viano_bug_analysis.facts.text import count as _n
from viano_bug_analysis.facts.text import entity as _entity
from viano_bug_analysis.facts.text import filters as _filters
from viano_bug_analysis.facts.text import ignored as _ignored
from viano_bug_analysis.facts.text import labels as _labels
from viano_bug_analysis.facts.text import named as _named
from viano_bug_analysis.facts.text import number as _number
from viano_bug_analysis.facts.text import origin as _origin
from viano_bug_analysis.facts.text import origin_key as _origin_key
from viano_bug_analysis.facts.text import place as _place
from viano_bug_analysis.facts.text import unique as _unique

Facts = Mapping[str, Mapping[str, Any]]


def counts(facts: Sequence[Mapping[str, Any]], queries: int | None, asked: int = 0) -> str:
    """The head line: queries (``None``: not known here), facts, rows found, refused targets."""
    rows = [f for f in facts if f["kind"] == "project_rows"]
    found = sum(len(f["rows"]) for f in rows)
    empty = sum(1 for f in facts if f["kind"] == "project_empty_result")
    refused = [f for f in facts if f.get("reason") == "query_refused"]
    targets = ", ".join(_refused_target(f) for f in refused)
    asking = ""
    if queries is not None:
        asking = f"{_n(queries, 'query', 'queries')} ({asked} asked by this run), "
    return (
        f"enrichment: {asking}{_n(len(facts), 'fact')}: "
        f"{_n(found, 'row')} found by {_n(len(rows), 'lookup')}, "
        f"{empty} found nothing, {_n(len(refused), 'refused target')}"
        + (f" ({targets})" if targets else "")
    )


def lead_summary(facts: Sequence[Mapping[str, Any]]) -> tuple[str, list[str]]:
    """The "Leads" block: its head line and ``[P45] 1. engine check at ...`` per lead."""
    leads = leads_of(facts)
    left_out = leads_left_out(facts)
    lines = [f"[{lead['fact_id']}] {lead_line(lead)}" for lead in leads]
    lines += [f"[{f['fact_id']}] {_line(f, {})}" for f in facts if is_limit_fact(f)]
    lines += fix_lines(facts)  # already fixed? (enrichment/fixes)
    if not leads:
        return (
            "leads: none (no fact of this revision is a rule hit, a missing reference, "
            "a script-file candidate or a change since the report)",
            lines,
        )
    more = f", {left_out} more left out by max_leads" if left_out else ""
    return f"leads: {_n(len(leads), 'lead')}, most telling first{more}", lines


def _in_lead_block(fact: Mapping[str, Any]) -> bool:
    return fact["kind"] == LEAD_KIND or is_limit_fact(fact) or is_fix_fact(fact)


# Coverage that says a source could not be read, not that a bound stopped the walk.
_NOT_READ = frozenset(
    {"query_refused", "database_unreadable", "changes_incomplete", "fix_changes_incomplete"}
)
# Worded with the findings ("no reference: ..."): the value means no reference, nothing is missed.
_WITH_FINDINGS = frozenset({"value_not_followed"})


@dataclass(frozen=True)
class Section:
    """A block of the summary: its head line and its ``[labels] text`` lines."""

    head: str
    lines: list[str]


def summary_sections(
    facts: Iterable[Mapping[str, Any]],
    ignore_values: Mapping[str, Sequence[Any]] | None = None,
) -> list[Section]:
    """The compact summary in blocks, the most telling first (the module's docstring);
    empty blocks left out. ``ignore_values`` (relation -> values) words the no-reference
    line. Leads are left to ``lead_summary``; every other fact label stands in exactly
    one line."""
    shown = [f for f in facts if not _in_lead_block(f)]
    revision = [f for f in shown if f["kind"] == "report_revision"]
    unread = [f for f in shown if _not_read(f)]
    coverage = [
        f
        for f in shown
        if f["kind"] == "project_context_coverage" and f["reason"] not in _NOT_READ | _WITH_FINDINGS
    ]
    apart = {f["fact_id"] for f in (*revision, *unread, *coverage)}
    rest = [f for f in shown if f["fact_id"] not in apart]
    sections = [
        Section("report revision:", [f"[{f['fact_id']}] {_line(f, {})}" for f in revision]),
        Section("not read:", _not_read_lines(unread)),
        Section("coverage:", _coverage_lines(coverage)),
        Section("facts:", _Compact(rest, ignore_values or {}).lines()),
    ]
    return [section for section in sections if section.lines]


def summarize(
    facts: Iterable[Mapping[str, Any]],
    ignore_values: Mapping[str, Sequence[Any]] | None = None,
) -> list[str]:
    """The lines of ``summary_sections``, in their order, without the head lines."""
    return [line for section in summary_sections(facts, ignore_values) for line in section.lines]


def _not_read(fact: Mapping[str, Any]) -> bool:
    if fact["kind"] == "project_context_coverage":
        return fact["reason"] in _NOT_READ
    # A lookup the reference map asked whose query was refused: it reached no fact.
    return (
        fact["kind"] == "project_relationship"
        and "query_sha256" in fact["to"]
        and "fact" not in fact["to"]
    )


def _not_read_lines(facts: list[Mapping[str, Any]]) -> list[str]:
    """The refusals and unreadable sources one line each; the lookups a refusal stopped
    one line per origin (an entity, a row), naming each table once with how many."""
    refusal_of = {
        sha: f
        for f in facts
        if f["kind"] != "project_relationship"
        for sha in f.get("query_sha256s", [])
    }
    items: list[_Item] = []
    stopped: dict[str, tuple[_Item, dict[str, int], list[Mapping[str, Any]]]] = {}
    for fact in facts:
        if fact["kind"] != "project_relationship":
            items.append(_Item({fact["fact_id"]}, coverage_group(str(fact["reason"]), [fact])))
            continue
        origin = _origin(fact["from"])
        if origin not in stopped:
            stopped[origin] = (_Item(set(), ""), {}, [])
            items.append(stopped[origin][0])
        item, tables, refusals = stopped[origin]
        item.labels.add(fact["fact_id"])
        where = fact["to"].get("table") or f"symbol {fact['to'].get('symbol')}"
        tables[where] = tables.get(where, 0) + 1
        refusal = refusal_of.get(str(fact["to"].get("query_sha256")))
        if refusal is not None and refusal not in refusals:
            refusals.append(refusal)
    for origin, (item, tables, refusals) in stopped.items():
        named = ", ".join(
            table + (f" ({_n(n, 'lookup')})" if n > 1 else "") for table, n in tables.items()
        )
        why = "; ".join(f"{r['code']}, see {r['fact_id']}" for r in refusals)
        item.text = f"{origin}: {named} not read" + (f" ({why})" if why else "")
    return _ordered(_merged(items))  # the same note twice is one line


def _coverage_lines(facts: list[Mapping[str, Any]]) -> list[str]:
    """One line per coverage reason: how many, and what they concern."""
    by_reason: dict[str, list[Mapping[str, Any]]] = {}
    for fact in facts:
        by_reason.setdefault(str(fact["reason"]), []).append(fact)
    return _ordered(
        _Item({f["fact_id"] for f in group}, coverage_group(reason, group))
        for reason, group in by_reason.items()
    )


def _ordered(items: Iterable[_Item]) -> list[str]:
    ordered = sorted(items, key=lambda item: min(map(_number, item.labels)))
    return [f"[{_labels(item.labels)}] {item.text}" for item in ordered]


@dataclass(eq=False)  # one line, held by identity (the same item may be met twice)
class _Item:
    labels: set[str]
    text: str


@dataclass
class _EmptyGroup:
    """The empty lookups of one entity: which tables answered nothing, how it was reached."""

    entity: str
    labels: set[str] = field(default_factory=set)
    tables: list[tuple[str, str | None]] = field(default_factory=list)
    reached: list[str] = field(default_factory=list)


class _Compact:
    def __init__(self, facts: list[Mapping[str, Any]], ignore: Mapping[str, Sequence[Any]]):
        self.facts = facts
        self.by_id: dict[str, Mapping[str, Any]] = {f["fact_id"]: f for f in facts}
        self.ignore = ignore
        # Which relationships reached which fact.
        self.reached_by: dict[str, list[Mapping[str, Any]]] = {}
        # Entity facts and texts belong to the rows fact of their capture.
        self.entities_of: dict[str, list[Mapping[str, Any]]] = {}
        self.entity_of_rows: dict[str, str] = {}
        self.shown_entities: set[str] = set()
        self.entity_lines: dict[str, tuple[_Item, list[str]]] = {}
        relations: dict[tuple[str, str], set[str]] = {}
        rows_of_capture: dict[str, str] = {}
        for fact in facts:
            kind = fact["kind"]
            if kind == "project_relationship":
                target = fact["to"].get("fact")
                if target is not None:
                    self.reached_by.setdefault(target, []).append(fact)
                where = fact["to"].get("table") or f"symbol {fact['to'].get('symbol')}"
                relations.setdefault((_origin_key(fact["from"]), where), set()).add(
                    fact["relation"]
                )
            elif kind == "project_rows":
                rows_of_capture[fact["provenance"]["capture_sha256"]] = fact["fact_id"]
            elif kind == "project_entity":
                rows_id = rows_of_capture.get(fact["provenance"]["capture_sha256"])
                if rows_id is not None:
                    self.entities_of.setdefault(rows_id, []).append(fact)
                    self.shown_entities.add(fact["fact_id"])
                    self.entity_of_rows.setdefault(rows_id, _entity(fact))
        # A table reached from one origin by more than one relation is named with them.
        self.ambiguous = {key for key, names in relations.items() if len(names) > 1}

    def lines(self) -> list[str]:
        items: list[_Item] = []
        groups: dict[str, _EmptyGroup] = {}
        mentions: dict[str, _Item] = {}
        not_followed: dict[str, tuple[_Item, list[Mapping[str, Any]]]] = {}
        reached_entity: dict[str, list[Mapping[str, Any]]] = {}
        consumed: set[str] = set()
        for fact in self.facts:
            fact_id, kind = fact["fact_id"], fact["kind"]
            if kind == "case_mention":
                place = _place(fact["where"])
                item = mentions.get(place)
                if item is None:
                    item = mentions[place] = _Item(set(), f"mentioned in {place}:")
                    items.append(item)
                item.labels.add(fact_id)
                item.text += f"{',' if len(item.labels) > 1 else ''} {_entity(fact)}"
            elif kind == "project_rows":
                items.append(self._rows(fact, consumed))
            elif kind == "project_empty_result":
                self._empty(fact, consumed, items, groups)
            elif kind == "project_source_hits":
                items.append(self._hits(fact, consumed))
            elif kind == "project_relationship":
                # Its target came first and took it in, unless the query was refused.
                if "query_sha256" not in fact["to"]:
                    # Reached an entity without a table: told with that entity's rows.
                    reached = f"{fact['to']['entity_type']} {fact['to']['value']}"
                    reached_entity.setdefault(reached, []).append(fact)
                elif fact_id not in consumed:
                    items.append(_Item({fact_id}, _line(fact, self.by_id) or ""))
            elif kind == "project_entity":
                if fact_id not in self.shown_entities:
                    items.append(_Item({fact_id}, _line(fact, self.by_id) or ""))
            elif kind == "project_context_coverage" and fact["reason"] == "value_not_followed":
                table = str(fact["table"])
                if table not in not_followed:
                    not_followed[table] = (_Item(set(), ""), [])
                    items.append(not_followed[table][0])  # worded below, once complete
                not_followed[table][1].append(fact)
            else:
                line = _line(fact, self.by_id)
                if kind == "project_description":
                    entity = self.entity_of_rows.get(str(fact.get("row_fact")))
                    line = f"{entity} {line}" if entity and line else line
                if line:
                    items.append(_Item({fact_id}, line))
        for table, (item, ignored) in not_followed.items():
            self._fill_not_followed(item, table, ignored)
        for entity, rels in reached_entity.items():
            group = groups.get(entity)
            if group is None:
                origins = "; ".join(_unique(_origin(r["from"]) for r in rels))
                items.append(_Item({r["fact_id"] for r in rels}, f"{origins} -> {entity}"))
                continue
            group.labels.update(r["fact_id"] for r in rels)
            for rel in rels:
                origin = _origin(rel["from"])
                if origin not in group.reached:
                    group.reached.append(origin)
        for group in groups.values():
            items.append(_Item(group.labels, _group_text(group)))
        return _ordered(_merged(items))

    # -- lines ------------------------------------------------------------------------

    def _rows(self, fact: Mapping[str, Any], consumed: set[str]) -> _Item:
        fact_id = fact["fact_id"]
        rels = self.reached_by.get(fact_id, [])
        entities = self.entities_of.get(fact_id, [])
        labels = {fact_id, *(r["fact_id"] for r in rels), *(e["fact_id"] for e in entities)}
        consumed.update(labels)
        table = fact["table"]
        found = _n(len(fact["rows"]), "row")
        if not fact["complete_filtered_rows"]:
            found += ", the first page"
        if entities:
            names = ", ".join(_named(e) for e in entities)
            reached = _unique(_origin(r["from"]) for r in rels if "table" in r["from"])
            # The same entity's rows read twice (reached again from another row): one line.
            key = f"{names} ({table}: {found})"
            first = self.entity_lines.setdefault(key, (_Item(set(), key), []))
            first[0].labels.update(labels)
            first[1].extend(origin for origin in reached if origin not in first[1])
            if first[1]:
                first[0].text = f"{key}, reached from {'; '.join(first[1])}"
            return first[0]
        if rels:
            return _Item(labels, f"{self._lookups(rels, table)}: {found}")
        return _Item(labels, f"{table} where {_filters(fact['filters'])}: {found}")

    def _empty(
        self,
        fact: Mapping[str, Any],
        consumed: set[str],
        items: list[_Item],
        groups: dict[str, _EmptyGroup],
    ) -> None:
        fact_id = fact["fact_id"]
        rels = self.reached_by.get(fact_id, [])
        labels = {fact_id, *(r["fact_id"] for r in rels)}
        consumed.update(labels)
        where = fact.get("table") or f"symbol {fact.get('symbol')}"
        entity = self._empty_entity(fact, rels)
        if entity is None:
            symbol = "table" not in fact
            origins = "; ".join(_unique(_origin(r["from"], target=not symbol) for r in rels))
            if not symbol:
                text = (
                    f"{self._lookups(rels, where)}: none in this table"
                    if rels
                    else f"{fact['table']} where {_filters(fact['filters'])}: none in this table"
                )
            else:
                text = f"{where}{f' ({origins})' if origins else ''}: no source line names it"
            items.append(_Item(labels, text))
            return
        group = groups.setdefault(entity, _EmptyGroup(entity))
        group.labels.update(labels)
        named = _unique(
            r["relation"] for r in rels if (_origin_key(r["from"]), where) in self.ambiguous
        )
        entry = (where, ", ".join(named) or None)
        if entry not in group.tables:
            group.tables.append(entry)
        for rel in rels:
            if "table" in rel["from"]:
                origin = _origin(rel["from"])
                if origin not in group.reached:
                    group.reached.append(origin)

    def _hits(self, fact: Mapping[str, Any], consumed: set[str]) -> _Item:
        rels = self.reached_by.get(fact["fact_id"], [])
        labels = {fact["fact_id"], *(r["fact_id"] for r in rels)}
        consumed.update(labels)
        origins = "; ".join(_unique(_origin(r["from"], target=False) for r in rels))
        first = fact["matches"][0]
        return _Item(
            labels,
            f"symbol {fact['symbol']}{f' ({origins})' if origins else ''}: "
            f"{_n(fact['total'], 'line')} at the pinned commit, "
            f"first {first['path']}:{first['line']}",
        )

    def _fill_not_followed(self, item: _Item, table: str, facts: list[Mapping[str, Any]]) -> None:
        """One line per table: the columns whose value meant "no reference", in how many rows."""
        item.labels.update(f["fact_id"] for f in facts)
        per_column: dict[tuple[str, int], None] = {}
        values: list[Any] = []
        for fact in facts:
            per_column.setdefault((str(fact["column"]), int(fact["count"])), None)
            for value in self.ignore.get(str(fact.get("relation")), ()):
                if value not in values:
                    values.append(value)
        columns = ", ".join(f"{column} ({_n(count, 'row')})" for column, count in per_column)
        meaning = "/".join(_ignored(v) for v in values) if values else "a no-reference value"
        verb = "is" if len(per_column) == 1 else "are"
        item.text = (
            f"no reference: in {table}, {columns} {verb} {meaning} (ignore_values), "
            "nothing to follow"
        )

    # -- helpers -----------------------------------------------------------------------

    def _lookups(self, rels: Sequence[Mapping[str, Any]], where: str) -> str:
        """How the rows were reached: ``quest_template.RequiredNpcOrGo1 = 36440 (names
        creature 36440)`` for a reverse lookup, ``<origin> -> <table>`` for a forward one."""
        forward = [r for r in rels if reverse_lookup(r) is None]
        reverse = [r for r in rels if reverse_lookup(r) is not None]
        parts = [
            f"{lookup} (names {_origin(r['from'])}{self._qualifier([r], where, '; ')})"
            for lookup, r in {reverse_lookup(r): r for r in reverse}.items()
        ]
        if forward:
            origins = "; ".join(_unique(_origin(r["from"]) for r in forward))
            parts.append(f"{origins} -> {where}{self._qualifier(forward, where)}")
        return "; ".join(parts)

    def _qualifier(self, rels: Sequence[Mapping[str, Any]], where: str, lead: str = " (") -> str:
        """The relations named where one origin reaches ``where`` by more than one."""
        names = _unique(
            r["relation"] for r in rels if (_origin_key(r["from"]), where) in self.ambiguous
        )
        if not names:
            return ""
        return f"{lead}{', '.join(names)}" + (")" if lead == " (" else "")

    @staticmethod
    def _empty_entity(fact: Mapping[str, Any], rels: Sequence[Mapping[str, Any]]) -> str | None:
        """The entity whose lookups an empty result belongs to, if any."""
        for rel in rels:
            if "entity_type" in rel["from"]:
                return _entity(rel["from"])
        purpose = fact.get("purpose", {})
        if purpose.get("kind") == "entity_lookup":
            return f"{purpose['entity_type']} {purpose['entity_id']}"
        for rel in rels:
            if "entity_type" in rel["to"]:
                return f"{rel['to']['entity_type']} {rel['to']['value']}"
        return None


def _merged(items: list[_Item]) -> list[_Item]:
    """Lines of the same text are one line (the same entity's rows or text reached
    twice), standing for the labels of all."""
    by_text: dict[str, _Item] = {}
    for item in dict.fromkeys(items):  # an entity's rows line is returned once per rows fact
        first = by_text.setdefault(item.text, item)
        if first is not item:
            first.labels.update(item.labels)
    return list(by_text.values())


def _group_text(group: _EmptyGroup) -> str:
    tables: dict[str, list[str]] = {}
    for table, relation in group.tables:
        tables.setdefault(table, [])
        if relation is not None:
            tables[table].append(relation)
    named = ", ".join(
        f"{table} ({', '.join(relations)})" if relations else table
        for table, relations in tables.items()
    )
    reached = f" (reached from {'; '.join(group.reached)})" if group.reached else ""
    return f"{group.entity}{reached}: nothing in {named}"


def _refused_target(fact: Mapping[str, Any]) -> str:
    return str(fact.get("table") or fact.get("source") or "?")


# -- one line per fact (--verbose) ---------------------------------------------------------


def summarize_all(facts: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per fact, leads left to ``lead_summary``."""
    by_id = {fact["fact_id"]: fact for fact in facts}
    lines: list[str] = []
    for fact in by_id.values():
        if _in_lead_block(fact):
            continue
        line = _line(fact, by_id)
        if line:
            lines.append(f"[{fact['fact_id']}] {line}")
    return lines


def _line(fact: Mapping[str, Any], by_id: Facts) -> str:
    return fact_kind(fact["kind"]).summary(fact, by_id)
