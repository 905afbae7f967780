"""tests/real_llm_server.py: a configured server that stopped answering is
reported with how it ended (scripts/llm_server_wrapper.py's server.exit) and
the last lines of its log."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.real_llm_server import LOG_TAIL_LINES, ended_server, real_llm_server, server_end

REPO = Path(__file__).resolve().parents[1]
WRAPPER = REPO / "scripts" / "llm_server_wrapper.py"
# 30 log lines, then the CPU refuses an instruction, as the native build did on
# a VM that advertises AMX without granting its tile state.
DYING_SERVER = (
    "import os, resource, signal; resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); "
    "[print(f'log line {n}', flush=True) for n in range(1, 31)]; "
    "os.kill(os.getpid(), signal.SIGILL)"
)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def dead_server(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    subprocess.run(
        [sys.executable, str(WRAPPER), str(run_dir), sys.executable, "-c", DYING_SERVER],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=True,
    )
    monkeypatch.setenv("VBA_TEST_LLM_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    monkeypatch.setenv("VBA_TEST_LLM_MODEL", "smollm2-135m-instruct")
    monkeypatch.setenv("VBA_TEST_LLM_DIR", str(run_dir))


def test_a_dead_server_fails_naming_its_signal_and_log_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead_server(tmp_path, monkeypatch)
    with pytest.raises(pytest.fail.Exception) as failed:
        real_llm_server()
    message = str(failed.value)
    first_line = message.splitlines()[0]
    assert "does not answer (ConnectionRefusedError)" in first_line
    assert "the server was killed by SIGILL (signal 4)" in first_line
    assert str(tmp_path / "server.log") in first_line
    shown = message.splitlines()[1:]
    assert shown == [f"log line {n}" for n in range(31 - LOG_TAIL_LINES, 31)]


def test_the_cause_is_there_for_a_test_that_was_running_when_it_died(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead_server(tmp_path, monkeypatch)
    cause = ended_server()
    assert cause is not None
    assert cause.startswith("the server was killed by SIGILL (signal 4)")
    assert cause.endswith("log line 30")


def test_a_running_server_has_no_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "server.log").write_text("loading\n")
    monkeypatch.setenv("VBA_TEST_LLM_DIR", str(tmp_path))
    assert ended_server() is None
    assert server_end(tmp_path).startswith("the server has not ended")


def test_long_log_lines_are_cut(tmp_path: Path) -> None:
    (tmp_path / "server.exit").write_text("exited with status 1\n")
    (tmp_path / "server.log").write_text("x" * 5000 + "\n")
    cause = server_end(tmp_path)
    assert cause.startswith("the server exited with status 1; last lines of ")
    assert len(cause.splitlines()[1]) < 5000
