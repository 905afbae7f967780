"""Every entry of the bundled Vcore reference map, both ways, on the real-schema test DB.

The cases come from the map itself (``profile.references``) and the fixture
rows named in tests/enrichment/reference_map_cases.py:

* reverse: the entry's ``reverse_query`` for the entity, run on the
  throwaway MariaDB, finds the fixture row, and a build that mentions the
  entity reads that row through the entry;
* forward: the row read by its key names the entity through the entry and
  the entity's own table has it; a build of the entity owning a row of its
  own table (quest_template, creature_template, the spawn tables) follows the
  entry from that row. (A build does not follow the entry a reverse lookup
  came by back to where it started.)

Without the test MariaDB these tests skip (``make test`` starts one).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from tests.enrichment.reference_map_cases import CASES, SYMBOLS
from tests.project_research.conftest import WORLD_DATABASE, TestDatabase, mariadb
from viano_bug_analysis.enrichment import references, vcore_profile
from viano_bug_analysis.enrichment.engine import Enricher
from viano_bug_analysis.enrichment.extract import Mention
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.enrichment.profile import EnrichmentProfile, Reference
from viano_bug_analysis.enrichment.profile_check import check_profile, needs
from viano_bug_analysis.project_research.mariadb_source import MariaDbSource

PROFILE = vcore_profile().in_database(WORLD_DATABASE)
HOLDING = [ref for ref in PROFILE.references if not ref.symbol]
SYMBOLIC = [ref for ref in PROFILE.references if ref.symbol]
BY_NAME = {ref.name: ref for ref in PROFILE.references}
# The symbol entries, each with the entity whose build reads the row holding it.
SYMBOL_OWNERS: dict[str, tuple[str, int]] = {
    "quest_addon_script_name": ("quest", 93201),
    "condition_script_name": ("quest", 93203),
    "spell_script_name": ("spell", 93301),
    "creature_script_name": ("creature", 93001),
    "gameobject_script_name": ("gameobject", 93101),
    "item_script_name": ("item", 93401),
    "areatrigger_script_name": ("areatrigger", 93601),
    "creature_spawn_script_name": ("creature_spawn", 600001),
    "gameobject_spawn_script_name": ("gameobject_spawn", 600101),
}


def _cases() -> Iterator[Any]:
    for ref in HOLDING:
        for entity_type, entity_id in CASES.get(ref.name, []):
            yield pytest.param(ref, entity_type, entity_id, id=f"{ref.name}-{entity_id}")


@pytest.fixture(scope="module")
def world(mariadb: TestDatabase) -> Iterator[MariaDbSource]:
    with mariadb.source(allow={WORLD_DATABASE: tuple(needs(PROFILE))}) as opened:
        yield opened


def _rows(source: MariaDbSource, query: Mapping[str, Any]) -> list[dict[str, Any]]:
    result = source.rows(
        database=query.get("database"),
        table=query["table"],
        columns=query["columns"],
        filters=query["filters"],
        offset=query["offset"],
        limit=query["limit"],
    )
    rows: list[dict[str, Any]] = result["rows"]
    return rows


def _reverse_rows(
    source: MariaDbSource, ref: Reference, entity_type: str, entity_id: int
) -> list[dict[str, Any]]:
    query = references.reverse_query(PROFILE, ref, entity_type, entity_id, limit=100)
    return [
        row for row in _rows(source, query) if references.names(ref, row, entity_type, entity_id)
    ]


# -- the map and its cases, without a database ---------------------------------------


def test_every_map_entry_has_a_fixture_case() -> None:
    names = {ref.name for ref in PROFILE.references}
    assert set(CASES) | set(SYMBOLS) == names
    assert set(SYMBOLS) == {ref.name for ref in SYMBOLIC} == set(SYMBOL_OWNERS)
    for ref in HOLDING:
        assert {t for t, _ in CASES[ref.name]} <= set(ref.types()), ref.name


def test_a_mentioned_entity_is_asked_by_every_entry_of_its_type_within_the_bound() -> None:
    # reverse_per_entity cuts entries in profile order; none of the map is cut.
    for entity_type in PROFILE.entities:
        asked = references.holders(PROFILE, entity_type)
        assert len(asked) <= PROFILE.limits.reverse_per_entity, entity_type


# -- both directions on the real-schema test DB --------------------------------------


@pytest.mark.parametrize(("ref", "entity_type", "entity_id"), list(_cases()))
def test_reverse_finds_the_fixture_row(
    world: MariaDbSource, ref: Reference, entity_type: str, entity_id: int
) -> None:
    rows = _reverse_rows(world, ref, entity_type, entity_id)
    assert rows, f"{ref.name}: no {ref.table} row names {entity_type} {entity_id}"
    assert all(references.when_holds(ref, row) for row in rows)


@pytest.mark.parametrize(("ref", "entity_type", "entity_id"), list(_cases()))
def test_forward_from_the_row_reaches_the_entity(
    world: MariaDbSource, ref: Reference, entity_type: str, entity_id: int
) -> None:
    key = PROFILE.key_of(ref.table)
    for found in _reverse_rows(world, ref, entity_type, entity_id):
        # The row as the build reads it: by its key, every column the profile reads.
        filters = [{"column": c, "operator": "eq", "value": found[c]} for c in key]
        query = {
            "table": ref.table,
            "columns": list(PROFILE.columns_of(ref.table)),
            "filters": filters,
            "offset": 0,
            "limit": 100,
        }
        [row] = _rows(world, query)
        assert references.when_holds(ref, row)
        assert (entity_type, entity_id) in references.named(ref, row[ref.column])
    lookup = PROFILE.entities[entity_type]
    if lookup.table is not None:
        query = {
            "table": lookup.table,
            "columns": list(lookup.columns),
            "filters": [{"column": lookup.column, "operator": "eq", "value": entity_id}],
            "offset": 0,
            "limit": 1,
        }
        assert _rows(world, query), f"{entity_type} {entity_id} has no {lookup.table} row"


@pytest.mark.parametrize("ref", SYMBOLIC, ids=[ref.name for ref in SYMBOLIC])
def test_a_symbol_entry_s_table_holds_the_fixture_script_name(
    world: MariaDbSource, ref: Reference
) -> None:
    query = {
        "table": ref.table,
        "columns": [ref.column],
        "filters": [{"column": ref.column, "operator": "eq", "value": SYMBOLS[ref.name]}],
        "offset": 0,
        "limit": 1,
    }
    assert _rows(world, query)


# -- a build through the map ---------------------------------------------------------


class WorldResearch:
    """Answers ``database.rows`` from the test DB; the source has no lines to find."""

    def __init__(self, source: MariaDbSource) -> None:
        self.source = source
        self.asked = 0

    def __call__(self, query: Mapping[str, Any]) -> StepOutcome:
        self.asked += 1
        digest = hashlib.sha256(orjson.dumps(query, option=orjson.OPT_SORT_KEYS)).hexdigest()
        if query["kind"] == "database.rows":
            rows = _rows(self.source, query)
            result: dict[str, Any] = {"rows": rows, "complete_filtered_rows": True}
        else:
            result = {"matches": [], "files_unsearched": 0, "total": 0}
        answer = {"format_version": 2, "coverage": {"complete": True}, "result": result}
        capture = SimpleNamespace(sha256=digest, result=answer, origin={"p": "t"})
        return StepOutcome(self.asked, digest, capture, None, False)  # type: ignore[arg-type]


def _roomy(profile: EnrichmentProfile) -> EnrichmentProfile:
    # Every reference of a mentioned entity followed: no bound cuts this test short.
    limits = dataclasses.replace(
        profile.limits, max_queries=20000, max_relationships=20000, rows_per_query=100
    )
    return dataclasses.replace(profile, limits=limits)


_BUILDS: dict[tuple[str, int], list[dict[str, Any]]] = {}


def _build(source: MariaDbSource, entity_type: str, entity_id: int) -> list[dict[str, Any]]:
    key = (entity_type, entity_id)
    if key not in _BUILDS:
        mention = Mention(entity_type, entity_id, {"pointer": "/report/text", "offset": 0})
        enricher = Enricher(
            _roomy(PROFILE), WorldResearch(source), capture_path=lambda s: f"captures/{s}"
        )
        _BUILDS[key] = list(enricher.run([mention]).facts)
    return _BUILDS[key]


def _purpose(fact: Mapping[str, Any], ref: Reference, direction: str) -> bool:
    purpose = fact.get("purpose") or {}
    return bool(purpose.get("relation") == ref.name and purpose.get("direction") == direction)


@pytest.mark.parametrize(("ref", "entity_type", "entity_id"), list(_cases()))
def test_a_build_of_the_entity_reads_the_row_through_the_entry(
    world: MariaDbSource, ref: Reference, entity_type: str, entity_id: int
) -> None:
    facts = _build(world, entity_type, entity_id)
    read = [
        row
        for fact in facts
        if fact["kind"] == "project_rows" and _purpose(fact, ref, "reverse")
        for row in fact["rows"]
    ]
    assert any(references.names(ref, row, entity_type, entity_id) for row in read), ref.name


OWN_TABLE = [
    pytest.param(ref, entity_type, entity_id, id=f"{ref.name}-{entity_id}")
    for ref in HOLDING
    if any(e.table == ref.table for e in PROFILE.entities.values())
    for entity_type, entity_id in CASES[ref.name]
]


@pytest.mark.parametrize(("ref", "entity_type", "entity_id"), OWN_TABLE)
def test_a_build_of_the_row_s_own_entity_follows_the_entry_forward(
    world: MariaDbSource, ref: Reference, entity_type: str, entity_id: int
) -> None:
    # A row of an entity's own table (quest_template, creature, ...) is read by
    # that entity's lookup; the build follows the entry from it to the case.
    owner = next(e for e in PROFILE.entities.values() if e.table == ref.table)
    [row, *_] = _reverse_rows(world, ref, entity_type, entity_id)
    facts = _build(world, owner.entity_type, row[owner.column])
    followed = [
        fact["to"]
        for fact in facts
        if fact["kind"] == "project_relationship"
        and fact["relation"] == ref.name
        and fact["direction"] == "forward"
    ]
    assert any(
        to.get("entity_type") == entity_type and to.get("value") == entity_id for to in followed
    ), ref.name


@pytest.mark.parametrize("ref", SYMBOLIC, ids=[ref.name for ref in SYMBOLIC])
def test_a_build_of_the_owner_searches_the_script_name(
    world: MariaDbSource, ref: Reference
) -> None:
    facts = _build(world, *SYMBOL_OWNERS[ref.name])
    searched = [
        fact["to"].get("symbol")
        for fact in facts
        if fact["kind"] == "project_relationship" and fact["relation"] == ref.name
    ]
    assert SYMBOLS[ref.name] in searched


def test_a_quest_reaches_the_siblings_of_its_exclusive_group(world: MariaDbSource) -> None:
    facts = _build(world, "quest", 93201)
    groups = {
        fact["filters"][0]["value"]: {row["ID"] for row in fact["rows"]}
        for fact in facts
        if fact["kind"] == "project_rows"
        and _purpose(fact, BY_NAME["quest_exclusive_group"], "reverse")
    }
    # 93201's group 93999 holds 93203 as well; 93202, reached by NextQuestID, is
    # alone in group -93998: a signed group is a group of its own.
    assert groups == {93999: {93201, 93203}, -93998: {93202}}


def test_the_profile_check_of_the_fixture_world_is_clean(world: MariaDbSource) -> None:
    # Every table and column of the map exists in the real-schema fixture with
    # a fitting type; a list column (creature_template_addon.auras) is text.
    def schema(query: Mapping[str, Any]) -> Mapping[str, Any]:
        return {"result": world.schema(database=query.get("database"), table=query["table"])}

    report = check_profile(PROFILE, schema)
    assert report["blocked"] == [] and report["partial"] == []
    assert report["ok"] is True
    assert {t["status"] for t in report["tables"]} == {"present"}


__all__ = ["mariadb"]  # the session fixture of the test MariaDB, used here
