"""recover_response: normalization, the repair call, rejections, counting and audit."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.investigation.recovery.recovery_fixtures import (
    CONTEXT,
    CONTRACT,
    FILTERS,
    FLAT,
    GOOD,
    LIMITS,
    V0,
    V1,
    FakeProvider,
    TransportDown,
    failing_provider,
    reply,
    response,
)
from viano_bug_analysis.investigation.recovery import (
    REJECTION_REASONS,
    REPAIR_REJECTION_REASONS,
    CallRecordStore,
    RecoveryError,
    RecoveryLimits,
    RecoveryNote,
    RecoveryPolicy,
    RecoveryResult,
    RepairProvider,
    ResponseContract,
    canonical_json,
    pending_repair,
    recover_response,
    resume_repair,
    with_recovery_notes,
)
from viano_bug_analysis.investigation.recovery.admission import OPERATOR_HINT
from viano_bug_analysis.investigation.recovery.audit import sha256_hex
from viano_bug_analysis.investigation.recovery.normalize import AppliedRule
from viano_bug_analysis.investigation.recovery.repair import PROMPT_ID

WOLPERTINGER_LIKE = ["LogTitle", "like", "%Wolpertinger%"]


def recover(
    text: str,
    provider: RepairProvider | None = None,
    *,
    store: CallRecordStore | None = None,
    policy: RecoveryPolicy = V1,
    contract: ResponseContract = CONTRACT,
    limits: RecoveryLimits = LIMITS,
) -> RecoveryResult:
    return recover_response(
        text,
        contract=contract,
        policy=policy,
        context=CONTEXT,
        provider=provider if provider is not None else FakeProvider(),
        audit_store=store,
        limits=limits,
    )


def records(store: CallRecordStore) -> list[dict[str, Any]]:
    return [dict(r.document) for r in store.list()]


# --- the first real run -------------------------------------------------------


def test_the_name_contains_wolpertinger_filter_is_normalized_without_a_call(
    tmp_path: Path,
) -> None:
    store = CallRecordStore(tmp_path)
    provider = FakeProvider()
    text = json.dumps(response([["name", "contains", "Wolpertinger"], ["id", "gt", 100]]))
    result = recover(text, provider, store=store)
    assert result.accepted
    assert result.response == response(GOOD)
    assert result.provider_calls == 0 and provider.prompts == []
    assert result.invalid_responses == 0
    assert result.applied_rules == (
        AppliedRule("filter_from_triple", FILTERS + "/0"),
        AppliedRule("filter_from_triple", FILTERS + "/1"),
    )
    [record] = records(store)
    assert record["response"]["text"] == text
    assert record["normalized_response"] == response(GOOD)
    assert [a["rule"] for a in record["applied_rules"]] == ["filter_from_triple"] * 2
    assert record["outcome"]["status"] == "accepted"


def test_the_like_filter_is_rejected_with_the_operator_hint_and_no_call(tmp_path: Path) -> None:
    store = CallRecordStore(tmp_path)
    provider = FakeProvider()
    result = recover(json.dumps(response([WOLPERTINGER_LIKE])), provider, store=store)
    assert not result.accepted and result.response is None
    assert result.reason == "contract_violation"
    assert "operator_unknown" in result.violations
    assert result.hint == OPERATOR_HINT
    assert provider.prompts == []
    assert result.invalid_responses == 1
    [record] = records(store)
    assert record["outcome"]["hint"] == OPERATOR_HINT
    # Neither translated into contains nor stripped of its percent signs.
    stored_filters = record["normalized_response"]["next"]["arguments"]["filters"]
    assert stored_filters == [WOLPERTINGER_LIKE]


def test_a_flat_like_filter_beside_a_good_one_gets_no_repair_either() -> None:
    provider = FakeProvider()
    result = recover(json.dumps(response(["name", "contains", "W", *WOLPERTINGER_LIKE])), provider)
    assert result.reason == "contract_violation" and result.hint == OPERATOR_HINT
    assert provider.prompts == []


# --- the repair call ----------------------------------------------------------


def test_an_admitted_container_error_is_repaired_with_one_call(tmp_path: Path) -> None:
    store = CallRecordStore(tmp_path)
    provider = FakeProvider(reply(GOOD))
    result = recover(json.dumps(response(FLAT)), provider, store=store)
    assert result.accepted
    assert result.response == response(GOOD)
    assert result.provider_calls == 1
    assert result.invalid_responses == 2  # the invalid response and the repair attempt
    assert result.notes_for_next_call == (RecoveryNote("repaired", PROMPT_ID, FILTERS),)
    [prompt] = provider.prompts
    assert prompt.startswith(f"Prompt: {PROMPT_ID}")
    assert f"Error path: {FILTERS}" in prompt
    assert "Visible evidence IDs: E3, E5" in prompt
    assert result.record_seqs == (1, 2)


def test_source_hash_patch_and_rebuilt_response_are_traceable_after_a_restart(
    tmp_path: Path,
) -> None:
    result = recover(
        json.dumps(response(FLAT)), FakeProvider(reply(GOOD)), store=CallRecordStore(tmp_path)
    )
    source, repair = CallRecordStore(tmp_path).list()  # a new process, the same package
    assert source.document["outcome"]["status"] == "repair_requested"
    plan = source.document["outcome"]["repair_plan"]
    assert plan["prompt"] == PROMPT_ID and plan["target"] == FILTERS
    assert plan["response"] == response(FLAT)
    assert repair.document["call"] == "repair"
    trace = repair.document["repair"]
    assert trace["source_seq"] == source.seq and trace["source_sha256"] == source.sha256
    assert trace["patch"] == {"path": FILTERS, "replacement": GOOD}
    assert trace["rebuilt_response"] == result.response
    assert trace["rebuilt_sha256"] == sha256_hex(canonical_json(result.response))
    assert trace["prompt_sha256"] == plan["prompt_sha256"]
    assert repair.document["response"]["sha256"] == sha256_hex(reply(GOOD).encode())
    assert repair.document["outcome"]["status"] == "accepted"


@pytest.mark.parametrize(
    ("replacement", "reason"),
    [
        # Another query value.
        (
            [
                {"column": "name", "operator": "contains", "value": "Wolpert"},
                {"column": "id", "operator": "gt", "value": 100},
            ],
            "filter_position_changed",
        ),
        (
            [
                {"column": "name", "operator": "contains", "value": "Wolpertinger"},
                {"column": "id", "operator": "gt", "value": 101},
            ],
            "filter_position_changed",
        ),
        # Column and value swapped: the same strings, other places.
        (
            [
                {"column": "Wolpertinger", "operator": "contains", "value": "name"},
                {"column": "id", "operator": "gt", "value": 100},
            ],
            "filter_position_changed",
        ),
        # A dropped filter.
        ([GOOD[0]], "filter_position_changed"),
        # The operator "translated".
        (
            [
                {"column": "name", "operator": "eq", "value": "Wolpertinger"},
                {"column": "id", "operator": "gt", "value": 100},
            ],
            "filter_position_changed",
        ),
    ],
)
def test_a_proposal_with_other_query_values_is_rejected(
    tmp_path: Path, replacement: Any, reason: str
) -> None:
    store = CallRecordStore(tmp_path)
    result = recover(json.dumps(response(FLAT)), FakeProvider(reply(replacement)), store=store)
    assert not result.accepted and result.response is None
    assert result.reason == "repair_rejected"
    assert reason in result.violations
    assert result.provider_calls == 1 and result.invalid_responses == 2
    rejected = result.rejected_repair
    assert rejected is not None
    patch = {"path": FILTERS, "replacement": replacement}
    assert rejected["patch"] == patch and "original_text" not in rejected
    assert rejected["version"] == 1
    assert rejected["sha256"] == sha256_hex(canonical_json(patch))
    assert rejected["size_bytes"] == len(canonical_json(patch))
    _, repair = store.list()
    assert repair.document["outcome"]["rejected_repair"] == rejected
    assert repair.document["repair"]["patch"] is None
    assert repair.document["repair"]["rebuilt_response"] is None


def test_broken_json_is_kept_as_original_text(tmp_path: Path) -> None:
    store = CallRecordStore(tmp_path)
    broken = '{"replacement": [{"column": "name"'
    result = recover(json.dumps(response(FLAT)), FakeProvider(broken), store=store)
    assert result.reason == "repair_rejected"
    assert result.violations == ("reply_not_json",)
    rejected = result.rejected_repair
    assert rejected is not None
    assert rejected["reason"] == "reply_not_json"
    assert rejected["original_text"] == broken and "patch" not in rejected
    assert rejected["sha256"] == sha256_hex(canonical_json(broken))


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("```json\n" + reply(GOOD) + "\n```", "reply_not_json"),  # no normalization of replies
        ('{"replacement": 1, "replacement": 2}', "reply_not_json"),
        (json.dumps({"replacement": GOOD, "confidence": 0.9}), "reply_not_replacement"),
        (json.dumps(response(GOOD)), "reply_not_replacement"),  # a whole new answer
        (json.dumps([GOOD]), "reply_not_replacement"),
    ],
)
def test_only_exactly_a_replacement_object_is_taken(text: str, code: str) -> None:
    result = recover(json.dumps(response(FLAT)), FakeProvider(text))
    assert result.reason == "repair_rejected"
    assert result.violations == (code,)
    assert result.rejected_repair is not None
    assert result.rejected_repair["original_text"] == text


def test_a_replacement_that_still_breaks_the_contract_is_rejected() -> None:
    nested = [["name", "contains", "Wolpertinger"], ["id", "gt", 100]]
    result = recover(json.dumps(response(FLAT)), FakeProvider(reply(nested)))
    assert result.reason == "repair_rejected"
    assert result.violations == ("contract_violation",)


@pytest.mark.parametrize("limit", [200, 65_536])
def test_an_oversized_reply_is_neither_cut_nor_kept(tmp_path: Path, limit: int) -> None:
    store = CallRecordStore(tmp_path)
    big = reply([{"column": "name", "operator": "contains", "value": "W" * max(limit, 70_000)}])
    limits = RecoveryLimits(invalid_responses_left=3, max_response_bytes=limit)
    result = recover(json.dumps(response(FLAT)), FakeProvider(big), store=store, limits=limits)
    assert result.reason == "repair_rejected"
    assert result.violations == ("repair_too_large",)
    rejected = result.rejected_repair
    assert rejected is not None
    assert set(rejected) == {"version", "reason", "violations", "sha256", "size_bytes"}
    assert rejected["sha256"] == sha256_hex(canonical_json(big))
    assert all(b"WWWWWWWW" not in p.read_bytes() for p in store.directory.glob("*.json"))


def test_a_rejected_proposal_over_the_configured_limit_keeps_only_hash_and_size() -> None:
    # Small enough to parse, too large for the configured response limit.
    changed = [
        {"column": "name", "operator": "contains", "value": "Wolpertinger" + "x" * 300},
        {"column": "id", "operator": "gt", "value": 100},
    ]
    text = reply(changed)
    limits = RecoveryLimits(invalid_responses_left=3, max_response_bytes=len(text))
    result = recover(json.dumps(response(FLAT)), FakeProvider(text), limits=limits)
    rejected = result.rejected_repair
    assert rejected is not None and rejected["reason"] == "filter_position_changed"
    patch = {"path": FILTERS, "replacement": changed}
    assert rejected["size_bytes"] == len(canonical_json(patch)) > len(text)
    assert "patch" not in rejected and "original_text" not in rejected


def test_a_lone_evidence_object_is_wrapped_by_a_repair() -> None:
    lone = {"evidence_id": "E3", "role": "supports", "reference": "/rows/0/LogTitle"}
    provider = FakeProvider(reply([lone]))
    result = recover(json.dumps(response(evidence=lone)), provider)
    assert result.accepted
    assert result.response is not None and result.response["evidence"] == [lone]


def test_invented_evidence_in_a_repair_is_rejected() -> None:
    lone = {"evidence_id": "E3", "role": "supports", "reference": "/rows/0/LogTitle"}
    invented = {"evidence_id": "E9", "role": "supports", "reference": "/rows/1"}
    result = recover(json.dumps(response(evidence=lone)), FakeProvider(reply([lone, invented])))
    assert result.reason == "repair_rejected"
    assert "scalar_multiset_changed" in result.violations


# --- rejected without a repair call -------------------------------------------


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        # Invented evidence: never legitimized, not even beside a repairable filter.
        (
            {"evidence": [{"evidence_id": "E9", "role": "supports", "reference": "/rows/0"}]},
            "evidence_not_visible",
        ),
        (
            {"evidence": {"evidence_id": "E9", "role": "supports", "reference": "/rows/0"}},
            "evidence_not_visible",
        ),
        ({"hypothesis_id": "H3"}, "hypothesis_mismatch"),
    ],
)
def test_binding_violations_get_no_repair_call(changes: dict[str, Any], reason: str) -> None:
    provider = FakeProvider()
    result = recover(json.dumps(response(FLAT, **changes)), provider)
    assert result.reason == reason
    assert provider.prompts == []


def test_invented_evidence_in_a_valid_response_is_rejected() -> None:
    evidence = [{"evidence_id": "E4", "role": "supports", "reference": "/rows/0"}]
    result = recover(json.dumps(response(evidence=evidence)))
    assert result.reason == "evidence_not_visible"


def test_an_unknown_action_is_rejected_without_a_call() -> None:
    unknown = response(FLAT)
    unknown["next"]["operation"] = "shell.exec"
    provider = FakeProvider()
    result = recover(json.dumps(unknown), provider)
    assert result.reason == "unknown_action"
    assert provider.prompts == []


@pytest.mark.parametrize(
    ("changes", "admission_reason"),
    [
        ({"confidence": "0.35"}, "scalar_target"),  # a confidence as text: a value, not a form
        ({"evidence": ["E3 shows the truncated title."]}, "scalar_target"),  # prose for evidence
        ({"assessment": "probably"}, "scalar_target"),
    ],
)
def test_scalar_and_prose_errors_get_no_repair_call(
    changes: dict[str, Any], admission_reason: str
) -> None:
    provider = FakeProvider()
    result = recover(json.dumps(response(GOOD, **changes)), provider)
    assert result.reason == "contract_violation"
    assert admission_reason in result.violations
    assert provider.prompts == []


def test_a_repair_cannot_change_the_confidence() -> None:
    # The reply can only replace the admitted path; a changed confidence must
    # come as an extra key and is refused with it.
    text = json.dumps({"replacement": GOOD, "confidence": 0.9})
    result = recover(json.dumps(response(FLAT)), FakeProvider(text))
    assert result.reason == "repair_rejected"
    assert result.violations == ("reply_not_replacement",)


def test_caller_checks_run_on_a_valid_response_and_are_never_repaired() -> None:
    contract = ResponseContract(
        hypothesis_id="H2",
        visible_evidence_ids=frozenset({"E3", "E5"}),
        extra_checks=(lambda response: ["budget_exhausted"],),
    )
    provider = FakeProvider()
    result = recover(json.dumps(response(GOOD)), provider, contract=contract)
    assert result.reason == "check_failed"
    assert result.violations == ("check_failed", "budget_exhausted")
    assert provider.prompts == []


def test_a_repair_must_pass_the_caller_checks_too() -> None:
    contract = ResponseContract(
        hypothesis_id="H2",
        visible_evidence_ids=frozenset({"E3", "E5"}),
        extra_checks=(lambda response: ["tool_limit"],),
    )
    result = recover(json.dumps(response(FLAT)), FakeProvider(reply(GOOD)), contract=contract)
    assert result.reason == "repair_rejected"
    assert result.violations == ("check_failed", "tool_limit")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Here is my answer: {}", "syntax_error"),
        ('{"a": 1, "a": 2}', "duplicate_key"),
        ('{"confidence": NaN}', "non_finite_number"),
        ('"just a sentence"', "not_an_object"),
        ("x" * 65_537, "input_too_large"),
    ],
)
def test_unparsable_responses_are_rejected(text: str, reason: str) -> None:
    result = recover(text)
    assert result.reason == reason
    assert result.invalid_responses == 1 and result.provider_calls == 0


def test_reason_codes_are_listed() -> None:
    assert len(set(REJECTION_REASONS)) == len(REJECTION_REASONS)
    assert len(set(REPAIR_REJECTION_REASONS)) == len(REPAIR_REJECTION_REASONS)
    assert "repair_rejected" in REJECTION_REASONS
    assert "filter_position_changed" in REPAIR_REJECTION_REASONS


# --- the invalid-response limit -----------------------------------------------


def test_no_repair_call_without_budget_for_the_attempt() -> None:
    provider = FakeProvider(reply(GOOD))
    limits = RecoveryLimits(invalid_responses_left=1)
    result = recover(json.dumps(response(FLAT)), provider, limits=limits)
    assert result.reason == "invalid_response_limit"
    assert result.invalid_responses == 1
    assert provider.prompts == []


def test_a_repair_attempt_counts_against_the_limit_even_when_it_fails() -> None:
    limits = RecoveryLimits(invalid_responses_left=2)
    result = recover(json.dumps(response(FLAT)), FakeProvider("nope"), limits=limits)
    assert result.reason == "repair_rejected"
    assert result.invalid_responses == 2 and result.provider_calls == 1


@pytest.mark.parametrize(
    "limits",
    [
        {"invalid_responses_left": -1},
        {"invalid_responses_left": True},
        {"invalid_responses_left": 1, "max_response_bytes": 1.5},
    ],
)
def test_limits_are_checked(limits: dict[str, Any]) -> None:
    with pytest.raises(RecoveryError) as raised:
        RecoveryLimits(**limits)
    assert raised.value.code == "recovery_limits_invalid"


# --- policy 0 and unmarked calls ------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "marker"), [(V0, True), (V1, False), (RecoveryPolicy(0), False)]
)
def test_without_recovery_only_the_strict_parse_runs(
    tmp_path: Path, policy: RecoveryPolicy, marker: bool
) -> None:
    contract = ResponseContract("H2", frozenset({"E3", "E5"}), schema_marker=marker)
    store = CallRecordStore(tmp_path)
    provider = FakeProvider(reply(GOOD))
    fenced = "```json\n" + json.dumps(response(GOOD)) + "\n```"
    result = recover(fenced, provider, store=store, policy=policy, contract=contract)
    assert result.reason == "syntax_error"
    flat = recover(
        json.dumps(response(FLAT)), provider, store=store, policy=policy, contract=contract
    )
    assert flat.reason == "contract_violation" and flat.hint is None
    triple = json.dumps(response([["name", "contains", "Wolpertinger"]]))
    assert (
        recover(triple, provider, policy=policy, contract=contract).reason == "contract_violation"
    )
    clean = recover(
        json.dumps(response(GOOD)), provider, store=store, policy=policy, contract=contract
    )
    assert clean.accepted and clean.notes_for_next_call == () and clean.applied_rules == ()
    assert provider.prompts == []
    for record in records(store):
        assert record["response_recovery_version"] == policy.response_recovery_version
        assert record["applied_rules"] == [] and record["outcome"]["repair_plan"] is None


# --- notes ride in the next regular call -----------------------------------------


def test_a_normalization_note_rides_in_the_next_regular_prompt_without_a_call() -> None:
    provider = FakeProvider()
    text = "```json\n" + json.dumps(response([["name", "contains", "Wolpertinger"]])) + "\n```"
    result = recover(text, provider)
    assert result.accepted and provider.prompts == []
    next_prompt = with_recovery_notes("Regular investigation prompt.", result.notes_for_next_call)
    assert next_prompt.startswith("Regular investigation prompt.\n\n")
    assert "strip_outer_fence" in next_prompt
    assert f"filter_from_triple at {FILTERS}/0" in next_prompt
    assert "Wolpertinger" not in next_prompt  # rule IDs and pointers only
    assert provider.prompts == []


def test_a_clean_response_leaves_the_next_prompt_unchanged() -> None:
    result = recover(json.dumps(response(GOOD)))
    assert result.notes_for_next_call == ()
    assert with_recovery_notes("Regular prompt.", result.notes_for_next_call) == "Regular prompt."


# --- execution happens once, and only for a validated response -------------------


def test_only_an_accepted_response_is_executed_and_exactly_once() -> None:
    executed: list[dict[str, Any]] = []
    texts = [
        json.dumps(response(FLAT)),
        json.dumps(response([WOLPERTINGER_LIKE])),
        json.dumps(
            response(GOOD, evidence=[{"evidence_id": "E7", "role": "supports", "reference": ""}])
        ),
    ]
    provider = FakeProvider(reply(GOOD))
    for text in texts:
        result = recover(text, provider)
        if result.accepted:
            assert result.response is not None
            executed.append(result.response)
    assert executed == [response(GOOD)]


# --- resumption -----------------------------------------------------------------


def test_a_transport_error_propagates_and_the_plan_resumes_after_a_restart(
    tmp_path: Path,
) -> None:
    with pytest.raises(TransportDown):
        recover(json.dumps(response(FLAT)), failing_provider, store=CallRecordStore(tmp_path))
    store = CallRecordStore(tmp_path)  # the restarted process
    source = pending_repair(store)
    assert source is not None and source.seq == 1
    provider = FakeProvider(reply(GOOD))
    result = resume_repair(
        source,
        contract=CONTRACT,
        policy=V1,
        context=CONTEXT,
        provider=provider,
        audit_store=store,
        limits=LIMITS,
    )
    assert result.accepted and result.response == response(GOOD)
    assert result.invalid_responses == 1  # only the attempt; the original was charged before
    assert len(provider.prompts) == 1
    repair = store.get(2)
    assert repair.document["repair"]["source_sha256"] == source.sha256
    assert pending_repair(store) is None


def test_a_stored_plan_aimed_at_a_single_string_is_refused_before_any_call(
    tmp_path: Path,
) -> None:
    # The first real run's plan: the whole like-filter, target filters[0].
    store = CallRecordStore(tmp_path)
    candidate = response(WOLPERTINGER_LIKE)
    store.append(
        {
            "call": "investigation",
            "prompt_id": "investigation_project_v1",
            "response_recovery_version": 1,
            "response": {"sha256": "0" * 64, "size_bytes": 0, "text": None},
            "normalized_response": candidate,
            "applied_rules": [],
            "refusals": [],
            "repair": None,
            "outcome": {
                "status": "repair_requested",
                "reason": "contract_violation",
                "violations": ["contract_violation"],
                "parse_error": None,
                "hint": None,
                "repair_plan": {
                    "prompt": PROMPT_ID,
                    "target": FILTERS + "/0",
                    "response": candidate,
                    "prompt_sha256": "1" * 64,
                },
                "rejected_repair": None,
            },
        }
    )
    source = pending_repair(store)
    assert source is not None
    before = copy.deepcopy(dict(source.document))
    provider = FakeProvider()
    result = resume_repair(
        source,
        contract=CONTRACT,
        policy=V1,
        context=CONTEXT,
        provider=provider,
        audit_store=store,
        limits=LIMITS,
    )
    assert result.reason == "repair_plan_rejected"
    assert "plan_target_unsuitable" in result.violations
    assert result.hint == OPERATOR_HINT
    assert provider.prompts == []
    assert store.get(1).document == before  # the historical plan is not rewritten


def test_a_stored_plan_does_not_resume_under_policy_0(tmp_path: Path) -> None:
    with pytest.raises(TransportDown):
        recover(json.dumps(response(FLAT)), failing_provider, store=CallRecordStore(tmp_path))
    store = CallRecordStore(tmp_path)
    source = pending_repair(store)
    assert source is not None
    provider = FakeProvider()
    result = resume_repair(
        source,
        contract=CONTRACT,
        policy=V0,
        context=CONTEXT,
        provider=provider,
        audit_store=store,
        limits=LIMITS,
    )
    assert result.reason == "repair_plan_rejected" and provider.prompts == []


# --- no response text in errors, diagnostics or logs ------------------------------

SECRET = "Wolpertinger-7f3a-secret"


@pytest.mark.parametrize(
    ("text", "provider_reply"),
    [
        (f"prose {SECRET}" + json.dumps(response(GOOD)), None),
        ("```python\n" + json.dumps(response(GOOD, confidence=SECRET)) + "\n```", None),
        (json.dumps(response(["LogTitle", "like", SECRET])), None),
        (json.dumps(response(GOOD, hypothesis_id=SECRET)), None),
        (
            json.dumps(response(["name", "contains", SECRET, "id", "gt", 100])),
            f'{{"replacement": "{SECRET}"',
        ),
        (
            json.dumps(response(["name", "contains", SECRET, "id", "gt", 100])),
            reply([{"column": "name", "operator": "contains", "value": SECRET + "!"}]),
        ),
        (json.dumps(response(["name", "contains", SECRET, "id", "gt", 100])), reply(SECRET)),
    ],
)
def test_no_response_text_reaches_results_diagnostics_or_logs(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    text: str,
    provider_reply: str | None,
) -> None:
    caplog.set_level("DEBUG")
    provider = FakeProvider(*([provider_reply] if provider_reply else []))
    result = recover(text, provider, store=CallRecordStore(tmp_path))
    assert not result.accepted
    diagnostics = [
        repr(result),
        str(result),
        result.reason or "",
        *result.violations,
        result.hint or "",
    ]
    assert all(SECRET not in item for item in diagnostics)
    assert SECRET not in caplog.text
    # The audit is the one place the text is kept.
    assert any(SECRET.encode() in p.read_bytes() for p in (tmp_path / "analysis").rglob("*.json"))


def test_an_accepted_result_does_not_show_its_response_in_repr() -> None:
    result = recover(
        json.dumps(response(["name", "contains", SECRET])),
        FakeProvider(reply([{"column": "name", "operator": "contains", "value": SECRET}])),
    )
    assert result.accepted
    assert SECRET not in repr(result)


def test_a_response_that_is_not_utf8_is_rejected_and_still_audited(tmp_path: Path) -> None:
    text = json.dumps(response(GOOD))[:-1] + ', "x": "\ud800"}'
    store = CallRecordStore(tmp_path)
    result = recover(text, store=store)
    assert result.reason == "not_utf8"
    [record] = records(store)
    # Canonical JSON cannot hold a lone surrogate: kept by hash and size only.
    data = text.encode("utf-8", "surrogatepass")
    assert record["response"] == {"sha256": sha256_hex(data), "size_bytes": len(data), "text": None}
    assert record["outcome"]["parse_error"] == {"code": "not_utf8", "path": "", "offset": None}


def test_a_response_over_the_configured_limit_is_audited_by_hash_only(tmp_path: Path) -> None:
    text = json.dumps(response(GOOD))
    store = CallRecordStore(tmp_path)
    limits = RecoveryLimits(invalid_responses_left=3, max_response_bytes=100)
    result = recover(text, store=store, limits=limits)
    assert result.accepted  # the configured limit bounds what is kept, not what is parsed
    [record] = records(store)
    assert record["response"] == {
        "sha256": sha256_hex(text.encode()),
        "size_bytes": len(text.encode()),
        "text": None,
    }


# --- version 2 answers: the contract the call asked for -----------------------

FACTS_STEP = {
    "kind": "tool",
    "operation": "case.facts",
    "arguments": {"entity": {"type": "quest", "id": 90001}, "offset": 0, "limit": 20},
}
V2_CONTRACT = ResponseContract(
    hypothesis_id="H2",
    visible_evidence_ids=frozenset({"E3", "E5"}),
    known_columns={"Logs": ["id", "name", "LogTitle", "Created"]},
    schema="investigation-response-v2",
)


def test_a_version_2_answer_asking_for_facts_is_repaired_by_its_own_contract() -> None:
    # Admission judged every answer by version 1, where case.facts is an unknown
    # action: a lone evidence object beside it got no repair and was rejected.
    lone = {"evidence_id": "E3", "role": "supports", "reference": "/rows/0/LogTitle"}
    provider = FakeProvider(reply([lone]))
    text = json.dumps(response(evidence=lone, next=FACTS_STEP))
    result = recover(text, provider, contract=V2_CONTRACT)
    assert result.accepted
    assert result.response is not None and result.response["evidence"] == [lone]
    assert result.response["next"] == FACTS_STEP


def test_a_version_2_query_with_flat_filters_is_repaired_by_its_own_contract() -> None:
    flat = response(FLAT)
    provider = FakeProvider(reply(GOOD))
    result = recover(json.dumps(flat), provider, contract=V2_CONTRACT)
    assert result.accepted
    assert result.response is not None
    assert result.response["next"]["arguments"]["filters"] == GOOD
