"""The request and the reply of one chat-completions call, as plain data.

``ChatRequest`` is built before anything is sent, so that the controller can
derive an idempotency key from it (``request.sha256``: the SHA-256 of the
exact JSON body that goes over the wire, which never contains the key) and
reserve budget under that key before the call.

``ChatResult`` keeps what the audit needs: the reply text, token usage, the
model that answered, which endpoint answered after how many attempts, and the
latency in whole milliseconds (canonical JSON has no floats). The text is
left out of ``repr`` so that printing a result in a log cannot copy model
output there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard

from viano_bug_analysis.investigation.llm.config import LlmConfig
from viano_bug_analysis.investigation.llm.errors import INVALID_REPLY, MESSAGES_INVALID, LlmError
from viano_bug_analysis.investigation.llm.response_format import (
    AUTO,
    JSON_SCHEMA,
    TEXT,
    AnswerSchema,
    FormatMemory,
    SentFormat,
    wire_format,
)
from viano_bug_analysis.investigation.llm.usage import cached_prompt_tokens
from viano_bug_analysis.jsonio import JsonDecodeError, ordered_bytes, sha256_hex, strict_loads

ROLES = frozenset({"system", "user", "assistant"})
MAX_MESSAGES = 256


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """A prepared request body. Build it with ``build_request``.

    ``response_format`` is the format the body asks for; ``answer`` the answer
    schema it was built with, so that the client can build the same messages
    in the next format when an endpoint refuses this one.
    """

    body: bytes = field(repr=False)
    sha256: str
    message_count: int
    response_format: SentFormat = field(default_factory=lambda: SentFormat(TEXT))
    messages: tuple[Mapping[str, str], ...] = field(default=(), repr=False, compare=False)
    answer: AnswerSchema | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Token counts as the server reported them."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    # Prompt tokens the server took from its prompt cache, where it says so
    # (llm/usage.py); None when the reply does not report it.
    cached_prompt_tokens: int | None = None

    def to_record(self) -> dict[str, int]:
        record = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
        # Only when reported, so records of servers that say nothing keep their bytes.
        if self.cached_prompt_tokens is not None:
            record["cached_prompt_tokens"] = self.cached_prompt_tokens
        return record


@dataclass(frozen=True, slots=True)
class ChatResult:
    """One successful call.

    ``usage`` is ``None`` when the server reported none (then the controller
    should settle the full reservation). ``endpoint_index`` is the position of
    the answering base URL in the config; ``attempts`` counts every HTTP
    attempt of this call, failed ones included.
    """

    content: str = field(repr=False)
    usage: TokenUsage | None
    model: str
    finish_reason: str | None
    endpoint_index: int
    attempts: int
    latency_ms: int
    request_sha256: str
    response_format: SentFormat | None = None

    def to_record(self) -> dict[str, Any]:
        """A canonical-JSON-safe record for the package audit (includes the text)."""
        format_record = {}
        if self.response_format is not None:
            format_record["response_format"] = self.response_format.to_record()
        return {
            **format_record,
            "content": self.content,
            "usage": None if self.usage is None else self.usage.to_record(),
            "model": self.model,
            "finish_reason": self.finish_reason,
            "endpoint_index": self.endpoint_index,
            "attempts": self.attempts,
            "latency_ms": self.latency_ms,
            "request_sha256": self.request_sha256,
        }


class ChatModel(Protocol):
    """What the controller and the case interpreter ask: a ``ChatClient``, or a
    test's scripted model. ``answer`` is the call's answer schema (sent as the
    response format where the configuration asks for one); ``formats`` keeps
    the format chosen per endpoint (the package's, so a resumed run asks the
    same)."""

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        answer: AnswerSchema | None = None,
        formats: FormatMemory | None = None,
    ) -> ChatResult: ...


def build_request(
    config: LlmConfig,
    messages: Sequence[Mapping[str, str]],
    *,
    answer: AnswerSchema | None = None,
    response_format: str | None = None,
) -> ChatRequest:
    """The JSON body for ``messages`` under ``config`` (model, temperature,
    max_tokens, response format). Keys keep the order they are built in, so
    the same call always gives the same bytes and hence the same ``sha256``:
    sorted keys would reorder the answer schema's ``properties``, and a
    server that compiles the schema into a grammar generates them in the
    order given. Each object of the schema names its discriminating constant
    first (``kind``, ``operation``); after the arguments instead, every
    variant stays open while the arguments are generated (llama-cpp-python
    0.3.36 then lost the constraint altogether, docs/llm-adapter.md).

    ``response_format`` is one of the ladder (json_schema, grammar,
    json_object, text);
    without it the configured format is used, ``auto`` starting at json_schema.
    """
    checked = _check_messages(messages)
    body: dict[str, Any] = {"model": config.model, "messages": checked, "stream": False}
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if config.max_tokens is not None:
        body["max_tokens"] = config.max_tokens
    if config.cache_prompt is not None:
        body["cache_prompt"] = config.cache_prompt
    chosen = response_format or (JSON_SCHEMA if config.format == AUTO else config.format)
    members, sent = wire_format(chosen, answer, strict=config.json_schema_strict)
    body.update(members)
    data = ordered_bytes(body)
    return ChatRequest(data, sha256_hex(data), len(checked), sent, tuple(checked), answer)


def _check_messages(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    def bad(reason: str, index: int = -1) -> LlmError:
        return LlmError(
            MESSAGES_INVALID, f"messages are invalid: {reason}", {"reason": reason, "index": index}
        )

    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise bad("messages must be a list")
    if not 0 < len(messages) <= MAX_MESSAGES:
        raise bad(f"between 1 and {MAX_MESSAGES} messages are allowed")
    checked: list[dict[str, str]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or set(message) != {"role", "content"}:
            raise bad("each message has exactly 'role' and 'content'", index)
        role, content = message["role"], message["content"]
        if role not in ROLES:
            raise bad("the role must be system, user or assistant", index)
        if not isinstance(content, str):
            raise bad("the content must be a string", index)
        try:
            content.encode("utf-8")
        except UnicodeEncodeError:
            raise bad("the content is not valid Unicode", index) from None
        checked.append({"role": role, "content": content})
    return checked


def parse_reply(data: bytes) -> tuple[str, TokenUsage | None, str | None, str | None]:
    """``(content, usage, model, finish_reason)`` of a 200 reply body.

    Anything unusable is ``llm_invalid_reply`` with a fixed ``reason``; the
    body itself never goes into the error.
    """
    # Strict like every other parse: with a repeated key, which "choices" or
    # "content" is the answer would depend on the parser. The body is already
    # bounded by max_reply_bytes while reading.
    try:
        document: Any = strict_loads(data, max_bytes=len(data))
    except JsonDecodeError:
        raise _invalid_reply("the body is not JSON") from None
    if not isinstance(document, dict):
        raise _invalid_reply("the body is not a JSON object")
    choices = document.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _invalid_reply("the reply has no choices")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise _invalid_reply("the first choice has no text content")
    finish = first.get("finish_reason")
    model = document.get("model")
    return (
        content,
        _parse_usage(document.get("usage"), cached_prompt_tokens(document)),
        model if isinstance(model, str) and len(model) <= 256 else None,
        finish if isinstance(finish, str) and len(finish) <= 64 else None,
    )


def _parse_usage(usage: object, cached: int | None) -> TokenUsage | None:
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise _invalid_reply("usage is not an object")
    counts: list[int] = []
    for name in ("prompt_tokens", "completion_tokens"):
        value = usage.get(name)
        if not _is_count(value):
            raise _invalid_reply(f"usage.{name} is not a non-negative integer")
        counts.append(value)
    total = usage.get("total_tokens", counts[0] + counts[1])
    if not _is_count(total):
        raise _invalid_reply("usage.total_tokens is not a non-negative integer")
    return TokenUsage(counts[0], counts[1], total, cached)


def _is_count(value: object) -> TypeGuard[int]:
    return type(value) is int and 0 <= value <= 2**53 - 1


def _invalid_reply(reason: str) -> LlmError:
    return LlmError(INVALID_REPLY, f"the LLM reply is unusable: {reason}", {"reason": reason})


__all__ = [
    "ChatModel",
    "ChatRequest",
    "ChatResult",
    "TokenUsage",
    "build_request",
    "parse_reply",
]
