"""Benchmark (the real LLM server): one small chat request to llama-cpp-python's
server with SmolLM2-135M-Instruct, the test services' real server.

* ``baseline-raw-http-post``: the request body POSTed with ``http.client`` and
  the reply read, nothing else: what the server itself takes.
* ``adapter-chat``: the same request through ``ChatClient.chat`` (request
  building, canonical JSON, the transport, the strict reply parse).
* ``adapter-step-grammar``: an investigation step's answer schema compiled to
  a GBNF grammar (``response_format = "grammar"``, what ``auto`` lands on with
  this server), with how many answers hold the step's schema.
* ``server-generate-128``: a plain completion of up to ``GENERATE_TOKENS``
  tokens (``/v1/completions``, no chat template, no format), almost all of it
  generation: the server build's own speed, the row that compares builds
  (``VBA_TEST_LLM_BUILD`` names the build under test; docs/llm-adapter.md has
  the portable build against a native one).

Both ask for at most ``MAX_TOKENS`` tokens at temperature 0 (the server has a
fixed seed); the first two in ``json_object`` mode. The figures of the adapter rows are the
completion tokens per second (server-reported completion tokens over the
median wall time of a call) and how many of the answers were JSON objects.

Needs the real server (VBA_TEST_LLM_BASE_URL, VBA_TEST_LLM_MODEL: `make bench`
starts it through scripts/with_test_services.sh); skipped without it.
"""

from __future__ import annotations

import http.client
import os
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest

from tests.real_llm_server import RealLlmServer
from viano_bug_analysis.investigation.answer_schema import step_schema
from viano_bug_analysis.investigation.llm import ChatClient, LlmConfig
from viano_bug_analysis.jsonio import JsonDecodeError, strict_loads
from viano_bug_analysis.schemas import compiled_validator

GROUP = "llm server: small requests (SmolLM2-135M, llama-cpp-python)"
MAX_TOKENS = 32
ROUNDS = 8
MESSAGES = [
    {"role": "system", "content": "You answer with one JSON object."},
    {"role": "user", "content": 'Give {"status": "ok", "items": [1, 2, 3]} as JSON.'},
]


@pytest.fixture(scope="module")
def server() -> RealLlmServer:
    base_url, model = os.environ.get("VBA_TEST_LLM_BASE_URL"), os.environ.get("VBA_TEST_LLM_MODEL")
    if not base_url or not model:
        pytest.skip("no real LLM server: run `make bench` (scripts/with_test_services.sh)")
    return RealLlmServer(base_url, model)


@pytest.fixture(scope="module")
def config(server: RealLlmServer) -> LlmConfig:
    return LlmConfig(
        base_urls=(server.base_url,),
        model=server.model,
        temperature=0.0,
        max_tokens=MAX_TOKENS,
        json_response=True,
        max_retries=0,
    )


def test_baseline_raw_http_post(benchmark: Any, config: LlmConfig) -> None:
    benchmark.group = GROUP
    benchmark.name = "baseline-raw-http-post"
    benchmark.extra_info["role"] = "reference"
    body = ChatClient(config).prepare(MESSAGES).body

    def post() -> bytes:
        return _post(config.base_urls[0], "/chat/completions", body)

    data = benchmark.pedantic(post, rounds=ROUNDS, warmup_rounds=1)
    assert orjson.loads(data)["usage"]["completion_tokens"] > 0


GENERATE_TOKENS = 128
STORY = "Once upon a time, in a small fishing village by the sea, there lived"


def test_server_generate(benchmark: Any, config: LlmConfig) -> None:
    benchmark.group = GROUP
    benchmark.name = f"server-generate-{GENERATE_TOKENS}"
    body = orjson.dumps(
        {
            "model": config.model,
            "prompt": STORY,
            "max_tokens": GENERATE_TOKENS,
            "temperature": 0.0,
        }
    )
    completion = []

    def post() -> None:
        reply = orjson.loads(_post(config.base_urls[0], "/completions", body))
        completion.append(reply["usage"]["completion_tokens"])

    benchmark.pedantic(post, rounds=ROUNDS, warmup_rounds=1)
    assert completion and all(n > 0 for n in completion)
    if benchmark.stats is None:  # --benchmark-disable
        return
    benchmark.extra_info["figures"] = {
        "generated tokens per second": round(max(completion) / benchmark.stats.stats.median, 1),
        "generated tokens per answer": max(completion),
        "server build": os.environ.get("VBA_TEST_LLM_BUILD", "not named"),
    }


def test_adapter_chat(benchmark: Any, config: LlmConfig) -> None:
    benchmark.group = GROUP
    benchmark.name = "adapter-chat"
    client = ChatClient(config)
    results = []

    def chat() -> None:
        results.append(client.chat(MESSAGES))

    benchmark.pedantic(chat, rounds=ROUNDS, warmup_rounds=1)
    completion = [r.usage.completion_tokens for r in results if r.usage is not None]
    assert completion and all(n > 0 for n in completion)
    if benchmark.stats is None:  # --benchmark-disable
        return
    median = benchmark.stats.stats.median
    benchmark.extra_info["figures"] = {
        "completion tokens per second": round(max(completion) / median, 1),
        "completion tokens per answer": max(completion),
        "JSON object answers": f"{sum(_is_object(r.content) for r in results)}/{len(results)}",
    }


STEP_TOKENS = 160
STEP_MESSAGES = [
    {"role": "system", "content": "You investigate a bug report. Answer with one JSON object."},
    {
        "role": "user",
        "content": "Hypothesis H1: the quest script is not registered. Sources: src-001 "
        "(source_file). Propose the next step.",
    },
]


def test_adapter_step_grammar(benchmark: Any, config: LlmConfig) -> None:
    benchmark.group = GROUP
    benchmark.name = "adapter-step-grammar"
    answer = step_schema("H1", (), research=False, sources={"src-001": "source_file"})
    grammar = LlmConfig(
        base_urls=config.base_urls,
        model=config.model,
        temperature=0.0,
        max_tokens=STEP_TOKENS,
        response_format="grammar",
        max_retries=0,
    )
    client = ChatClient(grammar)
    results = []

    def chat() -> None:
        results.append(client.chat(STEP_MESSAGES, answer=answer))

    benchmark.pedantic(chat, rounds=ROUNDS, warmup_rounds=1)
    assert all(
        r.response_format is not None and r.response_format.type == "grammar" for r in results
    )
    if benchmark.stats is None:  # --benchmark-disable
        return
    validator = compiled_validator(answer.portable)
    held = sum(validator.is_valid(_parsed(r.content)) for r in results)
    completion = [r.usage.completion_tokens for r in results if r.usage is not None]
    benchmark.extra_info["figures"] = {
        "completion tokens per second": round(max(completion) / benchmark.stats.stats.median, 1),
        "completion tokens per answer": max(completion),
        "answers that hold the step schema": f"{held}/{len(results)}",
    }


def _post(base_url: str, path: str, body: bytes) -> bytes:
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=120)
    try:
        connection.request(
            "POST",
            parts.path.rstrip("/") + path,
            body=body,
            headers={"Content-Type": "application/json"},
        )
        return connection.getresponse().read()
    finally:
        connection.close()


def _parsed(text: str) -> Any:
    try:
        return strict_loads(text.encode(), max_bytes=1 << 20)
    except JsonDecodeError:
        return None


def _is_object(text: str) -> bool:
    try:
        return isinstance(strict_loads(text.encode(), max_bytes=1 << 20), dict)
    except JsonDecodeError:
        return False
