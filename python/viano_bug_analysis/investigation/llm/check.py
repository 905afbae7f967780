"""``vba llm check``: what each configured LLM endpoint is, before a paid run.

For every base URL, in order: ``GET {base}/models`` (reachable? which models?
is the configured one listed? a context window where the listing advertises
one, else llama-server's ``/props``), then one tiny probe per response format
of the ladder (``json_schema``, ``grammar``, ``json_object``) down to the first
one the server honours, which is where ``auto`` stops (the rest are
``skipped``; a configured fixed format is always probed), and ``text``, with
``max_tokens`` of
``PROBE_MAX_TOKENS`` (the text probe one token): did the server refuse the
format, honour it (the answer fits the probe's schema / is a JSON object) or
ignore it? Each probe's
latency, its token counts and the names of the usage fields the reply carries.

One attempt per request: a check reports what the endpoint does now, it does
not retry past it. An endpoint that cannot be reached, refuses the
credentials, or refuses even the text probe is a failure of the check
(``check_failure``); a format the server refuses is a finding, since the
investigation can fall back to another format.

Nothing the model wrote is kept or printed: a probe's content is only parsed
to decide whether it fits; model names from the listing are shown (they are
the server's configuration, not model output), cut to printable characters.
"""

from __future__ import annotations

import http.client
import ssl
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from viano_bug_analysis.investigation.llm.config import (
    ApiKey,
    Endpoint,
    LlmConfig,
    resolve_api_key,
)
from viano_bug_analysis.investigation.llm.errors import (
    AUTH_FAILED,
    INVALID_REPLY,
    REQUEST_REJECTED,
    TLS_FAILED,
    UNAVAILABLE,
    UNEXPECTED_STATUS,
    LlmError,
)
from viano_bug_analysis.investigation.llm.grammar import schema_grammar
from viano_bug_analysis.investigation.llm.transport import (
    RETRYABLE_STATUSES,
    TransientFailure,
    _read_limited,
    _transport_reason,
    post_json,
)
from viano_bug_analysis.investigation.llm.usage import cached_prompt_tokens, usage_fields
from viano_bug_analysis.jsonio import JsonDecodeError, canonical_bytes, strict_loads

FORMATS = ("json_schema", "grammar", "json_object", "text")
PROBE_MAX_TOKENS = 8
# The text probe only shows that the server answers: one token does.
TEXT_PROBE_MAX_TOKENS = 1
# A system message of its own: a chat template that adds a default system
# prompt when there is none (SmolLM2's is 15 tokens) adds nothing then.
PROBE_MESSAGES = (
    {"role": "system", "content": "JSON only."},
    {"role": "user", "content": 'Reply {"ok":true}'},
)
PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
MAX_LISTING_BYTES = 256 * 1024
MAX_PROBE_REPLY_BYTES = 64 * 1024
MAX_LISTED_MODELS = 20
# Where listings advertise a context window: llama-server's meta, vLLM, others.
_WINDOW_KEYS = (("meta", "n_ctx"), ("meta", "n_ctx_train"), ("max_model_len",), ("context_length",))


def check_llm(
    config: LlmConfig,
    *,
    environ: Mapping[str, str] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """The check document of every endpoint of ``config`` (see the module doc)."""
    key = resolve_api_key(config, environ)
    pairs = zip(config.base_urls, config.endpoints(), strict=True)
    endpoints = [
        _check_endpoint(config, index, url, endpoint, key, clock)
        for index, (url, endpoint) in enumerate(pairs)
    ]
    spent = [p["usage"] for e in endpoints for p in e["probes"].values() if p.get("usage")]
    answered = sum(1 for e in endpoints for p in e["probes"].values() if p.get("status") == 200)
    return {
        "model": config.model,
        "endpoints": endpoints,
        "tokens": {
            "prompt_tokens": sum(u["prompt_tokens"] for u in spent),
            "completion_tokens": sum(u["completion_tokens"] for u in spent),
            "total_tokens": sum(u["total_tokens"] for u in spent),
            "probe_answers": answered,
            "answers_without_usage": answered - len(spent),
        },
    }


def advertised_context_window(
    config: LlmConfig, *, environ: Mapping[str, str] | None = None
) -> int | None:
    """The context window the first endpoint that advertises one names (its model
    listing, else llama-server's ``/props``), or ``None``: two GETs at most per
    endpoint, no model request. An endpoint that cannot be reached is passed over
    (the investigation's own request reports it)."""
    key = resolve_api_key(config, environ)
    for endpoint in config.endpoints():
        base_path = endpoint.path.removesuffix("/chat/completions")
        try:
            listing = _get_json(config, endpoint, base_path + "/models", key)
        except (TransientFailure, LlmError):
            listing = None
        window = _context_window(listing, config.model) or _props_window(
            config, endpoint, base_path, key
        )
        if window is not None:
            return int(window["tokens"])
    return None


def check_failure(document: Mapping[str, Any]) -> LlmError | None:
    """The typed error of the first endpoint that failed its check, or ``None``."""
    for endpoint in document["endpoints"]:
        failure = endpoint["failure"]
        if failure is not None:
            return LlmError(failure["code"], failure["message"], dict(failure["details"]))
    return None


def _check_endpoint(
    config: LlmConfig,
    index: int,
    url: str,
    endpoint: Endpoint,
    key: ApiKey | None,
    clock: Callable[[], float],
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "index": index,
        "base_url": url,
        "reachable": False,
        "models": None,
        "context_window": None,
        "probes": {},
        "formats": [],
        "failure": None,
    }
    base_path = endpoint.path.removesuffix("/chat/completions")
    started = clock()
    try:
        listing = _get_json(config, endpoint, base_path + "/models", key)
    except TransientFailure as failure:
        if not failure.reason.startswith("http_"):
            result["failure"] = _failure(
                UNAVAILABLE,
                f"endpoint {index} cannot be reached ({failure.reason})",
                {"endpoint_index": index, "attempts": 1, "last_reason": failure.reason},
            )
            return result
        listing = _Refused(int(failure.reason.removeprefix("http_")))
    except LlmError as err:
        if err.code in (AUTH_FAILED, TLS_FAILED):
            result["reachable"] = err.code == AUTH_FAILED
            err.details.update(endpoint_index=index, attempts=1)
            result["failure"] = _failure(err.code, err.message, err.details)
            return result
        listing = _Refused(int(err.details.get("status", 0)))
    result["reachable"] = True
    result["models"] = _models_view(listing, config.model, _ms(clock() - started))
    result["context_window"] = _context_window(listing, config.model) or _props_window(
        config, endpoint, base_path, key
    )
    stopped = False  # a structured format was honoured: auto goes no further
    for name in FORMATS:
        if stopped and name not in ("text", config.format):
            result["probes"][name] = {"outcome": "skipped", "status": None, "latency_ms": None}
            continue
        result["probes"][name] = _probe(config, endpoint, key, name, clock)
        stopped = stopped or result["probes"][name]["outcome"] == "honoured"
    result["formats"] = [n for n, p in result["probes"].items() if p["outcome"] == "honoured"]
    text = result["probes"]["text"]
    if text["outcome"] != "answered":
        result["failure"] = _failure(
            text["error"]["code"],
            f"endpoint {index} refused the plain text probe: {text['error']['message']}",
            {**text["error"]["details"], "endpoint_index": index, "attempts": 1},
        )
    for probe in result["probes"].values():
        probe.pop("error", None)
    return result


class _Refused:
    """A GET that the server answered with an error status."""

    def __init__(self, status: int) -> None:
        self.status = status


def _models_view(listing: object, model: str, latency_ms: int) -> dict[str, Any]:
    if isinstance(listing, _Refused):
        return {"status": listing.status, "latency_ms": latency_ms, "ids": [], "listed": None}
    ids = _model_ids(listing)
    return {
        "status": 200,
        "latency_ms": latency_ms,
        "ids": [_printable(i) for i in ids[:MAX_LISTED_MODELS]],
        "more": max(0, len(ids) - MAX_LISTED_MODELS),
        "listed": (model in ids) if ids else None,
    }


def _model_ids(listing: object) -> list[str]:
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return []
    return [e["id"] for e in data if isinstance(e, dict) and isinstance(e.get("id"), str)]


def _context_window(listing: object, model: str) -> dict[str, Any] | None:
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    # The configured model's entry first; a single-model server's only entry else.
    ordered = [e for e in entries if e.get("id") == model] + entries[:1]
    for entry in ordered:
        for path in _WINDOW_KEYS:
            value: Any = entry
            for part in path:
                value = value.get(part) if isinstance(value, dict) else None
            if _is_count(value) and value > 0:
                return {"tokens": value, "source": "models." + ".".join(path)}
    return None


def _props_window(
    config: LlmConfig, endpoint: Endpoint, base_path: str, key: ApiKey | None
) -> dict[str, Any] | None:
    # llama-server serves /props beside /v1, not under it.
    root = base_path.removesuffix("/v1")
    try:
        props = _get_json(config, endpoint, root + "/props", key)
    except (TransientFailure, LlmError):
        return None
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    value = settings.get("n_ctx") if isinstance(settings, dict) else None
    if _is_count(value) and value > 0:
        return {"tokens": value, "source": "props.default_generation_settings.n_ctx"}
    return None


def _probe(
    config: LlmConfig,
    endpoint: Endpoint,
    key: ApiKey | None,
    name: str,
    clock: Callable[[], float],
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": config.model,
        "messages": [dict(message) for message in PROBE_MESSAGES],
        "max_tokens": TEXT_PROBE_MAX_TOKENS if name == "text" else PROBE_MAX_TOKENS,
        "temperature": 0,
        "stream": False,
    }
    if name == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "vba_probe", "strict": True, "schema": PROBE_SCHEMA},
        }
    elif name == "grammar":
        body["grammar"] = schema_grammar(PROBE_SCHEMA)
    elif name == "json_object":
        body["response_format"] = {"type": "json_object"}
    probe: dict[str, Any] = {"outcome": "refused", "status": None, "latency_ms": None}
    started = clock()
    try:
        data = post_json(
            endpoint,
            canonical_bytes(body),
            key,
            connect_timeout=config.connect_timeout,
            read_timeout=config.read_timeout,
            max_reply_bytes=MAX_PROBE_REPLY_BYTES,
        )
    except TransientFailure as failure:
        probe["latency_ms"] = _ms(clock() - started)
        if failure.reason.startswith("http_"):
            probe["status"] = int(failure.reason.removeprefix("http_"))
            probe["error"] = _failure(
                UNEXPECTED_STATUS, f"HTTP {probe['status']}", {"status": probe["status"]}
            )
        else:
            probe["outcome"] = "failed"
            probe["reason"] = failure.reason
            probe["error"] = _failure(
                UNAVAILABLE, f"no answer ({failure.reason})", {"last_reason": failure.reason}
            )
        return probe
    except LlmError as err:
        probe["latency_ms"] = _ms(clock() - started)
        probe["status"] = err.details.get("status")
        probe["error"] = _failure(err.code, err.message, dict(err.details))
        return probe
    probe["latency_ms"] = _ms(clock() - started)
    probe["status"] = 200
    return probe | _judge(name, data)


def _judge(name: str, data: bytes) -> dict[str, Any]:
    """Outcome, usage and usage field names of a 200 probe reply; the text is only parsed."""
    try:
        document: Any = strict_loads(data, max_bytes=len(data))
    except JsonDecodeError:
        document = None
    choice = document.get("choices") if isinstance(document, dict) else None
    first = choice[0] if isinstance(choice, list) and choice else None
    message = first.get("message") if isinstance(first, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        reason = "the reply has no text content"
        error = _failure(INVALID_REPLY, f"the reply is unusable: {reason}", {"reason": reason})
        return {"outcome": "failed", "reason": reason, "error": error}
    assert isinstance(document, dict)
    finish = first.get("finish_reason") if isinstance(first, dict) else None
    return {
        "outcome": "answered" if name == "text" else _fits(name, content),
        "finish_reason": finish if isinstance(finish, str) and len(finish) <= 64 else None,
        "usage": _usage(document),
        "usage_fields": usage_fields(document),
    }


def _fits(name: str, content: str) -> str:
    try:
        data = content.encode("utf-8", "replace")
        answer: Any = strict_loads(data, max_bytes=MAX_PROBE_REPLY_BYTES)
    except JsonDecodeError:
        return "ignored"
    if name == "json_object":
        return "honoured" if isinstance(answer, dict) else "ignored"
    fits = isinstance(answer, dict) and set(answer) == {"ok"} and isinstance(answer["ok"], bool)
    return "honoured" if fits else "ignored"


def _usage(document: Mapping[str, Any]) -> dict[str, Any] | None:
    usage = document.get("usage")
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not (_is_count(prompt) and _is_count(completion)):
        return None
    total = usage.get("total_tokens")
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": total if _is_count(total) else prompt + completion,
        "cached_prompt_tokens": cached_prompt_tokens(document),
    }


def _get_json(config: LlmConfig, endpoint: Endpoint, path: str, key: ApiKey | None) -> Any:
    """One GET; the JSON of a 200 reply (``None`` if it is not JSON). Like ``post_json``
    it reads nothing of an error reply: no body, no header."""
    headers = {"Accept": "application/json", "Connection": "close"}
    headers["User-Agent"] = "viano-bug-analysis"
    if key is not None:
        headers["Authorization"] = "Bearer " + key.reveal()
    connection: http.client.HTTPConnection
    if endpoint.scheme == "https":
        connection = http.client.HTTPSConnection(
            endpoint.host,
            endpoint.port,
            timeout=config.connect_timeout,
            context=ssl.create_default_context(),
        )
    else:
        connection = http.client.HTTPConnection(
            endpoint.host, endpoint.port, timeout=config.connect_timeout
        )
    try:
        try:
            connection.connect()
            if connection.sock is not None:
                connection.sock.settimeout(config.read_timeout)
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            try:
                _check_get_status(response.status)
                data = _read_limited(response, MAX_LISTING_BYTES)
            finally:
                response.close()
        except ssl.SSLCertVerificationError:
            raise LlmError(
                TLS_FAILED, "the endpoint's TLS certificate was not accepted", {}
            ) from None
        except (OSError, http.client.HTTPException) as err:
            raise TransientFailure(_transport_reason(err)) from None
    finally:
        connection.close()
    try:
        return strict_loads(data, max_bytes=len(data))
    except JsonDecodeError:
        return None


def _check_get_status(status: int) -> None:
    if status == 200:
        return
    if status in RETRYABLE_STATUSES:
        raise TransientFailure(f"http_{status}")
    if status in (401, 403):
        raise LlmError(
            AUTH_FAILED, f"the endpoint refused the credentials (HTTP {status})", {"status": status}
        )
    raise LlmError(REQUEST_REJECTED, f"the endpoint answered HTTP {status}", {"status": status})


def _failure(code: str, message: str, details: Mapping[str, Any]) -> dict[str, Any]:
    return {"code": code, "message": message, "details": dict(details)}


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text[:128])


def _is_count(value: object) -> TypeGuard[int]:
    return type(value) is int and 0 <= value <= 2**53 - 1


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


__all__ = [
    "FORMATS",
    "PROBE_MAX_TOKENS",
    "TEXT_PROBE_MAX_TOKENS",
    "advertised_context_window",
    "check_failure",
    "check_llm",
]
