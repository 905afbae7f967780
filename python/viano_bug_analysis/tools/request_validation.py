"""Validation of an investigation request document, before anything is read.

Checks run in a fixed order and the first failure rejects the whole batch:
size, JSON Schema of the envelope, batch size, JSON Schema of the requests
(one check of the whole schema, its first error in document order, named by
``schema_errors``), duplicate request IDs, repeated (hypothesis, action)
pairs, then the limits that depend only on the request (page sizes, context
span, line order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.jsonio import JsonEncodeError, canonical_bytes, sha256_hex
from viano_bug_analysis.schema_errors import Violation, check
from viano_bug_analysis.tools.errors import ToolError
from viano_bug_analysis.tools.limits import ToolLimits

REQUEST_SCHEMA = "investigation-request-v2"


def compact_json(value: Any) -> bytes:
    """The byte form that is measured and hashed: ``jsonio.canonical_bytes``.

    UTF-8, keys sorted, no spaces, integers exact at any size (a filter on a
    ``DECIMAL(30)`` or ``BIGINT UNSIGNED`` value beyond 64 bits is hashed as
    written), floats in their shortest round-trip form (``1.0``, ``1e+16``).
    """
    try:
        return canonical_bytes(value)
    except JsonEncodeError as err:
        raise ToolError(
            "request_invalid",
            "request is not a JSON document (NaN, infinity, a lone surrogate or a non-JSON type)",
            {"path": "", "rule": "json", "reason": err.code},
        ) from None


@dataclass(frozen=True, slots=True)
class Request:
    index: int
    request_id: str
    hypothesis_id: str
    action_id: str
    operation: str
    arguments: dict[str, Any]
    sha256: str


@dataclass(frozen=True, slots=True)
class Batch:
    case_id: str
    package_id: str
    analysis_revision: int
    requests: tuple[Request, ...]
    sha256: str


_UNKNOWN_FIELD_RULES = frozenset({"additionalProperties", "unevaluatedProperties", "false"})


def _schema_error(found: Violation, request_index: int | None) -> ToolError:
    details = found.details()
    if request_index is not None:
        details["request_index"] = request_index
    if found.rule in _UNKNOWN_FIELD_RULES:
        return ToolError("unknown_field", found.message, details)
    if found.rule == "enum" and found.pointer.endswith("/operation"):
        return ToolError("unknown_operation", found.message, details)
    if found.rule == "pattern" and found.pointer.endswith("/arguments/symbol"):
        details["hint"] = SYMBOL_HINT
        return ToolError("request_invalid", f"{found.message}; {SYMBOL_HINT}", details)
    return ToolError("request_invalid", found.message, details)


SYMBOL_HINT = (
    "a symbol starts with a letter or _; for a word that starts with a digit"
    " (a numeric ID) use source.find_text with whole_word true"
)


def _request_index(found: Violation | None) -> int | None:
    """The index of the element of ``requests`` a violation lies in, if it does."""
    if found is None or not found.pointer.startswith("/requests/"):
        return None
    part = found.pointer.split("/")[2]
    return int(part) if part.isdigit() else None


def parse_batch(document: Any, limits: ToolLimits) -> Batch:
    if not isinstance(document, dict):
        raise ToolError("request_invalid", "request must be a JSON object", {"path": ""})
    raw = compact_json(document)
    if len(raw) > limits.request_bytes:
        raise ToolError(
            "request_too_large",
            f"request document exceeds the request size limit of {limits.request_bytes} bytes",
            {"limit": limits.request_bytes, "maximum": limits.request_bytes, "size": len(raw)},
        )
    found = check(REQUEST_SCHEMA, document)
    # Errors come in document order, so one inside an element means the
    # envelope is sound; the batch size is then checked before the element.
    index = _request_index(found)
    if found is not None and index is None:
        raise _schema_error(found, None)
    items = document["requests"]
    if len(items) > limits.batch_requests:
        raise ToolError(
            "batch_too_large",
            f"batch has more requests than the batch limit of {limits.batch_requests}",
            {
                "path": "/requests",
                "limit": limits.batch_requests,
                "maximum": limits.batch_requests,
                "requests": len(items),
            },
        )
    if found is not None:
        raise _schema_error(found, index)
    requests = []
    for index, item in enumerate(items):
        requests.append(
            Request(
                index=index,
                request_id=item["request_id"],
                hypothesis_id=item["hypothesis_id"],
                action_id=item["action_id"],
                operation=item["operation"],
                arguments=item["arguments"],
                sha256=sha256_hex(compact_json(item)),
            )
        )
    _check_uniqueness(requests)
    for request in requests:
        _check_request_limits(request, limits)
    return Batch(
        case_id=document["case_id"],
        package_id=document["package_id"],
        analysis_revision=document["analysis_revision"],
        requests=tuple(requests),
        sha256=sha256_hex(raw),
    )


def _check_uniqueness(requests: list[Request]) -> None:
    seen_ids: dict[str, int] = {}
    seen_actions: dict[tuple[str, str], int] = {}
    for request in requests:
        if request.request_id in seen_ids:
            raise ToolError(
                "duplicate_request_id",
                "two requests share a request_id",
                {"request_index": request.index, "first_index": seen_ids[request.request_id]},
            )
        seen_ids[request.request_id] = request.index
        pair = (request.hypothesis_id, request.action_id)
        if pair in seen_actions:
            raise ToolError(
                "duplicate_action",
                "two requests repeat the same hypothesis_id and action_id",
                {"request_index": request.index, "first_index": seen_actions[pair]},
            )
        seen_actions[pair] = request.index


def _check_request_limits(request: Request, limits: ToolLimits) -> None:
    args = request.arguments
    if "limit" in args and args["limit"] > limits.matches_per_query:
        raise ToolError(
            "limit_exceeded",
            f"limit is larger than the matches-per-query limit of {limits.matches_per_query}",
            {
                "request_index": request.index,
                "path": f"/requests/{request.index}/arguments/limit",
                "limit": limits.matches_per_query,
                "maximum": limits.matches_per_query,
            },
        )
    if request.operation == "source.read_context":
        start, end = args["start_line"], args["end_line"]
        if end < start:
            raise ToolError(
                "line_range_invalid",
                "end_line is before start_line",
                {"request_index": request.index},
            )
        if end - start + 1 > limits.context_lines:
            raise ToolError(
                "context_too_large",
                f"line range is longer than the context-lines limit of {limits.context_lines}",
                {
                    "request_index": request.index,
                    "path": f"/requests/{request.index}/arguments/end_line",
                    "limit": limits.context_lines,
                    "maximum": limits.context_lines,
                },
            )
