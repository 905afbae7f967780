"""The chat-completions client: failover, retries and backoff around ``post_json``.

Rules (see docs/llm-adapter.md):

* Only transport failures are retried: connection refused, reset or dropped,
  timeouts, DNS and TLS hiccups, and HTTP 408, 429, 500, 502, 503, 504.
* On such a failure the next base URL is tried at once (failover). When every
  base URL of a round has failed, the client sleeps
  ``min(backoff_max, backoff_initial * 2**round)`` seconds and starts the next
  round; after ``max_retries + 1`` rounds it raises ``llm_unavailable``.
* Any other answer ends the call at once: 401/403 (``llm_auth_failed``), other
  4xx (``llm_request_rejected``), other statuses (``llm_unexpected_status``),
  a reply over the size limit (``llm_reply_too_large``) or an unusable 200
  body (``llm_invalid_reply``). Retrying those would spend money on the same
  refusal.
* A refusal of the response format (``llm_format_refused``, recognized by
  what the error body says, whatever the status) is never an outage. Under
  ``response_format = "auto"`` it moves that endpoint one step down the
  ladder json_schema → grammar → json_object → text (stored first) and asks again at
  once; under a fixed format it ends the call.
* A ``grammar`` member is not standard: a server that refuses json_schema
  but does not know ``grammar`` may drop it silently and answer as it likes.
  Under ``auto``, an answer to a grammar request that does not start as the
  grammar's root must (``{``) shows that: the answer is returned as it is
  (the investigation rejects it like any malformed answer, and it was
  billed), and the endpoint's next requests go out as json_object (stored
  first, reason ``grammar_ignored``).

``sleep`` and ``clock`` are injectable so tests run without real waiting.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence

from viano_bug_analysis.investigation.llm.config import ApiKey, LlmConfig, resolve_api_key
from viano_bug_analysis.investigation.llm.errors import FORMAT_REFUSED, UNAVAILABLE, LlmError
from viano_bug_analysis.investigation.llm.messages import (
    ChatRequest,
    ChatResult,
    build_request,
    parse_reply,
)
from viano_bug_analysis.investigation.llm.response_format import (
    AUTO,
    GRAMMAR,
    LADDER,
    TEXT,
    AnswerSchema,
    FormatMemory,
    InMemoryFormats,
    endpoint_key,
    fallback,
)
from viano_bug_analysis.investigation.llm.transport import TransientFailure, post_json


class ChatClient:
    """Calls ``{base_url}/chat/completions`` of an OpenAI-compatible server.

    The API key is read once, here, from the place the config names (see
    ``resolve_api_key``); ``environ`` replaces ``os.environ`` for that lookup.
    """

    def __init__(
        self,
        config: LlmConfig,
        *,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config
        self._endpoints = config.endpoints()
        self._key: ApiKey | None = resolve_api_key(
            config, os.environ if environ is None else environ
        )
        self._sleep = sleep
        self._clock = clock
        self._formats: FormatMemory = InMemoryFormats()
        self._keys = tuple(endpoint_key(url, config.model) for url in config.base_urls)

    @property
    def config(self) -> LlmConfig:
        return self._config

    def __repr__(self) -> str:
        return f"ChatClient(model={self._config.model!r}, endpoints={len(self._endpoints)})"

    def prepare(
        self, messages: Sequence[Mapping[str, str]], *, answer: AnswerSchema | None = None
    ) -> ChatRequest:
        """The request for ``messages``; its ``sha256`` is a stable idempotency key."""
        return build_request(self._config, messages, answer=answer)

    def chat(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        answer: AnswerSchema | None = None,
        formats: FormatMemory | None = None,
    ) -> ChatResult:
        """``send(prepare(messages, answer=answer), formats=formats)``."""
        return self.send(self.prepare(messages, answer=answer), formats=formats)

    def send(self, request: ChatRequest, *, formats: FormatMemory | None = None) -> ChatResult:
        """Sends a prepared request, with failover and retries for transport errors.

        With ``response_format = "auto"`` each endpoint gets the format ``formats``
        (else this client's own memory) holds for it, json_schema at first; a
        format refusal stores the next format of the ladder and asks the same
        endpoint again at once, which is neither a retry nor a failover.
        """
        config = self._config
        memory = formats if formats is not None else self._formats
        attempts = 0
        last_reason = "none"
        for round_index in range(config.max_retries + 1):
            if round_index > 0:
                self._sleep(
                    min(config.backoff_max, config.backoff_initial * 2 ** (round_index - 1))
                )
            for endpoint_index, endpoint in enumerate(self._endpoints):
                current = self._for_endpoint(request, endpoint_index, memory)
                while True:
                    attempts += 1
                    started = self._clock()
                    try:
                        data = post_json(
                            endpoint,
                            current.body,
                            self._key,
                            connect_timeout=config.connect_timeout,
                            read_timeout=config.read_timeout,
                            max_reply_bytes=config.max_reply_bytes,
                            classify_format_refusal=current.response_format.type != TEXT,
                        )
                    except TransientFailure as failure:
                        last_reason = failure.reason
                        data = None
                    except LlmError as err:
                        following = self._fallback(err, current)
                        if following is not None:
                            memory.put(
                                self._keys[endpoint_index], following, str(err.details["reason"])
                            )
                            current = self._rebuilt(request, following)
                            continue
                        err.details.setdefault("endpoint_index", endpoint_index)
                        err.details.setdefault("attempts", attempts)
                        raise
                    break
                if data is None:
                    continue
                latency_ms = max(0, round((self._clock() - started) * 1000))
                try:
                    content, usage, model, finish = parse_reply(data)
                except LlmError as err:
                    err.details.update(endpoint_index=endpoint_index, attempts=attempts)
                    raise
                if self._grammar_ignored(current, content):
                    following = fallback(GRAMMAR)
                    assert following is not None
                    memory.put(self._keys[endpoint_index], following, "grammar_ignored")
                return ChatResult(
                    content=content,
                    usage=usage,
                    model=model or config.model,
                    finish_reason=finish,
                    endpoint_index=endpoint_index,
                    attempts=attempts,
                    latency_ms=latency_ms,
                    request_sha256=current.sha256,
                    response_format=current.response_format,
                )
        raise LlmError(
            UNAVAILABLE,
            f"no LLM endpoint answered after {attempts} attempts (last: {last_reason})",
            {"attempts": attempts, "endpoints": len(self._endpoints), "last_reason": last_reason},
        )

    def _for_endpoint(
        self, request: ChatRequest, endpoint_index: int, memory: FormatMemory
    ) -> ChatRequest:
        """The request in the format ``auto`` has chosen for this endpoint, the
        choice stored before its first use."""
        if self._config.format != AUTO:
            return request
        key = self._keys[endpoint_index]
        chosen = memory.get(key)
        if chosen is None:
            chosen = LADDER[0]
            memory.put(key, chosen, "first_choice")
        return self._rebuilt(request, chosen)

    def _rebuilt(self, request: ChatRequest, response_format: str) -> ChatRequest:
        if request.response_format.type == response_format:
            return request
        return build_request(
            self._config, request.messages, answer=request.answer, response_format=response_format
        )

    def _grammar_ignored(self, current: ChatRequest, content: str) -> bool:
        # Every text of the grammar starts with "{" (an object at the root); an
        # empty answer says nothing either way.
        if self._config.format != AUTO or current.response_format.type != GRAMMAR:
            return False
        stripped = content.lstrip()
        return bool(stripped) and not stripped.startswith("{")

    def _fallback(self, err: LlmError, current: ChatRequest) -> str | None:
        if err.code != FORMAT_REFUSED or self._config.format != AUTO:
            return None
        return fallback(current.response_format.type)


__all__ = ["ChatClient"]
