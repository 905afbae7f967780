"""Client lookups: what the case's spells, items and areas are, from the DBC/DB2 files.

A part of ``Enricher`` (engine.py): the state it works on is the enricher's,
declared once in ``state.EnricherState``. With ``[client_data]`` in the
project configuration:

* at seeding, the names the report sets apart (``Extraction.client_names``)
  are asked as exact spell and item names; a match becomes an entity of the
  case like an ID mention (when at most ``name_fanout`` records match), with
  its ``client_name_match`` fact as provenance;
* after the reference map's first share, every mentioned or reached entity
  of a client type (``client_facts.ENTITY_TABLES``) is asked by ID, one
  query per type and 100 IDs, on a share of max_queries kept for it; again
  for the entities the rest of the map reaches.

Every query goes through the engine's ``_ask``: journaled, captured, counted
in the query budget. Without ``[client_data]`` nothing is asked, and one
coverage fact says what was left unread (not one per entity).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from viano_bug_analysis.enrichment import client_facts as cf
from viano_bug_analysis.enrichment.extract import MAX_CLIENT_NAMES, Extraction
from viano_bug_analysis.enrichment.state import EnricherState
from viano_bug_analysis.enrichment.work import Work
from viano_bug_analysis.project_research import Capture, ResearchConfig

# What a name match keeps of its record: the record itself is a client_record fact beside it.
_MATCH_FIELDS = ("phrase", "entity_type", "entity_id", "name", "origin")


class ClientLookups(EnricherState):
    def _client_types(self) -> list[str]:
        """The profile's entity types client data describes, in ENTITY_TABLES order."""
        return [t for t in cf.ENTITY_TABLES if t in self._profile.entities]

    def _client_wants(self) -> int:
        """The queries kept from the map for the lookups by ID: one per type."""
        return len(self._client_types()) if self._client_data else 0

    def _client_ask(self, query: dict[str, Any], purpose: dict[str, Any]) -> Capture | None:
        return self._capture_of(Work(0, query, None, None, purpose))

    def _client_fact(self, fact: cf.ClientFact, **extra: Any) -> str:
        statement = {
            "client_record": cf.RECORD_STATEMENT,
            "client_record_absent": cf.ABSENT_STATEMENT,
            "client_name_match": cf.NAME_STATEMENT,
        }[fact.kind]
        return self._log.fact(
            fact.kind,
            **fact.fields,
            **extra,
            provenance=self._log.provenance(fact.capture, fact.pointer),
            statement=statement,
        )

    # -- names (seeding) ----------------------------------------------------------------

    def _client_names(self, found: Extraction) -> tuple[set[tuple[str, int]], set[str], set[str]]:
        """The entities the report's set-apart names are exactly; the names (casefolded)
        client data was asked and the ones it has (``_typed_names`` words the rest)."""
        dropped = found.dropped.pop("client_names", 0)
        if not self._client_data:
            return set(), set(), set()
        if dropped:
            self._log.fact(
                "project_context_coverage",
                reason="candidates_dropped",
                what="client names",
                count=dropped,
                statement=f"{dropped} set-apart names of the report were not asked in the "
                f"client data: at most {MAX_CLIENT_NAMES} are asked per case",
            )
        asked: dict[tuple[str, str], Capture | None] = {}
        entities: set[tuple[str, int]] = set()
        names: set[str] = set()
        matched: set[str] = set()
        for named in found.client_names:
            matches: list[cf.ClientFact] = []
            for entity_type in named.entity_types:
                table = cf.ENTITY_TABLES.get(entity_type)
                if table not in cf.NAME_TABLES or entity_type not in self._profile.entities:
                    continue
                key = (table, named.name.casefold())
                if key not in asked:
                    purpose = {"kind": "client_name_lookup", "entity_type": entity_type}
                    asked[key] = self._client_ask(cf.name_query(table, named.name), purpose)
                answer = asked[key]
                names.add(named.name.casefold())
                if answer is not None:
                    matches += cf.name_matches(named.name, entity_type, answer)
            if matches:
                matched.add(named.name.casefold())
            distinct = {(m.fields["entity_type"], m.fields["entity_id"]) for m in matches}
            followed = len(distinct) <= self._profile.limits.name_fanout
            for match in matches:
                shown = {k: match.fields[k] for k in _MATCH_FIELDS}
                self._client_fact(
                    dataclasses.replace(match, fields=shown),
                    where=dict(named.where),
                    followed=followed,
                )
                if followed:
                    entity = (str(match.fields["entity_type"]), int(match.fields["entity_id"]))
                    entities.add(entity)
                    record = cf.ClientFact(
                        "client_record",
                        {k: v for k, v in match.fields.items() if k != "phrase"},
                        match.capture,
                        match.pointer,
                    )
                    self._client_fact(record)
                    self._client_described.add(entity)
        return entities, names, matched

    # -- records by ID ------------------------------------------------------------------

    def _client_records(self) -> None:
        """Asks the mentioned or reached entities of client types not asked yet."""
        if not self._client_data:
            return
        types = set(self._client_types())
        wanted = sorted(
            (entity_type, value[1])
            for entity_type, value in self._expanded
            if entity_type in types
            and value[0] == "int"
            and (entity_type, value[1]) not in self._client_described
        )
        self._client_described.update(wanted)
        for entity_type, query in cf.id_queries(wanted):
            purpose = {"kind": "client_lookup", "entity_type": entity_type}
            answer = self._client_ask(query, {**purpose, "count": len(query["ids"])})
            if answer is not None:
                for fact in cf.records_of(entity_type, answer):
                    self._client_fact(fact)

    def _client_not_configured(self) -> None:
        """Without ``[client_data]``: one fact for the entities client data would describe."""
        if self._client_data is not False:
            return
        types = set(self._client_types())
        entities = sorted({(t, v[1]) for t, v in self._expanded if t in types and v[0] == "int"})
        if not entities:
            return
        counts: dict[str, int] = {}
        for entity_type, _id in entities:
            counts[entity_type] = counts.get(entity_type, 0) + 1
        self._log.fact(
            "project_context_coverage",
            reason="client_data_not_configured",
            source=cf.KIND,
            count=len(entities),
            entity_types=counts,
            statement="the research configuration has no [client_data]: what these spells, "
            "items and areas are (their names, a spell's effects) was not read, and names "
            "of them in the report were not looked up (docs/client-data.md)",
        )


def client_data_configured(config: object) -> bool | None:
    """Whether a research configuration has ``[client_data]``; None without one (a
    stand-in research in tests): then nothing is said about client data."""
    if not isinstance(config, ResearchConfig):
        return None
    return config.client_data is not None


__all__ = ["ClientLookups", "client_data_configured"]
