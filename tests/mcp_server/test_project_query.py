"""``project_query`` through ``vba mcp`` against the test MariaDB and a real git repository.

The database password reaches the server only through the client's configured
``env`` (the stdio client passes the server HOME, PATH, USER ... and nothing
else), as docs/mcp.md shows. ``make test`` starts the MariaDB; without it these
tests skip (and fail under CI=true).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from tests.mcp_server.conftest import mcp_session
from tests.project_research.conftest import ALLOW, SNAPSHOT_ID, WORLD_DATABASE, TestDatabase
from tests.project_research.git_fixtures import NEEDLE, URL, build_fixture_repo
from tests.tools.package_factory import BuiltPackage
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.mcp_server.audit import verify_calls
from viano_bug_analysis.mcp_server.server import META_KEY
from viano_bug_analysis.project_research.captures import CaptureStore
from viano_bug_analysis.project_research.config import load_config
from viano_bug_analysis.project_research.service import ProjectResearch
from viano_bug_analysis.schemas import load_schema

PASSWORD_ENV = "VBA_MCP_TEST_DB_PASSWORD"

pytestmark = pytest.mark.integration


def write_config(directory: Path, mariadb: TestDatabase, commit: str, repo: Path) -> Path:
    allow = "\n".join(
        f"{database} = {json.dumps(list(tables))}" for database, tables in ALLOW.items()
    )
    config = directory / "project.toml"
    config.write_text(
        f"""
[source]
repository = "{repo}"
url = "{URL}"
commit = "{commit}"

[database]
host = "{mariadb.host}"
port = {mariadb.port}
user = "{mariadb.user}"
password_env = "{PASSWORD_ENV}"
snapshot_id = "{SNAPSHOT_ID}"

[database.allow]
{allow}
""",
        encoding="utf-8",
    )
    return config


@pytest.fixture
def research_setup(tmp_path: Path, mariadb: TestDatabase) -> tuple[Path, str]:
    repo = build_fixture_repo(tmp_path / "repo")
    return write_config(tmp_path, mariadb, repo.first, repo.path), mariadb.password


ROWS = {
    "kind": "database.rows",
    "database": WORLD_DATABASE,
    "table": "creature_template",
    "columns": ["entry", "name"],
    "filters": [{"column": "entry", "operator": "eq", "value": 90002}],
    "offset": 0,
    "limit": 5,
}
SEARCH = {
    "kind": "source.search",
    "text": NEEDLE,
    "case_sensitive": True,
    "path_prefix": "src/game/",
    "offset": 0,
    "limit": 20,
}


def call_all(
    package: Path, config: Path, password: str, calls: list[dict[str, Any]]
) -> tuple[list[types.Tool], list[types.CallToolResult]]:
    async def main() -> tuple[list[types.Tool], list[types.CallToolResult]]:
        async with mcp_session(
            package, "--project-config", str(config), env={PASSWORD_ENV: password}
        ) as session:
            tools = (await session.list_tools()).tools
            return tools, [await session.call_tool("project_query", call) for call in calls]

    return anyio.run(main)


def test_project_queries_answer_with_captures_recorded(
    package: BuiltPackage, research_setup: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, password = research_setup
    tools, (rows, search, rows_again) = call_all(
        package.path, config, password, [ROWS, SEARCH, ROWS]
    )
    listed = {tool.name: tool for tool in tools}
    assert listed["project_query"].input_schema == load_schema("project-query-v1")
    assert listed["project_query"].output_schema == load_schema("project-result-v2")

    monkeypatch.setenv(PASSWORD_ENV, password)
    with ProjectResearch(load_config(config)) as research:
        expected_rows = research.query(ROWS)
        expected_search = research.query(SEARCH)
    assert rows.is_error is False and search.is_error is False
    assert rows.structured_content == expected_rows
    assert rows.structured_content["result"]["rows"] != []
    assert search.structured_content == expected_search
    assert search.structured_content["origin"]["commit"] == load_config(config).source.commit  # type: ignore[union-attr]

    # Each answer is stored as a capture; the repeat is recognized, not new evidence.
    store = CaptureStore(PackageLayout(package.path), PackageLayout.MCP_CAPTURES)
    assert rows.meta is not None and rows_again.meta is not None
    capture = store.get(rows.meta[META_KEY]["capture_sha256"])
    assert capture.result == expected_rows
    assert rows_again.meta[META_KEY]["repeat_of"] == rows.meta[META_KEY]["seq"]
    assert len(store.list()) == 2
    assert verify_calls(str(package.path)) == {
        "calls": 3,
        "errors": 0,
        "repeats": 1,
        "captures": 3,
    }


def test_the_references_kind_is_one_recorded_capture_holding_its_parts(
    package: BuiltPackage, research_setup: tuple[Path, str]
) -> None:
    config, password = research_setup
    query = {"kind": "references", "entity_type": "creature", "id": 90002, "limit": 5}
    _tools, (answer,) = call_all(package.path, config, password, [query])
    assert answer.is_error is False, answer.content
    result = answer.structured_content
    assert result is not None and result["origin"]["kind"] == "references"
    assert result["result"]["database"]["total"] > 0
    text = answer.content[0].text  # type: ignore[union-attr]
    assert text.startswith("references: ") and "references to creature 90002" in text
    store = CaptureStore(PackageLayout(package.path), PackageLayout.MCP_CAPTURES)
    assert answer.meta is not None
    stored = store.get(answer.meta[META_KEY]["capture_sha256"])  # read back strictly
    assert stored.result == result and len(result["result"]["captures"]) > 1
    assert verify_calls(str(package.path))["captures"] == 1


def test_path_table_and_sql_arguments_are_refused(
    package: BuiltPackage, research_setup: tuple[Path, str]
) -> None:
    config, password = research_setup
    outside_table = {**ROWS, "table": "account"}
    outside_database = {**ROWS, "database": "mysql", "table": "user"}
    traversal = {"kind": "source.read", "path": "../../etc/passwd", "start_line": 1, "end_line": 5}
    absolute = {"kind": "source.read", "path": "/etc/passwd", "start_line": 1, "end_line": 5}
    sql_text = {**ROWS, "sql": "SELECT password FROM account"}
    sql_value = {
        **ROWS,
        "filters": [{"column": "name", "operator": "eq", "value": "x' OR '1'='1"}],
    }
    _, results = call_all(
        package.path,
        config,
        password,
        [outside_table, traversal, absolute, sql_text, sql_value, outside_database],
    )
    refused, injected = results[:4], results[4]
    assert [r.is_error for r in refused] == [True] * 4
    # A database is chosen only among the configured ones.
    assert results[5].is_error is True
    assert results[5].structured_content["error"] == "table_not_allowed"
    codes = [r.structured_content["error"] for r in refused]
    assert codes[0] == "table_not_allowed"
    assert codes[1] in {"path_invalid", "query_invalid"}
    assert codes[2] in {"path_invalid", "query_invalid"}
    assert codes[3] == "unknown_field"
    assert refused[3].structured_content["details"]["path"] == "/sql"
    # SQL text in a value is data: it is looked up as a name and matches nothing.
    assert injected.is_error is False
    assert injected.structured_content["result"]["rows"] == []
    for result in results:
        text = json.dumps(result.structured_content) + result.content[0].text  # type: ignore[union-attr]
        assert password not in text and "passwd" not in text
    assert verify_calls(str(package.path))["errors"] == 5


def test_a_wrong_password_ends_the_server_before_it_serves_and_is_never_shown(
    package: BuiltPackage, research_setup: tuple[Path, str]
) -> None:
    # Issue 34: the config preflight refuses the credentials at once (exit 9, its
    # own code), instead of a session whose every project call says "unavailable".
    import os
    import subprocess
    import sys

    config, _ = research_setup
    marker = "not-the-password-7f3a"
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "mcp", "--package", str(package.path),
         "--project-config", str(config)],
        env={**os.environ, PASSWORD_ENV: marker}, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 9, done.stderr
    error = json.loads(done.stderr)
    assert (error["error"], error["details"]["reason"]) == ("research_auth_failed", "auth_failed")
    assert marker not in done.stderr + done.stdout
