"""A tool step's rationale, from the scripted model's answer to the case report.

The model may say in a sentence why it asks a query (``next.rationale``,
issue 14 §4). Through the controller and ``vba report``'s renderers: the
rationale is stored with the step's decision, shown with the step in the
report data, the HTML page and the Markdown text (markup escaped), and it
changes nothing of what the tool was asked or answered.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.report.package_fixture import HOSTILE, answer, built_package, cite, find, investigate
from tests.report.test_html import parse
from viano_bug_analysis.investigation.evidence import EvidenceStore
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.report import build_report, render_html, render_markdown
from viano_bug_analysis.schemas import schema_validator

RATIONALE = f"The log should name the quest the hit credited. {HOSTILE}"
ONE_HYPOTHESIS = [{"id": "H1", "statement": "The net's spell hit gives no quest credit."}]


def script(rationale: str | None) -> list[str]:
    step = find("QuestID")
    if rationale is not None:
        step["rationale"] = rationale
    return [
        answer("H1", step),
        answer(
            "H1",
            {"kind": "conclusion", "summary": "The log shows the quest incomplete."},
            [cite("E1", "/result/matches/0/text")],
            assessment="supported",
            confidence=0.8,
        ),
    ]


def investigated(directory: Path, rationale: str | None) -> Path:
    root = built_package(directory, ONE_HYPOTHESIS)
    with ScriptedLlmServer(script(rationale)) as server:
        assert investigate(root, server).state == "concluded"
    return root


def first_step(report: dict[str, Any]) -> dict[str, Any]:
    steps: list[dict[str, Any]] = report["hypotheses"][0]["steps"]
    return steps[0]


def test_the_rationale_is_stored_with_the_step_and_shown_escaped(tmp_path: Path) -> None:
    root = investigated(tmp_path, RATIONALE)
    decision = StepLog(root).get("H1", 1, 1, "decision")
    assert decision is not None and decision["status"] == "accepted"
    assert decision["response"]["next"]["rationale"] == RATIONALE

    report = build_report(root)
    assert list(schema_validator("case-report-v3").iter_errors(report)) == []
    step = first_step(report)
    assert step["query"]["operation"] == "source.find_text"
    assert step["rationale"] == RATIONALE
    assert step["result"] is not None  # the query, the result and the why, together
    assert report["hypotheses"][0]["steps"][1]["rationale"] is None  # the conclusion

    html = render_html(report)
    page = parse(html)
    assert "script" not in {tag for tag, _ in page.tags}
    assert "img" not in {tag for tag, _ in page.tags}
    steps_text = page.text_by_id["hypothesis-H1"]
    assert f"why: {RATIONALE}" in steps_text  # shown as text, after unescaping
    assert "<script>" not in html and "&lt;script&gt;" in html

    markdown = render_markdown(report)
    (line,) = [x for x in markdown.splitlines() if x.lstrip().startswith("why:")]
    assert "<script" not in line and "&lt;script" in line
    assert "\\[a\\]" in line  # a link stays text
    assert re.search(r"(?<!\\)`", line) is None  # no unescaped backtick opens code


def test_a_step_without_rationale_and_the_tool_call_are_unchanged(tmp_path: Path) -> None:
    with_it = investigated(tmp_path / "with", "Why not.")
    without = investigated(tmp_path / "without", None)
    # The tool was asked the same and answered the same: the rationale is no part
    # of the request, its hash or the evidence.
    records = [EvidenceStore(root).records() for root in (with_it, without)]
    assert [r["request"] for r in records[0]] == [r["request"] for r in records[1]]
    assert [r["result_sha256"] for r in records[0]] == [r["result_sha256"] for r in records[1]]
    step = first_step(build_report(without))
    assert step["rationale"] is None
    assert "why:" not in render_markdown(build_report(without))
    assert "why:" not in render_html(build_report(without))
