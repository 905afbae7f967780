"""How an enrichment profile fits a live database: ``vba profile check``.

Every table and column the profile uses is looked up through ProjectResearch
(``database.schema``, read-only and allowlisted like every other query), so
an operator sees before the first build which lookups and relationships can
answer and which cannot, and which allowlist entries are missing. A column
compared with an integer ID (a lookup key, or a filter on an integer value)
must have an integer type; anything else is reported as type-mismatched,
since its rows would compare as text. ``vba case build`` prints the same
warnings once at its start.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.enrichment.profile import EnrichmentProfile
from viano_bug_analysis.errors import ResearchError, ResearchUnavailable

Schema = Callable[[Mapping[str, Any]], Mapping[str, Any]]
INTEGER_TYPES = ("tinyint", "smallint", "mediumint", "int", "bigint")
PRESENT = "present"
MISSING = "missing"
TYPE_MISMATCH = "type_mismatch"
NOT_ALLOWLISTED = "not_allowlisted"
# ProjectResearch's refusal codes, told in the operator's words.
TABLE_STATUS = {"table_not_allowed": NOT_ALLOWLISTED, "table_not_found": MISSING}


@dataclass
class _Need:
    """What the profile uses of one table: columns, and which of them compare with integers."""

    columns: dict[str, set[str]] = field(default_factory=dict)  # column -> users
    integer: set[str] = field(default_factory=set)
    users: set[str] = field(default_factory=set)

    def add(self, user: str, columns: Iterable[str | None], integer: Iterable[str] = ()) -> None:
        self.users.add(user)
        for column in columns:
            if column is not None:
                self.columns.setdefault(column, set()).add(user)
        self.integer.update(integer)


def needs(profile: EnrichmentProfile) -> dict[str, _Need]:
    """Every table the profile reads, with the columns it reads there and who reads them."""
    tables: dict[str, _Need] = {}

    def need(table: str) -> _Need:
        return tables.setdefault(table, _Need())

    for entity in profile.entities.values():
        if entity.table is not None:
            need(entity.table).add(
                f"entities.{entity.entity_type}", entity.columns, [entity.column]
            )
    for text in profile.texts:
        need(text.table).add(f"texts {text.table}.{text.column}", [text.column])
    for rel in profile.relationships:
        user = f"relationship {rel.relation}"
        if rel.from_table is not None:
            need(rel.from_table).add(user, [rel.from_column, rel.from_id_column, rel.when_column])
        if rel.table is not None and rel.column is not None:
            integer = [rel.column] + [f.column for f in rel.filters if _is_integer_value(f.value)]
            need(rel.table).add(
                user, [*rel.columns, rel.column, *(f.column for f in rel.filters)], integer
            )
        elif rel.source is None and rel.entity_type is not None:
            entity = profile.entities[rel.entity_type]
            if entity.table is not None:
                need(entity.table).users.add(user)
    return dict(sorted(tables.items()))


def check_profile(profile: EnrichmentProfile, schema: Schema) -> dict[str, Any]:
    """The ``profile-check`` report; ``schema`` answers one ``database.schema`` query.

    A refusal other than a missing or not allowlisted table is reported with
    its own code; an unavailable service is not a finding and propagates.
    """
    database = profile.database
    report_tables: list[dict[str, Any]] = []
    blocked: dict[str, list[str]] = {}
    to_allow: list[str] = []
    for table, need in needs(profile).items():
        query: dict[str, Any] = {"kind": "database.schema", "table": table}
        if database is not None:
            query["database"] = database
        entry: dict[str, Any] = {"table": table, "used_by": sorted(need.users)}
        try:
            answer = schema(query)
        except ResearchUnavailable:
            raise
        except ResearchError as err:
            entry.update(status=TABLE_STATUS.get(err.code, err.code), code=err.code)
            if err.code == "table_not_allowed":
                to_allow.append(table)
            for user in need.users:
                blocked.setdefault(user, []).append(f"{table}: {entry['status']}")
            report_tables.append(entry)
            continue
        types = {c["name"]: str(c["type"]) for c in answer["result"]["columns"]}
        columns = []
        for column, users in sorted(need.columns.items()):
            # The name as written, else the first alternative this table has.
            names = (column, *profile.column_alternatives.get((table, column), ()))
            live = next((n for n in names if n in types), None)
            status = PRESENT
            if live is None:
                status = MISSING
            elif column in need.integer and not types[live].startswith(INTEGER_TYPES):
                status = TYPE_MISMATCH
            item: dict[str, Any] = {
                "column": column,
                "status": status,
                "type": types.get(live or ""),
            }
            if live is not None and live != column:
                item["as"] = live
            columns.append(item)
            if status != PRESENT:
                for user in users:
                    blocked.setdefault(user, []).append(f"{table}.{column}: {status}")
        problems = [c for c in columns if c["status"] != PRESENT]
        entry.update(status=PRESENT if not problems else "incomplete", columns=columns)
        report_tables.append(entry)
    allow_lines = []
    if to_allow:
        allow_lines = ["[database.allow]", f"{database or '<database>'} = [... {_names(to_allow)}]"]
    return {
        "profile": profile.name,
        "database": database,
        "ok": not blocked,
        "tables": report_tables,
        "blocked": [{"user": user, "because": why} for user, why in sorted(blocked.items())],
        "allowlist_lines": allow_lines,
    }


def resolved_columns(report: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """(table, column) -> the alternative name the live table uses, from a check report."""
    return {
        (table["table"], column["column"]): column["as"]
        for table in report["tables"]
        for column in table.get("columns", [])
        if "as" in column
    }


def warnings(report: Mapping[str, Any]) -> list[str]:
    """One line per table or column the profile cannot use, then what it blocks."""
    lines: list[str] = []
    for table in report["tables"]:
        if table["status"] != PRESENT and "columns" not in table:
            lines.append(f"table {table['table']}: {table['status']} ({table['code']})")
        for column in table.get("columns", []):
            if column["status"] != PRESENT:
                kind = f", type {column['type']}" if column["type"] else ""
                lines.append(
                    f"column {table['table']}.{column['column']}: {column['status']}{kind}"
                )
    for item in report["blocked"]:
        lines.append(f"cannot follow {item['user']}: {'; '.join(item['because'])}")
    if report["allowlist_lines"]:
        lines.append("add to the allowlist: " + " ".join(report["allowlist_lines"]))
    return lines


def lines(report: Mapping[str, Any]) -> list[str]:
    """The human form of the whole report: every table and column, then the warnings."""
    out = [f"profile {report['profile']} against database {report['database']}"]
    for table in report["tables"]:
        out.append(f"table {table['table']}: {table['status']}")
        for column in table.get("columns", []):
            alias = f" as {column['as']}" if "as" in column else ""
            out.append(f"  {column['column']}: {column['status']}{alias} ({column['type']})")
    problems = warnings(report)
    out.extend(problems)
    out.append("everything the profile uses is there" if report["ok"] else "profile incomplete")
    return out


def _is_integer_value(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_is_integer_value(v) for v in value)
    return type(value) is int


def _names(tables: Iterable[str]) -> str:
    return ", ".join(f'"{t}"' for t in tables)


__all__ = ["check_profile", "lines", "needs", "resolved_columns", "warnings"]
