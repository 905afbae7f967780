"""Configuration of the chat-completions adapter, and the API key.

The configuration names *where* the key is (an environment variable or a
file), never the key itself, so a config object can be printed, compared and
stored without leaking anything. The key is read once by ``resolve_api_key``
into an ``ApiKey`` whose ``repr`` and ``str`` are redacted.

Base URLs are fixed by the operator: the model never chooses one. A URL with
user info (``https://user:pass@host``) is refused, because credentials there
would end up in logs and reprs; a query string or fragment is refused because
the adapter appends ``/chat/completions`` to the path.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import urlsplit

from viano_bug_analysis import vocabulary
from viano_bug_analysis.files import TOO_LARGE, read_regular_file
from viano_bug_analysis.investigation.llm.errors import CONFIG_INVALID, KEY_MISSING, LlmError
from viano_bug_analysis.investigation.llm.response_format import (
    AUTO,
    JSON_OBJECT,
    RESPONSE_FORMATS,
    TEXT,
)

DEFAULT_MAX_REPLY_BYTES = 1024 * 1024
MAX_KEY_BYTES = 4096
# A key travels in an HTTP header: visible ASCII only, so it can never smuggle
# a line break into the request (http.client would also refuse it, but with
# the header value in its message).
_KEY_CHARS = re.compile(r"[\x21-\x7e]+")
_ENV_NAME = vocabulary.ENV_NAME


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One base URL split into what ``http.client`` needs."""

    scheme: str
    host: str
    port: int
    path: str  # the full request path, ending in /chat/completions


@dataclass(frozen=True)
class LlmConfig:
    """Where and how to call an OpenAI-compatible ``/chat/completions`` API.

    ``base_urls`` are tried in order on transport errors (failover). One
    *round* tries each of them once; there are ``max_retries + 1`` rounds, with
    a backoff sleep of ``min(backoff_max, backoff_initial * 2**round)``
    seconds between rounds. Timeouts are in seconds: ``connect_timeout`` for
    the TCP (and TLS) connection, ``read_timeout`` for each socket operation
    after it.
    """

    base_urls: tuple[str, ...]
    model: str
    api_key_env: str | None = None
    api_key_file: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    max_retries: int = 2
    backoff_initial: float = 1.0
    backoff_max: float = 30.0
    temperature: float | None = None
    max_tokens: int | None = None
    # The older spelling of response_format: true is json_object, false is text.
    json_response: bool | None = None
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    # How many requests may be in flight at once across the cases of one
    # process (vba triage); one investigation asks one at a time anyway.
    max_concurrent: int = 1
    response_format: str | None = None
    # The endpoint wants OpenAI's strict subset of JSON Schema (docs/llm-adapter.md).
    json_schema_strict: bool = False
    # Sent as llama.cpp's cache_prompt when set (reuse of the previous prompt's prefix).
    cache_prompt: bool | None = None

    def __post_init__(self) -> None:
        if isinstance(self.base_urls, str):
            # A single URL is a common slip; accept it rather than split it into characters.
            object.__setattr__(self, "base_urls", (self.base_urls,))
        else:
            object.__setattr__(self, "base_urls", tuple(self.base_urls))
        if not self.base_urls:
            raise _invalid("base_urls", "at least one base URL is required")
        for index, url in enumerate(self.base_urls):
            _parse_base_url(url, index)
        if not isinstance(self.model, str) or not 0 < len(self.model) <= 256:
            raise _invalid("model", "the model name must be 1-256 characters")
        if self.api_key_env is not None and self.api_key_file is not None:
            raise _invalid("api_key_env", "give the key by environment variable or file, not both")
        if self.api_key_env is not None and not (
            isinstance(self.api_key_env, str) and _ENV_NAME.fullmatch(self.api_key_env)
        ):
            raise _invalid("api_key_env", "not an environment variable name")
        if self.api_key_file is not None and not isinstance(self.api_key_file, str):
            raise _invalid("api_key_file", "must be a path string")
        for name in ("connect_timeout", "read_timeout"):
            _positive_number(name, getattr(self, name))
        _positive_number("backoff_max", self.backoff_max)
        if _number(self.backoff_initial) is None or self.backoff_initial < 0:
            raise _invalid("backoff_initial", "must be a number >= 0")
        _int_in_range("max_retries", self.max_retries, 0, 100)
        if self.temperature is not None and (
            _number(self.temperature) is None or not 0 <= self.temperature <= 2
        ):
            raise _invalid("temperature", "must be a number from 0 to 2")
        if self.max_tokens is not None:
            _int_in_range("max_tokens", self.max_tokens, 1, 10_000_000)
        if self.json_response is not None and not isinstance(self.json_response, bool):
            raise _invalid("json_response", "must be true or false")
        if self.response_format is not None and self.response_format not in RESPONSE_FORMATS:
            raise _invalid(
                "response_format", "must be auto, json_schema, grammar, json_object or text"
            )
        if (
            self.response_format is not None
            and self.json_response is not None
            and self.response_format != (JSON_OBJECT if self.json_response else TEXT)
        ):
            raise _invalid(
                "json_response",
                "contradicts response_format (json_response is the older spelling: "
                "true is json_object, false is text); keep response_format only",
            )
        for name in ("json_schema_strict", "cache_prompt"):
            value = getattr(self, name)
            if not isinstance(value, bool) and not (name == "cache_prompt" and value is None):
                raise _invalid(name, "must be true or false")
        _int_in_range("max_reply_bytes", self.max_reply_bytes, 1024, 1 << 30)
        _int_in_range("max_concurrent", self.max_concurrent, 1, 256)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> LlmConfig:
        """Builds a config from a parsed JSON/TOML table. ``base_url`` (one
        string) is accepted as a shorthand for ``base_urls``; unknown keys are
        refused so that a typo cannot silently fall back to a default."""
        data = dict(mapping)
        if "base_url" in data:
            if "base_urls" in data:
                raise _invalid("base_url", "give base_url or base_urls, not both")
            data["base_urls"] = (data.pop("base_url"),)
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise _invalid("", "unknown configuration key", key=str(key)[:64])
        for required in ("base_urls", "model"):
            if required not in data:
                raise _invalid(required, "missing")
        if not isinstance(data["base_urls"], (list, tuple, str)):
            raise _invalid("base_urls", "must be a list of URLs")
        return cls(**data)

    @property
    def format(self) -> str:
        """The response format in effect: ``response_format``, else what the older
        ``json_response`` says, else ``auto``."""
        if self.response_format is not None:
            return self.response_format
        if self.json_response is not None:
            return JSON_OBJECT if self.json_response else TEXT
        return AUTO

    def endpoints(self) -> tuple[Endpoint, ...]:
        """The base URLs, parsed, in failover order."""
        return tuple(_parse_base_url(url, i) for i, url in enumerate(self.base_urls))


class ApiKey:
    """A bearer token that does not show itself in ``repr``, ``str`` or f-strings."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The key itself; only for building the Authorization header."""
        return self._value

    def __repr__(self) -> str:
        return "ApiKey(<redacted>)"

    __str__ = __repr__

    def __format__(self, _spec: str) -> str:
        return repr(self)

    def __reduce__(self) -> Any:
        # Pickling would be a way to copy the key somewhere durable.
        raise TypeError("ApiKey cannot be pickled")


def resolve_api_key(config: LlmConfig, environ: Mapping[str, str] | None = None) -> ApiKey | None:
    """Reads the key the config points to; ``None`` when it names none (local
    servers such as llama.cpp or Ollama usually need no key).

    Raises ``llm_key_missing`` when the variable is unset or empty, or the
    file is missing, unreadable, empty, too large or holds characters that
    cannot go into a header. The details name which source failed, never its
    content or the file's path.
    """
    if config.api_key_env is not None:
        env = os.environ if environ is None else environ
        value = env.get(config.api_key_env, "").strip()
        if not value:
            # The variable's name is the operator's configuration, not a secret:
            # saying it (and the way out) is what lets the operator fix it.
            raise LlmError(
                KEY_MISSING,
                f"no API key found: the environment variable {config.api_key_env} "
                "(llm.api_key_env) is unset or empty; set it, name a key file with "
                "llm.api_key_file instead, or leave both out for a server that needs no key",
                {"source": "environment", "key": "llm.api_key_env", "variable": config.api_key_env},
            )
        return _checked_key(value, "environment")
    if config.api_key_file is not None:
        raw = read_regular_file(
            config.api_key_file,
            max_bytes=MAX_KEY_BYTES,
            what="the API key file",
            refuse=_key_file_refused,
        )
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError:
            raise LlmError(
                KEY_MISSING, "the API key file is not ASCII", {"source": "file"}
            ) from None
        return _checked_key(text.strip(), "file")
    return None


def _key_file_refused(reason: str, message: str, details: dict[str, Any]) -> LlmError:
    if reason == TOO_LARGE:
        return LlmError(KEY_MISSING, "the API key file is too large", {"source": "file"})
    # The OS error class, or not_a_regular_file (a FIFO is refused, not waited on).
    return LlmError(KEY_MISSING, message, {"source": "file", "kind": details.get("kind", reason)})


def _checked_key(value: str, source: str) -> ApiKey:
    if not value:
        raise LlmError(KEY_MISSING, f"no API key found ({source})", {"source": source})
    if len(value) > MAX_KEY_BYTES or not _KEY_CHARS.fullmatch(value):
        raise LlmError(
            KEY_MISSING,
            f"the API key ({source}) contains characters a header cannot carry",
            {"source": source},
        )
    return ApiKey(value)


def _parse_base_url(url: object, index: int) -> Endpoint:
    def bad(reason: str) -> LlmError:
        return _invalid("base_urls", reason, index=index)

    if not isinstance(url, str) or not url or len(url) > 2048:
        raise bad("a base URL must be a non-empty string")
    if any(ch.isspace() or ord(ch) < 0x20 for ch in url):
        raise bad("a base URL contains whitespace or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise bad("not a valid URL") from None
    if parts.scheme not in ("http", "https"):
        raise bad("the scheme must be http or https")
    if parts.username is not None or parts.password is not None:
        raise bad("credentials in the URL are not allowed; use api_key_env or api_key_file")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise bad("a base URL has no query string or fragment")
    if not parts.hostname:
        raise bad("the URL has no host")
    path = parts.path.rstrip("/") + "/chat/completions"
    default_port = 443 if parts.scheme == "https" else 80
    return Endpoint(parts.scheme, parts.hostname, port or default_port, path)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _positive_number(name: str, value: object) -> None:
    number = _number(value)
    if number is None or number <= 0:
        raise _invalid(name, "must be a number > 0")


def _int_in_range(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _invalid(name, f"must be an integer from {low} to {high}")


def _invalid(field: str, reason: str, **details: Any) -> LlmError:
    return LlmError(
        CONFIG_INVALID,
        f"invalid LLM configuration ({field or 'keys'}): {reason}",
        {"field": field, "reason": reason, **details},
    )


__all__ = [
    "DEFAULT_MAX_REPLY_BYTES",
    "ApiKey",
    "Endpoint",
    "LlmConfig",
    "resolve_api_key",
]
