"""The report of a case built and investigated with project research (real MariaDB and
git): enrichment facts with their provenance, and a citation of a database row whose
origin is the capture hash and the row pointer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.case.builder.conftest import ResearchSetup, case_spec
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.report.test_html import parse
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.enrichment import research_origin, vcore_profile
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.llm import ChatClient, LlmConfig
from viano_bug_analysis.project_research import ProjectResearch, load_config
from viano_bug_analysis.report import build_report, render_html, render_markdown
from viano_bug_analysis.schemas import schema_validator

pytestmark = pytest.mark.integration

ROWS = {
    "kind": "tool",
    "operation": "project.query",
    "arguments": {
        "kind": "database.rows",
        "table": "quest_template",
        "columns": ["ID", "LogTitle", "RequiredNpcOrGo1"],
        "filters": [{"column": "ID", "operator": "eq", "value": 90001}],
        "offset": 0,
        "limit": 5,
    },
}


def answer(next_step: dict[str, Any], evidence: list[dict[str, str]], **fields: Any) -> str:
    return orjson.dumps(
        {
            "hypothesis_id": "H1",
            "assessment": fields.get("assessment", "undetermined"),
            "confidence": fields.get("confidence", 0.4),
            "evidence": evidence,
            "next": next_step,
        }
    ).decode()


SCRIPT = [
    answer(ROWS, []),
    answer(
        {"kind": "conclusion", "summary": "The quest asks for another creature."},
        [{"evidence_id": "E1", "role": "supports", "reference": "/rows/0/RequiredNpcOrGo1"}],
        assessment="supported",
        confidence=0.75,
    ),
]


def test_a_research_case_report_shows_facts_and_row_citations(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    config = load_config(research_setup.config_path)
    package = tmp_path / "package"
    with ProjectResearch(config) as research:
        CaseBuilder(
            case_spec(tmp_path / "inputs"),
            package,
            profile=vcore_profile(),
            project_research=research,
            research_origin=research_origin(config),
        ).build()
        with ScriptedLlmServer(SCRIPT) as server:
            client = ChatClient(LlmConfig(base_urls=(server.base_url,), model="m", max_retries=0))
            settings = InvestigationSettings(response_recovery_version=1)
            outcome = InvestigationController(
                package, model=client, settings=settings, research=research
            ).run()
    assert outcome.state == "concluded"
    report = build_report(package)
    assert schema_validator("case-report-v3").is_valid(report)
    rows = [row for table in report["fact_tables"] for row in table["rows"]]
    assert rows and all(table["title"] for table in report["fact_tables"])
    cited_rows = [row for row in rows if row["source"] and row["source"]["sha256"]]
    assert cited_rows, "enrichment facts keep the capture they were read from"
    assert all(row["source"]["capture_path"].endswith(".json") for row in cited_rows)
    (citation,) = report["hypotheses"][0]["citations"]
    assert citation["verification"] == "verified"
    assert citation["evidence"]["kind"] == "project_query"
    assert citation["provenance"]["capture_sha256"] == citation["evidence"]["capture_sha256"]
    assert "row_pointer" in citation["provenance"] or "pointer" in str(citation["provenance"])
    page = parse(render_html(report))
    shown = page.text_by_id[citation["anchor"]]
    assert citation["value_sha256"] in shown and citation["evidence"]["capture_sha256"] in shown
    fact = cited_rows[0]
    assert fact["source"]["sha256"] in page.text_by_id[f"fact-{fact['fact_id']}"]
    assert fact["source"]["pointer"] in page.text_by_id[f"fact-{fact['fact_id']}"]
    assert citation["value_sha256"] in render_markdown(report)
