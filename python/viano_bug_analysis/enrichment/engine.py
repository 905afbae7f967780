"""The enrichment run: entity lookups, then the profile's reference map, breadth first.

The map says which column holds which entity's IDs. It is followed both
ways: from a row read to the entity its column names (forward) and from an
entity to the rows naming it (reverse: every entry for a mentioned entity,
its own ``part_of`` rows for every entity reached). After the queue, the
build's phases (rules, script files, changes since the report, leads) run on
the same query budget: the queue stops at ``max_queries`` less what the
asking phases want (``AskingPhase``, at most ``limits.reserve_cap()``), goes
on with what they leave of it, and one ``query_budget`` fact counts what the
budget left out. With ``[client_data]`` the spells, items and areas it names
or reaches are asked in the client data too (``client_lookups``), on a few
queries kept from the map's share.

Deterministic: the same mentions, profile and answers give the same queries
in the same order and the same facts with the same IDs, which is what lets
an interrupted build replay its journal. Facts state what the project data
says (a row, a name, a text, a reference, a source line); none of them says
that something happened at runtime or caused the bug.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.enrichment.answers import Answers
from viano_bug_analysis.enrichment.client_lookups import ClientLookups
from viano_bug_analysis.enrichment.extract import Extraction, Mention, NameMention
from viano_bug_analysis.enrichment.fact_log import FactLog
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.enrichment.profile import (
    EnrichmentProfile,
    Filter,
    Scalar,
)
from viano_bug_analysis.enrichment.seeding import Seeding
from viano_bug_analysis.enrichment.traversal import Traversal
from viano_bug_analysis.enrichment.work import (
    Progress,
    RunQuery,
    Work,
    query_key,
)
from viano_bug_analysis.enrichment.work_queue import QueueAndBudget
from viano_bug_analysis.project_research import Capture

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
        return self._enricher._log.facts

    @property
    def queries(self) -> Sequence[Mapping[str, Any]]:
        return self._enricher._queries

    def ask(self, query: Mapping[str, Any], purpose: Mapping[str, Any]) -> StepOutcome | None:
        """One query on the shared budget (None: max_queries reached, a coverage fact says
        so). A refusal is recorded like the queue's; its outcome has no capture."""
        kind = str(query.get("kind", ""))
        work = Work(
            1,
            dict(query),
            str(query["table"]) if kind.startswith("database.") and "table" in query else None,
            None,
            dict(purpose),
        )
        key = query_key(work.query)
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
        return self._enricher._log.fact(kind, **fields)

    def provenance(self, capture: Capture, pointer: str) -> dict[str, Any]:
        return self._enricher._log.provenance(capture, pointer)


@dataclass
class EnrichmentRun:
    facts: list[dict[str, Any]]
    queries: list[dict[str, Any]]  # one per asked step, in order


class Enricher(Seeding, QueueAndBudget, Answers, Traversal, ClientLookups):
    def __init__(
        self,
        profile: EnrichmentProfile,
        run_query: RunQuery,
        *,
        capture_path: Callable[[str], str],
        progress: Progress | None = None,
        phases: Sequence[Phase] = (),
        client_data: bool | None = None,
    ) -> None:
        """``client_data``: whether the project configuration has ``[client_data]``
        (``client_lookups``); None: not said, nothing asked and no fact about it."""
        self._profile = profile
        self._client_data = client_data
        self._client_described = set()
        self._phases = tuple(phases)
        self._run = run_query
        self._capture_path = capture_path
        self._progress = progress or (lambda _text: None)
        self._log = FactLog(capture_path)
        self._queries = []
        self._queue = []
        self._order = itertools.count()
        self._pending = {}
        self._done = {}
        self._targets = {}
        self._relationships = 0
        self._ignored = {}
        self._refusals = {}
        self._expanded = set()
        self._empty = set()
        self._database_asked = 0
        self._database_refused = {}
        self._reserve = 0
        self._limit = profile.limits.max_queries
        self._stage = "reference_map"
        self._left_out = {}
        self._rules_left_out = set()

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
        # The client lookups by ID are asked after the map's first share, on their own.
        client_share = min(self._client_wants(), max(0, limits.max_queries - self._reserve))
        self._limit = limits.max_queries - self._reserve - client_share
        for mention in found.mentions:
            self._log.fact(
                "case_mention",
                entity_type=mention.entity_type,
                entity_id=mention.entity_id,
                where=dict(mention.where),
                how=mention.how,
                statement="the case inputs name this ID; existence and meaning come from the "
                "project facts",
            )
        for link in found.unresolved:
            self._log.fact(
                "case_unresolved_mention",
                form=link.form,
                entity_id=link.entity_id,
                where=dict(link.where),
                statement="a link to a type this profile does not read; its ID is not a world "
                "database ID of any entity type here and is not looked up",
            )
        entities = {(m.entity_type, m.entity_id) for m in found.mentions}
        entities |= self._typed_untyped(found)
        by_client_name, client_asked, client_matched = self._client_names(found)
        entities |= self._typed_names(found, client_asked, client_matched)
        entities |= by_client_name
        for what, count in sorted(found.dropped.items()):
            self._dropped(what, count)
        for entity_type, entity_id in sorted(entities):
            lookup = self._profile.entities[entity_type]
            if lookup.table is not None:
                self._enqueue(
                    Work(
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
        self._limit = limits.max_queries - self._reserve
        self._client_records()
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
        self._stage = "reference_map"
        self._client_records()  # the entities the rest of the map reached
        self._budget_fact()
        for refusal in self._refusals.values():
            self._log.fact(
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
            self._log.fact(
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
            self._log.fact(
                "project_context_coverage",
                reason="database_unreadable",
                count=self._database_asked,
                codes=dict(sorted(self._database_refused.items())),
                statement="every database query of this enrichment was refused: nothing is "
                "known from the database, and no finding rests on it",
            )
        self._client_not_configured()
        return EnrichmentRun(self._log.facts, self._queries)


__all__ = ["AskingPhase", "Enricher", "EnrichmentRun", "PhaseContext"]
