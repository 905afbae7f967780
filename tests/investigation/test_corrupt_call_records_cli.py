"""Torn and garbled LLM call records through ``vba investigate``: one typed JSON error
(``call_record_corrupt``) naming the damaged file relative to the package, never a
traceback, and found before the next model request is paid for."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import (
    CONCLUDE,
    answer,
    investigated_package,
    vba,
    write_config,
)
from viano_bug_analysis.exit_codes import ExitCode

CALLS = "analysis/llm/calls"

DAMAGE: dict[str, Callable[[Path], Path]] = {
    "torn": lambda p: _write(p, p.read_bytes()[: len(p.read_bytes()) // 2]),
    "empty": lambda p: _write(p, b""),
    "garbled": lambda p: _write(p, p.read_bytes().replace(b'"call":"', b'"call":"x')),
    "stray file": lambda p: _write(p.with_name("00000002.json"), b"{}"),
    "renamed": lambda p: p.rename(p.with_name(p.name + ".bak")),
}


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Stopped after the first answer's decision: one call record exists.
    return investigated_package(tmp_path_factory.mktemp("calls"), stop_at="H1-1-1-decision")


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_a_damaged_call_record_stops_vba_investigate_before_a_request(
    stopped: Path, tmp_path: Path, how: str
) -> None:
    root = tmp_path / "package"
    subprocess.run(["cp", "-a", str(stopped), str(root)], check=True)
    [record] = sorted((root / CALLS).glob("0*.json"))
    damaged = DAMAGE[how](record)
    with ScriptedLlmServer([answer(CONCLUDE)] * 3) as server:
        done = subprocess.run(
            vba("investigate", str(root), "--config", str(write_config(tmp_path, server))),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == ExitCode.DAMAGED, done.stderr
        error = orjson.loads(done.stderr.strip().splitlines()[-1])
        assert error["error"] == "call_record_corrupt"
        assert error["details"]["path"] == damaged.relative_to(root).as_posix()
        assert server.requests == []  # found before a request was paid for
    assert str(tmp_path) not in done.stderr


def test_an_undamaged_audit_lets_the_run_go_on(stopped: Path, tmp_path: Path) -> None:
    root = tmp_path / "package"
    subprocess.run(["cp", "-a", str(stopped), str(root)], check=True)
    with ScriptedLlmServer([answer(CONCLUDE)] * 3) as server:
        done = subprocess.run(
            vba("investigate", str(root), "--config", str(write_config(tmp_path, server))),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert len(server.requests) == 1
    assert len(list((root / CALLS).glob("0*.json"))) == 2
