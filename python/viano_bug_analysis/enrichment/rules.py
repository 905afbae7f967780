"""Consistency rules of the profile (``[[rules]]``) and the source layout they read (``[scripts]``).

A rule names the rows it reads (``table``, or the map entries of
``references``), a condition on each row (``when``) and one check:

- ``match``: the row matching ``when`` is the finding;
- ``rows`` / ``no_rows``: targeted lookups from the row's values (``lookups``)
  must (must not) find a row;
- ``exists``: the entity each map entry names in the row has a row of its own;
- ``registered``: the symbol each map entry names is registered by a script
  of the source (``[scripts].names``);
- ``added``: a script class of that name defined in the source is also added
  (``[scripts].added``).

``kind = "engine"`` is a check the engine itself makes when it loads the world
database; its ``anchor`` (a file and a literal fragment of the check's log
message) is resolved to the line at the pinned commit. ``kind = "heuristic"``
is a pattern that often means a bug and that the engine does not reject.
Generic code holds no table or column: a profile holds all of them
(docs/consistency-rules.md).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from viano_bug_analysis import vocabulary
from viano_bug_analysis.errors import EnrichmentError

if TYPE_CHECKING:
    from viano_bug_analysis.enrichment.profile import EnrichmentProfile, Filter, Reference

MASK_OPERATORS = vocabulary.MASK_OPERATORS
CHECKS = ("match", "rows", "no_rows", "exists", "registered", "added")
_REFERENCE_CHECKS = ("exists", "registered", "added")
_NAME = "{name}"


@dataclass(frozen=True, slots=True)
class Condition:
    """A comparison made on a row already read (the filter operators and bit masks)."""

    column: str
    operator: str
    value: Any

    def holds(self, row: Mapping[str, Any]) -> bool:
        if self.column not in row:
            return False
        value = row[self.column]
        if self.operator in MASK_OPERATORS:
            if type(value) is not int:
                return False
            common = value & int(self.value)
            if self.operator == "mask_any":
                return common != 0
            if self.operator == "mask_all":
                return common == int(self.value)
            return common == 0
        return _compare(self.operator, value, self.value)


@dataclass(frozen=True, slots=True)
class Lookup:
    """The rows of ``table`` whose ``column`` equals the rule row's ``value_of`` column.

    ``filters`` are sent with the query (as a map entry's ``when`` is, so the
    build's own reverse lookup is the same query and costs nothing again);
    ``when`` is checked on the rows returned.
    """

    table: str
    column: str
    value_of: str
    filters: tuple[Filter, ...] = ()
    when: tuple[Condition, ...] = ()


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where the engine makes the check: a file and a literal of its log message."""

    path: str
    text: str


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    kind: str  # "engine" | "heuristic"
    statement: str
    check: str
    tables: tuple[str, ...]  # the tables whose rows read the rule looks at
    when: tuple[Condition, ...] = ()
    lookups: tuple[Lookup, ...] = ()
    references: tuple[str, ...] = ()  # map entry names (resolved on the profile in use)
    types: tuple[str, ...] = ()  # exists: only IDs of these types (all when empty)
    entity_type: str | None = None  # whom a hit on a row is about (default: the table's entity)
    entity_column: str | None = None
    anchor: Anchor | None = None


@dataclass(frozen=True, slots=True)
class ScriptLayout:
    """How scripts of the source register names (``[scripts]``).

    Each pattern is a regular expression with ``{name}`` where the script's
    name stands; the name is inserted escaped, so a pattern stays as linear
    as it is written.
    """

    path_prefix: str
    names: tuple[str, ...]
    added: tuple[str, ...]
    defined: str
    kinds: tuple[str, ...] = ()
    zones: tuple[ZoneSpawns, ...] = ()
    max_subjects: int = 6

    def registers(self, text: str, name: str) -> bool:
        """A line that registers ``name`` as a script (any of ``names``)."""
        return any(_with(p, re.escape(name)).search(text) for p in self.names)

    def adds(self, text: str, name: str) -> bool:
        """A line that adds the class ``name`` (any of ``added``)."""
        return any(_with(p, re.escape(name)).search(text) for p in self.added)

    def defines(self, text: str, name: str) -> bool:
        return _with(self.defined, re.escape(name)).search(text) is not None

    def registered_with_prefix(self, text: str, prefix: str) -> str | None:
        """The name of a script starting with ``prefix`` that this line registers."""
        name = re.escape(prefix) + "[A-Za-z0-9_]*"
        for pattern in self.names:
            found = _with(pattern, f"(?P<script>{name})").search(text)
            if found is not None:
                return found.group("script")
        return None

    def kind_of(self, name: str) -> str | None:
        """The longest kind prefix ``name`` starts with (``spell_item_``)."""
        fitting = [k for k in self.kinds if name.startswith(k) and len(name) > len(k)]
        return max(fitting, key=len) if fitting else None


@dataclass(frozen=True, slots=True)
class ZoneSpawns:
    """Spawn rows that say in which zone an entity stands, and where its script name is."""

    table: str
    zone_column: str
    entry_column: str
    entity_type: str
    script_column: str


def parse_rules(items: Sequence[Mapping[str, Any]], profile: EnrichmentProfile) -> tuple[Rule, ...]:
    """The ``[[rules]]`` of a profile whose map is parsed; the schema has checked the forms."""
    seen: set[str] = set()
    rules: list[Rule] = []
    for i, item in enumerate(items):
        key = f"rules[{i}]"
        if item["id"] in seen:
            _invalid(f"{key}.id", f"{item['id']} names another rule already")
        seen.add(item["id"])
        rules.append(_rule(item, key, profile))
    return tuple(rules)


def parse_scripts(
    item: Mapping[str, Any] | None, profile: EnrichmentProfile
) -> ScriptLayout | None:
    if item is None:
        return None
    patterns = [*item["names"], *item["added"], item["defined"]]
    for j, pattern in enumerate(patterns):
        if _NAME not in pattern:
            _invalid("scripts", f"pattern {j + 1} has no {_NAME}")
        try:
            _with(pattern, "x")
        except re.error:
            _invalid("scripts", f"pattern {j + 1} is not a valid regular expression")
    zones: list[ZoneSpawns] = []
    for j, zone in enumerate(item.get("zones", [])):
        where = f"scripts.zones[{j}]"
        entity = profile.entities.get(zone["entity_type"])
        if entity is None or entity.table is None:
            _invalid(f"{where}.entity_type", f"{zone['entity_type']} has no table of its own")
        if zone["script_column"] not in entity.columns:
            _invalid(f"{where}.script_column", f"is not among the columns read of {entity.table}")
        _columns(profile, zone["table"], (zone["zone_column"], zone["entry_column"]), where)
        zones.append(
            ZoneSpawns(
                zone["table"],
                zone["zone_column"],
                zone["entry_column"],
                zone["entity_type"],
                zone["script_column"],
            )
        )
    return ScriptLayout(
        path_prefix=item["path_prefix"],
        names=tuple(item["names"]),
        added=tuple(item["added"]),
        defined=item["defined"],
        kinds=tuple(item.get("kinds", ())),
        zones=tuple(zones),
        max_subjects=item.get("max_subjects", 6),
    )


def _rule(item: Mapping[str, Any], key: str, profile: EnrichmentProfile) -> Rule:
    from viano_bug_analysis.enrichment.profile import Filter

    check, kind = item["check"], item["kind"]
    if kind == "engine" and "anchor" not in item:
        _invalid(f"{key}.anchor", "an engine check names where the engine makes it")
    if check in _REFERENCE_CHECKS:
        if "references" not in item or "table" in item:
            _invalid(key, f"check {check} reads the rows of references, not of a table")
        by_name = {r.name: r for r in profile.references}
        refs: list[Reference] = []
        for j, name in enumerate(item["references"]):
            ref = by_name.get(name)
            if ref is None:
                _invalid(f"{key}.references[{j}]", f"{name} is no [[references]] entry")
            if (check == "exists") == ref.symbol:
                wanted = "an ID" if check == "exists" else "a symbol"
                _invalid(f"{key}.references[{j}]", f"{name} does not hold {wanted}")
            refs.append(ref)
        tables = tuple(dict.fromkeys(r.table for r in refs))
    else:
        if "table" not in item or "references" in item:
            _invalid(key, f"check {check} reads the rows of one table")
        refs, tables = [], (item["table"],)
    for type_name in item.get("types", ()):
        if type_name not in profile.entities:
            _invalid(f"{key}.types", f"{type_name} has no [entities.<type>] lookup")
    when = _conditions(item.get("when", []), f"{key}.when")
    for table in tables:
        _columns(profile, table, [c.column for c in when], f"{key}.when")
    lookups: list[Lookup] = []
    for j, lookup in enumerate(item.get("lookups", [])):
        where = f"{key}.lookups[{j}]"
        filters = tuple(
            Filter(f["column"], f["operator"], f["value"]) for f in lookup.get("filters", [])
        )
        checked = _conditions(lookup.get("when", []), f"{where}.when")
        _columns(
            profile,
            lookup["table"],
            [lookup["column"], *(f.column for f in filters), *(c.column for c in checked)],
            where,
        )
        _columns(profile, tables[0], [lookup["from"]], f"{where}.from")
        lookups.append(Lookup(lookup["table"], lookup["column"], lookup["from"], filters, checked))
    if (check in ("rows", "no_rows")) != bool(lookups):
        _invalid(
            f"{key}.lookups", f"check {check} {'needs' if not lookups else 'takes no'} lookups"
        )
    entity_type, entity_column = item.get("entity_type"), item.get("entity_column")
    if entity_type is not None and entity_type not in profile.entities:
        _invalid(f"{key}.entity_type", f"{entity_type} has no [entities.<type>] lookup")
    if entity_column is not None:
        _columns(profile, tables[0], [entity_column], f"{key}.entity_column")
    anchor = item.get("anchor")
    return Rule(
        id=item["id"],
        kind=kind,
        statement=item["statement"],
        check=check,
        tables=tables,
        when=when,
        lookups=tuple(lookups),
        references=tuple(r.name for r in refs),
        types=tuple(item.get("types", ())),
        entity_type=entity_type,
        entity_column=entity_column,
        anchor=None if anchor is None else Anchor(anchor["path"], anchor["text"]),
    )


def renamed(rule: Rule, name: Callable[[str, str], str]) -> Rule:
    """``rule`` with each (table, column) renamed by ``name`` (the live schema's era)."""
    from viano_bug_analysis.enrichment.profile import Filter

    def conditions(table: str, items: tuple[Condition, ...]) -> tuple[Condition, ...]:
        return tuple(Condition(name(table, c.column), c.operator, c.value) for c in items)

    first = rule.tables[0]
    lookups = tuple(
        Lookup(
            lk.table,
            name(lk.table, lk.column),
            name(first, lk.value_of),
            tuple(Filter(name(lk.table, f.column), f.operator, f.value) for f in lk.filters),
            conditions(lk.table, lk.when),
        )
        for lk in rule.lookups
    )
    entity_column = None if rule.entity_column is None else name(first, rule.entity_column)
    return dataclasses.replace(
        rule,
        when=conditions(first, rule.when) if len(rule.tables) == 1 else rule.when,
        lookups=lookups,
        entity_column=entity_column,
    )


def _conditions(items: Sequence[Mapping[str, Any]], key: str) -> tuple[Condition, ...]:
    conditions = []
    for j, c in enumerate(items):
        if c["operator"] in MASK_OPERATORS and (type(c["value"]) is not int or c["value"] <= 0):
            _invalid(f"{key}[{j}].value", "a mask is a positive integer")
        conditions.append(Condition(c["column"], c["operator"], c["value"]))
    return tuple(conditions)


def _columns(profile: EnrichmentProfile, table: str, columns: Sequence[str], key: str) -> None:
    try:
        read = profile.columns_of(table)
    except KeyError:
        _invalid(key, f"{table} is neither an entity's table nor in [tables]")
    for column in columns:
        if column not in read:
            _invalid(key, f"{column} is not among the columns read of {table}")


def _compare(operator: str, value: Any, wanted: Any) -> bool:
    def same(a: Any, b: Any) -> bool:
        return (type(a).__name__, a) == (type(b).__name__, b)

    if operator == "in":
        return any(same(value, w) for w in wanted)
    if operator in vocabulary.EQUALITY_OPERATORS:
        return same(value, wanted) == (operator == "eq")
    if operator == "contains":
        return isinstance(value, str) and str(wanted) in value
    if value is None or type(value) is not type(wanted):
        return False
    order = (value > wanted) - (value < wanted)
    return order in {"lt": (-1,), "le": (-1, 0), "gt": (1,), "ge": (0, 1)}[operator]


@functools.lru_cache(maxsize=1024)
def _with(pattern: str, name: str) -> re.Pattern[str]:
    return re.compile(pattern.replace(_NAME, name))


def _invalid(key: str, problem: str) -> NoReturn:
    raise EnrichmentError("profile_invalid", f"{key}: {problem}", {"key": key})


__all__ = [
    "CHECKS",
    "MASK_OPERATORS",
    "Anchor",
    "Condition",
    "Lookup",
    "Rule",
    "ScriptLayout",
    "ZoneSpawns",
    "parse_rules",
    "parse_scripts",
    "renamed",
]
