"""The real LLM server of the test services, for the tests and benchmarks that need it.

`make test` (scripts/with_test_services.sh) starts llama-cpp-python's
OpenAI-compatible server with SmolLM2-135M-Instruct (scripts/llm_test_server.sh)
and exports VBA_TEST_LLM_BASE_URL and VBA_TEST_LLM_MODEL. Without them the
tests skip, except under CI=true, where a missing server fails the run.

A server that stopped answering is reported with its cause: the script runs it
under scripts/llm_server_wrapper.py, which writes how it ended to
``server.exit`` in its directory (VBA_TEST_LLM_DIR), beside ``server.log``.
"""

from __future__ import annotations

import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

HOW_TO_ENABLE = (
    "run `make test` (builds and starts llama-cpp-python's server with SmolLM2-135M) or "
    "wrap pytest in scripts/with_test_services.sh, or set VBA_TEST_LLM_BASE_URL/VBA_TEST_LLM_MODEL"
)
# The seed is the server's (--seed); temperature 0 in every request makes a
# run repeatable.
TEMPERATURE = 0.0
# The server's own log is its diagnostic (no request or answer text: it runs
# with --verbose False); a failure shows its last lines, each cut short.
LOG_TAIL_LINES = 20
LOG_LINE_CHARS = 300


@dataclass(frozen=True)
class RealLlmServer:
    __test__ = False

    base_url: str
    model: str

    def llm_table(self, **extra: object) -> dict[str, object]:
        """An [llm] table for this server, as an investigation config holds it."""
        return {
            "base_urls": [self.base_url],
            "model": self.model,
            "temperature": TEMPERATURE,
            **extra,
        }


def real_llm_server() -> RealLlmServer:
    """The running server, or a skip (a failure under CI=true) saying how to start one."""
    base_url = os.environ.get("VBA_TEST_LLM_BASE_URL")
    model = os.environ.get("VBA_TEST_LLM_MODEL")
    if not base_url or not model:
        reason = "no real LLM test server configured"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}", pytrace=False)
        pytest.skip(f"{reason}: {HOW_TO_ENABLE}")
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=10) as reply:
            reply.read()
    except OSError as err:
        # urlopen wraps the socket's error: name that one (ConnectionRefusedError).
        failure = type(getattr(err, "reason", err)).__name__
    else:
        return RealLlmServer(base_url, model)
    # Configured but gone: a crash (llama-cpp-python 0.3.36 segfaults when
    # llama.cpp refuses a json_object schema's grammar, docs/llm-adapter.md; a
    # binary the CPU cannot run dies with SIGILL) or a hang. Failed outside the
    # except block: the cause below says more than the chained socket error.
    run_dir = os.environ.get("VBA_TEST_LLM_DIR")
    cause = server_end(Path(run_dir)) if run_dir else "VBA_TEST_LLM_DIR is not set"
    pytest.fail(f"the real LLM test server does not answer ({failure}): {cause}", pytrace=False)


def server_end(run_dir: Path) -> str:
    """How the server of ``run_dir`` ended (or that it has not), and its log's last lines."""
    try:
        status = "the server " + (run_dir / "server.exit").read_text(encoding="utf-8").strip()
    except OSError:
        status = "the server has not ended (no server.exit): it runs but does not answer"
    log = run_dir / "server.log"
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as err:
        return f"{status}; {log} cannot be read ({type(err).__name__})"
    tail = [line[:LOG_LINE_CHARS] for line in lines[-LOG_TAIL_LINES:]]
    if not tail:
        return f"{status}; {log} is empty"
    return f"{status}; last lines of {log}:\n" + "\n".join(tail)


def ended_server() -> str | None:
    """The cause, when the configured server has ended; None while it runs or without one."""
    run_dir = os.environ.get("VBA_TEST_LLM_DIR")
    if not run_dir or not (Path(run_dir) / "server.exit").exists():
        return None
    return server_end(Path(run_dir))


__all__ = [
    "HOW_TO_ENABLE",
    "RealLlmServer",
    "ended_server",
    "real_llm_server",
    "server_end",
]
