"""The chat-completions client against the scripted loopback server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.investigation.llm.scripted_llm_server import (
    SECRET_ERROR_BODY,
    SECRET_ERROR_HEADER,
    ScriptedLlmServer,
    drop,
    hang,
    oversize,
    raw,
    refused_url,
    reply,
    status,
)
from viano_bug_analysis.investigation.llm import (
    ChatClient,
    LlmConfig,
    LlmError,
    TokenUsage,
)

KEY = "sk-test-LEAK-CANARY-key-0123456789"
PROMPT = "LEAK-CANARY-prompt: why does the Wolpertinger quest not start?"
MESSAGES = [
    {"role": "system", "content": "You investigate bug reports."},
    {"role": "user", "content": PROMPT},
]
CANARIES = ("LEAK-CANARY", KEY, PROMPT)


class Sleeps:
    """Records backoff sleeps instead of sleeping."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def server() -> Iterator[ScriptedLlmServer]:
    with ScriptedLlmServer() as running:
        yield running


def make_client(
    *urls: str, sleeps: Sleeps | None = None, env: dict[str, str] | None = None, **options: Any
) -> ChatClient:
    settings: dict[str, Any] = {
        "model": "test-model",
        "api_key_env": "VBA_TEST_LLM_KEY",
        "connect_timeout": 2.0,
        "read_timeout": 2.0,
        "max_retries": 2,
        "backoff_initial": 0.5,
        "backoff_max": 4.0,
    }
    settings.update(options)
    return ChatClient(
        LlmConfig(base_urls=urls, **settings),
        environ={"VBA_TEST_LLM_KEY": KEY} if env is None else env,
        sleep=sleeps or Sleeps(),
    )


def assert_no_leak(err: BaseException) -> None:
    shown = f"{err} {err!r} {getattr(err, 'details', '')}"
    for canary in CANARIES:
        assert canary not in shown
    assert SECRET_ERROR_BODY.decode() not in shown
    assert err.__cause__ is None
    assert err.__suppress_context__ or err.__context__ is None


# -- success ----------------------------------------------------------------------


def test_a_reply_returns_content_usage_and_call_facts(server: ScriptedLlmServer) -> None:
    server.add(reply('{"ok": true}', prompt_tokens=120, completion_tokens=30))
    result = make_client(server.base_url).chat(MESSAGES)
    assert result.content == '{"ok": true}'
    assert result.usage == TokenUsage(120, 30, 150)
    assert (result.model, result.finish_reason) == ("scripted-model", "stop")
    assert (result.endpoint_index, result.attempts) == (0, 1)
    assert result.latency_ms >= 0
    assert '{"ok"' not in repr(result)  # the text stays out of reprs


def test_the_request_is_an_openai_chat_completion(server: ScriptedLlmServer) -> None:
    server.add(reply("x"))
    client = make_client(server.base_url, temperature=0.2, max_tokens=512, json_response=True)
    request = client.prepare(MESSAGES)
    result = client.send(request)
    [seen] = server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.content_type == "application/json"
    assert seen.authorization == f"Bearer {KEY}"
    assert seen.model == "test-model"
    assert seen.messages == MESSAGES
    assert seen.body is not None
    assert seen.body["temperature"] == 0.2
    assert seen.body["max_tokens"] == 512
    assert seen.body["response_format"] == {"type": "json_object"}
    assert seen.body["stream"] is False
    assert result.request_sha256 == request.sha256


def test_the_request_hash_is_stable_and_depends_on_content() -> None:
    client = make_client("http://127.0.0.1:9/v1")
    first = client.prepare(MESSAGES)
    assert client.prepare([dict(m) for m in MESSAGES]).sha256 == first.sha256
    other = client.prepare([*MESSAGES, {"role": "assistant", "content": "more"}])
    assert other.sha256 != first.sha256
    assert KEY.encode() not in first.body


def test_no_key_configured_sends_no_authorization(server: ScriptedLlmServer) -> None:
    server.add(reply("x"))
    make_client(server.base_url, api_key_env=None).chat(MESSAGES)
    assert not server.requests[0].has_authorization


def test_missing_usage_is_none_and_model_falls_back(server: ScriptedLlmServer) -> None:
    server.add(reply("x", usage=False, model=None))
    result = make_client(server.base_url).chat(MESSAGES)
    assert result.usage is None
    assert result.model == "test-model"


def test_reply_without_content_length_is_read_to_the_end(server: ScriptedLlmServer) -> None:
    body = json.dumps({"choices": [{"message": {"content": "streamed"}}]}).encode()
    server.add(raw(body, content_length=False))
    assert make_client(server.base_url).chat(MESSAGES).content == "streamed"


def test_to_record_is_canonical_json_safe(server: ScriptedLlmServer) -> None:
    from viano_bug_analysis.case.canonical import canonical_bytes

    server.add(reply("text"))
    record = make_client(server.base_url).chat(MESSAGES).to_record()
    canonical_bytes(record)
    assert record["content"] == "text"
    assert KEY not in json.dumps(record)


# -- retries and failover -------------------------------------------------------


@pytest.mark.parametrize("code", [408, 429, 500, 502, 503, 504])
def test_retryable_statuses_are_retried(server: ScriptedLlmServer, code: int) -> None:
    server.add(status(code), reply("second time"))
    sleeps = Sleeps()
    result = make_client(server.base_url, sleeps=sleeps).chat(MESSAGES)
    assert (result.content, result.attempts) == ("second time", 2)
    assert sleeps.calls == [0.5]


def test_dropped_and_reset_connections_are_retried(server: ScriptedLlmServer) -> None:
    server.add(drop(), drop(reset=True), reply("third"))
    sleeps = Sleeps()
    result = make_client(server.base_url, sleeps=sleeps).chat(MESSAGES)
    assert (result.content, result.attempts) == ("third", 3)
    assert sleeps.calls == [0.5, 1.0]  # exponential backoff between rounds


def test_backoff_is_capped(server: ScriptedLlmServer) -> None:
    server.add(*[status(503)] * 5, reply("late"))
    sleeps = Sleeps()
    client = make_client(server.base_url, sleeps=sleeps, max_retries=5, backoff_max=1.5)
    assert client.chat(MESSAGES).attempts == 6
    assert sleeps.calls == [0.5, 1.0, 1.5, 1.5, 1.5]


def test_failover_to_the_second_url_is_immediate() -> None:
    with ScriptedLlmServer([status(503)]) as first, ScriptedLlmServer(["from b"]) as second:
        sleeps = Sleeps()
        result = make_client(first.base_url, second.base_url, sleeps=sleeps).chat(MESSAGES)
    assert (result.content, result.endpoint_index, result.attempts) == ("from b", 1, 2)
    assert sleeps.calls == []
    assert second.requests[0].messages == MESSAGES


def test_refused_first_url_fails_over(server: ScriptedLlmServer) -> None:
    server.add(reply("backup"))
    result = make_client(refused_url(), server.base_url).chat(MESSAGES)
    assert (result.content, result.endpoint_index) == ("backup", 1)


def test_rounds_try_every_url_then_give_up() -> None:
    with ScriptedLlmServer([status(503)] * 3) as first, ScriptedLlmServer([drop()] * 3) as second:
        sleeps = Sleeps()
        client = make_client(first.base_url, second.base_url, sleeps=sleeps, max_retries=2)
        with pytest.raises(LlmError) as caught:
            client.chat(MESSAGES)
    err = caught.value
    assert err.code == "llm_unavailable"
    assert err.details == {"attempts": 6, "endpoints": 2, "last_reason": "connection_lost"}
    assert (len(first.requests), len(second.requests)) == (3, 3)
    assert sleeps.calls == [0.5, 1.0]
    assert_no_leak(err)


def test_timeout_is_a_transport_error(server: ScriptedLlmServer) -> None:
    server.add(hang(), reply("after timeout"))
    result = make_client(server.base_url, read_timeout=0.3).chat(MESSAGES)
    assert (result.content, result.attempts) == ("after timeout", 2)


def test_persistent_timeouts_end_unavailable(server: ScriptedLlmServer) -> None:
    server.add(hang(), hang())
    client = make_client(server.base_url, read_timeout=0.2, max_retries=1)
    with pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    assert caught.value.code == "llm_unavailable"
    assert caught.value.details["last_reason"] == "timeout"


def test_connection_refused_everywhere_is_unavailable() -> None:
    with pytest.raises(LlmError) as caught:
        make_client(refused_url(), max_retries=1).chat(MESSAGES)
    assert caught.value.details == {
        "attempts": 2,
        "endpoints": 1,
        "last_reason": "connection_refused",
    }


# -- no retry --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (400, "llm_request_rejected"),
        (404, "llm_request_rejected"),
        (413, "llm_request_rejected"),
        (422, "llm_request_rejected"),
        (401, "llm_auth_failed"),
        (403, "llm_auth_failed"),
        (501, "llm_unexpected_status"),
        (302, "llm_unexpected_status"),
    ],
)
def test_refusals_are_final_and_never_retried(code: int, error: str) -> None:
    with ScriptedLlmServer([status(code)]) as first, ScriptedLlmServer(["never"]) as second:
        sleeps = Sleeps()
        with pytest.raises(LlmError) as caught:
            make_client(first.base_url, second.base_url, sleeps=sleeps).chat(MESSAGES)
    err = caught.value
    assert err.code == error
    assert err.details == {"status": code, "endpoint_index": 0, "attempts": 1}
    assert len(first.requests) == 1
    assert second.requests == []  # no failover either
    assert sleeps.calls == []
    assert_no_leak(err)
    assert SECRET_ERROR_HEADER not in f"{err} {err!r} {err.details}"


def test_refusal_after_a_transient_error_reports_its_endpoint() -> None:
    with (
        ScriptedLlmServer([drop()]) as first,
        ScriptedLlmServer([status(401)]) as second,
        pytest.raises(LlmError) as caught,
    ):
        make_client(first.base_url, second.base_url).chat(MESSAGES)
    assert caught.value.code == "llm_auth_failed"
    assert caught.value.details["endpoint_index"] == 1
    assert caught.value.details["attempts"] == 2


# -- unusable 200 replies ----------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"LEAK-CANARY not json",
        b'["LEAK-CANARY"]',
        b'{"choices": []}',
        b'{"choices": [{"message": {"role": "assistant"}}]}',
        b'{"choices": [{"message": {"content": null, "tool_calls": []}}]}',
        b'{"choices": [{"message": {"content": "LEAK-CANARY"}}], "usage": "many"}',
        b'{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -1,'
        b' "completion_tokens": 1}}',
    ],
)
def test_malformed_200_reply_is_invalid_and_not_retried(
    server: ScriptedLlmServer, body: bytes
) -> None:
    server.add(raw(body), reply("never"))
    with pytest.raises(LlmError) as caught:
        make_client(server.base_url).chat(MESSAGES)
    assert caught.value.code == "llm_invalid_reply"
    assert caught.value.details["attempts"] == 1
    assert server.remaining == 1
    assert_no_leak(caught.value)


@pytest.mark.parametrize("content_length", [True, False])
def test_oversize_reply_is_refused_while_reading(
    server: ScriptedLlmServer, content_length: bool
) -> None:
    server.add(oversize(3 * 1024 * 1024, content_length=content_length), reply("never"))
    client = make_client(server.base_url, max_reply_bytes=64 * 1024)
    with pytest.raises(LlmError) as caught:
        client.chat(MESSAGES)
    assert caught.value.code == "llm_reply_too_large"
    assert caught.value.details["limit"] == 64 * 1024
    assert server.remaining == 1


def test_reply_exactly_at_the_limit_is_accepted(server: ScriptedLlmServer) -> None:
    body = json.dumps({"choices": [{"message": {"content": "x"}}]}).encode()
    padded = body[:-1] + b" " * (2048 - len(body)) + b"}"
    server.add(raw(padded, content_length=False))
    assert make_client(server.base_url, max_reply_bytes=2048).chat(MESSAGES).content == "x"


# -- the key -----------------------------------------------------------------------


def test_the_key_never_shows(server: ScriptedLlmServer) -> None:
    client = make_client(server.base_url)
    shown = f"{client!r} {client.config!r} {client.config}"
    assert KEY not in shown
    server.add(status(500), status(401))
    with pytest.raises(LlmError) as caught:
        make_client(server.base_url).chat(MESSAGES)
    assert_no_leak(caught.value)


def test_key_from_file(tmp_path: Path, server: ScriptedLlmServer) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    server.add(reply("x"))
    make_client(server.base_url, api_key_env=None, api_key_file=str(key_file)).chat(MESSAGES)
    assert server.requests[0].authorization == f"Bearer {KEY}"


@pytest.mark.parametrize(
    ("env", "source"),
    [({}, "environment"), ({"VBA_TEST_LLM_KEY": "  "}, "environment")],
)
def test_missing_key_in_environment(env: dict[str, str], source: str) -> None:
    with pytest.raises(LlmError) as caught:
        make_client("http://127.0.0.1:9/v1", env=env)
    assert caught.value.code == "llm_key_missing"
    # The message names the variable and what to do about it (found by the
    # README journey: "no API key found (environment)" said neither).
    assert caught.value.details == {
        "source": source,
        "key": "llm.api_key_env",
        "variable": "VBA_TEST_LLM_KEY",
    }
    assert "VBA_TEST_LLM_KEY" in str(caught.value) and "llm.api_key_file" in str(caught.value)


def test_key_with_a_line_break_is_refused_without_echo(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("sk-LEAK-CANARY\r\nX-Injected: 1")
    with pytest.raises(LlmError) as caught:
        make_client("http://127.0.0.1:9/v1", api_key_env=None, api_key_file=str(key_file))
    assert caught.value.code == "llm_key_missing"
    assert_no_leak(caught.value)
    assert str(tmp_path) not in f"{caught.value} {caught.value.details}"


def test_missing_key_file_names_no_path(tmp_path: Path) -> None:
    missing = tmp_path / "LEAK-CANARY-no-such-file"
    with pytest.raises(LlmError) as caught:
        make_client("http://127.0.0.1:9/v1", api_key_env=None, api_key_file=str(missing))
    assert caught.value.details == {"source": "file", "kind": "FileNotFoundError"}
    assert_no_leak(caught.value)
