"""Restarts: the repair prompt is byte-identical after one, and rerunning a decision
whose records were stored (a kill before the caller stored the decision) adds none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.investigation.recovery.recovery_fixtures import (
    CONTEXT,
    CONTRACT,
    FLAT,
    GOOD,
    LIMITS,
    V1,
    FakeProvider,
    TransportDown,
    failing_provider,
    reply,
    response,
)
from viano_bug_analysis.investigation.recovery import (
    CallRecordStore,
    RecoveryContext,
    RecoveryResult,
    pending_repair,
    recover_response,
    resume_repair,
)
from viano_bug_analysis.jsonio import canonical_bytes, sha256_hex


def recover(text: str, store: CallRecordStore, provider: Any, **context: Any) -> RecoveryResult:
    return recover_response(
        text,
        contract=CONTRACT,
        policy=V1,
        context=RecoveryContext(**{**vars_of(CONTEXT), **context}),
        provider=provider,
        audit_store=store,
        limits=LIMITS,
    )


def vars_of(context: RecoveryContext) -> dict[str, Any]:
    return {name: getattr(context, name) for name in context.__slots__}


def files(store: CallRecordStore) -> list[str]:
    return sorted(path.name for path in store.directory.iterdir())


# --- point 4: one serialization for what is sent and hashed ---------------------------


def test_the_repair_prompt_is_byte_identical_after_a_restart(tmp_path: Path) -> None:
    # Key order as a model writes it, not sorted: the first run sees it so.
    text = json.dumps(response(FLAT))
    first = FakeProvider()

    def down_after_recording(prompt: str, _excerpt: object = None, /) -> str:
        first.prompts.append(prompt)
        raise TransportDown("the process is gone before the repair answer arrives")

    store = CallRecordStore(tmp_path)
    with pytest.raises(TransportDown):
        recover(text, store, down_after_recording)
    [sent_before] = first.prompts
    [planned] = store.list()
    plan = planned.document["outcome"]["repair_plan"]
    assert plan["prompt_sha256"] == sha256_hex(sent_before.encode())

    # The restart: a new store reads the sorted, stored plan back.
    restarted = CallRecordStore(tmp_path)
    source = pending_repair(restarted)
    assert source is not None and source.seq == planned.seq
    second = FakeProvider(reply(GOOD))
    result = resume_repair(
        source,
        contract=CONTRACT,
        policy=V1,
        context=CONTEXT,
        provider=second,
        audit_store=restarted,
        limits=LIMITS,
    )
    assert result.accepted
    [sent_after] = second.prompts
    assert sent_after == sent_before
    repair = restarted.list()[-1].document["repair"]
    assert repair["prompt_sha256"] == plan["prompt_sha256"]


def test_the_prompt_carries_the_response_in_canonical_form(tmp_path: Path) -> None:
    provider = FakeProvider(reply(GOOD))
    recover(json.dumps(response(FLAT), indent=3), CallRecordStore(tmp_path), provider)
    [prompt] = provider.prompts
    # The part to restructure, as canonical JSON whatever the model's layout.
    assert prompt.endswith("\nValue at the error path: " + canonical_bytes(FLAT).decode())


# --- point 5: keyed, idempotent records ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "replies", "records"),
    [
        (json.dumps(response()), (), 1),  # accepted as it is
        (json.dumps(response(GOOD, hypothesis_id="H9")), (), 1),  # rejected
        ("```json\n" + json.dumps(response([["id", "eq", 1]])) + "\n```", (), 1),  # normalized
        (json.dumps(response(FLAT)), (reply(GOOD),), 2),  # repaired
        (json.dumps(response(FLAT)), ("not json",), 2),  # repair rejected
    ],
    ids=["accepted", "rejected", "normalized", "repaired", "repair_rejected"],
)
def test_rerunning_a_stored_decision_appends_nothing(
    tmp_path: Path, text: str, replies: tuple[str, ...], records: int
) -> None:
    store = CallRecordStore(tmp_path)
    before = recover(text, store, FakeProvider(*replies))
    stored = files(store)
    assert len(store.list()) == records
    # The process was killed before the caller stored ``before``; the rerun
    # repeats the same decision from the same stored reply.
    after = recover(text, CallRecordStore(tmp_path), FakeProvider(*replies))
    assert after == before
    assert after.record_seqs == before.record_seqs
    assert files(store) == stored


def test_two_calls_with_identical_replies_keep_two_records(tmp_path: Path) -> None:
    store = CallRecordStore(tmp_path)
    text = json.dumps(response(GOOD, hypothesis_id="H9"))
    first = recover(text, store, FakeProvider(), call_key="H2:1:1")
    second = recover(text, store, FakeProvider(), call_key="H2:1:2")
    assert (first.record_seqs, second.record_seqs) == ((1,), (2,))
    assert [r.document["call_key"] for r in store.list()] == ["H2:1:1", "H2:1:2"]
    # And each of them, rerun, finds its own record.
    assert recover(text, store, FakeProvider(), call_key="H2:1:2").record_seqs == (2,)


def test_a_plan_without_answer_is_still_pending_after_a_rerun(tmp_path: Path) -> None:
    store = CallRecordStore(tmp_path)
    text = json.dumps(response(FLAT))
    for _ in range(2):
        with pytest.raises(TransportDown):
            recover(text, store, failing_provider)
    [record] = store.list()
    assert pending_repair(store) == record
