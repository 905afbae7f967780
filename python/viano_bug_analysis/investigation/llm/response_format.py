"""Response formats: what a request asks the server to constrain its answer to.

``[llm] response_format`` is one of:

``json_schema``
    ``{"type": "json_schema", "json_schema": {"name", "strict", "schema"}}``:
    the call's answer schema (OpenAI, vLLM, llama.cpp's llama-server, Ollama).
``grammar``
    no ``response_format``; the call's answer schema compiled to a GBNF
    grammar in the request's ``grammar`` member (:mod:`.grammar`), which the
    llama.cpp family takes (llama-server, llama-cpp-python's server). Unlike
    their own schema converters (llama-cpp-python 0.3.36 ignores integer
    bounds), it bounds every integer to its range.
``json_object``
    ``{"type": "json_object", "schema": ...}``: JSON, with the schema where the
    server takes one there (llama-cpp-python's server constrains decoding by it;
    others ignore the member).
``text``
    no ``response_format`` at all.
``auto`` (the default)
    ``json_schema`` first; when an endpoint refuses the response format, the
    next one of the ladder json_schema → grammar → json_object → text for that
    endpoint.
    The choice is kept per endpoint in a :class:`FormatMemory` (the
    investigation keeps it in the package, so a resumed run sends the same
    bytes) and recorded in every result.

A call without an answer schema (``ChatClient.chat(messages)``) sends
``json_object`` for ``json_schema``, ``grammar`` and ``auto``: there is no
schema to send.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Protocol

from viano_bug_analysis.investigation.llm.grammar import schema_grammar
from viano_bug_analysis.jsonio import canonical_bytes, sha256_hex

AUTO: Final = "auto"
JSON_SCHEMA: Final = "json_schema"
GRAMMAR: Final = "grammar"
JSON_OBJECT: Final = "json_object"
TEXT: Final = "text"
RESPONSE_FORMATS: Final = (AUTO, JSON_SCHEMA, GRAMMAR, JSON_OBJECT, TEXT)
LADDER: Final = (JSON_SCHEMA, GRAMMAR, JSON_OBJECT, TEXT)
"""The formats ``auto`` tries, in order: each is the fallback of the one before."""

# What an error body says when it is about the response format: the member's
# name, or the names of its types. Compared in lower case.
_REFUSAL_WORDS: Final = (
    ("response_format", "names_response_format"),
    ("json_schema", "names_json_schema"),
    ("json_object", "names_json_object"),
    ("grammar", "names_grammar"),
)
ERROR_BODY_PEEK_BYTES: Final = 4096
"""How much of an error body is read, and only to classify a format refusal."""


@dataclass(frozen=True, slots=True)
class AnswerSchema:
    """What a call asks the server to constrain its answer to.

    ``portable`` is the schema every server takes; ``strict`` its strict-subset
    form (OpenAI's strict mode), or None when the subset cannot describe it.
    ``name`` is the ``json_schema.name`` sent along.
    """

    name: str
    portable: dict[str, Any]
    strict: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class SentFormat:
    """The format one request was sent with, as results and call records keep it."""

    type: str
    strict: bool = False
    schema_sha256: str | None = None

    def to_record(self) -> dict[str, Any]:
        return {"type": self.type, "strict": self.strict, "schema_sha256": self.schema_sha256}


class FormatMemory(Protocol):
    """Which format ``auto`` uses for an endpoint (named by ``endpoint_key``).

    ``put`` must store the choice durably before it returns: the request that
    uses it follows at once.
    """

    def get(self, endpoint_key: str) -> str | None: ...

    def put(self, endpoint_key: str, response_format: str, reason: str) -> None: ...


class InMemoryFormats:
    """A :class:`FormatMemory` for one process (a client used outside a package)."""

    def __init__(self) -> None:
        self._chosen: dict[str, str] = {}

    def get(self, endpoint_key: str) -> str | None:
        return self._chosen.get(endpoint_key)

    def put(self, endpoint_key: str, response_format: str, reason: str) -> None:
        self._chosen[endpoint_key] = response_format


def endpoint_key(base_url: str, model: str) -> str:
    """A stable name of an endpoint and model that does not show the URL."""
    return sha256_hex(canonical_bytes([base_url, model]))[:16]


def fallback(response_format: str) -> str | None:
    """The next format of the ladder, or None after ``text``."""
    index = LADDER.index(response_format)
    return LADDER[index + 1] if index + 1 < len(LADDER) else None


def wire_format(
    response_format: str, answer: AnswerSchema | None, *, strict: bool
) -> tuple[dict[str, Any], SentFormat]:
    """The members a request body gets for the format (``response_format`` or
    ``grammar``; none for text), and what the result records about it."""
    if response_format == TEXT:
        return {}, SentFormat(TEXT)
    if response_format == GRAMMAR and answer is not None:
        digest = sha256_hex(canonical_bytes(answer.portable))
        return {"grammar": schema_grammar(answer.portable)}, SentFormat(GRAMMAR, False, digest)
    if response_format == JSON_SCHEMA and answer is not None:
        schema = answer.strict if strict and answer.strict is not None else answer.portable
        is_strict = strict and answer.strict is not None
        member = {
            "type": JSON_SCHEMA,
            "json_schema": {"name": answer.name, "strict": is_strict, "schema": schema},
        }
        digest = sha256_hex(canonical_bytes(schema))
        return {"response_format": member}, SentFormat(JSON_SCHEMA, is_strict, digest)
    if answer is None:
        return {"response_format": {"type": JSON_OBJECT}}, SentFormat(JSON_OBJECT)
    member = {"type": JSON_OBJECT, "schema": answer.portable}
    digest = sha256_hex(canonical_bytes(answer.portable))
    return {"response_format": member}, SentFormat(JSON_OBJECT, False, digest)


def refusal_reason(peek: bytes) -> str | None:
    """A fixed reason code when an error body's first bytes speak of the response
    format, else None. Nothing of the body is kept."""
    text = peek[:ERROR_BODY_PEEK_BYTES].decode("utf-8", "replace").lower()
    for word, reason in _REFUSAL_WORDS:
        if word in text:
            return reason
    return None


__all__ = [
    "AUTO",
    "ERROR_BODY_PEEK_BYTES",
    "GRAMMAR",
    "JSON_OBJECT",
    "JSON_SCHEMA",
    "LADDER",
    "RESPONSE_FORMATS",
    "TEXT",
    "AnswerSchema",
    "FormatMemory",
    "InMemoryFormats",
    "SentFormat",
    "endpoint_key",
    "fallback",
    "refusal_reason",
    "wire_format",
]
