"""A refused tool request, as stored and as told to the model.

``refusal_record`` keeps, of a typed error (``ToolError``, ``ResearchError``, any
``VbaError``), its code, its message and only the detail fields that name where
and why (pointer, property, column, table, the allowed values, the bound), each
bounded. The error classes already keep values, rows and source text out of
their details (errors.py); the record keeps a fixed list of fields all the
same, so a detail added later cannot reach the prompt unreviewed.

``refusal_text`` words a record the way ``vba`` prints the error (code, message,
details), as one line the model can act on. A record stored by an older version
(only ``{"code": ...}``) still gives a line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from viano_bug_analysis.errors import VbaError

# The detail fields a record keeps, in the order the text names them.
_WHERE: Final = ("pointer", "path", "argument", "index", "property", "field", "key")
_WHAT: Final = ("database", "table", "column", "did_you_mean", "operator", "kind", "provider")
_WHY: Final = ("rule", "what", "reason", "cause", "maximum", "minimum", "size")
_SAFE: Final = (*_WHERE, *_WHAT, *_WHY)
MAX_ALLOWED: Final = 40
MAX_FIELD_CHARS: Final = 200
MAX_MESSAGE_CHARS: Final = 300


def refusal_record(error: BaseException) -> dict[str, Any]:
    """A small JSON-safe record of a refused request: ``code``, ``message`` and the
    safe typed fields of the error's details (``allowed`` bounded to the first
    ``MAX_ALLOWED`` names plus ``allowed_total``)."""
    if not isinstance(error, VbaError):
        return {"code": "internal_error"}
    record: dict[str, Any] = {"code": error.code}
    if error.message:
        record["message"] = error.message[:MAX_MESSAGE_CHARS]
    details = error.details
    if "pointer" not in details and isinstance(details.get("path"), str):
        record["pointer"] = _bounded(details["path"])
    for name in _SAFE:
        value = details.get(name)
        if value is None or (name == "path" and "pointer" in record):
            continue
        if isinstance(value, bool | int | float):
            record[name] = value
        elif isinstance(value, str):
            record[name] = _bounded(value)
    allowed = details.get("allowed", details.get("databases"))
    if isinstance(allowed, list | tuple):
        names = [_bounded(str(v)) for v in allowed]
        record["allowed"] = names[:MAX_ALLOWED]
        if len(names) > MAX_ALLOWED:
            record["allowed_total"] = len(names)
    elif isinstance(details.get("hint"), str) and details["hint"].startswith("allowed: "):
        record["allowed"] = details["hint"].removeprefix("allowed: ").split(", ")[:MAX_ALLOWED]
    limit = details.get("limit")
    bounded = error.code.endswith(("limit_exceeded", "_too_large"))
    if "maximum" not in record and bounded and isinstance(limit, int):
        record["maximum"] = limit  # older details name the bound only as "limit"
    return record


def refusal_text(record: Mapping[str, Any]) -> str:
    """The feedback line for the model: what was wrong, where, what is allowed."""
    code = record.get("code", "refused")
    parts = [f"refused ({code})"]
    message = record.get("message")
    if isinstance(message, str) and message:
        parts[0] += f": {message}"
    where = [f"{name} {record[name]}" for name in _WHERE if name in record]
    if where:
        parts.append("at " + ", ".join(where))
    what = [f"{name} {record[name]}" for name in _WHAT if name in record]
    what += [
        f"{name} {record[name]}" for name in ("rule", "what", "reason", "cause") if name in record
    ]
    parts += what
    said = str(message or "")
    for side in ("maximum", "minimum"):
        if side in record and f"the {side} is {record[side]}" not in said:
            parts.append(f"the {side} is {record[side]}")
    allowed = record.get("allowed")
    if isinstance(allowed, list) and allowed:
        more = record.get("allowed_total")
        tail = f" (first {len(allowed)} of {more})" if isinstance(more, int) else ""
        parts.append("allowed: " + ", ".join(map(str, allowed)) + tail)
    if len(parts) == 1 and "message" not in record:
        parts.append("change the request")
    return "; ".join(parts)


def _bounded(value: str) -> str:
    return value if len(value) <= MAX_FIELD_CHARS else value[:MAX_FIELD_CHARS] + "…"


__all__ = ["MAX_ALLOWED", "refusal_record", "refusal_text"]
