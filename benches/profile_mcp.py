"""Where a warm ``vba mcp`` case_query spends its time, stage by stage.

    .venv/bin/python -m benches.profile_mcp                 # stage table (min / median)
    .venv/bin/python -m benches.profile_mcp --stdio 200     # + N calls through the SDK client
    .venv/bin/python -m benches.profile_mcp --stdio 200 --profile client OUT.prof
    .venv/bin/python -m benches.profile_mcp --stdio 200 --profile server OUT.prof

The package and the batch are those of ``benches/bench_mcp.py`` (8 sources of
~256 KiB, a 10,000-row snapshot, 7 requests, a 33 KB result). The stages run
in this process, each timed on its own: the library call, ``McpTools.call``
(router, durable call record, text), the SDK's server-side shaping of the
result (the result dict, the SDK's validation and dump of it, the JSON-RPC line), and the
client's side (parsing the line, the outputSchema check with ``jsonschema``
as ``mcp.client.session.ClientSession`` builds it). ``--profile server`` runs
the server under ``cProfile`` (its main thread: the SDK's event loop; the
tool itself runs in a worker thread, see the in-process stages for it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from jsonschema import exceptions as jsonschema_exceptions
from jsonschema.validators import validator_for
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import methods
from referencing import Registry

from benches.bench_mcp import ROWS, batch
from benches.bench_search import _real_source_members
from tests.tools.package_factory import build_package
from viano_bug_analysis.mcp_server.rendering import render_case_query
from viano_bug_analysis.mcp_server.server import to_result
from viano_bug_analysis.mcp_server.tools import TEXT_CACHE_BYTES, McpTools
from viano_bug_analysis.profiles import load_profile
from viano_bug_analysis.schemas import load_schema

PROTOCOL = "2025-11-25"


def stages(package: Path, request: dict[str, Any], rounds: int) -> dict[str, list[float]]:
    router = load_profile("vcore").router()
    router.cache_source_texts(TEXT_CACHE_BYTES)
    tools = McpTools(package, load_profile("vcore").router())
    schema = load_schema("investigation-result-v1")
    check = validator_for(schema)(schema, registry=Registry())
    times: dict[str, list[float]] = {}

    def timed(name: str, work: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        value = work(*args, **kwargs)
        times.setdefault(name, []).append(time.perf_counter() - start)
        return value

    router.query(package, request)
    tools.call("case_query", request)
    for _ in range(rounds):
        result = timed("library: router.query", router.query, package, request)
        timed("  text rendering of that result", render_case_query, result)
        outcome = timed(
            "McpTools.call (router, call record, text)", tools.call, "case_query", request
        )
        wire = timed("server: the result as a dict (to_result)", to_result, outcome)
        dumped = timed("server: SDK copy of that dict", dict, wire)
        shaped = timed(
            "server: SDK result validation + dump",
            methods.serialize_server_result,
            "tools/call",
            PROTOCOL,
            dumped,
        )
        message = types.JSONRPCResponse(jsonrpc="2.0", id=1, result=shaped)
        line = timed(
            "server: SDK JSON-RPC line", message.model_dump_json, by_alias=True, exclude_unset=True
        )
        parsed = timed(
            "client: SDK parse of the line",
            types.jsonrpc_message_adapter.validate_json,
            line,
            by_name=False,
        )
        content = types.CallToolResult.model_validate(parsed.result).structured_content
        timed(
            "client: outputSchema check (jsonschema)",
            lambda document: jsonschema_exceptions.best_match(check.iter_errors(document)),
            content,
        )
    return times


async def stdio_calls(
    package: Path, request: dict[str, Any], calls: int, profile: tuple[str, str] | None
) -> list[float]:
    import cProfile

    args = ["-m", "viano_bug_analysis.cli", "mcp", "--package", str(package)]
    if profile is not None and profile[0] == "server":
        args = ["-m", "cProfile", "-o", profile[1], *args]
    params = StdioServerParameters(command=sys.executable, args=args, env={})
    client = cProfile.Profile() if profile is not None and profile[0] == "client" else None
    times = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("case_query", request)
        if client is not None:
            client.enable()
        for _ in range(calls):
            start = time.perf_counter()
            answer = await session.call_tool("case_query", request)
            times.append(time.perf_counter() - start)
            assert not answer.is_error
        if client is not None:
            client.disable()
            client.dump_stats(profile[1])  # type: ignore[index]
    return times


def _line(name: str, values: list[float]) -> str:
    low, middle = min(values) * 1e3, statistics.median(values) * 1e3
    return f"{name:44s} {low:8.2f} {middle:8.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--stdio", type=int, default=0, metavar="CALLS")
    parser.add_argument("--profile", nargs=2, metavar=("client|server", "OUT"))
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        rows = [{"entry": i, "name": f"creature {i}", "faction": i % 37} for i in range(ROWS)]
        built = build_package(
            Path(directory),
            sources=dict(_real_source_members(8, 256 * 1024)),
            database={"db/creature_template.json": json.dumps(rows).encode()},
        )
        request = batch(built)
        print(f"{'stage':44s} {'min ms':>8s} {'median':>8s}")
        for name, values in stages(built.path, request, options.rounds).items():
            print(_line(name, values))
        if options.stdio:
            profile = tuple(options.profile) if options.profile else None
            calls = anyio.run(stdio_calls, built.path, request, options.stdio, profile)
            print(_line(f"through the SDK client ({options.stdio} calls)", calls))


if __name__ == "__main__":
    main()
