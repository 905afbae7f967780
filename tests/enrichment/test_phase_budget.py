"""One budget: the reference map leaves the asking build phases their share of max_queries.

The world is in memory (``world_fakes``, the script-file world of
test_script_file_candidates): the reference map of creature 94001 alone
would ask 43 queries, so on a smaller ``max_queries`` it spends everything
unless a share is kept for the rules (the engine check's anchor line) and the
script files (the siblings' search). The map asks its share, the phases
theirs, then the map what the phases left. ``FakeWorld.asked`` counts every query
that reached it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.enrichment.test_consistency_rules import _engine_sources
from tests.enrichment.test_script_file_candidates import FILES, PROFILE, TABLES, C
from tests.enrichment.world_fakes import FakeWorld
from viano_bug_analysis.enrichment import parse_profile, references
from viano_bug_analysis.enrichment.engine import Enricher, EnrichmentRun, Phase
from viano_bug_analysis.enrichment.extract import Mention
from viano_bug_analysis.enrichment.leads import add_leads
from viano_bug_analysis.enrichment.rule_phase import rules_phase
from viano_bug_analysis.enrichment.script_files import script_file_phase
from viano_bug_analysis.enrichment.summary import summarize

MAP_ALONE = 43  # queries of the reference map of this world, nothing cut
PHASES: list[Phase] = [rules_phase, script_file_phase, add_leads]


def _run(
    limits: str, phases: list[Phase] | None = None, tables: Any = None
) -> tuple[EnrichmentRun, FakeWorld]:
    text = PROFILE.read_bytes().replace(b"max_queries = 512\n", limits.encode() + b"\n")
    world = FakeWorld(TABLES if tables is None else tables, {**_engine_sources(), **FILES})
    enricher = Enricher(
        parse_profile(text),
        world,
        capture_path=lambda sha: f"captures/{sha}.json",
        phases=PHASES if phases is None else phases,
    )
    run = enricher.run([Mention("creature", C, {"pointer": "/report/text", "offset": 0})])
    return run, world


def _of(run: EnrichmentRun, kind: str) -> list[dict[str, Any]]:
    return [f for f in run.facts if f["kind"] == kind]


def _budget(run: EnrichmentRun) -> dict[str, Any]:
    (fact,) = [f for f in run.facts if f.get("reason") == "query_budget"]
    return fact


def test_the_map_alone_would_spend_the_small_budgets_of_these_tests() -> None:
    run, world = _run("max_queries = 512", phases=[])
    assert len(run.queries) == len(world.asked) == MAP_ALONE


def test_a_build_whose_map_would_spend_the_budget_still_states_rule_and_script_file_facts() -> None:
    run, world = _run("max_queries = 30")
    assert len(world.asked) == len(run.queries) <= 30
    hits = {f["rule"]: f for f in _of(run, "project_rule_hit")}
    # The engine check found its line: the anchor search was asked on the reserve.
    assert hits["script_name_without_script"]["engine_source"] is not None
    reasons = {f["reason"] for f in _of(run, "project_script_file_candidate")}
    assert "sibling_prefix" in reasons
    # What the budget left out is one fact, by stage and purpose.
    budget = _budget(run)
    assert budget["max_queries"] == 30
    assert budget["reserved_for_phases"] == 7  # what the phases want, at most a quarter
    assert budget["not_asked"]["reference_map"]["relationship"] > 0
    assert budget["count"] == sum(sum(k.values()) for k in budget["not_asked"].values())
    assert budget["asked"] == len(run.queries)
    # The map asks its share (30 - 7) first, the phases theirs, and the map what they left.
    assert len(run.queries) == 30
    kinds = [q["purpose"]["kind"] for q in run.queries]
    assert all(kind in MAP_KINDS for kind in kinds[: 30 - 7])
    first_phase = next(i for i, kind in enumerate(kinds) if kind not in MAP_KINDS)
    assert first_phase == 30 - 7
    phase_asked = [k for k in kinds if k not in MAP_KINDS]
    assert all(k in MAP_KINDS for k in kinds[first_phase + len(phase_asked) :])
    line = next(line for line in summarize(run.facts) if "query_budget" in line)
    assert "of the reference map" in line and "7 kept for the build phases" in line


MAP_KINDS = {"entity_lookup", "relationship", "constant_search", "candidate_lookup"}


def test_the_reserve_is_one_pool_what_the_rules_leave_the_script_files_spend() -> None:
    # Two queries kept: the rules (bound 48) ask one, the script files the other.
    run, world = _run("max_queries = 30\nphase_reserve = 2")
    assert len(world.asked) == len(run.queries) == 30
    kinds = [q["purpose"]["kind"] for q in run.queries]
    assert [k for k in kinds if k not in MAP_KINDS] == ["rule_anchor", "script_siblings"]
    assert kinds[-2:] == ["rule_anchor", "script_siblings"]
    assert "sibling_prefix" in {f["reason"] for f in _of(run, "project_script_file_candidate")}
    assert _budget(run)["reserved_for_phases"] == 2


@pytest.mark.parametrize("max_queries", [0, 1, 2, 5, 14, 29, 42, 43, 44, 60])
def test_the_total_never_exceeds_max_queries(max_queries: int) -> None:
    run, world = _run(f"max_queries = {max_queries}")
    assert len(world.asked) == len(run.queries) <= max_queries
    cut = [f for f in run.facts if f.get("reason") == "max_queries"]
    budget = [f for f in run.facts if f.get("reason") == "query_budget"]
    assert bool(cut) == bool(budget)


def _rows_naming_the_creature() -> dict[str, list[dict[str, Any]]]:
    """TABLES, and a row naming creature 94001 in every entry that holds creatures."""
    profile = parse_profile(PROFILE.read_bytes())
    tables: dict[str, list[dict[str, Any]]] = {k: list(v) for k, v in TABLES.items()}
    for ref in references.holders(profile, "creature"):
        if ref.table in TABLES or any(f.operator not in ("eq", "in") for f in ref.when):
            continue
        row: dict[str, Any] = {c: 0 for c in profile.columns_of(ref.table)}
        row.update({f.column: f.value if f.operator == "eq" else f.value[0] for f in ref.when})
        row[ref.column] = str(C) if ref.separated_by is not None else C
        tables.setdefault(ref.table, []).append(row)
    return tables


def test_what_the_phases_leave_of_the_reserve_the_map_spends_after_them() -> None:
    # 15 kept, a few spent by the phases: the map asks the rest after them.
    run, _ = _run("max_queries = 40\nphase_reserve = 15", tables=_rows_naming_the_creature())
    kinds = [q["purpose"]["kind"] for q in run.queries]
    assert len(kinds) == 40
    phase_asked = [i for i, kind in enumerate(kinds) if kind not in MAP_KINDS]
    assert phase_asked[0] == 25 and len(phase_asked) < 15
    assert all(kinds[i] in MAP_KINDS for i in range(phase_asked[-1] + 1, 40))
    # Those rows are read, and said to be unchecked by the rules.
    (late,) = [f for f in run.facts if f.get("reason") == "read_after_phases"]
    assert {f["fact_id"] for f in run.facts if f["kind"] == "project_rows"} >= set(late["facts"])


def test_a_spent_budget_names_the_rules_it_left_unchecked() -> None:
    # Nothing kept for the phases: the rules get no query of their own.
    run, _ = _run("max_queries = 20\nphase_reserve = 0")
    budget = _budget(run)
    assert budget["reserved_for_phases"] == 0
    assert budget["not_asked"]["phases"]["rule_anchor"] >= 1
    assert "script_name_without_script" in budget["rules_not_checked"]
    # What the map asked already still serves: the hit stands, without its engine line.
    (hit,) = [h for h in _of(run, "project_rule_hit") if h["rule"] == "script_name_without_script"]
    assert hit["engine_source"] is None


def test_phases_that_ask_nothing_keep_nothing_from_the_map() -> None:
    # Leads ask nothing; a profile without [[rules]] and [scripts] leaves its phases nothing
    # to ask: the map has the whole budget.
    run, _ = _run("max_queries = 30", phases=[add_leads])
    assert len(run.queries) == 30
    assert _budget(run)["reserved_for_phases"] == 0
