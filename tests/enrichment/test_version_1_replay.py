"""Consumers of git answers read a replayed version 1 capture like a version 2 one.

An enrichment build interrupted before project-result-v2 resumes from its
journal: the captures it replays say ``complete`` / ``incomplete_reason(s)``
where new ones say ``walk_finished`` / ``walk_stopped_by`` and
``examined_in_full`` / ``examination_gaps``. The revision fact and the
changes phase state the same facts from either (the stored captures of
``tests/fixtures/project-captures-v1``, made by the code before version 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.project_research.research_fakes import FakeDatabase, FakeGit, make_config
from tests.project_research.test_result_versions import StoppedGit, stored
from viano_bug_analysis.case.report_revision import journaled_revision_step
from viano_bug_analysis.enrichment import changes
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.project_research import Capture, ProjectResearch


def _outcome(capture: Capture) -> StepOutcome:
    return StepOutcome(1, capture.result["query_sha256"], capture, None, True)


def _revision_fact(capture: Capture) -> dict[str, Any]:
    reported = capture.request["revision"]
    step = journaled_revision_step(
        lambda query: _outcome(capture),
        {"metadata": {"revision": reported}},
        {"git": dict(capture.origin)},
        None,
        lambda sha: f"captures/{sha}.json",
    )
    assert step.fact is not None
    return step.fact


def _fresh(tmp_path: Path, git: FakeGit, query: Mapping[str, Any]) -> Capture:
    research = ProjectResearch(make_config(tmp_path), git=git, database=FakeDatabase())
    return research.capture(query)


@pytest.mark.parametrize("stopped", [False, True])
def test_the_revision_fact_is_the_same_from_either_version(tmp_path: Path, stopped: bool) -> None:
    [old] = [
        c
        for c in stored("source.revision")
        if c.result["result"]["complete"] is not stopped and c.request["revision"] == "0123abc"
    ]
    new = _fresh(tmp_path, StoppedGit() if stopped else FakeGit(), old.request)
    assert new.document["format_version"] == 2 and old.document["format_version"] == 1
    from_old, from_new = _revision_fact(old), _revision_fact(new)
    assert from_old["complete"] is from_new["complete"] is (not stopped)
    assert from_old["incomplete_reason"] == from_new["incomplete_reason"]
    assert from_old["statement"] == from_new["statement"]
    if stopped:
        assert from_old["incomplete_reason"] == "walk_limit"
        assert "walk_limit" in from_old["statement"]


class _Context:
    """The phase context ``changes`` uses, answering every query with one capture."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.facts: list[dict[str, Any]] = []

    def ask(self, query: Mapping[str, Any], purpose: Mapping[str, Any]) -> StepOutcome:
        return _outcome(self.capture)

    def fact(self, kind: str, **fields: Any) -> str:
        self.facts.append({"kind": kind, **fields})
        return f"P{len(self.facts)}"

    def provenance(self, capture: Capture, pointer: str) -> dict[str, Any]:
        return {"capture_sha256": capture.sha256, "pointer": pointer}


def _changes_facts(capture: Capture) -> list[dict[str, Any]]:
    ctx = _Context(capture)
    changes._ask_and_state(ctx, capture.request["since"], list(capture.request["terms"]))  # type: ignore[arg-type]
    return [{k: v for k, v in f.items() if k != "provenance"} for f in ctx.facts]


@pytest.mark.parametrize("stopped", [False, True])
def test_the_changes_facts_are_the_same_from_either_version(tmp_path: Path, stopped: bool) -> None:
    [old] = [
        c
        for c in stored("source.changes")
        if c.result["result"]["complete"] is not stopped
        and c.request == stored("source.changes")[0].request
    ] or pytest.skip("no such fixture")
    new = _fresh(tmp_path, StoppedGit() if stopped else FakeGit(), old.request)
    from_old, from_new = _changes_facts(old), _changes_facts(new)
    assert from_old == from_new
    coverage = [f for f in from_old if f["kind"] == "project_context_coverage"]
    if stopped:
        [fact] = coverage
        assert (fact["reason"], fact["incomplete_reasons"]) == (
            "changes_incomplete",
            ["commit_limit"],
        )
    else:
        assert coverage == []


def test_vba_references_words_a_version_1_literal_and_a_version_2_count() -> None:
    from viano_bug_analysis.project_research.result_versions import current_body
    from viano_bug_analysis.tools.references_command import text_lines

    [old] = stored("references")
    v1_lines = text_lines(old.result["result"])
    assert any("some file(s) could not be searched" in line for line in v1_lines)
    v2_lines = text_lines(current_body(old.result))
    assert any("(1 file(s) could not be searched" in line for line in v2_lines)
