"""The enrichment profile: what a CaseBuilder looks up, written by an operator in TOML.

A profile names which report fields and attachment lines mention entity IDs,
how each entity type is looked up, which text columns become separate
description facts, and the reference map: which columns hold which
entity's IDs, followed both ways. Generic code holds no table, column or ID of any game; a profile
such as ``profiles/vcore/enrichment.toml`` holds all of them. See
docs/case-enrichment.md.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from viano_bug_analysis import vocabulary
from viano_bug_analysis.errors import EnrichmentError
from viano_bug_analysis.files import (
    NOT_A_REGULAR_FILE,
    UNREADABLE,
    check_config,
    parse_toml,
    read_regular_file,
)
from viano_bug_analysis.jsonio import sha256_hex

if TYPE_CHECKING:
    from viano_bug_analysis.enrichment.rules import Rule, ScriptLayout

PROFILE_FORMAT = "viano-enrichment-profile"
SCHEMA = "enrichment-profile-v1"
MAX_PROFILE_BYTES = 1024 * 1024
OPERATORS = frozenset(vocabulary.FILTER_OPERATORS)

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
    # Untyped IDs or names asked in one IN list (ProjectResearch takes at most 100).
    candidates_per_query: int = 100
    # IN lists per table column: candidates past batches * candidates_per_query are dropped.
    candidate_batches: int = 3
    # An exact name with at most this many entities is followed like a mention.
    name_fanout: int = 3
    max_leads: int = 20
    # Reverse references asked for one mentioned entity, in profile order.
    reverse_per_entity: int = 64
    # Queries the consistency rules and the script-file candidates may add (of max_queries).
    rule_queries: int = 48
    script_file_queries: int = 16
    # Queries of max_queries kept from the reference map for the build phases that ask
    # (at most what their own bounds let them ask); None: at most a quarter of max_queries.
    phase_reserve: int | None = None

    def reserve_cap(self) -> int:
        """The most the reference map leaves to the build phases, whatever they want."""
        cap = self.max_queries // 4 if self.phase_reserve is None else self.phase_reserve
        return max(0, min(cap, self.max_queries))


@dataclass(frozen=True, slots=True)
class ExtractRule:
    """Where the case inputs name an entity ID."""

    entity_type: str
    place: str  # report.metadata, report.text or attachments (the schema's enum)
    key: tuple[str, ...] = ()  # report.metadata: the path of keys
    pattern: re.Pattern[str] | None = None  # report.text / attachments: group 1 is the ID
    members: re.Pattern[str] | None = None  # attachments: which declared members are read
    list_ids: bool = False  # report.text: IDs listed after the match ("NPC 1, 2 and 3") count


@dataclass(frozen=True, slots=True)
class NameRule:
    """Where the report text names an entity only by name (group 1 of ``pattern``)."""

    entity_types: tuple[str, ...]
    pattern: re.Pattern[str]
    min_chars: int = 4


@dataclass(frozen=True, slots=True)
class Command:
    """A GM command whose argument is an entity ID (``.quest add 14395``)."""

    words: tuple[str, ...]  # lowercase; each may be abbreviated as the server allows
    entity_type: str
    skip: tuple[str, ...] = ()  # option words before the argument (``.cast self N``)
    takes_name: bool = False  # a ``[name]`` argument is a name of entity_type


@dataclass(frozen=True, slots=True)
class UntypedRule:
    """Where the report gives an ID without saying of what (group 1 of ``pattern``)."""

    pattern: re.Pattern[str]
    entity_types: tuple[str, ...]
    not_after: re.Pattern[str] | None = None  # tested on the 48 characters before the match
    after: re.Pattern[str] | None = None  # must match there (a name beside the number)
    list_ids: bool = False  # the IDs listed after the match are candidates too


@dataclass(frozen=True, slots=True)
class NameColumn:
    """A column that holds names of an entity type, and the column of its ID."""

    entity_type: str
    table: str
    id_column: str
    column: str


@dataclass(frozen=True, slots=True)
class NamePhrases:
    """Which phrases of running text are asked as names (``[mentions.names]``)."""

    entity_types: tuple[str, ...]
    min_chars: int = 4
    max_words: int = 6
    connectors: frozenset[str] = frozenset()
    after_words: frozenset[str] = frozenset()  # casefolded type words a name follows


@dataclass(frozen=True, slots=True)
class MentionRules:
    """``[mentions]``: links, chat links, commands, untyped IDs and names in the report."""

    list_separator: re.Pattern[str] | None = None
    ignore_numbers: re.Pattern[str] | None = None
    not_before: re.Pattern[str] | None = None  # after an ID's digits: a unit ("10 yards")
    site_types: Mapping[str, str] = dataclasses.field(default_factory=dict)
    sites: tuple[tuple[str, re.Pattern[str]], ...] = ()
    chat_links: Mapping[str, str] = dataclasses.field(default_factory=dict)
    command_prefixes: str = "."
    commands: tuple[Command, ...] = ()
    # The server's other command paths: an abbreviation must be unique among them too.
    other_commands: tuple[tuple[str, ...], ...] = ()
    untyped: tuple[UntypedRule, ...] = ()
    names: NamePhrases | None = None
    name_tables: tuple[NameColumn, ...] = ()


@dataclass(frozen=True, slots=True)
class EntityLookup:
    """How one entity type is read: the row of ``table`` whose ``column`` equals the ID.

    ``table`` is None for a type that has no table of its own; its IDs only
    reach the references that hold them.
    """

    entity_type: str
    table: str | None
    column: str
    columns: tuple[str, ...]
    name_column: str | None
    constant_prefixes: tuple[str, ...] = ()
    constant_path_prefix: str | None = None
    # Where an ID of a type without a table of its own exists (item_script_names.Id).
    exists_in: tuple[tuple[str, str], ...] = ()

    def id_tables(self) -> tuple[tuple[str, str], ...]:
        """The (table, column) pairs in which an ID of this type is known to exist."""
        own = ((self.table, self.column),) if self.table is not None else ()
        return own + self.exists_in


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
class TableSpec:
    """A table a reference lookup reads that is no entity's own table."""

    columns: tuple[str, ...]
    key: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Reference:
    """One entry of the reference map: ``table.column`` holds an ID of ``holds``
    (or, with ``symbol``, a source symbol) in the rows matching ``when``.

    The one source of both directions: forward from a row read to the entity
    it names, reverse from an entity to the rows naming it.
    """

    name: str
    table: str
    column: str
    holds: str | None  # None for a symbol reference
    when: tuple[Filter, ...] = ()
    negative: str | None = None  # the type a negative value's magnitude is an ID of
    negative_means: str | None = None
    part_of: bool = False
    expected: bool = False
    symbol: bool = False
    ignore_values: tuple[Scalar, ...] = ()
    separated_by: str | None = None  # a list column ("123 456"): each item is an ID

    def types(self) -> tuple[str, ...]:
        """The entity types an ID in this column can be (a sign may pick the second)."""
        held = () if self.holds is None else (self.holds,)
        return held + ((self.negative,) if self.negative not in (None, self.holds) else ())


@dataclass(frozen=True, slots=True)
class EnrichmentProfile:
    name: str
    database: str | None
    limits: Limits
    extract: tuple[ExtractRule, ...]
    entities: Mapping[str, EntityLookup]
    texts: tuple[TextColumn, ...]
    tables: Mapping[str, TableSpec]
    references: tuple[Reference, ...]
    ignore_values: tuple[Scalar, ...]
    sha256: str  # of the profile file's bytes: a resumed build must use the same profile
    # (table, column) -> the names that column has in other schema eras
    column_alternatives: Mapping[tuple[str, str], tuple[str, ...]] = dataclasses.field(
        default_factory=dict
    )
    names: tuple[NameRule, ...] = ()
    mentions: MentionRules = dataclasses.field(default_factory=MentionRules)
    rules: tuple[Rule, ...] = ()
    scripts: ScriptLayout | None = None

    def name_columns(self) -> tuple[NameColumn, ...]:
        """Every column a name is asked in: the entities' name columns, then name_tables."""
        own = tuple(
            NameColumn(e.entity_type, e.table, e.column, e.name_column)
            for e in self.entities.values()
            if e.table is not None and e.name_column is not None
        )
        return own + self.mentions.name_tables

    def in_database(self, database: str | None) -> EnrichmentProfile:
        """The profile with its queries sent to ``database`` (None: ProjectResearch picks)."""
        return dataclasses.replace(self, database=database)

    def columns_of(self, table: str) -> tuple[str, ...]:
        """The columns read of ``table``: its entity's, or its [tables] entry's."""
        for entity in self.entities.values():
            if entity.table == table:
                return entity.columns
        return self.tables[table].columns

    def key_of(self, table: str) -> tuple[str, ...]:
        """The columns identifying one row of ``table``."""
        for entity in self.entities.values():
            if entity.table == table:
                return (entity.column,)
        return self.tables[table].key

    def text_columns(self, table: str) -> dict[str, TextColumn]:
        return {text.column: text for text in self.texts if text.table == table}

    def with_columns(self, chosen: Mapping[tuple[str, str], str]) -> EnrichmentProfile:
        """The profile with each (table, column) of ``chosen`` renamed, everywhere it is used.

        ``chosen`` comes from the live schema (``profile_check.resolved_columns``);
        the file and its sha256 stay the same, so the same database resolves
        the same way on a resumed build.
        """
        if not chosen:
            return self

        def name(table: str | None, column: str | None) -> Any:
            return chosen.get((table, column), column) if table and column else column

        entities = {
            key: dataclasses.replace(
                e,
                column=name(e.table, e.column),
                columns=tuple(name(e.table, c) for c in e.columns),
                name_column=name(e.table, e.name_column),
                exists_in=tuple((t, name(t, c)) for t, c in e.exists_in),
            )
            for key, e in self.entities.items()
        }
        name_tables = tuple(
            dataclasses.replace(
                n, id_column=name(n.table, n.id_column), column=name(n.table, n.column)
            )
            for n in self.mentions.name_tables
        )
        tables = {
            table: TableSpec(
                tuple(name(table, c) for c in t.columns), tuple(name(table, c) for c in t.key)
            )
            for table, t in self.tables.items()
        }
        references = tuple(
            dataclasses.replace(
                r,
                column=name(r.table, r.column),
                when=tuple(dataclasses.replace(f, column=name(r.table, f.column)) for f in r.when),
            )
            for r in self.references
        )
        texts = tuple(dataclasses.replace(t, column=name(t.table, t.column)) for t in self.texts)
        from viano_bug_analysis.enrichment.rules import renamed

        return dataclasses.replace(
            self,
            rules=tuple(renamed(rule, name) for rule in self.rules),
            entities=entities,
            tables=tables,
            references=references,
            texts=texts,
            mentions=dataclasses.replace(self.mentions, name_tables=name_tables),
        )


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
    """The profile in ``data``: the ``enrichment-profile-v1`` schema, then what it cannot say."""
    if len(data) > MAX_PROFILE_BYTES:
        _invalid("", f"the profile is larger than {MAX_PROFILE_BYTES} bytes")
    document = parse_toml(data, schema=None, what="the profile", refuse=profile_refused)
    # Which document this is comes first: a profile of another format or
    # version is told so, not about the keys it lacks for this one.
    if document.get("format") != PROFILE_FORMAT:
        _invalid("format", f'must be "{PROFILE_FORMAT}"')
    if document.get("format_version") != 1:
        _invalid("format_version", "must be 1")
    if "relationships" in document:
        _invalid(
            "relationships",
            "[[relationships]] was replaced by the reference map [[references]] and "
            "[tables.<name>] (docs/case-enrichment.md)",
        )
    check_config(document, schema=SCHEMA, what="the profile", refuse=profile_refused)
    ignore = _scalars(document.get("ignore_values", list(DEFAULT_IGNORE)))
    entities = {
        entity_type: _entity(entity_type, item)
        for entity_type, item in document.get("entities", {}).items()
    }
    tables = _tables(document, entities)
    texts = tuple(TextColumn(t["table"], t["column"], t["role"]) for t in document.get("texts", []))
    seen: set[tuple[str, str]] = set()
    for i, text in enumerate(texts):
        if (text.table, text.column) in seen:
            _invalid(f"texts[{i}]", "the same table and column is listed twice")
        seen.add((text.table, text.column))
    profile = EnrichmentProfile(
        name=document["profile"],
        database=document.get("database"),
        limits=Limits(**document.get("limits", {})),
        extract=tuple(
            _extract_rule(item, f"extract[{i}]", entities)
            for i, item in enumerate(document.get("extract", []))
        ),
        entities=entities,
        texts=texts,
        tables=tables,
        references=_references(document, entities, tables, ignore),
        ignore_values=ignore,
        sha256=sha256_hex(data),
        names=tuple(
            _name_rule(item, f"names[{i}]", entities)
            for i, item in enumerate(document.get("names", []))
        ),
        mentions=_mention_rules(document.get("mentions", {}), entities),
        column_alternatives={
            tuple(key.split(".", 1)): tuple(names)
            for key, names in document.get("column_alternatives", {}).items()
        },
    )
    # Rules name the map's tables and entries, so they are read after it.
    from viano_bug_analysis.enrichment.rules import parse_rules, parse_scripts

    return dataclasses.replace(
        profile,
        rules=parse_rules(document.get("rules", []), profile),
        scripts=parse_scripts(document.get("scripts"), profile),
    )


# The schema has checked every key, type and form; what follows are the
# checks it cannot state: references between tables and regular expressions.


def _entity(entity_type: str, item: Mapping[str, Any]) -> EntityLookup:
    prefixes = tuple(item.get("constant_prefixes", ()))
    path_prefix = item.get("constant_path_prefix")
    exists_in = tuple((e["table"], e["column"]) for e in item.get("exists_in", ()))
    if "table" not in item:
        return EntityLookup(entity_type, None, "", (), None, prefixes, path_prefix, exists_in)
    columns = tuple(item["columns"])
    column, name_column = item["column"], item.get("name_column")
    if column not in columns or (name_column is not None and name_column not in columns):
        _invalid(f"entities.{entity_type}.columns", "must include column and name_column")
    return EntityLookup(
        entity_type, item["table"], column, columns, name_column, prefixes, path_prefix, exists_in
    )


def _extract_rule(
    item: Mapping[str, Any], prefix: str, entities: Mapping[str, EntityLookup]
) -> ExtractRule:
    entity_type, place = item["entity_type"], item["in"]
    if entity_type not in entities:
        _invalid(f"{prefix}.entity_type", "has no [entities.<type>] lookup")
    if place == "report.metadata":
        return ExtractRule(entity_type, place, key=tuple(item["key"].split(".")))
    pattern = _regex(item["pattern"], f"{prefix}.pattern")
    if pattern.groups < 1:
        _invalid(f"{prefix}.pattern", "needs one capturing group for the ID")
    members = _regex(item["members"], f"{prefix}.members") if "members" in item else None
    return ExtractRule(
        entity_type, place, pattern=pattern, members=members, list_ids=item.get("list", False)
    )


def _mention_rules(item: Mapping[str, Any], entities: Mapping[str, EntityLookup]) -> MentionRules:
    """``[mentions]``; every entity type named must have an ``[entities.<type>]`` lookup.

    In ``site_types`` and ``chat_links`` an empty string stands for a type the
    profile has no entity for (an achievement): such a link stays an
    unresolved mention, never a guess.
    """

    def known(entity_type: str, key: str, *, empty: bool = False) -> str:
        if (empty and entity_type == "") or entity_type in entities:
            return entity_type
        _invalid(key, f"{entity_type} has no [entities.<type>] lookup")

    def pattern(key: str) -> re.Pattern[str] | None:
        return _regex(item[key], f"mentions.{key}") if key in item else None

    site_types = {
        word.lower(): known(t, f"mentions.site_types.{word}", empty=True)
        for word, t in item.get("site_types", {}).items()
    }
    chat_links = {
        word.lower(): known(t, f"mentions.chat_links.{word}", empty=True)
        for word, t in item.get("chat_links", {}).items()
    }
    sites = tuple(
        (site["name"], _regex(site["hosts"], f"mentions.sites[{i}].hosts"))
        for i, site in enumerate(item.get("sites", []))
    )
    commands = tuple(
        Command(
            tuple(c["command"].lower().split()),
            known(c["entity_type"], f"mentions.commands[{i}].entity_type"),
            tuple(w.lower() for w in c.get("skip", ())),
            c.get("takes_name", False),
        )
        for i, c in enumerate(item.get("commands", []))
    )
    untyped: list[UntypedRule] = []
    for i, rule in enumerate(item.get("untyped", [])):
        key = f"mentions.untyped[{i}]"
        for t in rule["entity_types"]:
            entity = entities.get(known(t, f"{key}.entity_types"))
            if entity is not None and not entity.id_tables():
                _invalid(f"{key}.entity_types", f"{t} has no table and no exists_in to look in")
        compiled = _regex(rule["pattern"], f"{key}.pattern")
        if compiled.groups < 1:
            _invalid(f"{key}.pattern", "needs one capturing group for the ID")
        before = {
            name: _regex(rule[name], f"{key}.{name}") if name in rule else None
            for name in ("not_after", "after")
        }
        untyped.append(
            UntypedRule(
                compiled, tuple(rule["entity_types"]), **before, list_ids=rule.get("list", False)
            )
        )
    names = item.get("names")
    phrases = None
    if names is not None:
        for t in names["entity_types"]:
            known(t, "mentions.names.entity_types")
        phrases = NamePhrases(
            tuple(names["entity_types"]),
            names.get("min_chars", 4),
            names.get("max_words", 6),
            frozenset(w.lower() for w in names.get("connectors", ())),
            frozenset(w.casefold() for w in names.get("after_words", ())),
        )
    name_tables = tuple(
        NameColumn(
            known(n["entity_type"], f"mentions.name_tables[{i}].entity_type"),
            n["table"],
            n["id_column"],
            n["column"],
        )
        for i, n in enumerate(item.get("name_tables", []))
    )
    return MentionRules(
        list_separator=pattern("list_separator"),
        ignore_numbers=pattern("ignore_numbers"),
        not_before=pattern("not_before"),
        site_types=site_types,
        sites=sites,
        chat_links=chat_links,
        command_prefixes=item.get("command_prefixes", "."),
        commands=commands,
        other_commands=tuple(tuple(c.lower().split()) for c in item.get("other_commands", ())),
        untyped=tuple(untyped),
        names=phrases,
        name_tables=name_tables,
    )


def _name_rule(
    item: Mapping[str, Any], prefix: str, entities: Mapping[str, EntityLookup]
) -> NameRule:
    for entity_type in item["entity_types"]:
        entity = entities.get(entity_type)
        if entity is None or entity.table is None or entity.name_column is None:
            _invalid(f"{prefix}.entity_types", f"{entity_type} has no table with a name_column")
    pattern = _regex(item["pattern"], f"{prefix}.pattern")
    if pattern.groups < 1:
        _invalid(f"{prefix}.pattern", "needs one capturing group for the name")
    return NameRule(tuple(item["entity_types"]), pattern, item.get("min_chars", 4))


def _tables(
    document: Mapping[str, Any], entities: Mapping[str, EntityLookup]
) -> dict[str, TableSpec]:
    own = {e.table for e in entities.values() if e.table is not None}
    tables: dict[str, TableSpec] = {}
    for table, item in document.get("tables", {}).items():
        if table in own:
            _invalid(f"tables.{table}", "is an entity's own table: its columns are the entity's")
        columns = tuple(item["columns"])
        key = tuple(item.get("key", columns))
        if not set(key) <= set(columns):
            _invalid(f"tables.{table}.key", "must be columns of the table")
        tables[table] = TableSpec(columns, key)
    return tables


def _references(
    document: Mapping[str, Any],
    entities: Mapping[str, EntityLookup],
    tables: Mapping[str, TableSpec],
    ignore: tuple[Scalar, ...],
) -> tuple[Reference, ...]:
    own = {e.table: e.columns for e in entities.values() if e.table is not None}
    names: set[str] = set()
    references: list[Reference] = []
    for i, item in enumerate(document.get("references", [])):
        key = f"references[{i}]"
        if item["name"] in names:
            _invalid(f"{key}.name", f"{item['name']} names another entry already")
        names.add(item["name"])
        table = item["table"]
        columns = own.get(table) or (tables[table].columns if table in tables else None)
        if columns is None:
            _invalid(f"{key}.table", f"{table} is neither an entity's table nor in [tables]")
        when = tuple(Filter(f["column"], f["operator"], f["value"]) for f in item.get("when", []))
        for j, column in enumerate([item["column"], *(f.column for f in when)]):
            if column not in columns:
                where = f"{key}.column" if j == 0 else f"{key}.when[{j - 1}].column"
                _invalid(where, f"{column} is not among the columns read of {table}")
        symbol = item.get("symbol", False)
        if symbol == ("holds" in item):
            _invalid(f"{key}.holds", "give exactly one of holds (an entity type) and symbol")
        if symbol and ("negative" in item or "separated_by" in item):
            _invalid(f"{key}.symbol", "a symbol reference has no negative and no separated_by")
        for type_key in ("holds", "negative"):
            held = item.get(type_key)
            if held is not None and held not in entities:
                _invalid(f"{key}.{type_key}", f"{held} has no [entities.<type>] lookup")
        references.append(
            Reference(
                name=item["name"],
                table=table,
                column=item["column"],
                holds=item.get("holds"),
                when=when,
                negative=item.get("negative"),
                negative_means=item.get("negative_means"),
                part_of=item.get("part_of", False),
                expected=item.get("expected", False),
                symbol=symbol,
                ignore_values=(
                    _scalars(item["ignore_values"]) if "ignore_values" in item else ignore
                ),
                separated_by=item.get("separated_by"),
            )
        )
    return tuple(references)


def _regex(value: str, key: str) -> re.Pattern[str]:
    try:
        return re.compile(value)
    except re.error:
        _invalid(key, "is not a valid regular expression")


def _scalars(values: list[Scalar]) -> tuple[Scalar, ...]:
    """TOML has no null: the string "null" in a value list stands for SQL NULL."""
    return tuple(None if value == "null" else value for value in values)


def _invalid(key: str, problem: str) -> NoReturn:
    where = key or "the profile"
    raise EnrichmentError("profile_invalid", f"{where}: {problem}", {"key": key})


__all__ = [
    "DEFAULT_IGNORE",
    "Command",
    "EnrichmentProfile",
    "EntityLookup",
    "ExtractRule",
    "Filter",
    "Limits",
    "MentionRules",
    "NameColumn",
    "NamePhrases",
    "NameRule",
    "Reference",
    "TableSpec",
    "TextColumn",
    "UntypedRule",
    "load_profile",
    "parse_profile",
]
