"""How one tool answer is shown to the model, and how a refusal is explained
(minimal stand-in for the tool-side work's module; same signatures)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.jsonio import canonical_bytes

_SAFE_FIELDS = ("pointer", "property", "column", "table", "kind", "maximum", "minimum")
_MAX_ALLOWED = 40
_HASH_KEYS = frozenset(
    {"capture_sha256", "query_sha256", "request_sha256", "sha256", "content_sha256"}
)


@dataclass(frozen=True)
class AnswerView:
    text: str
    complete: bool
    continuation: Mapping[str, Any] | None


def answer_view(
    operation: str, request: Mapping[str, Any], payload: Mapping[str, Any], *, max_chars: int
) -> AnswerView:
    """The answer as canonical JSON without hashes; a longer one is cut at ``max_chars``
    with a note saying so (never silently)."""
    text = canonical_bytes(_without_hashes(payload)).decode()
    if len(text) <= max_chars:
        return AnswerView(text, True, None)
    note = f" …(cut at {max_chars} of {len(text)} characters; ask a narrower query)"
    return AnswerView(text[: max(0, max_chars - len(note))] + note, False, None)


def refusal_record(error: BaseException) -> dict[str, Any]:
    """The code of a refused request and its safe typed fields (no values, rows or text)."""
    code = getattr(error, "code", type(error).__name__)
    record: dict[str, Any] = {"code": str(code)}
    details = getattr(error, "details", None) or {}
    for name in _SAFE_FIELDS:
        value = details.get(name)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            if isinstance(value, str) and len(value) > 128:
                continue
            record[name] = value
    allowed = details.get("allowed")
    if isinstance(allowed, (list, tuple)) and all(isinstance(a, str) for a in allowed):
        record["allowed"] = [a for a in allowed[:_MAX_ALLOWED] if len(a) <= 128]
        if len(allowed) > _MAX_ALLOWED:
            record["allowed_more"] = len(allowed) - _MAX_ALLOWED
    return record


def refusal_text(record: Mapping[str, Any]) -> str:
    """The feedback line: what was wrong, where, and what is allowed."""
    line = f"Your previous tool request was refused by the tool ({record['code']})"
    names = ("pointer", "table", "column", "property", "kind")
    where = [f"{n} {record[n]}" for n in names if n in record]
    if where:
        line += ": " + ", ".join(where)
    if "maximum" in record:
        line += f"; the maximum is {record['maximum']}"
    if "allowed" in record:
        more = f" and {record['allowed_more']} more" if record.get("allowed_more") else ""
        line += f"; allowed: {', '.join(record['allowed'])}{more}"
    return line + "; change the request."


def _without_hashes(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_hashes(v) for k, v in value.items() if k not in _HASH_KEYS}
    if isinstance(value, list):
        return [_without_hashes(v) for v in value]
    return value


__all__ = ["AnswerView", "answer_view", "refusal_record", "refusal_text"]
