"""``project_references`` through ``vba mcp`` with the SDK's stdio client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from tests.mcp_server.conftest import mcp_session
from tests.mcp_server.test_project_query import PASSWORD_ENV, research_setup
from tests.tools.package_factory import BuiltPackage
from viano_bug_analysis.mcp_server.audit import verify_calls
from viano_bug_analysis.schema_errors import check
from viano_bug_analysis.schemas import load_schema

__all__ = ["research_setup"]

pytestmark = pytest.mark.integration


def call(
    package: Path, extra: list[str], env: dict[str, str], calls: list[dict[str, Any]]
) -> tuple[list[types.Tool], list[types.CallToolResult]]:
    async def main() -> tuple[list[types.Tool], list[types.CallToolResult]]:
        async with mcp_session(package, *extra, env=env) as session:
            tools = (await session.list_tools()).tools
            names = {tool.name for tool in tools}
            if "project_references" not in names:
                return tools, []
            return tools, [await session.call_tool("project_references", c) for c in calls]

    return anyio.run(main)


def test_references_answer_as_one_document_with_the_package_s_snapshots(
    package: BuiltPackage, research_setup: tuple[Path, str]
) -> None:
    config, password = research_setup
    tools, (found, unknown, bad) = call(
        package.path,
        ["--project-config", str(config)],
        {PASSWORD_ENV: password},
        [
            {"entity_type": "creature", "id": 91001, "limit": 5},
            {"entity_type": "monster", "id": 1},
            {"entity_type": "quest", "id": 0},
        ],
    )
    listed = {tool.name: tool for tool in tools}
    assert listed["project_references"].output_schema == load_schema("references-v2")
    assert found.is_error is False
    document = found.structured_content
    assert document is not None and check("references-v2", document) is None
    # The package's source names 91001 in KilledMonsterCredit(91001).
    assert [s["count"] for s in document["snapshots"]["sources"]] == [1]
    assert found.content[0].text.startswith("references to creature 91001")  # type: ignore[union-attr]
    assert unknown.is_error and unknown.structured_content["error"] == "entity_type_unknown"  # type: ignore[index]
    assert bad.is_error and bad.structured_content["error"] == "mcp_arguments_invalid"  # type: ignore[index]
    assert verify_calls(str(package.path))["calls"] == 3


def test_without_research_the_tool_is_not_offered(package: BuiltPackage) -> None:
    tools, answers = call(package.path, [], {}, [])
    assert "project_references" not in {tool.name for tool in tools}
    assert "project_query" not in {tool.name for tool in tools}
    assert answers == []
