"""The response format chosen per LLM endpoint, kept in the package.

``response_format = "auto"`` starts every endpoint at json_schema and moves
it down the ladder when the endpoint refuses a format. The choice is written
here, through the package's write-once files, *before* the request that uses
it is sent: a run resumed after a kill (or a refusal) finds the same format
and so sends byte-identical requests, whose SHA-256 the budget and the call
records are keyed by.

``analysis/llm/formats/<endpoint key>-<rung>-<format>.json`` holds
``{"format": "viano-llm-format", "format_version": 1, "endpoint_key",
"response_format", "reason"}``; the rung is a fixed number per format
(1 json_schema, 2 json_object, 3 text, 4 grammar: the numbers packages were
written with before the grammar rung came between json_schema and
json_object keep their meaning), and of the formats stored for an endpoint
the one furthest down the ladder is its format. The endpoint key is a hash of the base URL and the
model, so no URL is written and a changed model starts afresh. ``reason`` is
a fixed code (``first_choice``, or what the refusal named), never a body.
"""

from __future__ import annotations

import re
from typing import Any, Final

from viano_bug_analysis.durable import PackageLayout, compact_json
from viano_bug_analysis.investigation.llm.response_format import (
    GRAMMAR,
    JSON_OBJECT,
    JSON_SCHEMA,
    LADDER,
    TEXT,
)
from viano_bug_analysis.investigation.steps import not_a_record

FORMATS_DIR: Final = PackageLayout.LLM_FORMATS
RECORD_FORMAT: Final = "viano-llm-format"
_NAME: Final = re.compile(r"([0-9a-f]{16})-([1-9])-([a-z_]{1,32})\.json")
_REASON: Final = re.compile(r"[a-z_]{1,64}")
_RUNGS: Final = {JSON_SCHEMA: 1, JSON_OBJECT: 2, TEXT: 3, GRAMMAR: 4}


class PackageFormats:
    """A ``FormatMemory`` backed by the package (see the module text)."""

    def __init__(self, layout: PackageLayout) -> None:
        self._files = layout.files

    def get(self, endpoint_key: str) -> str | None:
        best: tuple[int, str] | None = None  # (place in the ladder, format)
        for name in self._files.list(FORMATS_DIR) or ():
            match = _NAME.fullmatch(name)
            if match is None or match.group(1) != endpoint_key:
                continue
            rung, chosen = int(match.group(2)), match.group(3)
            record = self._files.read_document(FORMATS_DIR / name)
            if not _valid(record, endpoint_key, rung, chosen):
                raise not_a_record(FORMATS_DIR / name, "not an LLM format choice")
            if best is None or LADDER.index(chosen) > best[0]:
                best = (LADDER.index(chosen), chosen)
        return None if best is None else best[1]

    def put(self, endpoint_key: str, response_format: str, reason: str) -> None:
        rung = _RUNGS[response_format]
        name = FORMATS_DIR / f"{endpoint_key}-{rung}-{response_format}.json"
        if self._files.read(name) is not None:
            return  # chosen before (a resumed run): the first record stands
        record = {
            "format": RECORD_FORMAT,
            "format_version": 1,
            "endpoint_key": endpoint_key,
            "response_format": response_format,
            "reason": reason if _REASON.fullmatch(reason) else "other",
        }
        self._files.write_once(name, compact_json(record))


def _valid(record: Any, endpoint_key: str, rung: int, chosen: str) -> bool:
    return (
        isinstance(record, dict)
        and set(record) == {"format", "format_version", "endpoint_key", "response_format", "reason"}
        and record["format"] == RECORD_FORMAT
        and record["format_version"] == 1
        and record["endpoint_key"] == endpoint_key
        and _RUNGS.get(chosen) == rung
        and record["response_format"] == chosen
        and isinstance(record["reason"], str)
        and _REASON.fullmatch(record["reason"]) is not None
    )


__all__ = ["FORMATS_DIR", "PackageFormats"]
