"""The enrichment run: entity lookups, then the profile's reference map, breadth first.

The map says which column holds which entity's IDs. It is followed both
ways: from a row read to the entity its column names (forward) and from an
entity to the rows naming it (reverse: every entry for a mentioned entity,
its own ``part_of`` rows for every entity reached). After the queue, the
build's phases (rules, script files, changes since the report, leads) run on
the same query budget: the queue stops at ``max_queries`` less what the
asking phases want (``AskingPhase``, at most ``limits.reserve_cap()``), goes
on with what they leave of it, and one ``query_budget`` fact counts what the
budget left out.

Deterministic: the same mentions, profile and answers give the same queries
in the same order and the same facts with the same IDs, which is what lets
an interrupted build replay its journal. Facts state what the project data
says (a row, a name, a text, a reference, a source line); none of them says
that something happened at runtime or caused the bug.
"""

from __future__ import annotations

import heapq
import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.enrichment import candidates, references
from viano_bug_analysis.enrichment.extract import Extraction, Mention, NameMention
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.enrichment.profile import (
    EnrichmentProfile,
    EntityLookup,
    Filter,
    Reference,
    Scalar,
)
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.project_research import Capture, query_sha256

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,255}")
ROWS_POINTER = "/result/result/rows"
MATCHES_POINTER = "/result/result/matches"

RunQuery = Callable[[Mapping[str, Any]], StepOutcome]
Progress = Callable[[str], None]


@dataclass
class _Origin:
    """Where a reference is followed from: one value in one returned row (forward),
    or an entity ID (reverse: the rows naming it).

    An entity origin (``entity_type`` set, ``table`` None) carries the capture
    and pointer the ID was read from when a reference reached it; a mentioned
    ID has none (its case_mention fact says where it stands).
    """

    reference: Reference
    table: str | None
    key: dict[str, Any]  # the row's key columns (empty for an entity origin)
    value: Any
    capture_sha256: str | None
    pointer: str | None
    entity_type: str | None = None


@dataclass
class _Refusal:
    code: str | None
    target: dict[str, Any]  # table or source symbol
    purposes: list[dict[str, Any]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)


@dataclass
class _Work:
    depth: int
    query: dict[str, Any]
    table: str | None  # None for a source query
    lookup: EntityLookup | None
    purpose: dict[str, Any]
    origins: list[_Origin] = field(default_factory=list)


Phase = Callable[["PhaseContext"], None]


@dataclass(frozen=True)
class AskingPhase:
    """A build phase that asks queries of its own: ``wants`` says how many it may ask
    under this profile (its own bound, 0 when it has nothing to check).

    What the asking phases want, at most ``limits.reserve_cap()``, is kept from
    the reference map, so a large case cannot leave them nothing. A plain
    callable keeps nothing: what it asks comes from what the others left.
    """

    run: Callable[[PhaseContext], None]
    wants: Callable[[EnrichmentProfile], int]

    def __call__(self, ctx: PhaseContext) -> None:
        self.run(ctx)


class PhaseContext:
    """What a build phase may do: read the facts, ask within the one budget, state facts."""

    def __init__(self, enricher: Enricher) -> None:
        self._enricher = enricher
        self.profile = enricher._profile

    @property
    def facts(self) -> Sequence[Mapping[str, Any]]:
        return self._enricher._facts

    @property
    def queries(self) -> Sequence[Mapping[str, Any]]:
        return self._enricher._queries

    def ask(self, query: Mapping[str, Any], purpose: Mapping[str, Any]) -> StepOutcome | None:
        """One query on the shared budget (None: max_queries reached, a coverage fact says
        so). A refusal is recorded like the queue's; its outcome has no capture."""
        kind = str(query.get("kind", ""))
        work = _Work(
            1,
            dict(query),
            str(query["table"]) if kind.startswith("database.") and "table" in query else None,
            None,
            dict(purpose),
        )
        key = _key(work.query)
        if key in self._enricher._done:
            return self._enricher._done[key]
        outcome = self._enricher._ask(work)
        if outcome is not None and outcome.capture is None:
            self._enricher._refused(work, outcome)
        return outcome

    def not_asked(self, purpose: Mapping[str, Any]) -> None:
        """A query a phase did not ask because max_queries was spent (counted, not stated
        one by one: the build's ``query_budget`` fact names them by purpose)."""
        self._enricher._left_out_by("phases", purpose)

    def rows_query(
        self, table: str, column: str, value: Scalar, extra: Sequence[Filter] = ()
    ) -> dict[str, Any]:
        """A ``database.rows`` query reading the profile's columns of ``table``."""
        return self._enricher._rows_query(
            table, self.profile.columns_of(table), column, value, extra
        )

    def fact(self, kind: str, **fields: Any) -> str:
        return self._enricher._fact(kind, **fields)

    def provenance(self, capture: Capture, pointer: str) -> dict[str, Any]:
        return self._enricher._provenance(capture, pointer)


@dataclass
class EnrichmentRun:
    facts: list[dict[str, Any]]
    queries: list[dict[str, Any]]  # one per asked step, in order


def _typed(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


class Enricher:
    def __init__(
        self,
        profile: EnrichmentProfile,
        run_query: RunQuery,
        *,
        capture_path: Callable[[str], str],
        progress: Progress | None = None,
        phases: Sequence[Phase] = (),
    ) -> None:
        self._profile = profile
        self._phases = tuple(phases)
        self._run = run_query
        self._capture_path = capture_path
        self._progress = progress or (lambda _text: None)
        self._facts: list[dict[str, Any]] = []
        self._queries: list[dict[str, Any]] = []
        # (depth, class, order, work): breadth first, and within one depth the
        # entities themselves before the rows naming them (``_class``).
        self._queue: list[tuple[int, int, int, _Work]] = []
        self._order = itertools.count()
        self._pending: dict[str, _Work] = {}  # query key -> queued work
        self._done: dict[str, StepOutcome] = {}  # query key -> answer
        self._targets: dict[str, str | None] = {}  # query key -> the fact its answer gave
        self._relationships = 0
        # (relation, table, column) -> how many values meaning "no reference"
        self._ignored: dict[tuple[str, str, str], int] = {}
        self._refusals: dict[str, _Refusal] = {}
        self._expanded: set[tuple[str, tuple[str, Any]]] = set()
        self._empty: set[str] = set()  # project_empty_result fact IDs
        self._stated: dict[bytes, str] = {}
        self._database_asked = 0
        self._database_refused: dict[str, int] = {}  # refusal code -> queries
        # The share of max_queries kept for the asking phases, and the bound of the
        # stage now running (the map's: max_queries less the reserve).
        self._reserve = 0
        self._limit = profile.limits.max_queries
        self._stage = "reference_map"
        # stage -> purpose kind -> queries not asked for max_queries; rule IDs not checked.
        self._left_out: dict[str, dict[str, int]] = {}
        self._rules_left_out: set[str] = set()

    # -- public -------------------------------------------------------------------------

    def run(
        self, mentions: Sequence[Mention] | Extraction, names: Sequence[NameMention] = ()
    ) -> EnrichmentRun:
        """Enrich what the case names: typed mentions, untyped IDs and names.

        ``mentions`` is an ``Extraction`` (everything :func:`extract` found) or,
        for callers that have only typed mentions, their list (with ``names``).
        """
        found = mentions if isinstance(mentions, Extraction) else Extraction(list(mentions))
        if not isinstance(mentions, Extraction):
            found.names = list(names)
        limits = self._profile.limits
        wanted = sum(p.wants(self._profile) for p in self._phases if isinstance(p, AskingPhase))
        self._reserve = min(max(0, wanted), limits.reserve_cap())
        self._limit = limits.max_queries - self._reserve
        for mention in found.mentions:
            self._fact(
                "case_mention",
                entity_type=mention.entity_type,
                entity_id=mention.entity_id,
                where=dict(mention.where),
                how=mention.how,
                statement="the case inputs name this ID; existence and meaning come from the "
                "project facts",
            )
        for link in found.unresolved:
            self._fact(
                "case_unresolved_mention",
                form=link.form,
                entity_id=link.entity_id,
                where=dict(link.where),
                statement="a link to a type this profile does not read; its ID is not a world "
                "database ID of any entity type here and is not looked up",
            )
        entities = {(m.entity_type, m.entity_id) for m in found.mentions}
        entities |= self._typed_untyped(found)
        entities |= self._typed_names(found)
        for what, count in sorted(found.dropped.items()):
            self._dropped(what, count)
        for entity_type, entity_id in sorted(entities):
            lookup = self._profile.entities[entity_type]
            if lookup.table is not None:
                self._enqueue(
                    _Work(
                        0,
                        self._rows_query(
                            lookup.table, lookup.columns, lookup.column, entity_id, ()
                        ),
                        lookup.table,
                        lookup,
                        {
                            "kind": "entity_lookup",
                            "entity_type": entity_type,
                            "entity_id": entity_id,
                        },
                    )
                )
        # The report's own entities' references first: the budget is spent on them
        # before anything reached from them.
        for entity_type, entity_id in sorted(entities):
            self._entity_links(entity_type, entity_id, 0, None, None, mentioned=True)
        self._drain(keep_rest=True)
        # The asking phases spend the reserve (what one leaves, the next may spend); then
        # the map goes on with what they left, before the phases that only read.
        context = PhaseContext(self)
        asking = [i for i, p in enumerate(self._phases) if isinstance(p, AskingPhase)]
        if not asking:
            self._limit = limits.max_queries
            self._drain(keep_rest=False)
        for index, phase in enumerate(self._phases):
            self._stage, self._limit = "phases", limits.max_queries
            phase(context)
            if asking and index == asking[-1]:
                self._stage = "reference_map"
                self._rest_of_the_map()
        self._budget_fact()
        for refusal in self._refusals.values():
            self._fact(
                "project_context_coverage",
                reason="query_refused",
                code=refusal.code,
                **refusal.target,
                count=len(refusal.queries),
                purposes=refusal.purposes,
                query_sha256s=refusal.queries,
                statement="ProjectResearch refused every query to this target; nothing is known "
                "from it",
            )
        for (relation, table, column), count in sorted(self._ignored.items()):
            self._fact(
                "project_context_coverage",
                reason="value_not_followed",
                table=table,
                column=column,
                relation=relation,
                count=count,
                statement="values that mean 'no reference' in this profile (ignore_values) "
                "were not followed",
            )
        if self._database_asked and sum(self._database_refused.values()) == self._database_asked:
            self._fact(
                "project_context_coverage",
                reason="database_unreadable",
                count=self._database_asked,
                codes=dict(sorted(self._database_refused.items())),
                statement="every database query of this enrichment was refused: nothing is "
                "known from the database, and no finding rests on it",
            )
        return EnrichmentRun(self._facts, self._queries)

    # -- candidates: untyped IDs and names ------------------------------------------------

    def _typed_untyped(self, found: Extraction) -> set[tuple[str, int]]:
        """Asks each untyped ID's tables once (IN lists); the (type, ID) pairs it exists as."""
        probes, dropped = candidates.untyped_probes(self._profile, found.untyped)
        if dropped:
            found.drop("untyped", dropped)
        where_found: dict[int, list[dict[str, Any]]] = {}
        for probe in probes:
            answer = self._probe(probe)
            if answer is None:
                continue
            capture, rows = answer
            for entity_id, index in candidates.found_ids(probe, rows).items():
                where_found.setdefault(entity_id, []).append(
                    {
                        "entity_type": probe.entity_type,
                        "table": probe.table,
                        "column": probe.column,
                        "provenance": self._provenance(
                            capture, f"{ROWS_POINTER}/{index}/{probe.column}"
                        ),
                    }
                )
        entities: set[tuple[str, int]] = set()
        for untyped in found.untyped:
            places = [
                p
                for p in where_found.get(untyped.entity_id, [])
                if p["entity_type"] in untyped.entity_types
            ]
            types = sorted({p["entity_type"] for p in places})
            entities.update((t, untyped.entity_id) for t in types)
            self._fact(
                "case_untyped_mention",
                entity_id=untyped.entity_id,
                where=dict(untyped.where),
                asked_as=list(untyped.entity_types),
                found_as=types,
                found_in=places,
                statement=(
                    "the case names this ID without its type; it exists as the types in found_as"
                    if types
                    else "the case names this ID without its type; no table asked holds it"
                ),
            )
        return entities

    def _typed_names(self, found: Extraction) -> set[tuple[str, int]]:
        """Asks every name column once (IN lists); the entities a name is exact for."""
        probes, unanswerable, dropped = candidates.name_probes(self._profile, found.names)
        if dropped:
            found.drop("names", dropped)
        matches: dict[str, list[dict[str, Any]]] = {}
        for probe in probes:
            answer = self._probe(probe)
            if answer is None:
                continue
            capture, rows = answer
            for name, indexes in candidates.found_names(probe, rows).items():
                for index in indexes:
                    row = rows[index]
                    matches.setdefault(name, []).append(
                        {
                            "entity_type": probe.entity_type,
                            "entity_id": row.get(probe.id_column),
                            "name": row.get(probe.column),
                            "table": probe.table,
                            "provenance": self._provenance(
                                capture, f"{ROWS_POINTER}/{index}/{probe.column}"
                            ),
                        }
                    )
        entities: set[tuple[str, int]] = set()
        not_found: list[str] = []
        for named in found.names:
            found_for = matches.get(named.name.casefold(), [])
            if not found_for:
                if named not in unanswerable:
                    not_found.append(named.name)
                continue
            distinct = sorted({(m["entity_type"], m["entity_id"]) for m in found_for}, key=repr)
            followed = len(distinct) <= self._profile.limits.name_fanout
            if followed:
                entities.update(
                    (t, i) for t, i in distinct if type(i) is int and not isinstance(i, bool)
                )
            self._fact(
                "project_name_match",
                name=named.name,
                where=dict(named.where),
                match="exact",
                matches=found_for,
                ambiguous=len(distinct) > 1,
                followed=followed,
                candidate=True,
                statement="the case gives this name without an ID; these entities carry "
                "exactly this name (ignoring case)"
                + ("" if followed else "; too many to follow, only listed"),
            )
        if not_found or unanswerable:
            self._fact(
                "case_name_candidates",
                asked=len(found.names) - len(unanswerable),
                not_found=not_found,
                not_asked=[n.name for n in unanswerable],
                statement="phrases of the report asked as names: the ones listed carry no "
                "entity's exact name in the columns asked (not_asked: no name column "
                "for their type)",
            )
        return entities

    def _probe(self, probe: candidates.Probe) -> tuple[Capture, list[dict[str, Any]]] | None:
        if not probe.values:
            return None
        purpose = {
            "kind": "candidate_lookup",
            "entity_type": probe.entity_type,
            "column": probe.column,
            "count": len(probe.values),
        }
        work = _Work(0, probe.query, probe.table, None, purpose)
        outcome = self._ask(work)
        if outcome is None:
            return None
        if outcome.capture is None:
            self._refused(work, outcome)
            return None
        result = outcome.capture.result["result"]
        if not result["complete_filtered_rows"]:
            self._fact(
                "project_context_coverage",
                reason="rows_page_limit",
                table=probe.table,
                purpose=purpose,
                returned=len(result["rows"]),
                statement="more rows match than one page; candidates may be found in rows not read",
            )
        return outcome.capture, list(result["rows"])

    def _dropped(self, what: str, count: int) -> None:
        self._fact(
            "project_context_coverage",
            reason="candidates_dropped",
            what=what,
            count=count,
            statement=f"{count} {what} of the case inputs were not looked up: a bound of the "
            "enrichment profile (mentions_per_rule, candidates_per_query) was reached",
        )

    def _ask(self, work: _Work) -> StepOutcome | None:
        """Runs one query (None when the stage's share of max_queries is spent: a coverage
        fact says so)."""
        if len(self._queries) >= self._limit:
            self._skip(work, "max_queries")
            self._left_out_by(self._stage, work.purpose)
            return None
        self._progress(f"query {len(self._queries) + 1}: {_describe(work)}")
        outcome = self._run(work.query)
        self._done[_key(work.query)] = outcome
        if work.table is not None:
            self._database_asked += 1
            if outcome.capture is None:
                code = str(outcome.refused_code)
                self._database_refused[code] = self._database_refused.get(code, 0) + 1
        self._queries.append(
            {
                "step": outcome.step,
                "query_sha256": outcome.query_sha256,
                "capture_sha256": outcome.capture.sha256 if outcome.capture else None,
                "refused_code": outcome.refused_code,
                "depth": work.depth,
                "purpose": work.purpose,
            }
        )
        return outcome

    # -- queue --------------------------------------------------------------------------

    def _enqueue(self, work: _Work) -> None:
        key = _key(work.query)
        # Pending first: a query a phase asked while the map still had it queued is
        # answered for the map when the queue reaches it (its target fact comes then).
        if key in self._pending:
            self._pending[key].origins.extend(work.origins)
            return
        if key in self._done:
            # Asked before: the same answer, and the same target fact, for this origin.
            for origin in work.origins:
                self._relationship_fact(origin, work, self._done[key], self._targets.get(key))
            return
        self._pending[key] = work
        heapq.heappush(self._queue, (work.depth, _class(work), next(self._order), work))

    def _skip(self, work: _Work, reason: str) -> None:
        kept = ""
        if self._reserve:
            kept = f" ({self._reserve} of them kept for the build phases)"
        self._fact(
            "project_context_coverage",
            reason=reason,
            purpose=work.purpose,
            query=work.query,
            statement=f"not queried: the {reason} bound of the enrichment profile was "
            f"reached{kept}; the project context is incomplete here",
        )

    def _drain(self, *, keep_rest: bool) -> None:
        """Asks the queue in order; ``keep_rest``: stop at the stage's share, the rest
        stays queued. An answer a phase got meanwhile is the map's too, at no cost."""
        while self._queue:
            work = self._queue[0][-1]
            key = _key(work.query)
            done = self._done.get(key)
            if done is None and keep_rest and len(self._queries) >= self._limit:
                return
            heapq.heappop(self._queue)
            del self._pending[key]
            outcome = done if done is not None else self._ask(work)
            if outcome is not None:
                self._answered(work, outcome)

    def _rest_of_the_map(self) -> None:
        """The queue on what the asking phases left of the reserve; rows read now come
        after the rules and script files and are not checked by them (a fact says so)."""
        before = len(self._facts)
        self._drain(keep_rest=False)
        late = [f for f in self._facts[before:] if f["kind"] == "project_rows"]
        if late:
            self._fact(
                "project_context_coverage",
                reason="read_after_phases",
                count=len(late),
                facts=[f["fact_id"] for f in late],
                statement=f"{len(late)} lookups of the reference map were asked on the part "
                "of the build phases' reserve they left, after them: the consistency rules "
                "and the script-file candidates did not check these rows",
            )

    def _left_out_by(self, stage: str, purpose: Mapping[str, Any]) -> None:
        kinds = self._left_out.setdefault(stage, {})
        kind = str(purpose.get("kind"))
        kinds[kind] = kinds.get(kind, 0) + 1
        if isinstance(purpose.get("rule"), str):
            self._rules_left_out.add(purpose["rule"])

    def _budget_fact(self) -> None:
        """One fact for everything max_queries left out, by stage and purpose."""
        if not self._left_out:
            return
        counts = {stage: sum(kinds.values()) for stage, kinds in self._left_out.items()}
        fields: dict[str, Any] = {
            "max_queries": self._profile.limits.max_queries,
            "reserved_for_phases": self._reserve,
            "asked": len(self._queries),
            "count": sum(counts.values()),
            "not_asked": {
                stage: dict(sorted(kinds.items()))
                for stage, kinds in sorted(self._left_out.items())
            },
        }
        if self._rules_left_out:
            fields["rules_not_checked"] = sorted(self._rules_left_out)
        parts = [
            f"{counts[stage]} of {name}"
            for stage, name in (
                ("reference_map", "the reference map"),
                ("phases", "the build phases"),
            )
            if stage in counts
        ]
        self._fact(
            "project_context_coverage",
            reason="query_budget",
            **fields,
            statement=f"the query budget (max_queries {self._profile.limits.max_queries}, "
            f"{self._reserve} of them kept for the build phases) ran out: "
            f"{' and '.join(parts)} queries were not asked (by purpose in not_asked); nothing "
            "is known of them",
        )

    # -- answers ------------------------------------------------------------------------

    def _answered(self, work: _Work, outcome: StepOutcome) -> None:
        capture = outcome.capture
        if capture is None:
            self._refused(work, outcome)
            for origin in work.origins:
                self._relationship_fact(origin, work, outcome)
            return
        target_fact: str | None
        if work.table is not None:
            target_fact = self._rows(work, capture)
        elif work.purpose["kind"] == "constant_search":
            target_fact = self._constant_hits(work, capture)
        else:
            target_fact = self._source_hits(work, capture)
        self._targets[_key(work.query)] = target_fact
        for origin in work.origins:
            self._relationship_fact(origin, work, outcome, target_fact)

    def _refused(self, work: _Work, outcome: StepOutcome) -> None:
        # One fact per refused table (or symbol source) and code: a missing
        # table refuses every lookup of it for the same reason.
        target: dict[str, Any] = (
            {"table": work.table} if work.table is not None else {"source": work.query["kind"]}
        )
        key = repr((sorted(target.items()), outcome.refused_code))
        refusal = self._refusals.setdefault(key, _Refusal(outcome.refused_code, target))
        if work.purpose not in refusal.purposes:
            refusal.purposes.append(work.purpose)
        # A query a phase was refused, then the map's own: one query, counted once.
        if outcome.query_sha256 not in refusal.queries:
            refusal.queries.append(outcome.query_sha256)

    def _rows(self, work: _Work, capture: Capture) -> str | None:
        assert work.table is not None
        result = capture.result["result"]
        rows: list[dict[str, Any]] = result["rows"]
        provenance = self._provenance(capture, ROWS_POINTER)
        if not rows:
            empty = self._fact(
                "project_empty_result",
                table=work.table,
                filters=work.query["filters"],
                purpose=work.purpose,
                provenance=provenance,
                statement=f"none in this table: no {work.table} row matches these filters. "
                "This is a finding about this table only, not proof that the entity is "
                "missing or that no other mechanism exists",
            )
            self._empty.add(empty)
            return empty
        if not result["complete_filtered_rows"]:
            self._fact(
                "project_context_coverage",
                reason="rows_page_limit",
                table=work.table,
                filters=work.query["filters"],
                returned=len(rows),
                statement="more rows match than rows_per_query; only the first page was read",
            )
        texts = self._profile.text_columns(work.table)
        shown_rows: list[dict[str, Any]] = [dict(row) for row in rows]
        rows_fact = self._fact(
            "project_rows",
            table=work.table,
            filters=work.query["filters"],
            purpose=work.purpose,
            rows=shown_rows,
            complete_filtered_rows=result["complete_filtered_rows"],
            provenance=provenance,
        )
        for index, row in enumerate(rows):
            for column, text in texts.items():
                value = row.get(column)
                if not isinstance(value, str) or not value.strip():
                    continue
                text_fact = self._fact(
                    "project_description",
                    table=work.table,
                    source_column=column,
                    role=text.role,
                    text=value,
                    row_fact=rows_fact,
                    provenance=self._provenance(capture, f"{ROWS_POINTER}/{index}/{column}"),
                    statement="text of the project data: it describes the intended mechanics, "
                    "not an action the server performed",
                )
                # The rows fact keeps a reference, not a second copy of the text.
                shown_rows[index][column] = {"text_ref": text_fact}
            if work.lookup is not None and work.lookup.table == work.table:
                self._entity_fact(work.lookup, row, capture, index)
        for index, row in enumerate(rows):
            self._follow(work, row, capture, index)
        return rows_fact

    def _entity_fact(
        self, lookup: EntityLookup, row: Mapping[str, Any], capture: Capture, index: int
    ) -> None:
        name = row.get(lookup.name_column) if lookup.name_column else None
        fields: dict[str, Any] = {
            "entity_type": lookup.entity_type,
            "entity_id": row.get(lookup.column),
            "runtime_observed": False,
            "provenance": self._provenance(capture, f"{ROWS_POINTER}/{index}/{lookup.column}"),
        }
        # A name only ever comes from the name column, never from the ID itself.
        if isinstance(name, str) and name.strip():
            fields["name"] = name
            fields["name_provenance"] = self._provenance(
                capture, f"{ROWS_POINTER}/{index}/{lookup.name_column}"
            )
        self._fact("project_entity", **fields)

    def _source_hits(self, work: _Work, capture: Capture) -> str:
        result = capture.result["result"]
        matches = [_match(m) for m in result["matches"]]
        provenance = self._provenance(capture, MATCHES_POINTER)
        if not matches:
            return self._fact(
                "project_empty_result",
                source=work.query["kind"],
                symbol=work.query["symbol"],
                purpose=work.purpose,
                provenance=provenance,
                statement="no line at the pinned commit names this symbol as a whole word",
            )
        # coverage.complete reads the same in both result versions: the first and
        # only page, and no file left unsearched that could hide a line.
        if not capture.result["coverage"]["complete"]:
            self._fact(
                "project_context_coverage",
                reason="source_hits_limit",
                symbol=work.query["symbol"],
                returned=len(matches),
                statement="more lines name this symbol than symbol_hits; only the first page "
                "was read"
                if result["truncated"]
                else "some files could not be searched (too large, not UTF-8 or not in this "
                "clone); lines naming this symbol in them are not listed",
            )
        return self._fact(
            "project_source_hits",
            symbol=work.query["symbol"],
            total=result["total"],
            matches=matches,
            purpose=work.purpose,
            provenance=provenance,
        )

    def _constant_hits(self, work: _Work, capture: Capture) -> str | None:
        """Only lines assigning the ID to a constant of the type's prefixes count.

        ``MAX_THINGS = 91001`` carries the same literal and says nothing about
        the quest, so it is dropped rather than reported as a candidate.
        """
        purpose = work.purpose
        typed = references.constant_pattern(purpose["prefixes"], purpose["entity_id"])
        result = capture.result["result"]
        if not capture.result["coverage"]["complete"]:
            self._fact(
                "project_context_coverage",
                reason="source_hits_limit",
                text=work.query["text"],
                returned=len(result["matches"]),
                statement="more lines carry this literal than symbol_hits; only the first page "
                "was checked for typed constants",
            )
        last: str | None = None
        for index, m in enumerate(result["matches"]):
            found = typed.search(m["text"])
            if found is None:
                continue
            last = self._fact(
                "project_source_constant",
                entity_type=purpose["entity_type"],
                entity_id=purpose["entity_id"],
                constant=found.group("name") or found.group("defined"),
                match=_match(m),
                provenance=self._provenance(capture, f"{MATCHES_POINTER}/{index}"),
                statement="a C++ constant of this entity type's prefix is assigned this ID; "
                "where the constant is used is not shown by this line",
            )
        return last

    # -- the reference map ----------------------------------------------------------------

    def _follow(self, work: _Work, row: Mapping[str, Any], capture: Capture, index: int) -> None:
        """Forward: every map entry on this table whose column names an entity in this row."""
        assert work.table is not None
        key_columns = self._profile.key_of(work.table)
        # The entry a reverse lookup asked names, in each row, the entity it was asked
        # for: following it forward again would only lead back.
        came_by = (
            work.purpose.get("relation") if work.purpose.get("direction") == "reverse" else None
        )
        for ref in self._profile.references:
            if ref.table != work.table or ref.column not in row or ref.name == came_by:
                continue
            if not references.when_holds(ref, row):
                continue
            origin = _Origin(
                ref,
                work.table,
                {c: row.get(c) for c in key_columns},
                row[ref.column],
                capture.sha256,
                f"{ROWS_POINTER}/{index}/{ref.column}",
            )
            self._forward(origin, work.depth + 1)

    def _entity_links(
        self,
        entity_type: str,
        value: Any,
        depth: int,
        capture_sha256: str | None,
        pointer: str | None,
        *,
        mentioned: bool = False,
    ) -> None:
        """Reverse: the rows naming this entity, asked whatever its own table says.

        A mentioned entity is asked by every map entry holding its type (up to
        reverse_per_entity); an entity only reached, by its part_of entries (its
        own rows). Once per entity: a second path to the same ID adds nothing new.
        """
        seen = (entity_type, _typed(value))
        if seen in self._expanded:
            return
        self._expanded.add(seen)
        self._constant_search(entity_type, value, depth)
        if isinstance(value, bool) or not isinstance(value, int):
            return
        chosen = references.holders(self._profile, entity_type, part_of_only=not mentioned)
        limit = self._profile.limits.reverse_per_entity
        if len(chosen) > limit:
            self._fact(
                "project_context_coverage",
                reason="reverse_references_limit",
                entity_type=entity_type,
                entity_id=value,
                count=len(chosen) - limit,
                not_asked=[ref.name for ref in chosen[limit:]],
                statement="map entries holding this type were not asked for this entity: the "
                "reverse_per_entity bound of the enrichment profile was reached",
            )
        for ref in chosen[:limit]:
            origin = _Origin(ref, None, {}, value, capture_sha256, pointer, entity_type)
            self._reverse(origin, depth + 1)

    def _constant_search(self, entity_type: str, value: Any, depth: int) -> None:
        """Search the ID where a constant of the type's prefixes is assigned it.

        ProjectResearch searches literal text only, so the ID's digits are
        asked (any spacing around ``=`` then still matches) and the prefix and
        the assignment are checked on each returned line (``_constant_hits``).
        """
        entity = self._profile.entities[entity_type]
        prefixes = entity.constant_prefixes
        if not prefixes or isinstance(value, bool) or not isinstance(value, int):
            return
        query: dict[str, Any] = {
            "kind": "source.search",
            "text": str(value),
            "case_sensitive": True,
            "offset": 0,
            "limit": self._profile.limits.symbol_hits,
        }
        if entity.constant_path_prefix is not None:
            query["path_prefix"] = entity.constant_path_prefix
        purpose = {
            "kind": "constant_search",
            "entity_type": entity_type,
            "entity_id": value,
            "prefixes": list(prefixes),
        }
        self._enqueue(_Work(depth, query, None, None, purpose))

    def _admitted(self, origin: _Origin, depth: int) -> bool:
        """The bounds and ignore_values, each cut stated as a coverage fact."""
        ref = origin.reference
        if _typed(origin.value) in {_typed(v) for v in ref.ignore_values}:
            key = (ref.name, ref.table, ref.column)
            self._ignored[key] = self._ignored.get(key, 0) + 1
            return False
        origin_fact = {"relation": ref.name, "from": self._origin_view(origin)}
        for reason, over in (
            ("max_relationships", self._relationships >= self._profile.limits.max_relationships),
            ("max_depth", depth > self._profile.limits.max_depth),
        ):
            if over:
                self._fact(
                    "project_context_coverage",
                    reason=reason,
                    **origin_fact,
                    statement=f"reference not followed: the {reason} bound was reached; "
                    "the project context is incomplete here",
                )
                return False
        self._relationships += 1
        return True

    def _forward(self, origin: _Origin, depth: int) -> None:
        """From a row's column to what it names: a source symbol, or an entity."""
        ref, value = origin.reference, origin.value
        if not self._admitted(origin, depth):
            return
        if ref.symbol:
            if not isinstance(value, str) or not _SYMBOL.fullmatch(value):
                self._fact(
                    "project_context_coverage",
                    reason="not_a_symbol",
                    relation=ref.name,
                    **{"from": self._origin_view(origin)},
                    statement="the value cannot be searched as a source symbol",
                )
                return
            query = {
                "kind": "source.symbol",
                "symbol": value,
                "offset": 0,
                "limit": self._profile.limits.symbol_hits,
            }
            work = _Work(depth, query, None, None, _purpose(ref, "forward"))
            work.origins.append(origin)
            self._enqueue(work)
            return
        reached = references.named(ref, value)
        if not reached:
            self._fact(
                "project_context_coverage",
                reason="not_an_id",
                relation=ref.name,
                **{"from": self._origin_view(origin)},
                statement="the value names no integer ID and is not followed",
            )
            return
        for entity_type, entity_id in reached:
            # The sign may pick the type (RequiredNpcOrGo: negative is a gameobject) or
            # carry a meaning of its own (PrevQuestID: taken); the ID is the magnitude.
            entity = self._profile.entities[entity_type]
            if entity.table is not None:
                query = self._rows_query(entity.table, entity.columns, entity.column, entity_id, ())
                work = _Work(depth, query, entity.table, entity, _purpose(ref, "forward"))
                work.origins.append(origin)
                self._enqueue(work)
            else:
                # No table of its own (a spell): what it reaches are its part_of rows.
                self._relationship_fact(
                    origin, None, None, entity_type=entity_type, value=entity_id
                )
            self._entity_links(entity_type, entity_id, depth, origin.capture_sha256, origin.pointer)

    def _reverse(self, origin: _Origin, depth: int) -> None:
        """From an entity to the rows of one map entry that name it."""
        ref, value = origin.reference, origin.value
        assert origin.entity_type is not None
        if not self._admitted(origin, depth):
            return
        lookup = next((e for e in self._profile.entities.values() if e.table == ref.table), None)
        query = references.reverse_query(self._profile, ref, origin.entity_type, value)
        work = _Work(depth, query, ref.table, lookup, _purpose(ref, "reverse"))
        work.origins.append(origin)
        self._enqueue(work)

    def _relationship_fact(
        self,
        origin: _Origin,
        work: _Work | None,
        outcome: StepOutcome | None,
        target: str | None = None,
        *,
        entity_type: str | None = None,
        value: Any = None,
    ) -> None:
        ref = origin.reference
        direction = "reverse" if origin.table is None else "forward"
        to: dict[str, Any] = {}
        if work is None or outcome is None:
            # An entity without a table of its own: reached, nothing asked for it here.
            to.update(entity_type=entity_type, value=value)
        else:
            to["query_sha256"] = outcome.query_sha256
            if work.table is not None:
                first = work.query["filters"][0]
                to.update(table=work.table, column=first["column"], value=first["value"])
            else:
                to.update(source=work.query["kind"], symbol=work.query["symbol"])
                to["value"] = origin.value
            held = work.lookup.entity_type if work.lookup is not None else None
            if direction == "forward" and held is None:
                held = ref.holds
            if held is not None:
                to["entity_type"] = held
            if outcome.capture is not None:
                to["capture_sha256"] = outcome.capture.sha256
                to["capture_path"] = self._capture_path(outcome.capture.sha256)
            if target is not None:
                to["fact"] = target
        fields: dict[str, Any] = {"relation": ref.name, "direction": direction}
        negative = type(origin.value) is int and origin.value < 0
        if ref.negative_means is not None and direction == "forward" and negative:
            fields["sign"] = ref.negative_means
        self._fact(
            "project_relationship",
            **fields,
            **{"from": self._origin_view(origin)},
            to=to,
            referenced_only=True,
            runtime_observed=False,
            statement=(
                "a reference of the profile's map in the project data; the referenced entity "
                "is not an observed runtime object and not a cause"
                if direction == "forward"
                else "rows of the project data that name this entity in a column the map says "
                "holds its type; not an observed runtime object and not a cause"
            ),
        )
        if (
            ref.expected
            and direction == "forward"
            and work is not None
            and work.lookup is not None
            and target in self._empty
        ):
            self._missing(origin, work, target)

    def _missing(self, origin: _Origin, work: _Work, empty: str | None) -> None:
        assert work.lookup is not None and work.table is not None
        self._fact(
            "project_missing_reference",
            reference=origin.reference.name,
            **{"from": self._origin_view(origin)},
            entity_type=work.lookup.entity_type,
            entity_id=work.query["filters"][0]["value"],
            looked_in={"table": work.table, "column": work.lookup.column},
            empty_fact=empty,
            statement="the row names an entity the map says must exist, and its table has no "
            "row for that ID",
        )

    def _origin_view(self, origin: _Origin) -> dict[str, Any]:
        if origin.table is None:
            view: dict[str, Any] = {"entity_type": origin.entity_type, "entity_id": origin.value}
            if origin.capture_sha256 is not None:
                view.update(
                    capture_sha256=origin.capture_sha256,
                    capture_path=self._capture_path(origin.capture_sha256),
                    pointer=origin.pointer,
                )
            return view
        assert origin.capture_sha256 is not None
        # The row named by a key column other than the one followed, where it has one.
        column = origin.reference.column
        id_column = next((c for c in origin.key if c != column), column)
        return {
            "table": origin.table,
            "id_column": id_column,
            "id": origin.key.get(id_column),
            "key": dict(origin.key),
            "column": origin.reference.column,
            "value": origin.value,
            "capture_sha256": origin.capture_sha256,
            "capture_path": self._capture_path(origin.capture_sha256),
            "pointer": origin.pointer,
        }

    # -- small helpers -------------------------------------------------------------------

    def _rows_query(
        self,
        table: str,
        columns: Sequence[str],
        column: str,
        value: Scalar,
        extra: Sequence[Any],
    ) -> dict[str, Any]:
        filters = [{"column": column, "operator": "eq", "value": value}]
        filters += [{"column": f.column, "operator": f.operator, "value": f.value} for f in extra]
        query: dict[str, Any] = {
            "kind": "database.rows",
            "table": table,
            "columns": list(columns),
            "filters": filters,
            "offset": 0,
            "limit": self._profile.limits.rows_per_query,
        }
        if self._profile.database is not None:
            query["database"] = self._profile.database
        return query

    def _provenance(self, capture: Capture, pointer: str) -> dict[str, Any]:
        return {
            "capture_sha256": capture.sha256,
            "capture_path": self._capture_path(capture.sha256),
            "pointer": pointer,
            "origin": dict(capture.origin),
        }

    def _fact(self, kind: str, **fields: Any) -> str:
        # Two paths to the same statement (the same row reached twice, the same
        # relationship from an equal origin) give one fact, referred to twice.
        body = canonical_bytes({"kind": kind, **fields})
        if body in self._stated:
            return self._stated[body]
        fact_id = f"P{len(self._facts) + 1}"
        self._facts.append({"fact_id": fact_id, "kind": kind, **fields})
        self._stated[body] = fact_id
        return fact_id


def _class(work: _Work) -> int:
    """Which of one depth's queries go first when the budget may not reach them all:
    entity lookups and forward references (what an entity is), then the source
    (its constants and scripts), then the rows belonging to it (part_of), then
    the other rows naming it."""
    purpose = work.purpose
    if purpose["kind"] == "relationship" and purpose.get("direction") == "reverse":
        return 2 if purpose.get("part_of") else 3
    return 1 if work.table is None else 0


def _purpose(ref: Reference, direction: str) -> dict[str, Any]:
    purpose: dict[str, Any] = {"kind": "relationship", "relation": ref.name, "direction": direction}
    if direction == "reverse" and ref.part_of:
        purpose["part_of"] = True
    return purpose


def _key(query: Mapping[str, Any]) -> str:
    return query_sha256(query)


def _match(m: Mapping[str, Any]) -> dict[str, Any]:
    return {k: m[k] for k in ("path", "line", "blob", "sha256", "text")}


def _describe(work: _Work) -> str:
    purpose = work.purpose
    if purpose["kind"] == "constant_search":
        return f"{purpose['entity_type']} {purpose['entity_id']} as a C++ constant"
    if purpose["kind"] == "entity_lookup":
        return f"{purpose['entity_type']} {purpose['entity_id']}"
    if purpose["kind"] == "candidate_lookup":
        return f"{purpose['count']} candidates in {work.table}.{purpose['column']}"
    if "relation" not in purpose:  # a build phase's own query
        return str(purpose["kind"]).replace("_", " ")
    target = work.table or f"symbol {work.query['symbol']}"
    return f"{purpose['relation']} -> {target}"


__all__ = ["AskingPhase", "Enricher", "EnrichmentRun", "PhaseContext"]
