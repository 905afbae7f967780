"""``client_records``: the client.records kind as a vba mcp tool, logged and captured."""

from __future__ import annotations

from pathlib import Path

from tests.project_research.test_client_data import HeaderGit, research  # noqa: F401 (fixture)
from tests.tools.package_factory import BuiltPackage
from viano_bug_analysis.mcp_server.audit import verify_calls
from viano_bug_analysis.mcp_server.tools import McpTools
from viano_bug_analysis.profiles import load_profile
from viano_bug_analysis.project_research import ProjectResearch


def test_the_tool_answers_and_logs_like_project_query(
    package: BuiltPackage,
    research: ProjectResearch,  # noqa: F811
) -> None:
    tools = McpTools(package.path, load_profile("vcore").router(), research=research)
    assert "client_records" in {spec.name for spec in tools.specs()}
    outcome = tools.call(
        "client_records", {"table": "spell", "ids": [75048], "offset": 0, "limit": 5}
    )
    assert outcome.recorded is not None and outcome.recorded.capture_sha256 is not None
    assert outcome.structured["result"]["records"][0]["fields"]["name"] == "Stealth"
    refused = tools.call("client_records", {"table": "spell", "offset": 0, "limit": 5})
    assert refused.is_error and "query_invalid" in refused.text
    verify_calls(Path(package.path))


def test_without_client_data_there_is_no_tool(package: BuiltPackage, tmp_path: Path) -> None:
    from tests.project_research.research_fakes import COMMIT, URL, make_config

    config = make_config(
        tmp_path, f'[source]\nrepository = "r"\nurl = "{URL}"\ncommit = "{COMMIT}"\n'
    )
    tools = McpTools(
        package.path,
        load_profile("vcore").router(),
        research=ProjectResearch(config, git=HeaderGit()),
    )
    assert "client_records" not in {spec.name for spec in tools.specs()}
