"""``vba mcp`` through the MCP SDK's own client, over stdio, in a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp_types as types

from tests.mcp_server.conftest import find_text, lookup, mcp_session, server_command, source_batch
from tests.tools.package_factory import BuiltPackage
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.mcp_server.audit import verify_calls
from viano_bug_analysis.mcp_server.server import META_KEY
from viano_bug_analysis.schemas import load_schema


def vba(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def cli_query(package: BuiltPackage, request: dict[str, Any], tmp_path: Path) -> Any:
    request_file = tmp_path / "request.json"
    request_file.write_text(json.dumps(request))
    done = vba("query", str(package.path), str(request_file))
    return done.returncode, json.loads(done.stdout or done.stderr)


def run(coroutine: Any) -> Any:
    return anyio.run(coroutine)


def test_tools_are_listed_with_the_bundled_schemas(package: BuiltPackage) -> None:
    async def main() -> list[types.Tool]:
        async with mcp_session(package.path) as session:
            return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in run(main)}
    # No --project-config: no project_query.
    assert set(tools) == {"case_query", "case_facts", "case_facts_query", "case_report"}
    assert tools["case_query"].input_schema == load_schema("investigation-request-v1")
    assert tools["case_query"].output_schema == load_schema("investigation-result-v1")
    assert tools["case_facts"].input_schema == load_schema("mcp-no-arguments-v1")
    assert tools["case_facts"].output_schema == load_schema("mcp-case-facts-v1")
    assert tools["case_report"].output_schema == load_schema("mcp-case-report-v1")
    for tool in tools.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True


def test_a_valid_batch_answers_as_vba_query_does(package: BuiltPackage, tmp_path: Path) -> None:
    request = source_batch(
        package, find_text(package, "KilledMonsterCredit"), lookup(package, 91001)
    )

    async def main() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with mcp_session(package.path) as session:
            first = await session.call_tool("case_query", request)
            again = await session.call_tool("case_query", request)
            return first, again

    first, again = run(main)
    code, expected = cli_query(package, request, tmp_path)
    assert code == 0
    assert first.is_error is False
    # Same document, provenance included: hashes, line numbers, row pointers.
    assert first.structured_content == expected
    assert first.structured_content["results"][0]["result"]["matches"][0]["line"] == 2
    assert first.structured_content["results"][1]["result"]["rows"][0]["pointer"] == "/0"
    assert first.meta is not None and again.meta is not None
    assert first.meta[META_KEY]["seq"] == 1 and first.meta[META_KEY]["repeat_of"] is None
    # The identical repeated call is recognized, in the record and the text.
    assert again.structured_content == expected
    assert again.meta[META_KEY]["repeat_of"] == 1
    text = again.content[0]
    assert isinstance(text, types.TextContent) and "identical to call 1" in text.text
    # A client that shows only text still reads the hit, with its reference.
    ref = package.refs["src/npc.cpp"]
    assert f"  {ref}:2: void npc_wolpertinger::JustDied()" in text.text
    assert verify_calls(str(package.path)) == {
        "calls": 2,
        "errors": 0,
        "repeats": 1,
        "captures": 0,
    }


def test_an_invalid_batch_is_a_tool_error_and_nothing_runs(
    package: BuiltPackage, tmp_path: Path
) -> None:
    # The first request is fine, the second names an undeclared source_ref:
    # the whole batch is refused before any handler runs.
    bad = lookup(package, 91001)
    bad["arguments"]["source_ref"] = "db-999"  # type: ignore[index]
    request = source_batch(package, find_text(package, "KilledMonsterCredit"), bad)

    async def main() -> types.CallToolResult:
        async with mcp_session(package.path) as session:
            return await session.call_tool("case_query", request)

    result = run(main)
    code, cli_error = cli_query(package, request, tmp_path)
    assert code == 2
    assert result.is_error is True
    # The same code, message and details as the CLI's error line.
    assert result.structured_content == cli_error
    assert result.structured_content["error"] == "unknown_source_ref"
    jsonschema.validate(result.structured_content, load_schema("mcp-tool-error-v1"))
    layout = PackageLayout(package.path)
    assert layout.files.list(PackageLayout.MCP_RESULTS) in (None, [])
    record = json.loads((package.path / PackageLayout.MCP_CALLS / "00000001.json").read_bytes())
    assert record["outcome"] == "error" and record["error"]["code"] == "unknown_source_ref"
    assert record["result_sha256"] is None
    assert verify_calls(str(package.path))["errors"] == 1


def test_arguments_that_choose_a_path_or_anything_else_are_refused(
    package: BuiltPackage,
) -> None:
    batch = source_batch(package, find_text(package, "KilledMonsterCredit"))
    with_path = {**batch, "package_path": "/etc"}
    member_path = source_batch(
        package,
        {
            "operation": "source.read_context",
            "arguments": {"source_ref": "../../etc/passwd", "start_line": 1, "end_line": 2},
        },
    )
    sql = source_batch(package, lookup(package, 91001))
    sql["requests"][0]["arguments"]["sql"] = "SELECT * FROM creature_template"  # type: ignore[index]

    async def main() -> list[types.CallToolResult]:
        async with mcp_session(package.path) as session:
            return [
                await session.call_tool("case_query", with_path),
                await session.call_tool("case_query", member_path),
                await session.call_tool("case_query", sql),
                await session.call_tool("case_facts", {"package": "/tmp/other"}),
                await session.call_tool("case_report", {"path": "/etc/passwd"}),
                await session.call_tool("project_query", {"kind": "database.tables"}),
            ]

    results = run(main)
    assert all(result.is_error for result in results)
    codes = [result.structured_content["error"] for result in results]
    assert codes == [
        "unknown_field",
        "request_invalid",
        "unknown_field",
        "mcp_arguments_invalid",
        "mcp_arguments_invalid",
        "mcp_tool_unknown",
    ]
    details = [result.structured_content["details"] for result in results]
    assert details[0]["path"] == "/package_path" and details[0]["property"] == "package_path"
    assert details[1]["path"] == "/requests/0/arguments/source_ref"
    assert details[2]["path"] == "/requests/0/arguments/sql"
    assert details[3]["path"] == "/package"
    assert "project_query" not in details[5]["allowed"]
    # No error repeats what was asked for.
    for result in results:
        text = json.dumps(result.structured_content) + result.content[0].text
        assert "passwd" not in text and "SELECT" not in text and "/tmp/other" not in text


def test_case_facts_and_case_report(package: BuiltPackage) -> None:
    async def main() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with mcp_session(package.path) as session:
            return await session.call_tool("case_facts", {}), await session.call_tool(
                "case_report", {}
            )

    facts, report = run(main)
    assert facts.is_error is False and report.is_error is False
    content = facts.structured_content
    assert content["case_id"] == package.manifest["case_id"]
    assert content["analysis_revision"] == package.manifest["analysis_revision"]
    assert {s["source_ref"] for s in content["sources"]} == set(package.refs.values())
    assert content["facts"] == []  # built without ProjectResearch
    assert report.structured_content["markdown"].startswith("# Case BUG")
    assert report.content[0].text == report.structured_content["markdown"]
    assert verify_calls(str(package.path))["calls"] == 2


def test_the_server_exits_cleanly_when_stdin_closes(package: BuiltPackage) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    with subprocess.Popen(
        [sys.executable, *server_command(package.path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(initialize).encode() + b"\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        assert answer["id"] == 1
        assert answer["result"]["serverInfo"]["name"] == "viano-bug-analysis"
        process.stdin.close()  # the client goes away
        assert process.wait(timeout=60) == 0
        assert process.stderr is not None
        out, err = process.stdout.read(), process.stderr.read()
    assert process.returncode == 0
    assert out == b""
    assert b"Traceback" not in err


def test_a_package_that_does_not_load_is_no_session(tmp_path: Path) -> None:
    for extra in ((), ("--verify",)):
        done = vba("mcp", "--package", str(tmp_path / "missing"), *extra)
        assert done.returncode == 2
        line = json.loads(done.stderr)
        assert line["error"] == "package_missing" or line["error"].startswith("manifest")
        assert "Traceback" not in done.stderr


def test_vba_mcp_verify_checks_the_audit_trail(package: BuiltPackage) -> None:
    async def main() -> None:
        async with mcp_session(package.path) as session:
            await session.call_tool("case_facts", {})
            await session.call_tool("case_facts", {})

    run(main)
    done = vba("mcp", "--package", str(package.path), "--verify")
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"calls": 2, "errors": 0, "repeats": 1, "captures": 0}
    (package.path / PackageLayout.MCP_CALLS / "00000001.json").unlink()
    done = vba("mcp", "--package", str(package.path), "--verify")
    assert done.returncode == 5
    assert json.loads(done.stderr)["error"] == "mcp_audit_corrupt"
