"""Benchmark: one build of the real-schema seasonal-quest case, the reference map both ways.

The case of tests/case/builder/test_real_schema_facts.py (a quest whose givers
live only in the game-event tables, a spell with a condition, a linked spell
and a script, an item, a zone and an area trigger) built against the fixture
world DB ``cata_world`` with the bundled Vcore profile. Beside it, the
``baseline-part-of-only`` row: the same profile with only the map entries a
reached entity is asked by (``part_of``) and the entries on entity tables —
the shape of the one-way relationships before the map. The figures are the
queries asked, the references followed each way and the leads found.

Needs the test MariaDB (VBA_TEST_DB_PORT, VBA_TEST_DB_PASSWORD_FILE): `make
bench` starts it.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

import pytest

from tests.case.builder.conftest import build_source_repo, case_spec, write_config
from tests.case.builder.test_real_schema_facts import TEXT
from tests.project_research.conftest import TestDatabase, mariadb
from viano_bug_analysis.case.builder import BuildResult, CaseBuilder
from viano_bug_analysis.enrichment import research_origin, vcore_profile
from viano_bug_analysis.enrichment.profile import EnrichmentProfile
from viano_bug_analysis.project_research import ProjectResearch, load_config

__all__ = ["mariadb"]

GROUP = "references: a real-schema build with the reference map both ways"
_ROUND = itertools.count()


@pytest.fixture(scope="module")
def world_config(tmp_path_factory: pytest.TempPathFactory, mariadb: TestDatabase) -> Path:
    root = tmp_path_factory.mktemp("bench-references")
    repo, commit = build_source_repo(root / "repo")
    return write_config(root, mariadb, repo, commit, database="cata_world")


def _part_of_only(profile: EnrichmentProfile) -> EnrichmentProfile:
    own = {e.table for e in profile.entities.values() if e.table is not None}
    kept = tuple(r for r in profile.references if r.part_of or r.table in own)
    return dataclasses.replace(profile, references=kept)


def _build(config_path: Path, root: Path, profile: EnrichmentProfile) -> BuildResult:
    config = load_config(config_path)
    with ProjectResearch(config) as research:
        return CaseBuilder(
            case_spec(root / "inputs", text=TEXT),
            root / "package",
            profile=profile,
            project_research=research,
            research_origin=research_origin(config),
        ).build()


def _figures(built: BuildResult) -> dict[str, Any]:
    links = [f for f in built.facts if f["kind"] == "project_relationship"]
    return {
        "queries": len(built.queries),
        "facts": len(built.facts),
        "forward references": sum(1 for f in links if f["direction"] == "forward"),
        "reverse references": sum(1 for f in links if f["direction"] == "reverse"),
        "rows facts": sum(1 for f in built.facts if f["kind"] == "project_rows"),
        "leads": sum(1 for f in built.facts if f["kind"] == "project_lead"),
    }


def _bench(benchmark: Any, config: Path, name: str, profile: EnrichmentProfile) -> None:
    benchmark.group = GROUP
    benchmark.name = name
    built: list[BuildResult] = []

    def fresh() -> tuple[tuple[Path], dict[str, Any]]:
        # A new package per round: a rebuild of the same package asks nothing.
        return (config.parent / f"round-{next(_ROUND)}",), {}

    def run(root: Path) -> None:
        built.append(_build(config, root, profile))

    benchmark.pedantic(run, setup=fresh, rounds=3, warmup_rounds=0)
    benchmark.extra_info["figures"] = _figures(built[-1])


def test_build_with_the_reference_map(benchmark: Any, world_config: Path) -> None:
    _bench(benchmark, world_config, "build-reference-map", vcore_profile())


def test_baseline_part_of_only(benchmark: Any, world_config: Path) -> None:
    _bench(benchmark, world_config, "baseline-part-of-only", _part_of_only(vcore_profile()))
