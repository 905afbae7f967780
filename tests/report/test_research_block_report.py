"""A case blocked because research was unavailable: the report says which provider failed,
why, and what the operator fixes — the same line `vba status` prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.investigation.package_fixtures import (
    built_package,
)
from tests.investigation.research_down import SERVER_TEXT, blocked_by
from tests.report.test_html import parse
from viano_bug_analysis.errors import ResearchUnavailable
from viano_bug_analysis.investigation.checkpoints import CheckpointStore
from viano_bug_analysis.investigation.commands import status_document
from viano_bug_analysis.report import build_report, render_html, render_markdown
from viano_bug_analysis.schemas import schema_validator


def test_the_report_says_why_research_is_unavailable_and_what_to_fix(tmp_path: Path) -> None:
    error = ResearchUnavailable("database", "connection_refused", SERVER_TEXT, {"errno": 2003})
    root = blocked_by(tmp_path, error)
    report = build_report(root)
    assert schema_validator("case-report-v3").is_valid(report)
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
    assert schema_validator("case-report-v3").is_valid(report)
    assert report["state"]["blocked"]["research"] == {
        "fix": "a research provider was unavailable: check the research configuration"
    }
    assert "&lt;b&gt;" not in render_html(report) and "<b>" not in render_html(report)
