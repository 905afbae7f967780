"""Client data as enrichment facts: what a mentioned spell, item or area is (issue 36).

Two lookups over the ``client.records`` kind (docs/client-data.md), each
answer captured, each fact pointing into its capture:

* ``records_of_entities``: the mentioned or reached spells, items, areas,
  maps and factions by ID. A ``client_record`` fact per record (its name;
  for a spell its effects with the engine's effect and aura names, the
  spell it triggers, its misc value), a ``client_record_absent`` fact for
  the IDs a complete answer does not have.
* ``names_in_client_data``: phrases of the report asked as exact names
  (ignoring case) of spells and items ("Rescue Drowning Watchman",
  "[Grandma's good clothes]"): a ``client_name_match`` fact per record.

Not yet wired into the enrichment engine: the fact registry
(``enrichment/facts``) takes these kinds at merge. Without ``[client_data]``
both return no facts and say so in ``refused``.
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


def _ask(capture: CaptureQuery, query: Mapping[str, Any], out: ClientFacts) -> Capture | None:
    try:
        return capture(query)
    except ResearchError as err:
        out.refused.append((str(query["table"]), err.code))
        return None


def _summary(entity_type: str, record: Mapping[str, Any]) -> dict[str, Any]:
    fields = record["fields"]
    summary: dict[str, Any] = {
        "entity_type": entity_type,
        "entity_id": record["id"],
        "name": fields.get("name"),
        "origin": record["origin"],
    }
    if "effects" in record:
        summary["effects"] = [
            {k: e["fields"][k] for k in EFFECT_FIELDS if k in e["fields"]}
            for e in record["effects"]
        ]
    if "override_conflict" in record:
        summary["override_conflict"] = record["override_conflict"]
    return summary


def records_of_entities(
    capture: CaptureQuery,
    entities: Iterable[tuple[str, int]],
    tables: Mapping[str, str] = ENTITY_TABLES,
) -> ClientFacts:
    """``client_record`` / ``client_record_absent`` facts of the entities client data describes."""
    out = ClientFacts()
    wanted: dict[str, list[int]] = {}
    for entity_type, entity_id in entities:
        if entity_type in tables and entity_id not in wanted.setdefault(entity_type, []):
            wanted[entity_type].append(entity_id)
    for entity_type, ids in wanted.items():
        for start in range(0, len(ids), IDS_PER_QUERY):
            chunk = ids[start : start + IDS_PER_QUERY]
            query = {"kind": KIND, "table": tables[entity_type], "ids": chunk}
            answer = _ask(capture, {**query, "offset": 0, "limit": IDS_PER_QUERY}, out)
            if answer is None:
                continue
            result = answer.result["result"]
            for index, record in enumerate(result["records"]):
                out.facts.append(
                    ClientFact(
                        "client_record",
                        _summary(entity_type, record),
                        answer,
                        f"/result/records/{index}",
                    )
                )
            if result["missing_ids"] and answer.result["coverage"]["complete"]:
                out.facts.append(
                    ClientFact(
                        "client_record_absent",
                        {"entity_type": entity_type, "entity_ids": list(result["missing_ids"])},
                        answer,
                        "/result/missing_ids",
                    )
                )
    return out


def names_in_client_data(
    capture: CaptureQuery, names: Iterable[str], tables: Iterable[str] = NAME_TABLES
) -> ClientFacts:
    """``client_name_match`` facts: the spells and items whose exact name the report gives."""
    out = ClientFacts()
    by_table = {table: entity for entity, table in ENTITY_TABLES.items()}
    for name in dict.fromkeys(n.strip() for n in names if n.strip()):
        for table in tables:
            query = {"kind": KIND, "table": table, "name": name}
            answer = _ask(capture, {**query, "offset": 0, "limit": MATCHES_PER_NAME}, out)
            if answer is None:
                continue
            for index, record in enumerate(answer.result["result"]["records"]):
                fields = {"phrase": name, **_summary(by_table.get(table, table), record)}
                out.facts.append(
                    ClientFact("client_name_match", fields, answer, f"/result/records/{index}")
                )
    return out
