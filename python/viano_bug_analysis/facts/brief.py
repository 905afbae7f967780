"""The fact sections of a case brief and what the case can read (minimal stand-in for
the fact-vocabulary work's module; same signatures)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.facts._compact import compact

# Section order, and within the budget the order facts are kept in (most useful first).
_SECTIONS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "Entities",
        frozenset(
            {
                "case_mention",
                "case_untyped_mention",
                "case_unresolved_mention",
                "case_name_candidates",
                "project_entity",
                "project_name_match",
            }
        ),
    ),
    ("Leads", frozenset({"project_lead"})),
    (
        "Rows and source found",
        frozenset(
            {
                "project_rows",
                "project_description",
                "project_source_hits",
                "project_source_constant",
                "project_rule_hit",
                "project_missing_reference",
                "project_script_file_candidate",
                "project_change_since_report",
                "report_revision",
            }
        ),
    ),
    ("Empty lookups", frozenset({"project_empty_result"})),
    ("Coverage", frozenset({"project_context_coverage"})),
    ("Relationships", frozenset({"project_relationship"})),
)
_KEPT_FIRST = ("Leads", "Entities")


@dataclass(frozen=True)
class FactSections:
    text: str
    shown: tuple[str, ...]
    left_out: tuple[str, ...]


def fact_sections(index: Mapping[str, Any], *, max_chars: int) -> FactSections:
    """The sections, never longer than ``max_chars``; a fact that does not fit is left
    out whole (lowest-value sections last to be kept), listed in ``left_out``."""
    grouped: dict[str, list[tuple[str, str]]] = {name: [] for name, _ in _SECTIONS}
    for fact in index.get("facts", ()):
        for name, kinds in _SECTIONS:
            if fact["kind"] in kinds:
                grouped[name].append((fact["fact_id"], compact(fact)))
                break
    order = [*_KEPT_FIRST, *(n for n, _ in _SECTIONS if n not in _KEPT_FIRST)]
    used = 0
    kept: dict[str, list[tuple[str, str]]] = {name: [] for name, _ in _SECTIONS}
    left_out: list[str] = []
    for name in order:
        heading = len(name) + 2
        for fact_id, line in grouped[name]:
            cost = len(line) + 1 + (heading if not kept[name] else 0)
            if used + cost <= max_chars:
                kept[name].append((fact_id, line))
                used += cost
            else:
                left_out.append(fact_id)
    parts: list[str] = []
    shown: list[str] = []
    for name, _ in _SECTIONS:
        if kept[name]:
            parts.append(f"{name}:")
            parts += [line for _, line in kept[name]]
            shown += [fact_id for fact_id, _ in kept[name]]
    text = "\n".join(parts)
    assert len(text) <= max_chars
    return FactSections(text, tuple(shown), tuple(sorted(left_out, key=_number)))


@dataclass(frozen=True)
class TableAccess:
    read: tuple[str, ...]
    refused: Mapping[str, tuple[str, ...]]
    absent: tuple[str, ...]


def table_access(index: Mapping[str, Any]) -> TableAccess:
    """The tables the build read, the ones refused (by reason code) and the absent ones."""
    read: set[str] = set()
    refused: dict[str, set[str]] = {}
    for fact in index.get("facts", ()):
        table = fact.get("table")
        if fact["kind"] in ("project_rows", "project_empty_result") and isinstance(table, str):
            read.add(table)
        if (
            fact["kind"] == "project_context_coverage"
            and fact.get("reason") == "query_refused"
            and isinstance(table, str)
        ):
            refused.setdefault(str(fact.get("code")), set()).add(table)
    absent = tuple(sorted(refused.pop("table_not_found", set())))
    return TableAccess(
        tuple(sorted(read)), {k: tuple(sorted(v)) for k, v in sorted(refused.items())}, absent
    )


def _number(fact_id: str) -> int:
    return int(fact_id[1:]) if fact_id[1:].isdigit() else 0


__all__ = ["FactSections", "TableAccess", "fact_sections", "table_access"]
