"""LLM configuration, message checks and the invalid-response counter."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from viano_bug_analysis.errors import InvalidArgumentError
from viano_bug_analysis.investigation.llm import (
    ApiKey,
    InvalidResponseCounter,
    LlmConfig,
    LlmError,
    build_request,
)


def config(**changes: Any) -> LlmConfig:
    values: dict[str, Any] = {"base_urls": ("http://127.0.0.1:8080/v1",), "model": "m"}
    values.update(changes)
    return LlmConfig(**values)


def test_endpoints_append_chat_completions() -> None:
    cfg = config(base_urls=("https://api.example.invalid/v1/", "http://10.0.0.2:11434"))
    first, second = cfg.endpoints()
    assert (first.scheme, first.host, first.port, first.path) == (
        "https",
        "api.example.invalid",
        443,
        "/v1/chat/completions",
    )
    assert (second.port, second.path) == (11434, "/chat/completions")


def test_a_single_url_string_is_one_url() -> None:
    assert config(base_urls="http://127.0.0.1/v1").base_urls == ("http://127.0.0.1/v1",)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://host/v1",
        "http://user:LEAK-CANARY@host/v1",
        "http://host/v1?key=LEAK-CANARY",
        "http://host/v1#frag",
        "http:///v1",
        "http://host:99999/v1",
        "http://ho st/v1",
        "",
    ],
)
def test_bad_base_urls_are_refused_without_echo(url: str) -> None:
    with pytest.raises(LlmError) as caught:
        config(base_urls=("http://ok/v1", url))
    err = caught.value
    assert (err.code, err.details["field"], err.details["index"]) == (
        "llm_config_invalid",
        "base_urls",
        1,
    )
    assert "LEAK-CANARY" not in f"{err} {err!r} {err.details}"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("model", ""),
        ("connect_timeout", 0),
        ("read_timeout", float("nan")),
        ("max_retries", -1),
        ("max_retries", True),
        ("temperature", 3),
        ("max_tokens", 0),
        ("max_reply_bytes", 10),
        ("api_key_env", "NOT-A-NAME"),
        ("json_response", "yes"),
    ],
)
def test_bad_values_are_refused(field: str, value: Any) -> None:
    with pytest.raises(LlmError) as caught:
        config(**{field: value})
    assert caught.value.details["field"] == field


def test_env_and_file_together_are_refused() -> None:
    with pytest.raises(LlmError):
        config(api_key_env="K", api_key_file="/k")


def test_from_mapping() -> None:
    cfg = LlmConfig.from_mapping(
        {"base_url": "http://127.0.0.1:8000/v1", "model": "qwen", "max_retries": 1}
    )
    assert cfg.base_urls == ("http://127.0.0.1:8000/v1",)
    with pytest.raises(LlmError) as caught:
        LlmConfig.from_mapping({"base_urls": ["http://h/v1"], "model": "m", "api_kye": "x"})
    assert caught.value.details["key"] == "api_kye"
    with pytest.raises(LlmError):
        LlmConfig.from_mapping({"model": "m"})


def test_api_key_hides_itself() -> None:
    key = ApiKey("sk-secret")
    assert "sk-secret" not in f"{key} {key!r} {key:>20} {[key]}"
    assert key.reveal() == "sk-secret"
    with pytest.raises(TypeError):
        pickle.dumps(key)


@pytest.mark.parametrize(
    "messages",
    [
        [],
        "hello",
        [{"role": "tool", "content": "x"}],
        [{"role": "user"}],
        [{"role": "user", "content": 3}],
        [{"role": "user", "content": "x", "name": "y"}],
        [{"role": "user", "content": "\ud800"}],
    ],
)
def test_bad_messages_are_refused(messages: Any) -> None:
    with pytest.raises(LlmError) as caught:
        build_request(config(), messages)
    assert caught.value.code == "llm_messages_invalid"


def test_counter_reaches_the_limit_and_stays_there() -> None:
    counter = InvalidResponseCounter(3)
    assert [counter.record_invalid() for _ in range(4)] == [False, False, True, True]
    assert (counter.count, counter.remaining, counter.reached) == (3, 0, True)
    counter.reset()
    assert counter.count == 0


def test_counter_round_trips_through_its_state() -> None:
    counter = InvalidResponseCounter(2)
    counter.record_invalid()
    again = InvalidResponseCounter.from_state(counter.to_state())
    assert again.to_state() == {"count": 1, "limit": 2}
    assert again.record_invalid() is True


@pytest.mark.parametrize(
    "state", [{"count": 3, "limit": 2}, {"count": 0, "limit": 0}, {"count": 0}, []]
)
def test_counter_refuses_bad_state(state: Any) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        InvalidResponseCounter.from_state(state)
    assert caught.value.code == "invalid_response_limit_invalid"
