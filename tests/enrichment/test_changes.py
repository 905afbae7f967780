"""The changed-since-the-report phase, on a real history through ProjectResearch.

The phase gets a small stand-in for the engine's phase context (the facts so
far, ``ask`` on a query budget, ``fact``, ``provenance``); its queries are
answered by ProjectResearch over a repository built in the test, where the
report's commit is an ancestor of the pinned one and later commits change
lines naming the report's quest ID, a ScriptName and a constant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.project_research.changes_fixtures import History, build_history
from tests.project_research.git_fixtures import URL
from tests.project_research.research_fakes import make_config
from viano_bug_analysis.enrichment import changes
from viano_bug_analysis.enrichment.changes import (
    FACT_KIND,
    MAX_TERMS,
    changes_since_report,
    collect_terms,
)
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.project_research import Capture, ProjectResearch, ResearchError
from viano_bug_analysis.project_research.git_source import GitSource

QUEST = 26290


class FakeContext:
    def __init__(self, research: ProjectResearch, facts: list[dict[str, Any]], budget: int) -> None:
        self._research = research
        self._facts = facts
        self.budget = budget
        self.asked: list[dict[str, Any]] = []
        self.purposes: list[dict[str, Any]] = []

    @property
    def facts(self) -> Sequence[Mapping[str, Any]]:
        return self._facts

    def ask(self, query: Mapping[str, Any], purpose: Mapping[str, Any]) -> StepOutcome | None:
        if len(self.asked) >= self.budget:
            return None
        self.asked.append(dict(query))
        self.purposes.append(dict(purpose))
        step = len(self.asked)
        try:
            capture = self._research.capture(query)
        except ResearchError as refused:
            return StepOutcome(step, "0" * 64, None, refused.code, False)
        return StepOutcome(step, capture.sha256, capture, None, False)

    def fact(self, kind: str, **fields: Any) -> str:
        fact_id = f"P{len(self._facts) + 1}"
        self._facts.append({"fact_id": fact_id, "kind": kind, **fields})
        return fact_id

    def provenance(self, capture: Capture, pointer: str) -> dict[str, Any]:
        return {"capture_sha256": capture.sha256, "pointer": pointer}


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return build_history(
        tmp_path_factory.mktemp("phase") / "repo",
        [
            {"src/zone.cpp": "// zone\n"},
            {"src/zone.cpp": "// zone\nenum { QUEST_KILLING_TIME = 26290 };\n"},  # reported
            {"sql/updates/2.sql": "DELETE FROM quest_template_addon WHERE ID=26290;\n"},
            {"src/other.cpp": "nothing\n"},
            {"src/zone.cpp": "// zone\nRegisterCreatureAI(npc_thrall);\n"},
        ],
    )


def revision_fact(history: History, relation: str = "ancestor", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "report_revision",
        "relation": relation,
        "commit": history.commits[1],
        "source_pinned_to": "configured_commit",
        **extra,
    }


def report_facts() -> list[dict[str, Any]]:
    return [
        {"fact_id": "P1", "kind": "case_mention", "entity_type": "quest", "entity_id": QUEST},
        {
            "fact_id": "P2",
            "kind": "project_rows",
            "table": "creature_template",
            "rows": [{"entry": 4949, "ScriptName": "npc_thrall"}],
        },
        {"fact_id": "P3", "kind": "project_source_constant", "constant": "QUEST_KILLING_TIME"},
    ]


def run_phase(
    history: History,
    tmp_path: Path,
    revision: dict[str, Any] | None,
    *,
    facts: list[dict[str, Any]] | None = None,
    budget: int = 10,
    **source_kw: Any,
) -> FakeContext:
    source = GitSource(history.path, history.commits[-1], url=URL, **source_kw)
    ctx = FakeContext(
        ProjectResearch(make_config(tmp_path), git=source),
        report_facts() if facts is None else facts,
        budget,
    )
    changes_since_report(revision)(ctx)
    return ctx


def stated(ctx: FakeContext, kind: str = FACT_KIND) -> list[dict[str, Any]]:
    return [f for f in ctx.facts if f["kind"] == kind]


def test_a_later_commit_naming_the_quest_becomes_a_change_fact(
    history: History, tmp_path: Path
) -> None:
    ctx = run_phase(history, tmp_path, revision_fact(history))
    assert [q["terms"] for q in ctx.asked] == [["26290", "npc_thrall", "QUEST_KILLING_TIME"]]
    facts = stated(ctx)
    # Newest first: the zone file lost the constant, the SQL update names the quest.
    assert [f["commit"] for f in facts] == [history.commits[4], history.commits[2]]
    zone, update = facts
    # The removed line names the quest first (the report's own ID leads the terms).
    assert zone["terms"] == ["26290", "npc_thrall"]
    assert {(c["side"], c["term"]) for c in zone["changes"]} == {
        ("removed", "26290"),
        ("added", "npc_thrall"),
    }
    assert update["changes"] == [
        {
            "path": "sql/updates/2.sql",
            "side": "added",
            "line": 1,
            "text": "DELETE FROM quest_template_addon WHERE ID=26290;",
            "blob": update["changes"][0]["blob"],
            "term": "26290",
        }
    ]
    assert update["since"] == history.commits[1] and update["pinned"] == history.commits[-1]
    assert update["summary"] == "step 2" and update["author_time"].endswith("Z")
    assert update["provenance"]["pointer"] == "/result/commits/1"
    assert update["statement"].startswith("maybe already fixed: ")
    assert stated(ctx, "project_context_coverage") == []


@pytest.mark.parametrize(
    "revision",
    [
        None,
        {"relation": "same"},
        {"relation": "descendant"},
        {"relation": "diverged"},
        {"relation": "unrelated"},
        {"relation": "undetermined"},
        {"relation": None, "resolution": "refused"},
        {"relation": "ancestor", "source_pinned_to": "report_revision"},
    ],
)
def test_no_query_unless_the_report_commit_is_before_the_research_commit(
    history: History, tmp_path: Path, revision: dict[str, Any] | None
) -> None:
    fact = None if revision is None else revision_fact(history, **revision)
    ctx = run_phase(history, tmp_path, fact)
    assert ctx.asked == [] and stated(ctx) == []


def test_nothing_is_asked_without_a_term(history: History, tmp_path: Path) -> None:
    facts = [{"fact_id": "P1", "kind": "case_mention", "entity_type": "quest", "entity_id": 7}]
    ctx = run_phase(history, tmp_path, revision_fact(history), facts=facts)
    assert ctx.asked == []


def test_terms_put_the_reports_ids_first_and_are_bounded() -> None:
    facts: list[dict[str, Any]] = [
        {"kind": "project_source_constant", "constant": "NPC_A"},
        {"kind": "project_rows", "rows": [{"ScriptName": ""}, {"ScriptName": "npc-bad"}]},
        {"kind": "project_rows", "rows": [{"ScriptName": f"npc_{n}"} for n in range(40)]},
        {"kind": "case_mention", "entity_id": 500},
        {"kind": "case_untyped_mention", "entity_id": 600, "found_as": []},
        {"kind": "case_untyped_mention", "entity_id": 700, "found_as": ["quest"]},
        {"kind": "project_name_match", "followed": False, "matches": [{"entity_id": 800}]},
        {"kind": "project_name_match", "followed": True, "matches": [{"entity_id": 900}]},
        {"kind": "case_mention", "entity_id": 500},
        {"kind": "case_mention", "entity_id": 42},
    ]
    terms = collect_terms(facts)
    assert terms[:4] == ["500", "700", "900", "npc_0"]
    assert len(terms) == MAX_TERMS and "NPC_A" not in terms and "npc-bad" not in terms


@pytest.mark.parametrize(("budget", "listed"), [(0, 0), (1, 1), (2, 2), (5, 2)])
def test_further_pages_are_asked_only_within_the_budget(
    history: History, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: int, listed: int
) -> None:
    monkeypatch.setattr(changes, "PAGE", 1)
    ctx = run_phase(history, tmp_path, revision_fact(history), budget=budget)
    assert [q["offset"] for q in ctx.asked] == list(range(min(budget, 2)))
    assert len(stated(ctx)) == listed


def test_the_pages_listed_are_bounded(
    history: History, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changes, "PAGE", 1)
    monkeypatch.setattr(changes, "MAX_PAGES", 1)
    ctx = run_phase(history, tmp_path, revision_fact(history))
    assert len(ctx.asked) == 1
    (coverage,) = stated(ctx, "project_context_coverage")
    assert (coverage["reason"], coverage["listed_commits"]) == ("changes_pages_limit", 1)


def test_an_incomplete_answer_is_stated_as_coverage(history: History, tmp_path: Path) -> None:
    ctx = run_phase(history, tmp_path, revision_fact(history), max_change_commits=1)
    (coverage,) = stated(ctx, "project_context_coverage")
    assert coverage["reason"] == "changes_incomplete"
    assert coverage["incomplete_reasons"] == ["commit_limit"]
    assert (coverage["commits_examined"], coverage["range_commits"]) == (1, 3)
    assert [f["commit"] for f in stated(ctx)] == [history.commits[4]]


def test_a_refused_query_states_no_change(history: History, tmp_path: Path) -> None:
    # A commit that is no ancestor after all (a stale fact): the service refuses.
    fact = revision_fact(history)
    fact["commit"] = "0" * 40
    ctx = run_phase(history, tmp_path, fact)
    assert len(ctx.asked) == 1 and stated(ctx) == []
