"""How an enrichment profile fits a live database: ``vba profile check``.

Every table and column the profile uses is looked up through ProjectResearch
(``database.schema``, read-only and allowlisted like every other query), so
an operator sees before the first build which lookups and references can
answer and which cannot, and which allowlist entries are missing. A column
compared with an integer ID (a lookup key, or a filter on an integer value)
must have an integer type; anything else is reported as type-mismatched,
since its rows would compare as text. ``vba case build`` prints the same
warnings once at its start.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
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
    """What the profile uses of one table: columns, and which of them compare with integers.

    ``users`` maps each user (``entities.quest``, ``reference quest_next``)
    to how it uses the table: ``looks up`` (an entity lookup), ``reads`` (a
    reference's lookup or a text column), ``starts from`` (a reference
    followed from this entity table's rows), or ``reaches`` (a reference whose
    entity type has this table: its other references do not need the table).
    """

    columns: dict[str, set[str]] = field(default_factory=dict)  # column -> users
    integer: set[str] = field(default_factory=set)
    users: dict[str, str] = field(default_factory=dict)  # user -> role
    # user -> the columns that say what it does here (a reference's column, a
    # text column; none for an entity lookup)
    keys: dict[str, list[str]] = field(default_factory=dict)

    def add(
        self,
        user: str,
        role: str,
        columns: Iterable[str | None],
        integer: Iterable[str] = (),
        keys: Iterable[str | None] = (),
    ) -> None:
        self.users.setdefault(user, role)
        shown = self.keys.setdefault(user, [])
        shown.extend(k for k in keys if k is not None and k not in shown)
        for column in columns:
            if column is not None:
                self.columns.setdefault(column, set()).add(user)
        self.integer.update(integer)


LOOKS_UP, READS, STARTS_FROM, REACHES = "looks up", "reads", "starts from", "reaches"


def needs(profile: EnrichmentProfile) -> dict[str, _Need]:
    """Every table the profile reads, with the columns it reads there and who reads them."""
    tables: dict[str, _Need] = {}

    def need(table: str) -> _Need:
        return tables.setdefault(table, _Need())

    for entity in profile.entities.values():
        if entity.table is not None:
            need(entity.table).add(
                f"entities.{entity.entity_type}", LOOKS_UP, entity.columns, [entity.column]
            )
        for table, column in entity.exists_in:
            need(table).add(
                f"entities.{entity.entity_type}.exists_in", READS, [column], [column], [column]
            )
    for name in profile.mentions.name_tables:
        need(name.table).add(
            f"mentions.name_tables {name.table}.{name.column}",
            READS,
            [name.id_column, name.column],
            [name.id_column],
            [name.column],
        )
    for text in profile.texts:
        need(text.table).add(
            f"texts {text.table}.{text.column}", READS, [text.column], keys=[text.column]
        )
    own_tables = {e.table for e in profile.entities.values() if e.table is not None}
    for ref in profile.references:
        user = f"reference {ref.name}"
        # A list column (auras "123 456") is text by design: only its items are IDs.
        integer = [] if ref.symbol or ref.separated_by is not None else [ref.column]
        integer += [f.column for f in ref.when if _is_integer_value(f.value)]
        when = [f.column for f in ref.when]
        if ref.table in own_tables:
            # Read by the entity's lookup; the map follows its column from there.
            need(ref.table).add(user, STARTS_FROM, [ref.column, *when], keys=[ref.column])
        else:
            need(ref.table).add(
                user, READS, [*profile.columns_of(ref.table)], integer, keys=[ref.column]
            )
        for held in ref.types():
            entity = profile.entities[held]
            if entity.table is not None and entity.table != ref.table:
                need(entity.table).add(user, REACHES, ())
    return dict(sorted(tables.items()))


def _links(profile: EnrichmentProfile, entity_type: str) -> list[str]:
    """The references asked for every reached ID of this type (part_of: its own rows)."""
    return [r.name for r in profile.references if r.part_of and entity_type in r.types()]


def _target_type(profile: EnrichmentProfile, user: str) -> str | None:
    name = user.removeprefix("reference ")
    return next((r.holds for r in profile.references if r.name == name), None)


def check_profile(
    profile: EnrichmentProfile, schema: Schema, allowed: Sequence[str] = ()
) -> dict[str, Any]:
    """The ``profile-check`` report; ``schema`` answers one ``database.schema`` query.

    A refusal other than a missing or not allowlisted table is reported with
    its own code; an unavailable service is not a finding and propagates.
    ``allowed`` is what the config's allowlist holds now for the database, so
    ``allowlist_lines`` can be the whole list to paste in its place.
    A reference that only *reaches* a missing entity table is not blocked:
    the IDs it reaches still start their part_of references; it is listed under
    ``partial`` with the table it cannot read and the links that still answer.
    """
    database = profile.database
    report_tables: list[dict[str, Any]] = []
    blocked: dict[str, list[str]] = {}
    partial: dict[str, str] = {}
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
            status = TABLE_STATUS.get(err.code, err.code)
            entry.update(status=status, code=err.code)
            if err.code == "table_not_allowed":
                to_allow.append(table)
            why = f"{table} is {status.replace('_', ' ')} ({err.code})"
            for user, role in sorted(need.users.items()):
                entity_type = _target_type(profile, user) if role == REACHES else None
                links = _links(profile, entity_type) if entity_type is not None else []
                if links:
                    partial[user] = (
                        f"reaches {entity_type} IDs: their {table} rows are not read because "
                        f"{why}; their part_of references are still asked: {', '.join(links)}"
                    )
                    continue
                keys = need.keys.get(user, [])
                what = ", ".join(f"{table}.{k}" for k in keys) if keys else table
                blocked.setdefault(user, []).append(f"{role} {what}, and {why}")
            report_tables.append(entry)
            continue
        types = {c["name"]: str(c["type"]) for c in answer["result"]["columns"]}
        columns = []
        for column, users in sorted(need.columns.items()):
            live = _live_name(profile, table, column, types)
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
                kind = f", type {item['type']}" if item["type"] else ""
                for user in sorted(users):
                    blocked.setdefault(user, []).append(
                        f"{need.users[user]} {table}.{column}: column {status.replace('_', ' ')}"
                        f"{kind}"
                    )
        problems = [c for c in columns if c["status"] != PRESENT]
        entry.update(status=PRESENT if not problems else "incomplete", columns=columns)
        report_tables.append(entry)
    allow_lines = allowlist_lines(database or "<database>", allowed, to_allow)
    missing_tables = [t for t in report_tables if t["status"] != PRESENT]
    return {
        "profile": profile.name,
        "database": database,
        "ok": not blocked and not missing_tables,
        "tables": report_tables,
        "blocked": [{"user": user, "because": why} for user, why in sorted(blocked.items())],
        "partial": [{"user": user, "because": why} for user, why in sorted(partial.items())],
        "allowlist_lines": allow_lines,
    }


def allowlist_lines(database: str, allowed: Sequence[str], to_allow: Sequence[str]) -> list[str]:
    """The TOML to paste: the database's whole allowlist, what it holds now and then
    what the profile also reads (nothing when nothing is to add)."""
    if not to_allow:
        return []
    kept = [t for t in allowed if t not in to_allow]
    return [
        "[database.allow]",
        f"{database} = [",
        *(f'    "{table}",' for table in kept),
        *(f'    "{table}",  # added: the profile reads it' for table in to_allow),
        "]",
    ]


def _live_name(
    profile: EnrichmentProfile, table: str, column: str, types: Mapping[str, str]
) -> str | None:
    """The name as written, else the first alternative this table has (None: neither)."""
    names = (column, *profile.column_alternatives.get((table, column), ()))
    return next((n for n in names if n in types), None)


def resolve_columns(profile: EnrichmentProfile, schema: Schema) -> dict[tuple[str, str], str]:
    """(table, column) -> the alternative name the live table uses, for every table with
    ``[column_alternatives]``; one ``database.schema`` query per such table.

    The one place alternatives are resolved: ``vba case build`` and a
    CaseBuilder constructed directly both go through it (the builder stores
    the answer with the revision, so a resumed build resolves the same way).
    A refused table resolves nothing: its lookups become coverage facts.
    """
    chosen: dict[tuple[str, str], str] = {}
    for table in sorted({table for table, _column in profile.column_alternatives}):
        query: dict[str, Any] = {"kind": "database.schema", "table": table}
        if profile.database is not None:
            query["database"] = profile.database
        try:
            answer = schema(query)
        except ResearchUnavailable:
            raise
        except ResearchError:
            continue
        types = {c["name"]: str(c["type"]) for c in answer["result"]["columns"]}
        for alt_table, column in sorted(profile.column_alternatives):
            if alt_table != table:
                continue
            live = _live_name(profile, table, column, types)
            if live is not None and live != column:
                chosen[(table, column)] = live
    return chosen


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
        lines.append(f"cannot follow {item['user']}: it {'; '.join(item['because'])}")
    for item in report.get("partial", []):
        lines.append(f"partly followed {item['user']}: it {item['because']}")
    to_allow = [t["table"] for t in report["tables"] if t["status"] == NOT_ALLOWLISTED]
    if to_allow:
        lines.append(
            f"add to the allowlist of {report['database']}: {', '.join(to_allow)} "
            "(`vba profile check` prints the TOML to paste)"
        )
    return lines


def verdict(report: Mapping[str, Any]) -> str:
    """One line: whether the profile fits, and if not, how far it is from fitting."""
    where = f"profile {report['profile']} against database {report['database']}"
    tables = report["tables"]
    if report["ok"]:
        return f"{where}: fits; all {len(tables)} tables and their columns are there"
    by_status: dict[str, int] = {}
    for table in tables:
        if table["status"] != PRESENT and "columns" not in table:
            by_status[table["status"]] = by_status.get(table["status"], 0) + 1
    columns = sum(1 for t in tables for c in t.get("columns", []) if c["status"] != PRESENT)
    parts = [f"{n} table(s) {status.replace('_', ' ')}" for status, n in sorted(by_status.items())]
    if columns:
        parts.append(f"{columns} column(s) missing or of the wrong type")
    blocked = len(report["blocked"])
    if blocked:
        parts.append(f"{blocked} lookup(s), text(s) or reference(s) cannot be followed")
    return f"{where}: does not fit: " + "; ".join(parts)


def lines(report: Mapping[str, Any]) -> list[str]:
    """The human form: the verdict, the allowlist to paste, then the details grouped by
    table (the tables with a problem, each with its columns and users; the tables
    that are there on one line), then what cannot be followed."""
    out = [verdict(report)]
    if report["allowlist_lines"]:
        out.append(
            "the fix: in the project config, replace the list of this database in "
            "[database.allow] with"
        )
        out += report["allowlist_lines"]
    present = []
    for table in report["tables"]:
        problems = [c for c in table.get("columns", []) if c["status"] != PRESENT]
        if table["status"] == PRESENT:
            present.append(table["table"])
            continue
        code = f" ({table['code']})" if "code" in table else ""
        out.append(f"table {table['table']}: {table['status'].replace('_', ' ')}{code}")
        for column in problems:
            kind = f", type {column['type']}" if column["type"] else ""
            out.append(f"  column {column['column']}: {column['status'].replace('_', ' ')}{kind}")
        out.append("  used by: " + ", ".join(table["used_by"]))
    if present:
        out.append(f"tables there ({len(present)}): " + ", ".join(present))
    # A use blocked by a whole table is in that table's "used by" above; the
    # uses a column blocks are told here (--json has every one).
    for item in report["blocked"]:
        if any(": column " in why for why in item["because"]):
            out.append(f"cannot follow {item['user']}: it {'; '.join(item['because'])}")
    for item in report.get("partial", []):
        out.append(f"partly followed {item['user']}: it {item['because']}")
    return out


def _is_integer_value(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_is_integer_value(v) for v in value)
    return type(value) is int


__all__ = [
    "allowlist_lines",
    "check_profile",
    "lines",
    "needs",
    "resolve_columns",
    "resolved_columns",
    "verdict",
    "warnings",
]
