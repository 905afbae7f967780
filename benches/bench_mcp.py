"""Benchmark: ``vba mcp`` through the MCP SDK's own stdio client vs the library.

Package: 8 members of ~256 KiB real C/C++ text and a 10,000-row snapshot.
Batch: 4 literal searches over all 8 sources, one symbol search, one
read_context and one lookup.

* ``library_router_query`` (baseline): ``InvestigationToolRouter.query`` in
  this process, warm (attachment digests and the parsed snapshot cached);
* ``library_tools_call``: the same batch through ``McpTools.call`` in this
  process: the router plus the append-only call record (fsyncs) and the text;
* ``mcp_case_query_warm``: the same batch through a running ``vba mcp``
  subprocess over stdio, after a first call (JSON-RPC framing, pydantic, the
  worker thread and the record on top). Target: at most 1.3x the baseline;
* ``mcp_case_query_warm_client_validation_off``: the same with the SDK
  client's ``outputSchema`` validation replaced by a no-op (Python
  ``jsonschema`` over the whole result), to show what framing costs;
* ``sdk_empty_tool``: an SDK low-level stdio server whose one tool answers
  at once (no outputSchema, one worker-thread hop): the floor of any call;
* ``mcp_case_query_cold``: the first call of a freshly started server (the
  start itself not timed): the package's attachments hashed, the snapshot parsed;
* ``heavy_*``: a search-heavy batch (8 case-insensitive searches over 16
  sources of ~512 KiB, 3 matches each). Its result is not small: every
  find_text result names each of the 16 sources it searched with its SHA-256
  and count, so it is 23 KB, 748 JSON values, and the SDK client's
  ``outputSchema`` check of it (~4.4 ms) is most of what the MCP path adds;
  ``heavy_mcp_case_query_warm_client_validation_off`` shows the rest;
* ``mcp_project_query_cold`` / ``_warm``: a database.rows query and a
  source.search through the server against the test MariaDB and a git
  repository (only under scripts/with_test_services.sh, else skipped).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractContextManager, ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from benches.bench_search import _real_source_members
from tests.mcp_server.conftest import mcp_session
from tests.tools.package_factory import BuiltPackage, build_package
from viano_bug_analysis.mcp_server.tools import TEXT_CACHE_BYTES, McpTools
from viano_bug_analysis.profiles import load_profile

GROUP = "mcp: warm case_query (7 requests, 8 sources ~2 MiB, 10k rows) vs the library"
COLD_GROUP = "mcp: cold vs warm case_query through the SDK client"
PROJECT_GROUP = "mcp: cold vs warm project_query through the SDK client"
ROWS = 10_000


@pytest.fixture(scope="module")
def bench_package(tmp_path_factory: pytest.TempPathFactory) -> BuiltPackage:
    root = tmp_path_factory.mktemp("mcp-bench")
    sources = dict(_real_source_members(8, 256 * 1024))
    rows = [{"entry": i, "name": f"creature {i}", "faction": i % 37} for i in range(ROWS)]
    return build_package(
        root, sources=sources, database={"db/creature_template.json": json.dumps(rows).encode()}
    )


def batch(package: BuiltPackage) -> dict[str, Any]:
    sources = [ref for member, ref in package.refs.items() if member.startswith("src/")]
    table = package.refs["db/creature_template.json"]
    page = {"offset": 0, "limit": 20}
    searches = [
        {
            "operation": "source.find_text",
            "arguments": {"source_refs": sources, "text": text, "case_sensitive": True, **page},
        }
        for text in ("return", "include", "static", "size_t")
    ]
    return package.request(
        *searches,
        {
            "operation": "source.find_symbol",
            "arguments": {"source_refs": sources, "symbol": "if", **page},
        },
        {
            "operation": "source.read_context",
            "arguments": {"source_ref": sources[0], "start_line": 1, "end_line": 80},
        },
        {
            "operation": "database.lookup",
            "arguments": {"source_ref": table, "filters": {"faction": 5}, **page},
        },
    )


class Server:
    """A ``vba mcp`` subprocess and its SDK session, driven from synchronous code."""

    def __init__(self, package: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self._stack = ExitStack()
        self.portal: BlockingPortal = self._stack.enter_context(start_blocking_portal())
        manager: AbstractContextManager[Any] = self.portal.wrap_async_context_manager(
            mcp_session(package, *extra, env=env)
        )
        self.session = self._stack.enter_context(manager)

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        result = self.portal.call(self.session.call_tool, tool, arguments)
        assert result.is_error is False, result.structured_content
        return result

    def close(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module")
def warm_server(bench_package: BuiltPackage) -> Iterator[Server]:
    server = Server(bench_package.path)
    server.call("case_query", batch(bench_package))
    yield server
    server.close()


@pytest.mark.benchmark(group=GROUP)
def test_library_router_query(benchmark: Any, bench_package: BuiltPackage) -> None:
    # The router as the server configures it: source texts cached between batches.
    router = load_profile("vcore").router()
    router.cache_source_texts(TEXT_CACHE_BYTES)
    request = batch(bench_package)
    router.query(bench_package.path, request)
    benchmark(router.query, bench_package.path, request)


@pytest.mark.benchmark(group=GROUP)
def test_library_router_query_without_text_cache(
    benchmark: Any, bench_package: BuiltPackage
) -> None:
    router = load_profile("vcore").router()
    request = batch(bench_package)
    router.query(bench_package.path, request)
    benchmark(router.query, bench_package.path, request)


@pytest.mark.benchmark(group=GROUP)
def test_library_tools_call(benchmark: Any, bench_package: BuiltPackage) -> None:
    tools = McpTools(bench_package.path, load_profile("vcore").router())
    request = batch(bench_package)
    tools.call("case_query", request)
    benchmark(tools.call, "case_query", request)


@pytest.mark.benchmark(group=GROUP)
def test_mcp_case_query_warm(
    benchmark: Any, bench_package: BuiltPackage, warm_server: Server
) -> None:
    request = batch(bench_package)
    benchmark(warm_server.call, "case_query", request)


# -- a search-heavy batch with a small result: the fixed cost of the MCP path ---------------

HEAVY_GROUP = "mcp: search-heavy batch (8 searches over 16 sources ~8 MiB, limit 3) vs the library"


@pytest.fixture(scope="module")
def heavy_package(tmp_path_factory: pytest.TempPathFactory) -> BuiltPackage:
    root = tmp_path_factory.mktemp("mcp-heavy")
    return build_package(root, sources=dict(_real_source_members(16, 512 * 1024)))


def heavy_batch(package: BuiltPackage) -> dict[str, Any]:
    sources = sorted(package.refs.values())
    words = ("return", "include", "static", "size_t", "nullptr", "const", "struct", "void")
    return package.request(
        *[
            {
                "operation": "source.find_text",
                "arguments": {
                    "source_refs": sources,
                    "text": word,
                    "case_sensitive": False,
                    "offset": 0,
                    "limit": 3,
                },
            }
            for word in words
        ]
    )


@pytest.mark.benchmark(group=HEAVY_GROUP)
def test_heavy_library_router_query(benchmark: Any, heavy_package: BuiltPackage) -> None:
    router = load_profile("vcore").router()
    router.cache_source_texts(TEXT_CACHE_BYTES)
    request = heavy_batch(heavy_package)
    router.query(heavy_package.path, request)
    benchmark(router.query, heavy_package.path, request)


@pytest.fixture(scope="module")
def heavy_server(heavy_package: BuiltPackage) -> Iterator[Server]:
    server = Server(heavy_package.path)
    server.call("case_query", heavy_batch(heavy_package))
    yield server
    server.close()


@pytest.mark.benchmark(group=HEAVY_GROUP)
def test_heavy_mcp_case_query_warm(
    benchmark: Any, heavy_package: BuiltPackage, heavy_server: Server
) -> None:
    benchmark(heavy_server.call, "case_query", heavy_batch(heavy_package))


class _Accepting:
    def iter_errors(self, _instance: object) -> Iterator[object]:
        return iter(())


@pytest.fixture
def client_validation_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK client's outputSchema check (pure Python ``jsonschema``) as a no-op."""
    monkeypatch.setattr(
        ClientSession, "_output_schema_validator", lambda _self, _name, _schema: _Accepting()
    )


@pytest.mark.benchmark(group=HEAVY_GROUP)
@pytest.mark.usefixtures("client_validation_off")
def test_heavy_mcp_case_query_warm_client_validation_off(
    benchmark: Any, heavy_package: BuiltPackage, heavy_server: Server
) -> None:
    benchmark(heavy_server.call, "case_query", heavy_batch(heavy_package))


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.usefixtures("client_validation_off")
def test_mcp_case_query_warm_client_validation_off(
    benchmark: Any, bench_package: BuiltPackage, warm_server: Server
) -> None:
    """The same call with the SDK client's outputSchema check replaced by a no-op:
    what is left over ``library_tools_call`` is JSON-RPC framing and the thread hop."""
    benchmark(warm_server.call, "case_query", batch(bench_package))


# -- the floor: the SDK's own cost of one call ------------------------------------------------

EMPTY_SERVER = """
import anyio, mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

async def list_tools(_ctx, _params):
    return types.ListToolsResult(tools=[types.Tool(name="empty", input_schema={"type": "object"})])

async def call_tool(_ctx, _params):
    await anyio.to_thread.run_sync(lambda: None)  # the worker-thread hop vba mcp makes
    return types.CallToolResult(content=[types.TextContent(text="ok")])

server = Server("empty", on_list_tools=list_tools, on_call_tool=call_tool)

async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""


@asynccontextmanager
async def _empty_session() -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=["-c", EMPTY_SERVER], env={})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@pytest.mark.benchmark(group=GROUP)
def test_sdk_empty_tool(benchmark: Any) -> None:
    """An SDK low-level server whose one tool answers at once, no outputSchema:
    what any call through the SDK's stdio client costs at least."""
    with ExitStack() as stack:
        portal = stack.enter_context(start_blocking_portal())
        session = stack.enter_context(portal.wrap_async_context_manager(_empty_session()))
        portal.call(session.call_tool, "empty", {})
        benchmark(portal.call, session.call_tool, "empty", {})


def _cold_rounds(benchmark: Any, start: Any, tool: str, arguments: dict[str, Any]) -> None:
    servers: list[Server] = []

    def fresh() -> tuple[tuple[()], dict[str, Any]]:
        while servers:
            servers.pop().close()
        servers.append(start())
        return (), {}

    try:
        benchmark.pedantic(lambda: servers[-1].call(tool, arguments), setup=fresh, rounds=5)
    finally:
        while servers:
            servers.pop().close()


@pytest.mark.benchmark(group=COLD_GROUP)
def test_mcp_case_query_cold(benchmark: Any, bench_package: BuiltPackage) -> None:
    _cold_rounds(benchmark, lambda: Server(bench_package.path), "case_query", batch(bench_package))


@pytest.mark.benchmark(group=COLD_GROUP)
def test_mcp_case_query_warm_again(
    benchmark: Any, bench_package: BuiltPackage, warm_server: Server
) -> None:
    benchmark(warm_server.call, "case_query", batch(bench_package))


# -- project_query against the test MariaDB and a git repository ------------------------------


@pytest.fixture(scope="module")
def project_config(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    port, password_file = (
        os.environ.get("VBA_TEST_DB_PORT"),
        os.environ.get("VBA_TEST_DB_PASSWORD_FILE"),
    )
    if not port or not password_file:
        pytest.skip("needs the test MariaDB: run under scripts/with_test_services.sh (make bench)")
    from tests.mcp_server.test_project_query import PASSWORD_ENV, write_config
    from tests.project_research.conftest import TestDatabase
    from tests.project_research.git_fixtures import build_fixture_repo

    root = tmp_path_factory.mktemp("mcp-project")
    database = TestDatabase(int(port), Path(password_file).read_text().strip(), None)
    repo = build_fixture_repo(root / "repo")
    config = write_config(root, database, repo.first, repo.path)
    return config, {PASSWORD_ENV: database.password}


def _project_server(package: BuiltPackage, setup: tuple[Path, dict[str, str]]) -> Server:
    return Server(package.path, "--project-config", str(setup[0]), env=setup[1])


def _rows() -> dict[str, Any]:
    from tests.mcp_server.test_project_query import ROWS as QUERY

    return dict(QUERY)


@pytest.mark.benchmark(group=PROJECT_GROUP)
def test_mcp_project_query_cold(
    benchmark: Any, bench_package: BuiltPackage, project_config: tuple[Path, dict[str, str]]
) -> None:
    _cold_rounds(
        benchmark, lambda: _project_server(bench_package, project_config), "project_query", _rows()
    )


@pytest.mark.benchmark(group=PROJECT_GROUP)
def test_mcp_project_query_warm(
    benchmark: Any, bench_package: BuiltPackage, project_config: tuple[Path, dict[str, str]]
) -> None:
    server = _project_server(bench_package, project_config)
    try:
        server.call("project_query", _rows())
        benchmark(server.call, "project_query", _rows())
    finally:
        server.close()
