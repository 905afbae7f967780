"""The prompt selection (``project-context-v2``) shows the leads first, in rank order, as
labelled P-facts; every other fact follows in fact-ID order, and every fact kind the build
writes has a label."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from tests.case.leads_package import ranked_facts
from tests.facts.sample import index as index_of
from viano_bug_analysis.case.package import CasePackage
from viano_bug_analysis.investigation.project_context import (
    LABELS,
    SELECTION_VERSION,
    project_prompt_context,
)
from viano_bug_analysis.jsonio import canonical_bytes


def _package(tmp_path: Path, facts: list[dict[str, Any]]) -> CasePackage:
    # A whole index: it is checked against enrichment-index-v1 when read.
    index = index_of(facts)
    (tmp_path / "index.json").write_bytes(canonical_bytes(index))
    case = {"project_research": {"index": {"path": "index.json"}}}
    return cast(CasePackage, SimpleNamespace(path=tmp_path, case=case))


def test_leads_come_first_by_rank_then_every_other_fact_in_id_order(tmp_path: Path) -> None:
    facts = ranked_facts(max_leads=3)
    context = project_prompt_context(_package(tmp_path, facts))
    assert context is not None
    assert context["selection"] == SELECTION_VERSION == "project-context-v2"
    shown = [(f["fact_id"], f["kind"]) for f in context["facts"]]
    assert shown[:3] == [("P7", "project_lead"), ("P8", "project_lead"), ("P9", "project_lead")]
    assert [fact_id for fact_id, _ in shown[3:]] == ["P1", "P2", "P3", "P4", "P5", "P6", "P10"]
    first = context["facts"][0]
    assert first["label"] == LABELS["project_lead"]
    assert (first["rank"], first["lead"], first["rests_on"]) == (1, "changed_since_report", ["P6"])
    assert "maybe already fixed" in first["why"]


def test_the_selection_is_a_pure_function_of_the_index(tmp_path: Path) -> None:
    facts = ranked_facts()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = project_prompt_context(_package(tmp_path / "a", facts))
    two = project_prompt_context(_package(tmp_path / "b", [dict(f) for f in facts]))
    assert canonical_bytes(one) == canonical_bytes(two)


def test_every_lead_source_kind_is_labelled_and_keeps_its_statement(tmp_path: Path) -> None:
    context = project_prompt_context(_package(tmp_path, ranked_facts()))
    assert context is not None
    kinds = {
        "project_rule_hit",
        "project_missing_reference",
        "project_script_file_candidate",
        "project_change_since_report",
        "project_lead",
    }
    assert kinds <= set(LABELS)
    for fact in context["facts"]:
        assert fact["label"] == LABELS[fact["kind"]]
        if fact["kind"] in kinds - {"project_lead"}:
            assert fact["statement"], fact["kind"]
            assert "provenance" not in fact
