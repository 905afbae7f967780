"""A case blocked because research was unavailable: the report says which provider failed,
why, and what the operator fixes — the same line `vba status` prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import (
    ROWS,
    SETTINGS,
    answer,
    built_package,
    scripted_client,
)
from tests.report.test_html import parse
from viano_bug_analysis.errors import ResearchUnavailable
from viano_bug_analysis.investigation.checkpoints import CheckpointStore
from viano_bug_analysis.investigation.commands import status_document
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.report import build_report, render_html, render_markdown
from viano_bug_analysis.schemas import schema_validator

SERVER_TEXT = "Access denied for user 'LEAK-CANARY'@'10.0.0.9'"


class DownResearch:
    """Research whose service is down, with a server text no report may show."""

    def __init__(self, error: ResearchUnavailable) -> None:
        self.error = error

    def capture(self, query: object) -> object:
        raise self.error

    def query(self, query: object) -> object:
        raise self.error


def blocked_by(tmp_path: Path, error: ResearchUnavailable) -> Path:
    root = built_package(tmp_path)
    with ScriptedLlmServer([answer(ROWS)]) as server:
        controller = InvestigationController(
            root, model=scripted_client(server), settings=SETTINGS, research=DownResearch(error)
        )
        outcome = controller.run()
    assert (outcome.state, outcome.code) == ("blocked", "RESEARCH_UNAVAILABLE")
    return root


def test_the_report_says_why_research_is_unavailable_and_what_to_fix(tmp_path: Path) -> None:
    error = ResearchUnavailable("database", "connection_refused", SERVER_TEXT, {"errno": 2003})
    root = blocked_by(tmp_path, error)
    report = build_report(root)
    assert schema_validator("case-report-v1").is_valid(report)
    blocked = report["state"]["blocked"]
    assert blocked["code"] == "RESEARCH_UNAVAILABLE"
    research = blocked["research"]
    assert (research["provider"], research["reason"]) == ("database", "connection_refused")
    assert "variable" not in research
    assert research["fix"].startswith(
        "research provider database unavailable (connection_refused): "
    )
    assert "database.host and database.port" in research["fix"]
    # One mechanism: the report's line is the one `vba status` shows.
    assert research == status_document(root)["blocked"]["research"]

    page = parse(render_html(report))
    assert page.text_by_id["research-fix"] == research["fix"]
    markdown = render_markdown(report)
    assert "> research provider database unavailable (connection\\_refused): " in markdown
    for text in (repr(report), render_html(report), markdown):
        assert "LEAK-CANARY" not in text and "10.0.0.9" not in text


def test_a_missing_password_variable_is_named_in_the_report(tmp_path: Path) -> None:
    error = ResearchUnavailable(
        "database", "credentials_missing", SERVER_TEXT, {"variable": "VBA_DB_PASSWORD"}
    )
    report = build_report(blocked_by(tmp_path, error))
    research = report["state"]["blocked"]["research"]
    assert research["variable"] == "VBA_DB_PASSWORD"
    assert "set the environment variable VBA_DB_PASSWORD" in research["fix"]
    assert "VBA\\_DB\\_PASSWORD" in render_markdown(report)


@pytest.mark.parametrize("payload", [{}, {"provider": "ftp", "reason": "<b>x</b>"}])
def test_a_block_stored_without_a_known_cause_gets_the_generic_fix(
    tmp_path: Path, payload: dict[str, str]
) -> None:
    root = built_package(tmp_path)
    store = CheckpointStore(root)
    store.advance("investigation")
    store.advance("blocked", code="RESEARCH_UNAVAILABLE", resume_state="investigation", **payload)
    report = build_report(root)
    assert schema_validator("case-report-v1").is_valid(report)
    assert report["state"]["blocked"]["research"] == {
        "fix": "a research provider was unavailable: check the research configuration"
    }
    assert "&lt;b&gt;" not in render_html(report) and "<b>" not in render_html(report)
