"""enrichment-index-v1: every index the builder writes passes; a changed one is refused."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.case.builder.conftest import CountingResearch, ResearchSetup
from tests.case.builder.test_enrichment_facts import build
from tests.facts.sample import index
from viano_bug_analysis.case import load_package
from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.facts.brief import fact_sections
from viano_bug_analysis.facts.index import check_index
from viano_bug_analysis.facts.query import facts_query
from viano_bug_analysis.facts.registry import FACT_KINDS
from viano_bug_analysis.investigation.project_context import load_index


def test_the_sample_of_every_kind_passes() -> None:
    check_index(index(), "index.json")


def _drop(field: str, kind: str) -> Any:
    def mutate(document: dict[str, Any]) -> None:
        fact = next(f for f in document["facts"] if f["kind"] == kind)
        del fact[field]

    return mutate


def _set(pointer: tuple[Any, ...], value: Any) -> Any:
    def mutate(document: dict[str, Any]) -> None:
        target = document
        for part in pointer[:-1]:
            target = target[part]
        target[pointer[-1]] = value

    return mutate


@pytest.mark.parametrize(
    ("mutate", "pointer"),
    [
        (_set(("facts", 0, "kind"), "project_guess"), "/facts/0/kind"),
        (_set(("facts", 0, "fact_id"), "F1"), "/facts/0/fact_id"),
        (_drop("rows", "project_rows"), "/facts/5/rows"),
        (_set(("facts", 5, "rows"), "one row"), "/facts/5/rows"),
        (_drop("rests_on", "project_lead"), "/facts/22/rests_on"),
        (_set(("facts", 6, "provenance", "capture_sha256"), "short"), None),
        (_set(("format_version",), 2), "/format_version"),
        (_drop("reason", "project_context_coverage"), "/facts/14/reason"),
    ],
)
def test_a_changed_index_is_package_corrupt(mutate: Any, pointer: str | None) -> None:
    document = copy.deepcopy(index())
    mutate(document)
    with pytest.raises(PackageFileError) as caught:
        check_index(document, "research/project/r0001/index.json")
    error = caught.value
    assert error.code == "package_corrupt"
    assert error.details["reason"] == "not an enrichment index"
    assert error.details["path"] == "research/project/r0001/index.json"
    if pointer is not None:
        assert error.details["pointer"] == pointer


@pytest.mark.integration
def test_a_real_build_writes_an_index_the_schema_and_every_view_accept(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    build(tmp_path, counting, research_setup)
    found = load_index(load_package(tmp_path / "package"))  # checked on read
    assert found is not None
    assert {f["kind"] for f in found["facts"]} <= set(FACT_KINDS)
    full = fact_sections(found, max_chars=1 << 24)
    assert full.left_out == () and len(full.shown) == len(found["facts"])
    small = fact_sections(found, max_chars=4000)
    assert len(small.text) <= 4000 and small.left_out
    everything = facts_query(found, {"limit": 50})
    assert everything["total"] == len(found["facts"])
