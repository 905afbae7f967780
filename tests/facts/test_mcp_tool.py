"""The case_facts_query MCP tool: the same facts_query behind the MCP face, recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.case.builder.conftest import CountingResearch, ResearchSetup
from tests.case.builder.test_enrichment_facts import build
from tests.tools.package_factory import build_package
from viano_bug_analysis.mcp_server.tools import McpTools, project_query_kinds
from viano_bug_analysis.profiles import load_profile
from viano_bug_analysis.schema_errors import check
from viano_bug_analysis.schemas import load_schema


def tools(package: Path) -> McpTools:
    return McpTools(package, load_profile("vcore").router())


def test_offered_with_its_schemas(tmp_path: Path) -> None:
    package = build_package(tmp_path, sources={"src/a.cpp": b"int a;\n"})
    spec = next(s for s in tools(package.path).specs() if s.name == "case_facts_query")
    assert spec.input_schema == load_schema("case-facts-query-v1")
    assert spec.output_schema == load_schema("case-facts-result-v1")
    assert "at most 50" in spec.description


def test_a_package_without_research_has_no_facts(tmp_path: Path) -> None:
    package = build_package(tmp_path, sources={"src/a.cpp": b"int a;\n"})
    outcome = tools(package.path).call("case_facts_query", {"text": "quest"})
    assert outcome.is_error is False
    assert outcome.structured == {"facts": [], "total": 0, "offset": 0, "next_offset": None}
    assert outcome.recorded is not None


def test_a_bad_argument_is_refused_with_the_code_and_recorded(tmp_path: Path) -> None:
    package = build_package(tmp_path, sources={"src/a.cpp": b"int a;\n"})
    outcome = tools(package.path).call("case_facts_query", {"limit": 500})
    assert outcome.is_error is True
    assert outcome.structured["error"] == "facts_query_invalid"
    assert outcome.structured["details"]["path"] == "/limit"
    assert outcome.recorded is not None


def test_project_query_names_the_kinds_of_its_schema() -> None:
    kinds = load_schema("project-query-v1")["properties"]["kind"]["enum"]
    assert project_query_kinds() == kinds


@pytest.mark.integration
def test_facts_of_a_real_build_by_entity(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    build(tmp_path, counting, research_setup)
    outcome = tools(tmp_path / "package").call(
        "case_facts_query", {"entity": {"type": "quest", "id": 90001}, "limit": 5}
    )
    assert outcome.is_error is False, outcome.text
    assert check("case-facts-result-v1", outcome.structured) is None
    page = outcome.structured
    assert page["facts"] and page["total"] >= len(page["facts"])
    assert outcome.text.startswith(f"facts 1-{len(page['facts'])} of {page['total']}:")


def test_the_calls_verify_in_the_audit_trail(tmp_path: Path) -> None:
    from viano_bug_analysis.mcp_server.audit import verify_calls

    package = build_package(tmp_path, sources={"src/a.cpp": b"int a;\n"})
    server = tools(package.path)
    server.call("case_facts_query", {"limit": 3})
    server.call("case_facts_query", {"limit": 300})
    assert verify_calls(str(package.path)) == {
        "calls": 2,
        "errors": 1,
        "repeats": 0,
        "captures": 0,
    }
