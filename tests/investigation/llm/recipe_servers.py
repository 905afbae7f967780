"""Fake OpenAI-compatible servers that take response formats as each real one documents.

Each recipe is a gate for :class:`ScriptedLlmServer`: it looks at the request's
``response_format`` and refuses what that server refuses, with the status and
the kind of error body that server sends; what it takes, the script answers.
docs/llm-adapter.md has the config lines for each.

``openai``          json_schema (strict mode checked against the strict subset), json_object
``vllm``            json_schema through response_format, json_object
``llama_server``    json_schema with the json_schema.schema wrapper (and cache_prompt)
``llama_server_old`` HTTP 500 for json_schema; a GBNF ``grammar``; json_object (with schema)
``llama_cpp_python`` HTTP 500 naming response_format.type for json_schema; ``grammar``;
                    json_object + schema
``ollama``          json_schema through its OpenAI-compatible endpoint, json_object
``refuses_schema``  HTTP 400 for json_schema and for an unknown ``grammar`` member; json_object
``drops_grammar``   HTTP 400 for json_schema; drops an unknown ``grammar`` member without a
                    word and answers prose to it; json_object (an OpenAI-compatible server
                    that is not llama.cpp, such as an older vLLM)
``ignores``         takes anything and answers whatever it likes (prose, in the tests)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from tests.investigation.llm.scripted_llm_server import Step, reply, status

Gate = Callable[[dict[str, Any] | None], Step | None]
CANARY = "LEAK-CANARY-format-error"


def strict_problems(schema: Any, at: str = "") -> Iterator[str]:
    """What OpenAI's strict mode refuses in a schema (object root checked by the caller)."""
    if not isinstance(schema, dict):
        return
    if {"oneOf", "allOf", "if", "$ref", "not"} & set(schema):
        yield f"{at}: a combinator outside the subset"
    for keyword in ("minLength", "maxLength", "uniqueItems", "propertyNames", "const"):
        if keyword in schema:
            yield f"{at}: {keyword}"
    if schema.get("type") == "object":
        if schema.get("additionalProperties") is not False:
            yield f"{at}: additionalProperties is not false"
        if sorted(schema.get("required", [])) != sorted(schema.get("properties", {})):
            yield f"{at}: not every property is required"
    if not ({"type", "enum", "anyOf"} & set(schema)):
        yield f"{at}: no type"
    for name, sub in schema.get("properties", {}).items():
        yield from strict_problems(sub, f"{at}/{name}")
    for index, sub in enumerate(schema.get("anyOf", [])):
        yield from strict_problems(sub, f"{at}/anyOf/{index}")
    if "items" in schema:
        yield from strict_problems(schema["items"], f"{at}/items")


def _format(body: dict[str, Any] | None) -> dict[str, Any] | None:
    member = (body or {}).get("response_format")
    return member if isinstance(member, dict) else None


def _error(code: int, message: str, **extra: Any) -> Step:
    # The canary stands for what a real error body may echo (the prompt, the
    # schema): the client may classify the body, never keep it.
    document = {"error": {"message": f"{message} ({CANARY})", **extra}}
    return status(code, json.dumps(document).encode())


def _grammar_problem(body: dict[str, Any] | None) -> Step | None:
    """What the llama.cpp family answers to a ``grammar`` member it cannot use."""
    grammar = (body or {}).get("grammar")
    if grammar is None:
        return None
    if not isinstance(grammar, str) or not grammar.startswith("root ::= "):
        return _error(400, "failed to parse grammar", type="invalid_request_error")
    return None


def _wrapped_schema(member: dict[str, Any]) -> bool:
    inner = member.get("json_schema")
    return isinstance(inner, dict) and isinstance(inner.get("schema"), dict)


def openai(member_strict_required: bool = False) -> Gate:
    def gate(body: dict[str, Any] | None) -> Step | None:
        member = _format(body)
        if member is None or member.get("type") == "json_object":
            return None
        if member.get("type") != "json_schema" or not _wrapped_schema(member):
            return _error(400, "Invalid parameter: 'response_format'", param="response_format")
        inner = member["json_schema"]
        if member_strict_required and inner.get("strict") is not True:
            return _error(400, "this test endpoint only takes strict schemas", param="x")
        if inner.get("strict") is True:
            schema = inner["schema"]
            problems = list(strict_problems(schema))
            if schema.get("type") != "object" or problems:
                return _error(
                    400,
                    f"Invalid schema for response_format '{inner.get('name')}': {problems[:1]}",
                    param="response_format",
                )
        return None

    return gate


def vllm() -> Gate:
    def gate(body: dict[str, Any] | None) -> Step | None:
        member = _format(body)
        if (
            member is not None
            and member.get("type") == "json_schema"
            and not _wrapped_schema(member)
        ):
            return _error(400, "json_schema.schema is required")
        return None

    return gate


def llama_server() -> Gate:
    def gate(body: dict[str, Any] | None) -> Step | None:
        member = _format(body)
        if (
            member is not None
            and member.get("type") == "json_schema"
            and not _wrapped_schema(member)
        ):
            return _error(400, '"json_schema" must have a "schema" member')
        return None

    return gate


def llama_server_old() -> Gate:
    def gate(body: dict[str, Any] | None) -> Step | None:
        if (problem := _grammar_problem(body)) is not None:
            return problem
        member = _format(body)
        if member is not None and member.get("type") not in ("text", "json_object"):
            return _error(
                500,
                'response_format type must be one of "text" or "json_object", but got: '
                + str(member.get("type")),
                type="server_error",
            )
        return None

    return gate


def llama_cpp_python() -> Gate:
    def gate(body: dict[str, Any] | None) -> Step | None:
        if (problem := _grammar_problem(body)) is not None:
            return problem
        member = _format(body)
        if member is not None and member.get("type") not in ("text", "json_object"):
            # A pydantic validation error of the request model, answered as 500.
            detail = [
                {
                    "type": "literal_error",
                    "loc": ["body", "response_format", "type"],
                    "msg": "Input should be 'text' or 'json_object'",
                    "input": member.get("type"),
                }
            ]
            return _error(500, json.dumps(detail), type="internal_server_error")
        return None

    return gate


def ollama() -> Gate:
    return vllm()  # json_schema.schema through the OpenAI-compatible endpoint (>= 0.5)


def refuses_schema() -> Gate:
    def gate(body: dict[str, Any] | None) -> Step | None:
        member = _format(body)
        if member is not None and member.get("type") == "json_schema":
            return _error(
                400, "'response_format.type' must be 'text' or 'json_object'", type="invalid"
            )
        if "grammar" in (body or {}):
            return _error(400, "Unrecognized request argument supplied: grammar", type="invalid")
        return None

    return gate


def drops_grammar() -> Gate:
    refuses = refuses_schema()

    def gate(body: dict[str, Any] | None) -> Step | None:
        if "grammar" in (body or {}):
            return reply("Sure! The quest script is probably not registered.")
        return refuses(body)

    return gate


def ignores() -> Gate:
    def gate(_body: dict[str, Any] | None) -> Step | None:
        return None

    return gate


def sent_formats(requests: Any) -> list[str]:
    """The response format type of each request a server saw (``grammar`` for a
    GBNF grammar member, ``text``: none)."""
    return [
        "grammar" if "grammar" in (r.body or {}) else (_format(r.body) or {"type": "text"})["type"]
        for r in requests
    ]


__all__ = [
    "CANARY",
    "Gate",
    "drops_grammar",
    "ignores",
    "llama_cpp_python",
    "llama_server",
    "llama_server_old",
    "ollama",
    "openai",
    "refuses_schema",
    "sent_formats",
    "strict_problems",
    "vllm",
]
