"""A repeated key in a tool call is refused as ``vba query`` refuses it, not resolved.

The SDK parses a JSON-RPC line with the last of two equal keys winning; the
server reads the raw line first (``mcp_server.wire``). These tests speak raw
JSON-RPC to a real ``vba mcp`` subprocess, since the SDK's client cannot send
a repeated key.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.mcp_server.conftest import find_text, server_command, source_batch
from tests.tools.package_factory import BuiltPackage
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.mcp_server.audit import verify_calls
from viano_bug_analysis.mcp_server.wire import (
    DUPLICATE_KEY_META,
    duplicate_key_offset,
    mark_duplicate_keys,
)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call_line(request_id: int, name: str, arguments: Any, *, meta: Any = None) -> str:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    )


def repeat_text(line: str, first: str, last: str) -> str:
    """``line`` with ``"text": first`` put before its ``"text": last`` in the same object."""
    needle = f'"text": "{last}"'
    assert line.count(needle) == 1
    return line.replace(needle, f'"text": "{first}", {needle}')


class Raw:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def answer(self) -> Any:
        assert self.process.stdout is not None
        return json.loads(self.process.stdout.readline())


@contextmanager
def raw_server(package: BuiltPackage) -> Iterator[Raw]:
    with subprocess.Popen(
        [sys.executable, *server_command(package.path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        raw = Raw(process)
        raw.send(json.dumps(INITIALIZE))
        assert raw.answer()["id"] == 0
        raw.send(json.dumps(INITIALIZED))
        yield raw
        assert process.stdin is not None and process.stderr is not None
        process.stdin.close()
        assert process.wait(timeout=60) == 0
        assert b"Traceback" not in process.stderr.read()


def test_a_repeated_key_in_a_batch_is_refused_and_nothing_runs(package: BuiltPackage) -> None:
    batch = source_batch(package, find_text(package, "KilledMonsterCredit"))
    # Last wins would search for "KilledMonsterCredit" and find it.
    line = repeat_text(call_line(1, "case_query", batch), "nowhere", "KilledMonsterCredit")
    with raw_server(package) as raw:
        raw.send(line)
        answer = raw.answer()
        raw.send(call_line(2, "case_query", batch))  # the same batch without the repeat runs
        clean = raw.answer()
    result = answer["result"]
    assert answer["id"] == 1 and result["isError"] is True
    refusal = result["structuredContent"]
    assert refusal["error"] == "request_invalid"
    assert refusal["details"]["reason"] == "duplicate_key"
    assert "KilledMonsterCredit" not in json.dumps(result)
    assert clean["id"] == 2 and clean["result"]["isError"] is False
    # Only the clean call ran and was recorded.
    assert verify_calls(str(package.path)) == {
        "calls": 1,
        "errors": 0,
        "repeats": 0,
        "captures": 0,
    }


def test_a_repeated_key_anywhere_in_the_call_is_refused(package: BuiltPackage) -> None:
    with raw_server(package) as raw:
        # In the envelope: two tool names, the SDK would take the second.
        raw.send(
            call_line(1, "case_facts", {}).replace('"name": ', '"name": "case_query", "name": ')
        )
        envelope = raw.answer()
        # A tool that takes no arguments: its own code.
        raw.send(
            '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":'
            '{"name":"case_facts","arguments":{"a":1,"a":1}}}'
        )
        facts = raw.answer()
    assert envelope["result"]["structuredContent"]["error"] == "mcp_arguments_invalid"
    assert envelope["result"]["structuredContent"]["details"]["reason"] == "duplicate_key"
    assert facts["result"]["structuredContent"]["error"] == "mcp_arguments_invalid"
    assert not (package.path / PackageLayout.MCP_CALLS).exists() or not any(
        (package.path / PackageLayout.MCP_CALLS).iterdir()
    )


def test_a_client_cannot_set_the_mark_itself(package: BuiltPackage) -> None:
    forged = {DUPLICATE_KEY_META: {"token": "guessed", "offset": 0}}
    with raw_server(package) as raw:
        raw.send(call_line(1, "case_facts", {}, meta=forged))
        answer = raw.answer()
    assert answer["result"]["isError"] is False


def test_lines_without_a_repeated_key_reach_the_sdk_unchanged() -> None:
    for line in (
        call_line(1, "case_query", {"a": [1, {"b": "c"}]}) + "\n",
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":1,"a":2}}\n',
        "not json at all\n",
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":NaN,"a":1,"a":2}}\n',
    ):
        assert mark_duplicate_keys(line, "t") is line


def test_the_mark_keeps_what_the_sdk_would_read_and_says_where() -> None:
    line = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"q",' + (
        '"arguments":{"k":{"a":1,"a":2}},"_meta":{"progressToken":3}}}'
    )
    marked = json.loads(mark_duplicate_keys(line, "t"))
    meta = marked["params"].pop("_meta")
    assert marked == json.loads(line) | {"params": {"name": "q", "arguments": {"k": {"a": 2}}}}
    assert meta["progressToken"] == 3
    assert duplicate_key_offset(meta, "t") == line.index('{"a"')
    assert duplicate_key_offset(meta, "other") is None


def test_stdin_is_moved_off_fd_0_while_serving() -> None:
    script = (
        "import os\n"
        "from viano_bug_analysis.mcp_server.wire import claimed_stdin\n"
        "pipe, null = os.fstat(0).st_ino, os.stat(os.devnull).st_ino\n"
        "with claimed_stdin() as wire:\n"
        "    print(os.fstat(0).st_ino == null, repr(os.read(0, 10)), repr(wire.readline()))\n"
        "print(os.fstat(0).st_ino == pipe)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=b"first\n", capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    # A child reading fd 0 meanwhile sees end of input; afterwards fd 0 is the wire again.
    assert done.stdout.decode().splitlines() == ["True b'' b'first\\n'", "True"]
