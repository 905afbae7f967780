"""Where a missing script would live: the build phase of ``project_script_file_candidate`` facts.

Its subjects are the script names the build read that no source line
registers, and the report's own entities that have no script name in any
row read. For each, the candidates are

- ``sibling_prefix``: the files that register scripts of the same kind and
  prefix (``npc_keg_…``, then ``npc_``; ``spell_item_…``), the sibling lines
  as evidence;
- ``constants``: the files whose constants name the entity (the build's
  ``project_source_constant`` facts; no query);
- ``zone``: where the entity's spawn rows give its zone, the files that
  register the scripts of other entities spawned in that zone.

Bounded: ``[scripts].max_subjects`` subjects, ``limits.script_file_queries``
new queries within ``max_queries`` (kept for the phase from the reference
map, ``limits.phase_reserve``). A candidate says where the lineage keeps
such scripts, not that a script is missing or that the bug lies there.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from viano_bug_analysis import vocabulary
from viano_bug_analysis.enrichment.engine import AskingPhase
from viano_bug_analysis.enrichment.rule_phase import (
    MATCHES_POINTER,
    Asker,
    RowRead,
    entity_of,
    match_view,
    matches_of,
    rows_of,
    rows_read,
    symbol_query,
)
from viano_bug_analysis.enrichment.rules import ScriptLayout, ZoneSpawns

if TYPE_CHECKING:
    from viano_bug_analysis.enrichment.engine import PhaseContext
    from viano_bug_analysis.enrichment.profile import EnrichmentProfile

EVIDENCE_LINES = 5
ZONE_SCRIPTS_ASKED = 2


@dataclass(frozen=True)
class _Subject:
    entity_type: str | None
    entity_id: Any
    script_name: str | None


class _Candidates:
    def __init__(self, ctx: PhaseContext, layout: ScriptLayout) -> None:
        self.ctx = ctx
        self.profile = ctx.profile
        self.layout = layout
        self.asker = Asker(ctx, ctx.profile.limits.script_file_queries, "script_file")
        self.rows = rows_read(ctx)

    def run(self) -> None:
        for subject in list(self._subjects())[: self.layout.max_subjects]:
            if subject.script_name is not None:
                self._siblings(subject)
            self._constants(subject)
            self._zone(subject)
        self.asker.coverage()

    # -- subjects -----------------------------------------------------------------------

    def _subjects(self) -> Iterator[_Subject]:
        seen: set[tuple[Any, ...]] = set()
        for subject in (*self._unregistered(), *self._without_script()):
            marker = (subject.entity_type, subject.entity_id, subject.script_name)
            if marker not in seen:
                seen.add(marker)
                yield subject

    def _unregistered(self) -> Iterator[_Subject]:
        """Script names in rows read that no line of the build's symbol search registers."""
        for read, symbol in self._symbols():
            answer = matches_of(self.asker.ask(symbol_query(self.ctx, symbol), _purpose(symbol)))
            if answer is None:
                continue
            lines, complete = answer
            if complete and not any(self.layout.registers(m["text"], symbol) for m in lines):
                entity_type, entity_id = entity_of(self.profile, read)
                yield _Subject(entity_type, entity_id, symbol)

    def _without_script(self) -> Iterator[_Subject]:
        """The report's own entities no row read gives a script name."""
        scripted: set[tuple[str | None, Any]] = set()
        for read, _ in self._symbols():
            scripted.add(entity_of(self.profile, read))
        for fact in self.ctx.facts:
            if fact.get("kind") == "case_mention":
                pairs = [(fact["entity_type"], fact["entity_id"])]
            elif fact.get("kind") == "case_untyped_mention":
                pairs = [(t, fact["entity_id"]) for t in fact["found_as"]]
            else:
                continue
            for pair in pairs:
                if pair not in scripted and self._can_have_script(pair[0]):
                    yield _Subject(pair[0], pair[1], None)

    def _can_have_script(self, entity_type: str) -> bool:
        """A type whose own table or part_of rows carry a symbol reference."""
        entity = self.profile.entities.get(entity_type)
        if entity is None:
            return False
        tables = {entity.table} if entity.table is not None else set()
        tables |= {
            r.table for r in self.profile.references if r.part_of and entity_type in r.types()
        }
        return any(r.symbol and r.table in tables for r in self.profile.references)

    def _symbols(self) -> Iterator[tuple[RowRead, str]]:
        for read in self.rows:
            for ref in self.profile.references:
                if ref.symbol and ref.table == read.table:
                    value = read.row.get(ref.column)
                    if isinstance(value, str) and vocabulary.is_symbol(value):
                        yield read, value

    # -- candidates ---------------------------------------------------------------------

    def _siblings(self, subject: _Subject) -> None:
        """The files registering scripts that share the name's longest prefix, then its kind."""
        name = subject.script_name
        assert name is not None
        kind = self.layout.kind_of(name)
        if kind is None:
            return
        prefixes = [kind]
        chain = name[: name.rfind("_") + 1]
        if len(chain) > len(kind):
            prefixes.insert(0, chain)
        for prefix in prefixes:
            query = {
                "kind": "source.search",
                "text": prefix,
                "case_sensitive": True,
                "path_prefix": self.layout.path_prefix,
                "offset": 0,
                "limit": self.profile.limits.symbol_hits,
            }
            outcome = self.asker.ask(query, {"kind": "script_siblings", "prefix": prefix})
            answer = matches_of(outcome)
            if answer is None:
                return
            by_path: dict[str, list[dict[str, Any]]] = {}
            for m in answer[0]:
                sibling = self.layout.registered_with_prefix(m["text"], prefix)
                if sibling is not None and sibling != name:
                    by_path.setdefault(m["path"], []).append(match_view(m))
            if by_path:
                assert outcome is not None and outcome.capture is not None
                provenance = self.ctx.provenance(outcome.capture, MATCHES_POINTER)
                for path, lines in by_path.items():
                    self._state(subject, path, "sibling_prefix", lines, provenance, prefix=prefix)
                return

    def _constants(self, subject: _Subject) -> None:
        for fact in self.ctx.facts:
            if (
                fact.get("kind") == "project_source_constant"
                and fact["entity_type"] == subject.entity_type
                and fact["entity_id"] == subject.entity_id
            ):
                match = fact["match"]
                self._state(
                    subject,
                    match["path"],
                    "constants",
                    [dict(match)],
                    dict(fact["provenance"]),
                    constant=fact["constant"],
                    constant_fact=fact["fact_id"],
                )

    def _zone(self, subject: _Subject) -> None:
        """Other scripted entities spawned in the subject's zone, and the files registering them."""
        for zone in self.layout.zones:
            if zone.entity_type != subject.entity_type:
                continue
            spawns = [
                r
                for r in self.rows
                if r.table == zone.table and r.row.get(zone.entry_column) == subject.entity_id
            ]
            values = dict.fromkeys(r.row.get(zone.zone_column) for r in spawns)
            zone_ids = [z for z in values if type(z) is int and z > 0]
            if not zone_ids:
                continue
            self._zone_files(subject, zone, zone_ids[0], spawns[0])

    def _zone_files(
        self, subject: _Subject, zone: ZoneSpawns, zone_id: int, spawn: RowRead
    ) -> None:
        purpose = {"kind": "script_zone", "zone": zone_id}
        neighbours = rows_of(
            self.asker.ask(self.ctx.rows_query(zone.table, zone.zone_column, zone_id), purpose)
        )
        if neighbours is None:
            return
        column = zone.entry_column
        entries: list[int] = sorted(
            {r[column] for r in neighbours[0] if type(r.get(column)) is int} - {subject.entity_id}
        )
        entity = self.profile.entities[zone.entity_type]
        if not entries or entity.table is None:
            return
        query = self.ctx.rows_query(entity.table, entity.column, entries[0])
        query["filters"][0] = {"column": entity.column, "operator": "in", "value": entries}
        query["filters"].append({"column": zone.script_column, "operator": "ne", "value": ""})
        scripted = rows_of(self.asker.ask(query, purpose))
        if scripted is None:
            return
        values = [r.get(zone.script_column) for r in scripted[0]]
        names = [n for n in dict.fromkeys(values) if isinstance(n, str) and vocabulary.is_symbol(n)]
        for name in names[:ZONE_SCRIPTS_ASKED]:
            outcome = self.asker.ask(symbol_query(self.ctx, name), _purpose(name))
            answer = matches_of(outcome)
            if answer is None:
                continue
            lines = [match_view(m) for m in answer[0] if self.layout.registers(m["text"], name)]
            lines = [m for m in lines if m["path"].startswith(self.layout.path_prefix)]
            if lines:
                assert outcome is not None and outcome.capture is not None
                self._state(
                    subject,
                    lines[0]["path"],
                    "zone",
                    lines,
                    self.ctx.provenance(outcome.capture, MATCHES_POINTER),
                    zone={
                        "table": zone.table,
                        "column": zone.zone_column,
                        "value": zone_id,
                        "spawn": spawn.view(),
                    },
                    neighbour_script=name,
                )

    def _state(
        self,
        subject: _Subject,
        path: str,
        reason: str,
        evidence: list[dict[str, Any]],
        provenance: Mapping[str, Any],
        **extra: Any,
    ) -> None:
        why = {
            "sibling_prefix": "registers scripts of the same kind and prefix",
            "constants": "names this entity in a constant",
            "zone": "registers scripts of other entities spawned in the same zone",
        }[reason]
        self.ctx.fact(
            "project_script_file_candidate",
            entity_type=subject.entity_type,
            entity_id=subject.entity_id,
            script_name=subject.script_name,
            path=path,
            reason=reason,
            evidence=evidence[:EVIDENCE_LINES],
            provenance=dict(provenance),
            **extra,
            statement=f"where a script for this would live: this file {why}; it is not known "
            "that a script is missing here or that the bug lies in it",
        )


def _script_files(ctx: PhaseContext) -> None:
    if ctx.profile.scripts is not None:
        _Candidates(ctx, ctx.profile.scripts).run()


def _script_file_queries(profile: EnrichmentProfile) -> int:
    return profile.limits.script_file_queries if profile.scripts is not None else 0


# States ``project_script_file_candidate`` facts (needs the profile's ``[scripts]``), on
# its share of max_queries (limits.script_file_queries, kept from the reference map).
script_file_phase = AskingPhase(_script_files, _script_file_queries)


def _purpose(symbol: str) -> dict[str, Any]:
    return {"kind": "script_registration", "symbol": symbol}


__all__ = ["script_file_phase"]
