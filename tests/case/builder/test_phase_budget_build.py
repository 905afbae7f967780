"""One budget in a real build: the rules keep their share when the reference map could spend all.

The Wolpertinger case against the test MariaDB asks about 360 queries of the
reference map on the bundled profile's 512. On 60 the map alone would spend
everything, and the rule phase used to get nothing: no rule hit at all.
CountingResearch counts every query that reached research, refused ones too.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.case.builder.conftest import CountingResearch, ResearchSetup, case_spec
from tests.case.builder.test_build_lifecycle import builder
from viano_bug_analysis.enrichment import vcore_profile

pytestmark = pytest.mark.integration

MAX_QUERIES = 60


def test_a_build_the_map_would_exhaust_still_checks_its_rules_within_max_queries(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    vcore = vcore_profile()
    limits = dataclasses.replace(vcore.limits, max_queries=MAX_QUERIES)
    profile = dataclasses.replace(vcore, limits=limits)
    built = builder(
        case_spec(tmp_path / "inputs"), tmp_path / "p", counting, research_setup, profile=profile
    ).build()

    assert len(counting.asked) == len(built.queries)
    # The schema-era probes are not the enrichment's (docs/case-enrichment.md).
    enrichment = [q for q in built.queries if q["purpose"]["kind"] != "column_resolution"]
    assert len(enrichment) <= MAX_QUERIES
    kinds = {q["purpose"]["kind"] for q in enrichment}
    assert "rule_check" in kinds
    hits = {f["rule"] for f in built.facts if f["kind"] == "project_rule_hit"}
    assert "smart_scripts_creature_not_smartai" in hits
    assert any(f["kind"] == "project_lead" for f in built.facts)
    (budget,) = [f for f in built.facts if f.get("reason") == "query_budget"]
    # Rules (48) and script files (16) want 64; a quarter of max_queries is kept.
    assert budget["reserved_for_phases"] == MAX_QUERIES // 4
    assert budget["not_asked"]["reference_map"]["relationship"] > 0
    assert budget["asked"] == len(enrichment)
