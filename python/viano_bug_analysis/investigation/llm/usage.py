"""Cached prompt tokens, wherever a server reports them in a chat-completions reply.

Servers that reuse the processed prefix of an earlier prompt say how much of
the new prompt came from that cache, each in its own place:

* OpenAI (and vLLM with prefix caching): ``usage.prompt_tokens_details.cached_tokens``;
* llama.cpp ``llama-server``: ``tokens_cached`` at the top level, and
  ``timings.cache_n``.

The first of these that holds a count is the answer; a reply that has none
says nothing about caching (``None``, not 0: a server that does not report it
may still cache).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_MAX_COUNT = 2**53 - 1
# What names a usage-like field in a diagnostic: never a value, never free text.
_FIELD_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_MAX_FIELDS = 32


def cached_prompt_tokens(document: Mapping[str, Any]) -> int | None:
    """The cached prompt tokens a reply reports, or ``None`` when it reports none."""
    usage = document.get("usage")
    if isinstance(usage, Mapping):
        details = usage.get("prompt_tokens_details")
        if isinstance(details, Mapping) and _is_count(details.get("cached_tokens")):
            return int(details["cached_tokens"])
    if _is_count(document.get("tokens_cached")):
        return int(document["tokens_cached"])
    timings = document.get("timings")
    if isinstance(timings, Mapping) and _is_count(timings.get("cache_n")):
        return int(timings["cache_n"])
    return None


def usage_fields(document: Mapping[str, Any]) -> list[str]:
    """The names of the token and timing fields a reply carries (``usage.*``,
    one level of ``usage.*.*``, ``tokens_cached``, ``timings.*``), sorted, for a
    diagnostic: names only, and only names made of letters, digits and ``_``."""
    found: list[str] = []

    def add(prefix: str, table: object, depth: int) -> None:
        if not isinstance(table, Mapping):
            return
        for key, value in table.items():
            if not (isinstance(key, str) and 0 < len(key) <= 64 and set(key) <= _FIELD_NAME_CHARS):
                continue
            if isinstance(value, Mapping) and depth > 0:
                add(f"{prefix}{key}.", value, depth - 1)
            elif not isinstance(value, Mapping):
                found.append(prefix + key)

    add("usage.", document.get("usage"), 1)
    add("timings.", document.get("timings"), 0)
    if "tokens_cached" in document:
        found.append("tokens_cached")
    return sorted(found)[:_MAX_FIELDS]


def _is_count(value: object) -> bool:
    return type(value) is int and 0 <= value <= _MAX_COUNT


__all__ = ["cached_prompt_tokens", "usage_fields"]
