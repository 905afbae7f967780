"""The fields of an LLM call record and of ``outcome.rejected_repair`` (pure).

:mod:`.flow` decides; this module only shapes what it decided into the
``llm-call-record-v1`` form that :class:`~.audit.CallRecordStore` keeps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from viano_bug_analysis.investigation.recovery.audit import (
    canonical_json,
    sha256_hex,
    storable_text,
    text_bytes,
)
from viano_bug_analysis.investigation.recovery.normalize import (
    RECOVERY_POLICY_VERSION,
    NormalizationError,
    NormalizationOutcome,
)
from viano_bug_analysis.investigation.recovery.repair import PROMPT_ID

Status = Literal["accepted", "rejected", "repair_requested"]
CALL_INVESTIGATION: Final = "investigation"
CALL_REPAIR: Final = "repair"


def response_entry(text: str, limit: int, *, keep_text: bool = True) -> dict[str, Any]:
    """Hash and size of a raw response, and the text itself if within ``limit`` bytes.

    A larger text is not cut: it is left out whole, hash and size remain. So
    is a text that is not valid Unicode (a lone surrogate): canonical JSON
    cannot hold it, and no provider reply can carry one.
    """
    data = text_bytes(text)
    stored = text if keep_text and len(data) <= limit and storable_text(text) else None
    return {"sha256": sha256_hex(data), "size_bytes": len(data), "text": stored}


def outcome_entry(
    status: Status,
    *,
    reason: str | None = None,
    violations: Sequence[str] = (),
    parse_error: NormalizationError | None = None,
    hint: str | None = None,
    repair_plan: Mapping[str, Any] | None = None,
    rejected_repair: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    error = None
    if parse_error is not None:
        error = {"code": parse_error.code, "path": parse_error.path, "offset": parse_error.offset}
    return {
        "status": status,
        "reason": reason,
        "violations": list(violations),
        "parse_error": error,
        "hint": hint,
        "repair_plan": dict(repair_plan) if repair_plan is not None else None,
        "rejected_repair": dict(rejected_repair) if rejected_repair is not None else None,
    }


def investigation_fields(
    *,
    prompt_id: str,
    version: int,
    outcome: NormalizationOutcome,
    text_limit: int,
    result: Mapping[str, Any],
    call_key: str | None = None,
    response_format: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of a regular call: original text, candidate, rules, refusals, outcome."""
    return {
        **_key_field(call_key),
        **_format_field(response_format),
        "call": CALL_INVESTIGATION,
        "prompt_id": prompt_id,
        "response_recovery_version": version,
        "response": response_entry(outcome.original, text_limit),
        "normalized_response": outcome.normalized,
        "applied_rules": [{"rule": a.rule, "path": a.path} for a in outcome.applied_rules],
        "refusals": [{"reason": r.reason, "path": r.path} for r in outcome.refusals],
        "repair": None,
        "outcome": dict(result),
    }


def repair_fields(
    *,
    reply: str,
    source_seq: int,
    source_sha256: str,
    target: str,
    prompt: str,
    patch: Mapping[str, Any] | None,
    rebuilt: Mapping[str, Any] | None,
    result: Mapping[str, Any],
    call_key: str | None = None,
    response_format: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of a repair call.

    The raw reply is kept by hash and size only: an accepted reply lives on
    as ``patch`` and ``rebuilt_response``, a rejected one in
    ``outcome.rejected_repair`` (within its limit), so it is never stored twice.
    """
    return {
        **_key_field(call_key),
        **_format_field(response_format),
        "call": CALL_REPAIR,
        "prompt_id": PROMPT_ID,
        "response_recovery_version": RECOVERY_POLICY_VERSION,
        "response": response_entry(reply, 0, keep_text=False),
        "normalized_response": None,
        "applied_rules": [],
        "refusals": [],
        "repair": {
            "source_seq": source_seq,
            "source_sha256": source_sha256,
            "target": target,
            "prompt_sha256": sha256_hex(text_bytes(prompt)),
            "patch": dict(patch) if patch is not None else None,
            "rebuilt_response": dict(rebuilt) if rebuilt is not None else None,
            "rebuilt_sha256": sha256_hex(canonical_json(rebuilt)) if rebuilt is not None else None,
        },
        "outcome": dict(result),
    }


def _key_field(call_key: str | None) -> dict[str, str]:
    # Left out when not given, so that records without a key keep their bytes.
    return {} if call_key is None else {"call_key": call_key}


def _format_field(response_format: Mapping[str, Any] | None) -> dict[str, Any]:
    # Given: the record is format_version 2 (the format the request asked for).
    # Not given (a caller that does not know it): a version-1 record as before.
    return {} if response_format is None else {"response_format": dict(response_format)}


def repair_plan(target: str, response: Mapping[str, Any], prompt: str) -> dict[str, Any]:
    """What is stored before a repair call, in the shape ``recheck_stored_plan`` reads."""
    return {
        "prompt": PROMPT_ID,
        "target": target,
        "response": dict(response),
        "prompt_sha256": sha256_hex(text_bytes(prompt)),
    }


def rejected_repair_entry(
    violations: Sequence[str],
    *,
    patch: Mapping[str, Any] | None,
    original_text: str | None,
    limit: int,
) -> dict[str, Any]:
    """``outcome.rejected_repair``: reason, hash and size, and the content if small enough.

    The content is the parsed proposal (``patch``) or, for anything that did
    not parse as a proposal, the reply text (``original_text``). Hash and size
    are over its canonical JSON; over ``limit`` bytes the content is left out
    whole, never cut. A reply text that is not valid Unicode has no canonical
    JSON: it is measured as its own UTF-8 bytes (lone surrogates kept) and
    never stored.
    """
    key, content = ("patch", dict(patch)) if patch is not None else ("original_text", original_text)
    storable = not isinstance(content, str) or storable_text(content)
    data = canonical_json(content) if storable else text_bytes(str(content))
    entry: dict[str, Any] = {
        "version": RECOVERY_POLICY_VERSION,
        "reason": violations[0],
        "violations": list(violations),
        "sha256": sha256_hex(data),
        "size_bytes": len(data),
    }
    if storable and len(data) <= limit:
        entry[key] = content
    return entry


__all__ = [
    "CALL_INVESTIGATION",
    "CALL_REPAIR",
    "Status",
    "investigation_fields",
    "outcome_entry",
    "rejected_repair_entry",
    "repair_fields",
    "repair_plan",
    "response_entry",
]
