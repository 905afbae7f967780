"""The real LLM server of the test services, for the tests and benchmarks that need it.

`make test` (scripts/with_test_services.sh) starts llama-cpp-python's
OpenAI-compatible server with SmolLM2-135M-Instruct (scripts/llm_test_server.sh)
and exports VBA_TEST_LLM_BASE_URL and VBA_TEST_LLM_MODEL. Without them the
tests skip, except under CI=true, where a missing server fails the run.
"""

from __future__ import annotations

import os
import urllib.request
from dataclasses import dataclass

import pytest

HOW_TO_ENABLE = (
    "run `make test` (builds and starts llama-cpp-python's server with SmolLM2-135M) or "
    "wrap pytest in scripts/with_test_services.sh, or set VBA_TEST_LLM_BASE_URL/VBA_TEST_LLM_MODEL"
)
# The seed is the server's (--seed); temperature 0 in every request makes a
# run repeatable.
TEMPERATURE = 0.0


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
        # Configured but gone: llama-cpp-python 0.3.36 ends with a segfault when
        # llama.cpp refuses the grammar of a json_object schema (docs/llm-adapter.md).
        where = os.environ.get("VBA_TEST_LLM_DIR", "its directory")
        pytest.fail(
            f"the real LLM test server does not answer ({type(err).__name__}); "
            f"see {where}/server.log",
            pytrace=False,
        )
    return RealLlmServer(base_url, model)


__all__ = ["HOW_TO_ENABLE", "RealLlmServer", "real_llm_server"]
