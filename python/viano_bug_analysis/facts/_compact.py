"""A compact, hash-free one-line view of one enrichment fact (minimal stand-in)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.jsonio import canonical_bytes

# Provenance stays in the package; the model names a fact by its label.
_HIDDEN = frozenset(
    {
        "fact_id",
        "kind",
        "provenance",
        "name_provenance",
        "purpose",
        "capture_sha256",
        "capture_path",
        "query_sha256",
        "query_sha256s",
        "query",
        "rows",
        "complete_filtered_rows",
    }
)
_EMPTY: tuple[Any, ...] = (None, "", 0, [], {})


def compact(fact: Mapping[str, Any]) -> str:
    """``P12 <kind>: key=value ...``; rows as ``table: col=value ...`` lines
    without empty values."""
    fields = [f"{k}={_value(v)}" for k, v in fact.items() if k not in _HIDDEN]
    line = f"{fact['fact_id']} {fact['kind']}: " + " ".join(fields)
    for row in fact.get("rows") or ():
        kept = " ".join(f"{k}={_value(v)}" for k, v in row.items() if v not in _EMPTY)
        line += f"\n  row: {kept}"
    return line


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value if value and " " not in value else canonical_bytes(value).decode()
    if isinstance(value, Mapping):
        value = {k: v for k, v in value.items() if k not in _HIDDEN}
    return canonical_bytes(value).decode()
