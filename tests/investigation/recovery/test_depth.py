"""Nesting at the strict parse's limit and one past it, through the whole recovery.

Every stage after the parse (schema validation, repair admission,
check_preservation/same(), splice, the audit) must handle whatever the parse
accepts; the comparisons and copies do not depend on Python's recursion limit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.investigation.recovery.recovery_fixtures import (
    CONTEXT,
    CONTRACT,
    FILTERS,
    FLAT,
    LIMITS,
    V0,
    V1,
    FakeProvider,
    response,
)
from viano_bug_analysis.investigation.recovery import (
    REJECTION_REASONS,
    CallRecordStore,
    RecoveryPolicy,
    RecoveryResult,
    recover_response,
)
from viano_bug_analysis.investigation.recovery.repair import (
    check_preservation,
    filter_triples,
    same,
    splice,
)
from viano_bug_analysis.jsonio import MAX_DEPTH, strict_parse

BEYOND_RECURSION = sys.getrecursionlimit() * 3


def nested(levels: int, leaf: Any = 1) -> Any:
    """``levels`` arrays around ``leaf`` (built without recursion)."""
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


def depth(text: str) -> int:
    deepest = current = 0
    for char in text:  # the texts here have no brackets inside strings
        if char in "[{":
            current += 1
            deepest = max(deepest, current)
        elif char in "]}":
            current -= 1
    return deepest


def recover(
    text: str, policy: RecoveryPolicy, provider: FakeProvider, store: CallRecordStore
) -> RecoveryResult:
    return recover_response(
        text,
        contract=CONTRACT,
        policy=policy,
        context=CONTEXT,
        provider=provider,
        audit_store=store,
        limits=LIMITS,
    )


def _extra(levels: int) -> str:
    # root object + the nested arrays: ``levels`` in all
    return json.dumps({**response(), "extra": nested(levels - 1)})


def _filter_value(levels: int) -> str:
    # root, next, arguments, filters list, then the value
    filters = ["name", "contains", nested(levels - 4), "id", "gt", 100]
    return json.dumps(response(filters))


def _evidence(levels: int) -> str:
    # root, evidence list, item object, then the reference
    document = response()
    document["evidence"][0]["reference"] = nested(levels - 3, "/rows/0")
    return json.dumps(document)


SHAPES = {"extra": _extra, "filter_value": _filter_value, "evidence": _evidence}


@pytest.mark.parametrize("policy", [V0, V1], ids=["policy0", "policy1"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_response_at_the_limit_is_decided_and_audited(
    tmp_path: Path, shape: str, policy: RecoveryPolicy
) -> None:
    text = SHAPES[shape](MAX_DEPTH)
    assert depth(text) == MAX_DEPTH
    store = CallRecordStore(tmp_path)
    result = recover(text, policy, FakeProvider(), store)
    assert not result.accepted  # nested arrays are nowhere in the contract
    assert result.reason in REJECTION_REASONS
    assert result.reason != "too_deep"
    [record] = CallRecordStore(tmp_path).list()
    assert record.document["normalized_response"] is not None  # kept whole, and read back


@pytest.mark.parametrize("policy", [V0, V1], ids=["policy0", "policy1"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_one_level_past_the_limit_is_too_deep(
    tmp_path: Path, shape: str, policy: RecoveryPolicy
) -> None:
    text = SHAPES[shape](MAX_DEPTH + 1)
    assert depth(text) == MAX_DEPTH + 1
    store = CallRecordStore(tmp_path)
    result = recover(text, policy, FakeProvider(), store)
    assert result.reason == "too_deep"
    [record] = CallRecordStore(tmp_path).list()
    assert record.document["outcome"]["parse_error"]["code"] == "too_deep"


def _deep_reply(levels: int) -> str:
    # {"replacement": [filter, filter with a nested value]}: root, list, object, value
    good = {"column": "name", "operator": "contains", "value": "Wolpertinger"}
    deep = {"column": "id", "operator": "gt", "value": nested(levels - 3, 100)}
    return json.dumps({"replacement": [good, deep]})


def test_a_repair_reply_at_the_limit_goes_through_splice_preservation_and_audit(
    tmp_path: Path,
) -> None:
    reply = _deep_reply(MAX_DEPTH)
    assert depth(reply) == MAX_DEPTH
    store = CallRecordStore(tmp_path)
    result = recover(json.dumps(response(FLAT)), V1, FakeProvider(reply), store)
    assert result.provider_calls == 1
    assert result.reason == "repair_rejected"
    # The nested value moved the filter's value: preservation saw it, at full depth.
    assert result.violations == ("filter_position_changed",)
    records = CallRecordStore(tmp_path).list()
    assert [r.document["call"] for r in records] == ["investigation", "repair"]
    rejected = records[1].document["outcome"]["rejected_repair"]
    assert rejected["patch"]["path"] == FILTERS  # the deep proposal is kept and read back


def test_a_repair_reply_one_past_the_limit_is_not_json(tmp_path: Path) -> None:
    reply = _deep_reply(MAX_DEPTH + 1)
    assert depth(reply) == MAX_DEPTH + 1
    store = CallRecordStore(tmp_path)
    result = recover(json.dumps(response(FLAT)), V1, FakeProvider(reply), store)
    assert result.reason == "repair_rejected"
    assert result.violations == ("reply_not_json",)
    assert len(CallRecordStore(tmp_path).list()) == 2


def test_the_parse_refuses_what_the_later_stages_were_not_built_for() -> None:
    assert strict_parse(json.dumps(nested(MAX_DEPTH - 1, {}))).__class__.__name__ == "Parsed"
    failure = strict_parse(json.dumps(nested(MAX_DEPTH, {})))
    assert getattr(failure, "code", None) == "too_deep"


# --- the comparisons themselves do not recurse -----------------------------------------


def test_same_is_iterative() -> None:
    left = nested(BEYOND_RECURSION)
    assert same(left, nested(BEYOND_RECURSION))
    assert not same(left, nested(BEYOND_RECURSION, 1.0))
    assert not same(left, nested(BEYOND_RECURSION, True))
    assert not same(left, nested(BEYOND_RECURSION - 1))


def test_splice_and_preservation_are_iterative() -> None:
    original = response(FLAT)
    deep = nested(BEYOND_RECURSION, 100)
    proposal = [
        {"column": "name", "operator": "contains", "value": "Wolpertinger"},
        {"column": "id", "operator": "gt", "value": deep},
    ]
    repaired = splice(original, FILTERS, proposal)
    assert repaired["next"]["arguments"]["filters"][1]["value"] is not deep  # a copy
    assert same(repaired["next"]["arguments"]["filters"][1]["value"], deep)
    assert check_preservation(original, repaired, FILTERS) == ["filter_position_changed"]
    unit = {"column": "a", "operator": "eq", "value": 1}
    assert len(filter_triples(nested(BEYOND_RECURSION, unit))) == 1


@pytest.mark.parametrize("levels", [350, 490])
def test_the_reported_depths_end_in_a_rejection_not_a_recursion_error(
    tmp_path: Path, levels: int
) -> None:
    # Before: parsed, then check_preservation -> same() hit RecursionError.
    store = CallRecordStore(tmp_path)
    result = recover(json.dumps(response(FLAT)), V1, FakeProvider(_deep_reply(levels)), store)
    assert result.violations == ("reply_not_json",)
    assert recover(_filter_value(levels), V1, FakeProvider(), store).reason == "too_deep"
