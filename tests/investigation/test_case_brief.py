"""The interpretation's brief in its budget: the facts fill at most half the room and
the whole prompt at most about two thirds, however long the report."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.facts.sample import facts, index
from viano_bug_analysis.investigation.case_brief import brief_of, fit_interpretation
from viano_bug_analysis.investigation.interpretation_prompt import PROMPT_VERSION, build_messages
from viano_bug_analysis.investigation.token_budget import TokenBudget, message_tokens

BUDGET = TokenBudget(16384, "config", 2048)


def _many_rows(count: int) -> dict[str, Any]:
    found = facts()
    template = next(f for f in found if f["kind"] == "project_rows")
    for number in range(count):
        fact = copy.deepcopy(template)
        fact["fact_id"] = f"P{1000 + number}"
        fact["rows"] = [{"entry": 95000 + number, "name": f"Bystander {number} " + "x" * 60}]
        found.append(fact)
    return index(found)


def _context(report_text: str) -> dict[str, Any]:
    return {
        "case_id": "BUG-1",
        "analysis_revision": 1,
        "report": {"title": "The net does not count", "text": report_text},
        "kept_hypotheses": [],
        "facts": [{"label": "report", "kind": "report"}],
        "operations": ["project.query"],
        "attempt": 1,
    }


@pytest.mark.parametrize("report_chars", [80, 4000])
def test_the_interpretation_prompt_stays_within_its_share_of_the_room(report_chars: int) -> None:
    project = _many_rows(600)
    context = _context("The wolpertinger is not counted. " * (report_chars // 33 + 1))
    brief = brief_of(project)
    assert brief is not None
    context["brief"] = brief

    def build(c: dict[str, Any]) -> list[dict[str, str]]:
        return build_messages(c, PROMPT_VERSION)

    fit_interpretation(context, build=build, budget=BUDGET, index=project)
    prompt = message_tokens(build(context))
    assert brief["shown"] and brief["left_out"]  # facts were shown, and the rest left out
    assert prompt <= int(BUDGET.prompt_tokens * 0.65)
    assert prompt + BUDGET.answer_tokens <= 12000


def test_a_small_window_with_a_long_report_still_shows_facts() -> None:
    small = TokenBudget(6144, "config", 2048)
    project = _many_rows(600)
    context = _context("The wolpertinger is not counted. " * 122)
    brief = brief_of(project)
    assert brief is not None
    context["brief"] = brief

    def build(c: dict[str, Any]) -> list[dict[str, str]]:
        return build_messages(c, PROMPT_VERSION)

    fit_interpretation(context, build=build, budget=small, index=project)
    assert len(brief["shown"]) >= 5
    assert message_tokens(build(context)) <= small.prompt_tokens
