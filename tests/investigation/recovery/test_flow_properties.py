"""Properties of recover_response over generated responses and replies."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.investigation.recovery.recovery_fixtures import (
    CONTEXT,
    CONTRACT,
    LIMITS,
    V1,
    reply,
    response,
    typed_scalars,
)
from viano_bug_analysis.investigation.recovery import (
    REJECTION_REASONS,
    CallRecordStore,
    RecoveryResult,
    recover_response,
)
from viano_bug_analysis.investigation.recovery.contract import full_violations
from viano_bug_analysis.schemas import fast_validator

_value = st.one_of(
    st.integers(-(10**6), 10**6),
    st.text(alphabet="abcXYZ_% ", min_size=1, max_size=8),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
)
_filter = st.fixed_dictionaries(
    {
        "column": st.sampled_from(["id", "name", "LogTitle"]),
        "operator": st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "contains"]),
        "value": _value,
    }
)


def as_list(unit: dict[str, Any], shape: str) -> Any:
    if shape == "triple":
        return [unit["column"], unit["operator"], unit["value"]]
    if shape == "labelled":
        return ["column", unit["column"], "operator", unit["operator"], "value", unit["value"]]
    return unit


@st.composite
def disguised(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """A response with misshapen filters (for normalization or repair) and its text."""
    filters = draw(st.lists(_filter, min_size=1, max_size=3))
    shape = draw(st.sampled_from(["flat", "nested", "lone"]))
    if shape == "flat":  # one flat range: a repair case from two filters on
        written: Any = [item for unit in filters for item in as_list(unit, "triple")]
    elif shape == "nested":  # lists inside the list: normalization
        kinds = st.sampled_from(["triple", "labelled", "object"])
        written = [as_list(unit, draw(kinds)) for unit in filters]
    else:  # a lone filter object: a repair case
        written = filters[0]
        filters = filters[:1]
    messy = response(written)
    text = json.dumps(messy)
    if draw(st.booleans()):
        text = "```json\n" + text + "\n```"
    return messy, text


def proposals(filters: list[dict[str, Any]]) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Faithful and unfaithful replacements for a filter range."""

    def tampered(index: int, how: str) -> list[dict[str, Any]]:
        result = copy.deepcopy(filters)
        unit = result[index % len(result)]
        if how == "swap":
            unit["column"], unit["value"] = unit["value"], unit["column"]
        elif how == "change":
            unit["value"] = "changed"
        elif how == "drop":
            result.pop(index % len(result))
        else:
            result.append({"column": "id", "operator": "eq", "value": 1})
        return result

    return st.one_of(
        st.just(filters),
        st.just(list(reversed(filters))),
        st.builds(tampered, st.integers(0, 5), st.sampled_from(["swap", "change", "drop", "add"])),
    )


class OneReply:
    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    def __call__(self, prompt: str, _excerpt: object = None, /) -> str:
        self.calls += 1
        return self.text


def clean_filters(messy: dict[str, Any]) -> list[dict[str, Any]]:
    """The filter objects the messy response means, in order (test reference)."""
    written = messy["next"]["arguments"]["filters"]
    if isinstance(written, dict):
        return [written]
    if written and not isinstance(written[0], list | dict):
        return [
            {"column": c, "operator": o, "value": v}
            for c, o, v in zip(written[0::3], written[1::3], written[2::3], strict=True)
        ]
    result = []
    for item in written:
        if isinstance(item, dict):
            result.append(item)
        elif len(item) == 3:
            result.append({"column": item[0], "operator": item[1], "value": item[2]})
        else:
            result.append({"column": item[1], "operator": item[3], "value": item[5]})
    return result


@settings(deadline=None, max_examples=150)
@given(st.data())
def test_every_accepted_normalization_or_repair_keeps_the_typed_scalars(
    data: st.DataObject,
) -> None:
    messy, text = data.draw(disguised())
    replacement = data.draw(proposals(clean_filters(messy)))
    provider = OneReply(reply(replacement))
    result = recover_response(
        text,
        contract=CONTRACT,
        policy=V1,
        context=CONTEXT,
        provider=provider,
        audit_store=None,
        limits=LIMITS,
    )
    assert provider.calls == result.provider_calls <= 1
    if result.accepted:
        assert result.response is not None
        assert typed_scalars(result.response) == typed_scalars(messy)
        assert full_violations(result.response, CONTRACT) == []
    else:
        assert result.response is None


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=20,
)


@st.composite
def mutated_response(draw: st.DrawFn) -> str:
    """A real response with one part replaced by generated JSON."""
    base = response(draw(st.sampled_from([None, ["id", "eq", 1, "name", "contains", "x"]])))
    key = draw(st.sampled_from(["hypothesis_id", "confidence", "evidence", "next", "extra"]))
    base[key] = draw(_json)
    return json.dumps(base)


_FULL = json.dumps(response())
_texts = st.one_of(
    st.text(max_size=200),
    _json.map(json.dumps),
    st.integers(0, len(_FULL) - 1).map(lambda end: _FULL[:end]),  # cut off
    mutated_response(),
)


def execute_if_accepted(result: RecoveryResult, executed: list[Any]) -> None:
    """The controller's rule: only an accepted response runs."""
    if result.accepted:
        executed.append(result.response)


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    _texts, st.one_of(st.text(max_size=100), _json.map(lambda v: json.dumps({"replacement": v})))
)
def test_malformed_responses_never_execute_anything(text: str, provider_reply: str) -> None:
    executed: list[Any] = []
    provider = OneReply(provider_reply)
    result = recover_response(
        text,
        contract=CONTRACT,
        policy=V1,
        context=CONTEXT,
        provider=provider,
        audit_store=None,
        limits=LIMITS,
    )
    execute_if_accepted(result, executed)
    assert provider.calls == result.provider_calls <= 1
    if result.accepted:
        # Whatever ran holds the whole contract.
        [ran] = executed
        assert fast_validator("investigation-response-v1").is_valid(ran)
        assert full_violations(ran, CONTRACT) == []
        assert result.reason is None
    else:
        assert executed == [] and result.response is None
        assert result.reason in REJECTION_REASONS
        assert result.invalid_responses >= 1


@settings(deadline=None, max_examples=25)
@given(_texts)
def test_every_outcome_can_be_recorded_and_read_back(text: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        store = CallRecordStore(Path(directory))
        result = recover_response(
            text,
            contract=CONTRACT,
            policy=V1,
            context=CONTEXT,
            provider=OneReply("not json"),
            audit_store=store,
            limits=LIMITS,
        )
        stored = CallRecordStore(Path(directory)).list()
        assert tuple(r.seq for r in stored) == result.record_seqs
        assert stored[0].document["response"]["text"] == text
