"""One example of every project query kind, and the prompt section made from them.

The model learns the query kinds from these examples (``investigation_project_v5``
on). They are the one place a kind's example is written: the prompt section is
rendered from them, a test validates each against ``project-query-v2`` and
checks that every kind of that schema has one, so a kind added to the schema
without an example fails the build instead of staying unknown to the model.
Earlier prompt versions keep their own texts (their stored prompts rebuild
byte for byte).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.jsonio import ordered_bytes

QUERY_SCHEMA = "project-query-v2"


@dataclass(frozen=True)
class QueryExample:
    query: Mapping[str, Any]
    # Said after the example, where its arguments do not explain themselves.
    note: str | None = None


def _q(kind: str, **arguments: Any) -> dict[str, Any]:
    return {"kind": kind, **arguments}


PAGE = {"offset": 0, "limit": 20}

QUERY_EXAMPLES: tuple[QueryExample, ...] = (
    QueryExample(
        _q("source.search", text="90002", case_sensitive=True, whole_word=True, **PAGE),
        "whole_word: never inside a longer word or number; source.find_text takes it too",
    ),
    QueryExample(_q("source.symbol", symbol="npc_wolpertinger", **PAGE)),
    QueryExample(_q("source.registration", symbol="npc_wolpertinger", **PAGE)),
    QueryExample(_q("source.read", path="src/game/Quest.cpp", start_line=1, end_line=60)),
    QueryExample(_q("source.files", text="quest", **PAGE)),
    QueryExample(_q("source.schema", text="quest_template", case_sensitive=False, **PAGE)),
    QueryExample(
        _q("source.revision", revision="1b8d9ff"),
        "a commit ID from the report, against the pinned commit",
    ),
    QueryExample(
        _q(
            "source.changes",
            since="1b8d9ffda56f204c2cfea8431f4e0ae290fbe6f5",
            terms=["90001", "npc_wild_wolpertinger"],
            **PAGE,
        ),
        "commits since that one whose changed lines name a term",
    ),
    QueryExample(_q("database.tables", name_contains="quest", offset=0, limit=50)),
    QueryExample(_q("database.schema", table="quest_template")),
    QueryExample(
        _q(
            "database.rows",
            table="quest_template",
            columns=["ID", "LogTitle"],
            filters=[{"column": "ID", "operator": "eq", "value": 90001}],
            **PAGE,
        )
    ),
    QueryExample(
        _q(
            "database.count",
            table="creature_template",
            filters=[{"column": "name", "operator": "contains", "value": "Wolpertinger"}],
        )
    ),
    QueryExample(
        _q("references", entity_type="quest", id=90001, limit=20),
        "every use of the ID as that type",
    ),
    QueryExample(
        _q("client.records", table="spell", ids=[90004], **PAGE),
        'client data: spell (with effects), item, area, map, faction by ids or exact "name"',
    ),
)

FILTER_RULES = """Filters of a project query are a list of objects with column, operator and value.
Operators: eq, ne, lt, le, gt, ge, contains (a literal substring; % and _ are not wildcards),
in (a list). There is no "like" operator."""


def project_query_section() -> str:
    """The ``project.query`` section of the system prompt: one line per example."""
    lines = ['Live project research (operation "project.query"; its arguments are one query).']
    lines.append("Examples:")
    for example in QUERY_EXAMPLES:
        lines.append("- " + ordered_bytes(example.query).decode())  # kind first
        if example.note:
            lines.append(f"  ({example.note})")
    lines.append(FILTER_RULES)
    return "\n".join(lines)


__all__ = [
    "FILTER_RULES",
    "QUERY_EXAMPLES",
    "QUERY_SCHEMA",
    "QueryExample",
    "project_query_section",
]
