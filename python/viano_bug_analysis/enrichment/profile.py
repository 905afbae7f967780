"""The enrichment profile: what a CaseBuilder looks up, written by an operator in TOML.

A profile names which report fields and attachment lines mention entity IDs,
how each entity type is looked up, which text columns become separate
description facts, and which relationships between returned columns are
followed. Generic code holds no table, column or ID of any game; a profile
such as ``profiles/vcore/enrichment.toml`` holds all of them. See
docs/case-enrichment.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from viano_bug_analysis import vocabulary
from viano_bug_analysis.errors import EnrichmentError
from viano_bug_analysis.files import NOT_A_REGULAR_FILE, UNREADABLE, parse_toml, read_regular_file
from viano_bug_analysis.jsonio import sha256_hex
from viano_bug_analysis.schema_errors import looks_like_field

PROFILE_FORMAT = "viano-enrichment-profile"
MAX_PROFILE_BYTES = 1024 * 1024
_IDENTIFIER = vocabulary.IDENTIFIER
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
OPERATORS = frozenset(vocabulary.FILTER_OPERATORS)
SOURCE_KINDS = frozenset({"source.symbol"})
EXTRACT_PLACES = frozenset({"report.metadata", "report.text", "attachments"})

Scalar = str | int | bool | None


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one enrichment; what they cut becomes a coverage fact."""

    max_queries: int = 64
    max_depth: int = 4
    max_relationships: int = 128
    rows_per_query: int = 20
    symbol_hits: int = 20
    mentions_per_rule: int = 32


@dataclass(frozen=True, slots=True)
class ExtractRule:
    """Where the case inputs name an entity ID."""

    entity_type: str
    place: str  # one of EXTRACT_PLACES
    key: tuple[str, ...] = ()  # report.metadata: the path of keys
    pattern: re.Pattern[str] | None = None  # report.text / attachments: group 1 is the ID
    members: re.Pattern[str] | None = None  # attachments: which declared members are read


@dataclass(frozen=True, slots=True)
class EntityLookup:
    """How one entity type is read: the row of ``table`` whose ``column`` equals the ID."""

    entity_type: str
    table: str
    column: str
    columns: tuple[str, ...]
    name_column: str | None


@dataclass(frozen=True, slots=True)
class TextColumn:
    """A text column lifted into its own ``project_description`` fact."""

    table: str
    column: str
    role: str


@dataclass(frozen=True, slots=True)
class Filter:
    column: str
    operator: str
    value: Any


@dataclass(frozen=True, slots=True)
class Relationship:
    """From a returned column value to the next query.

    Either a database relationship (``table``/``column``/``columns``, or an
    ``entity_type`` whose lookup supplies them) or a source one
    (``source = "source.symbol"``: the value is searched as a symbol).
    """

    relation: str
    from_table: str
    from_column: str
    from_id_column: str
    entity_type: str | None
    table: str | None
    column: str | None
    columns: tuple[str, ...]
    filters: tuple[Filter, ...]
    source: str | None
    when_column: str | None
    when_value: Scalar
    has_when: bool
    ignore_values: tuple[Scalar, ...]


@dataclass(frozen=True, slots=True)
class EnrichmentProfile:
    name: str
    database: str | None
    limits: Limits
    extract: tuple[ExtractRule, ...]
    entities: Mapping[str, EntityLookup]
    texts: tuple[TextColumn, ...]
    relationships: tuple[Relationship, ...]
    ignore_values: tuple[Scalar, ...]
    sha256: str  # of the profile file's bytes: a resumed build must use the same profile

    def text_columns(self, table: str) -> dict[str, TextColumn]:
        return {text.column: text for text in self.texts if text.table == table}


DEFAULT_IGNORE: tuple[Scalar, ...] = (None, "", 0)


def load_profile(path: str | os.PathLike[str]) -> EnrichmentProfile:
    """Reads and checks a profile file; errors name the offending key."""
    data = read_regular_file(
        path,
        max_bytes=MAX_PROFILE_BYTES,
        what="the enrichment profile",
        refuse=profile_refused,
    )
    return parse_profile(data)


def profile_refused(reason: str, message: str, details: dict[str, Any]) -> EnrichmentError:
    """The error of a profile or enrichment profile file the ``files`` loader refuses.

    ``profile_unreadable`` when it cannot be read as a file (``reason``: the OS
    error class or ``not_a_regular_file``), else ``profile_invalid`` with the
    ``key`` at fault and, for a TOML syntax error, ``line`` and ``column``.
    """
    if reason in (UNREADABLE, NOT_A_REGULAR_FILE):
        why = details.get("kind", reason)
        return EnrichmentError("profile_unreadable", message, {"key": "", "reason": why})
    kept: dict[str, Any] = {"key": details.get("key", "")}
    kept.update((name, details[name]) for name in ("line", "column") if name in details)
    return EnrichmentError("profile_invalid", message, kept)


def parse_profile(data: bytes) -> EnrichmentProfile:
    if len(data) > MAX_PROFILE_BYTES:
        _invalid("", f"the profile is larger than {MAX_PROFILE_BYTES} bytes")
    document = parse_toml(data, schema=None, what="the profile", refuse=profile_refused)
    _known(
        document,
        {
            "format",
            "format_version",
            "profile",
            "database",
            "limits",
            "ignore_values",
            "extract",
            "entities",
            "texts",
            "relationships",
        },
        "",
    )
    if document.get("format") != PROFILE_FORMAT:
        _invalid("format", f'must be "{PROFILE_FORMAT}"')
    if document.get("format_version") != 1:
        _invalid("format_version", "must be 1")
    name = _name(document, "profile", "")
    database = _optional_identifier(document, "database", "")
    ignore = _scalars(document.get("ignore_values", list(DEFAULT_IGNORE)), "ignore_values")
    entities = _entities(_table(document.get("entities", {}), "entities"))
    profile = EnrichmentProfile(
        name=name,
        database=database,
        limits=_limits(_table(document.get("limits", {}), "limits")),
        extract=tuple(
            _extract_rule(item, f"extract[{i}]", entities)
            for i, item in enumerate(_array(document.get("extract", []), "extract"))
        ),
        entities=entities,
        texts=tuple(
            _text(item, f"texts[{i}]")
            for i, item in enumerate(_array(document.get("texts", []), "texts"))
        ),
        relationships=tuple(
            _relationship(item, f"relationships[{i}]", entities, ignore)
            for i, item in enumerate(_array(document.get("relationships", []), "relationships"))
        ),
        ignore_values=ignore,
        sha256=sha256_hex(data),
    )
    seen: set[tuple[str, str]] = set()
    for i, text in enumerate(profile.texts):
        if (text.table, text.column) in seen:
            _invalid(f"texts[{i}]", "the same table and column is listed twice")
        seen.add((text.table, text.column))
    return profile


def _limits(table: Mapping[str, Any]) -> Limits:
    defaults = Limits()
    fields = Limits.__dataclass_fields__
    _known(table, set(fields), "limits")
    values = {}
    for field in fields:
        value = table.get(field, getattr(defaults, field))
        if type(value) is not int or not 0 <= value <= 100_000:
            _invalid(f"limits.{field}", "must be an integer from 0 to 100000")
        values[field] = value
    if values["rows_per_query"] < 1 or values["symbol_hits"] < 1:
        _invalid("limits", "rows_per_query and symbol_hits must be at least 1")
    return Limits(**values)


def _entities(table: Mapping[str, Any]) -> dict[str, EntityLookup]:
    entities = {}
    for entity_type, value in table.items():
        prefix = f"entities.{entity_type}"
        if not _NAME.fullmatch(entity_type):
            _invalid(prefix, "an entity type is a lowercase name")
        item = _table(value, prefix)
        _known(item, {"table", "column", "columns", "name_column"}, prefix)
        columns = _identifiers(item, "columns", prefix)
        column = _identifier(item, "column", prefix)
        name_column = _optional_identifier(item, "name_column", prefix)
        if column not in columns or (name_column is not None and name_column not in columns):
            _invalid(f"{prefix}.columns", "must include column and name_column")
        entities[entity_type] = EntityLookup(
            entity_type, _identifier(item, "table", prefix), column, columns, name_column
        )
    return entities


def _extract_rule(value: Any, prefix: str, entities: Mapping[str, EntityLookup]) -> ExtractRule:
    item = _table(value, prefix)
    _known(item, {"entity_type", "in", "key", "pattern", "members"}, prefix)
    entity_type = _name(item, "entity_type", prefix)
    if entity_type not in entities:
        _invalid(f"{prefix}.entity_type", "has no [entities.<type>] lookup")
    place = item.get("in")
    if place not in EXTRACT_PLACES:
        _invalid(f"{prefix}.in", f"must be one of {sorted(EXTRACT_PLACES)}")
    if place == "report.metadata":
        _known(item, {"entity_type", "in", "key"}, prefix)
        key = item.get("key")
        if not isinstance(key, str) or not key or any(not p for p in key.split(".")):
            _invalid(f"{prefix}.key", "must be a dotted key path such as quest.id")
        return ExtractRule(entity_type, place, key=tuple(key.split(".")))
    pattern = _regex(item, "pattern", prefix)
    if pattern.groups < 1:
        _invalid(f"{prefix}.pattern", "needs one capturing group for the ID")
    members = None
    if place == "attachments":
        members = _regex(item, "members", prefix)
    elif "members" in item:
        _invalid(f"{prefix}.members", "only for in = 'attachments'")
    return ExtractRule(entity_type, place, pattern=pattern, members=members)


def _text(value: Any, prefix: str) -> TextColumn:
    item = _table(value, prefix)
    _known(item, {"table", "column", "role"}, prefix)
    return TextColumn(
        _identifier(item, "table", prefix),
        _identifier(item, "column", prefix),
        _name(item, "role", prefix),
    )


def _relationship(
    value: Any, prefix: str, entities: Mapping[str, EntityLookup], ignore: tuple[Scalar, ...]
) -> Relationship:
    item = _table(value, prefix)
    _known(
        item,
        {
            "relation",
            "from_table",
            "from_column",
            "from_id_column",
            "entity_type",
            "table",
            "column",
            "columns",
            "filters",
            "source",
            "when_column",
            "when_value",
            "ignore_values",
        },
        prefix,
    )
    entity_type = _name(item, "entity_type", prefix) if "entity_type" in item else None
    source = item.get("source")
    table = _optional_identifier(item, "table", prefix)
    column = _optional_identifier(item, "column", prefix)
    columns: tuple[str, ...] = _identifiers(item, "columns", prefix) if "columns" in item else ()
    filters: tuple[Filter, ...] = ()
    if source is not None:
        if source not in SOURCE_KINDS:
            _invalid(f"{prefix}.source", f"must be one of {sorted(SOURCE_KINDS)}")
        for key in ("table", "column", "columns", "filters"):
            if key in item:
                _invalid(f"{prefix}.{key}", "a source relationship queries no table")
    elif table is None:
        if entity_type is None or entity_type not in entities:
            _invalid(
                f"{prefix}.table", "needs table/column/columns or an entity_type with a lookup"
            )
        if column is not None or columns:
            _invalid(f"{prefix}.column", "comes from the entity lookup when table is not given")
    else:
        if column is None or not columns:
            _invalid(f"{prefix}.columns", "table needs column and columns")
        filters = tuple(
            _filter(f, f"{prefix}.filters[{i}]")
            for i, f in enumerate(_array(item.get("filters", []), f"{prefix}.filters"))
        )
    has_when = "when_column" in item or "when_value" in item
    if has_when and ("when_column" not in item or "when_value" not in item):
        _invalid(f"{prefix}.when_value", "when_column and when_value go together")
    when_value = _scalars([item["when_value"]], f"{prefix}.when_value")[0] if has_when else None
    return Relationship(
        relation=_name(item, "relation", prefix),
        from_table=_identifier(item, "from_table", prefix),
        from_column=_identifier(item, "from_column", prefix),
        from_id_column=_identifier(item, "from_id_column", prefix),
        entity_type=entity_type,
        table=table,
        column=column,
        columns=columns,
        filters=filters,
        source=source,
        when_column=_optional_identifier(item, "when_column", prefix),
        when_value=when_value,
        has_when=has_when,
        ignore_values=(
            _scalars(item["ignore_values"], f"{prefix}.ignore_values")
            if "ignore_values" in item
            else ignore
        ),
    )


def _filter(value: Any, prefix: str) -> Filter:
    item = _table(value, prefix)
    _known(item, {"column", "operator", "value"}, prefix)
    operator = item.get("operator")
    if operator not in OPERATORS:
        _invalid(f"{prefix}.operator", f"must be one of {sorted(OPERATORS)}")
    if "value" not in item:
        _invalid(f"{prefix}.value", "is required")
    return Filter(_identifier(item, "column", prefix), str(operator), item["value"])


# -- small readers ---------------------------------------------------------------------


def _table(value: Any, key: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        _invalid(key, "must be a table")
    return value


def _array(value: Any, key: str) -> list[Any]:
    if not isinstance(value, list):
        _invalid(key, "must be an array")
    return value


def _known(table: Mapping[str, Any], known: set[str], prefix: str) -> None:
    for key in table:
        if key not in known:
            if not looks_like_field(key):
                # A name that is no key name may be content: placed, not echoed
                # (the rule of the one schema-error mapper).
                _invalid(prefix, "has a key that is not known")
            _invalid(f"{prefix}.{key}" if prefix else key, "is not a known key")


def _identifier(table: Mapping[str, Any], key: str, prefix: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value):
        _invalid(f"{prefix}.{key}" if prefix else key, "must be a table or column identifier")
    return value


def _optional_identifier(table: Mapping[str, Any], key: str, prefix: str) -> str | None:
    return _identifier(table, key, prefix) if key in table else None


def _identifiers(table: Mapping[str, Any], key: str, prefix: str) -> tuple[str, ...]:
    value = table.get(key)
    full = f"{prefix}.{key}"
    if not isinstance(value, list) or not value or len(value) > 64:
        _invalid(full, "must be a list of 1-64 column identifiers")
    for item in value:
        if not isinstance(item, str) or not _IDENTIFIER.fullmatch(item):
            _invalid(full, "must be a list of 1-64 column identifiers")
    if len(set(value)) != len(value):
        _invalid(full, "lists a column twice")
    return tuple(value)


def _name(table: Mapping[str, Any], key: str, prefix: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        _invalid(f"{prefix}.{key}" if prefix else key, "must be a lowercase name ([a-z][a-z0-9_]*)")
    return value


def _regex(table: Mapping[str, Any], key: str, prefix: str) -> re.Pattern[str]:
    value = table.get(key)
    if not isinstance(value, str) or not value or len(value) > 512:
        _invalid(f"{prefix}.{key}", "must be a regular expression of 1-512 characters")
    try:
        return re.compile(value)
    except re.error:
        _invalid(f"{prefix}.{key}", "is not a valid regular expression")


def _scalars(value: Any, key: str) -> tuple[Scalar, ...]:
    """TOML has no null: the string "null" in a value list stands for SQL NULL."""
    if not isinstance(value, list):
        _invalid(key, "must be an array")
    out: list[Scalar] = []
    for item in value:
        if item == "null" or item is None:
            out.append(None)
        elif isinstance(item, str | int) and not isinstance(item, float):
            out.append(item)
        else:
            _invalid(key, "holds only strings, integers, booleans or the string 'null'")
    return tuple(out)


def _invalid(key: str, problem: str) -> NoReturn:
    where = key or "the profile"
    raise EnrichmentError("profile_invalid", f"{where}: {problem}", {"key": key})


__all__ = [
    "DEFAULT_IGNORE",
    "EnrichmentProfile",
    "EntityLookup",
    "ExtractRule",
    "Filter",
    "Limits",
    "Relationship",
    "TextColumn",
    "load_profile",
    "parse_profile",
]
