"""Client data as enrichment facts: what a mentioned spell, item or area is (issue 36).

The queries and the reading of their answers, over the ``client.records``
kind (docs/client-data.md); the enrichment asks them (``client_lookups``,
a part of the engine), and ``records_of_entities`` / ``names_in_client_data``
ask them directly through a capture function (the MCP tools, tests):

* records by ID: the mentioned or reached spells, items, areas, maps and
  factions. A ``client_record`` fact per record (its name; for a spell its
  effects with the engine's effect and aura names, the spell an effect
  triggers, its misc value), a ``client_record_absent`` fact for the IDs a
  complete answer does not have;
* records by name: phrases the report sets apart ("[Grandma's good
  clothes]", "the spell Rescue Drowning Watchman") asked as exact names
  (ignoring case) of spells and items: a ``client_name_match`` fact per
  record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.errors import ResearchError
from viano_bug_analysis.project_research.captures import Capture

KIND = "client.records"
# entity type of the enrichment profile -> client data table
ENTITY_TABLES: Mapping[str, str] = {
    "spell": "spell",
    "item": "item",
    "area": "area",
    "map": "map",
    "faction": "faction",
}
NAME_TABLES = ("spell", "item")
IDS_PER_QUERY = 100
MATCHES_PER_NAME = 5
# Pointers into the capture document (its "result" is the answer).
RECORDS_POINTER = "/result/result/records"
# The effect fields a fact keeps (the rest stays in the capture).
EFFECT_FIELDS = (
    "effect_index",
    "effect",
    "effect_name",
    "aura",
    "aura_name",
    "trigger_spell",
    "misc_value",
    "base_points",
)
RECORD_STATEMENT = (
    "what the server's client data files define for this ID (an override row of the world "
    "database where it adds one); not what happened at runtime and not a cause"
)
ABSENT_STATEMENT = (
    "none of these IDs is in the client file or its override table (every override table "
    "was read); the server would not know them"
)
NAME_STATEMENT = (
    "the case gives this name without an ID; this record of the client data carries exactly "
    "this name (ignoring case)"
)

CaptureQuery = Callable[[Mapping[str, Any]], Capture]


@dataclass(frozen=True, slots=True)
class ClientFact:
    kind: str  # client_record | client_record_absent | client_name_match
    fields: Mapping[str, Any]
    capture: Capture
    pointer: str  # JSON Pointer into the capture's result document


@dataclass(slots=True)
class ClientFacts:
    facts: list[ClientFact] = field(default_factory=list)
    # (table, code) of every refused lookup: provider_not_configured without [client_data]
    refused: list[tuple[str, str]] = field(default_factory=list)


def id_queries(entities: Iterable[tuple[str, int]]) -> list[tuple[str, dict[str, Any]]]:
    """(entity type, query) for the entities client data describes: one per type and
    IDS_PER_QUERY IDs, types in ENTITY_TABLES order, IDs in the order given."""
    wanted: dict[str, dict[int, None]] = {t: {} for t in ENTITY_TABLES}
    for entity_type, entity_id in entities:
        if entity_type in wanted:
            wanted[entity_type].setdefault(entity_id, None)
    queries = []
    for entity_type, ids in wanted.items():
        listed = list(ids)
        for start in range(0, len(listed), IDS_PER_QUERY):
            chunk = listed[start : start + IDS_PER_QUERY]
            queries.append(
                (
                    entity_type,
                    {
                        "kind": KIND,
                        "table": ENTITY_TABLES[entity_type],
                        "ids": chunk,
                        "offset": 0,
                        "limit": IDS_PER_QUERY,
                    },
                )
            )
    return queries


def name_query(table: str, name: str) -> dict[str, Any]:
    return {"kind": KIND, "table": table, "name": name, "offset": 0, "limit": MATCHES_PER_NAME}


def record_fields(entity_type: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """A record's fact fields: its ID, name, origin; a spell's effects (EFFECT_FIELDS)."""
    fields = record["fields"]
    name = fields.get("name")
    summary: dict[str, Any] = {
        "entity_type": entity_type,
        "entity_id": record["id"],
        "name": name if isinstance(name, str) and name.strip() else None,
        "origin": dict(record["origin"]),
    }
    if "effects" in record:
        summary["effects"] = [
            {k: e["fields"][k] for k in EFFECT_FIELDS if k in e["fields"]}
            for e in record["effects"]
        ]
    if "override_conflict" in record:
        summary["override_conflict"] = dict(record["override_conflict"])
    return summary


def records_of(entity_type: str, answer: Capture) -> list[ClientFact]:
    """The ``client_record`` facts of one answer by ID, and its ``client_record_absent``."""
    result = answer.result["result"]
    facts = [
        ClientFact(
            "client_record",
            record_fields(entity_type, record),
            answer,
            f"{RECORDS_POINTER}/{index}",
        )
        for index, record in enumerate(result["records"])
    ]
    # A missing ID proves nothing while an override table that may add it was not read.
    if result["missing_ids"] and answer.result["coverage"]["complete"]:
        facts.append(
            ClientFact(
                "client_record_absent",
                {"entity_type": entity_type, "entity_ids": list(result["missing_ids"])},
                answer,
                "/result/result/missing_ids",
            )
        )
    return facts


def name_matches(phrase: str, entity_type: str, answer: Capture) -> list[ClientFact]:
    """The ``client_name_match`` facts of one answer by name (a record each)."""
    return [
        ClientFact(
            "client_name_match",
            {"phrase": phrase, **record_fields(entity_type, record)},
            answer,
            f"{RECORDS_POINTER}/{index}",
        )
        for index, record in enumerate(answer.result["result"]["records"])
    ]


def _ask(capture: CaptureQuery, query: Mapping[str, Any], out: ClientFacts) -> Capture | None:
    try:
        return capture(query)
    except ResearchError as err:
        out.refused.append((str(query["table"]), err.code))
        return None


def records_of_entities(capture: CaptureQuery, entities: Iterable[tuple[str, int]]) -> ClientFacts:
    """``client_record`` / ``client_record_absent`` facts of the entities client data describes."""
    out = ClientFacts()
    for entity_type, query in id_queries(entities):
        answer = _ask(capture, query, out)
        if answer is not None:
            out.facts += records_of(entity_type, answer)
    return out


def names_in_client_data(
    capture: CaptureQuery, names: Iterable[str], tables: Iterable[str] = NAME_TABLES
) -> ClientFacts:
    """``client_name_match`` facts: the spells and items whose exact name the report gives."""
    out = ClientFacts()
    by_table = {table: entity for entity, table in ENTITY_TABLES.items()}
    for name in dict.fromkeys(n.strip() for n in names if n.strip()):
        for table in tables:
            answer = _ask(capture, name_query(table, name), out)
            if answer is not None:
                out.facts += name_matches(name, by_table.get(table, table), answer)
    return out
