"""Already fixed? in the investigation prompt: a built case whose history holds a
candidate fix shows the model the verdict and the candidate with its subject and
reasons first among the leads (facts/brief.py), even where the budget leaves most
facts out.

The case is built against a history the test makes (test_fix_candidates); research
has a source only. The run stops at the first call, which is stored before it is
sent: its brief is what the model would read.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from tests.case.builder.test_fix_candidates import QUEST, SOURCE, Repo, build
from tests.case.builder.test_fix_candidates import repo as repo  # the fixture
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import SETTINGS, Stopped, scripted_client
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.prompts import CURRENT_PROJECT_VERSION, build_messages
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.project_research import ProjectResearch, load_config


def first_call(tmp_path: Path, built: Any) -> dict[str, Any]:
    def stop(point: str) -> None:
        if point == "H1-1-1-call":
            raise Stopped(point)

    config = load_config(tmp_path / "config" / "research.toml")
    with (
        ProjectResearch(config) as research,
        ScriptedLlmServer([]) as probe,
        contextlib.suppress(Stopped),
    ):
        InvestigationController(
            built.package.path,
            model=scripted_client(probe),
            settings=SETTINGS,
            research=research,
            after_step=stop,
        ).run()
    call = StepLog(built.package.path).get("H1", 1, 1, "call")
    assert call is not None
    context: dict[str, Any] = call["context"]
    return context


def test_the_prompt_shows_the_candidate_fix_with_its_subject_and_reasons(
    tmp_path: Path, repo: Repo
) -> None:
    built = build(tmp_path, repo, text=f"Quest {QUEST} cannot be completed.", source=SOURCE)
    (candidate,) = [f for f in built.facts if f["kind"] == "project_fix_candidate"]
    context = first_call(tmp_path, built)
    prompt = "\n".join(m["content"] for m in build_messages(CURRENT_PROJECT_VERSION, context))
    facts_text = context["brief"]["facts_text"]
    leads = facts_text.split("Leads (where to look first", 1)[1]
    # The best candidate first, under the heading.
    first = leads.split("\n")[1]
    assert first.startswith(f"- {candidate['fact_id']} 1. maybe fixed by ")
    assert candidate["subject"] in leads and candidate["subject"] in prompt
    for reason in candidate["reasons"]:
        assert reason["detail"] in leads
    assert "maybe fixed by" in prompt
    assert candidate["fact_id"] not in context["brief"]["left_out"]
    assert context["brief"]["left_out"], "the default budget leaves other facts out"
