"""RecoveryPolicy and the pipeline that fixes it for one investigation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.investigation.recovery.recovery_fixtures import (
    CONTEXT,
    CONTRACT,
    GOOD,
    LIMITS,
    FakeProvider,
    reply,
    response,
)
from viano_bug_analysis.investigation.recovery import (
    DEFAULT_RESPONSE_RECOVERY_VERSION,
    PolicyError,
    RecoveryPipeline,
    RecoveryPolicy,
)
from viano_bug_analysis.investigation.recovery.errors import (
    POLICY_FIXED,
    POLICY_INVALID,
    POLICY_VERSION_UNKNOWN,
)


def test_the_default_is_version_0() -> None:
    assert DEFAULT_RESPONSE_RECOVERY_VERSION == 0
    assert RecoveryPolicy().response_recovery_version == 0
    assert not RecoveryPolicy().recovery_on
    assert RecoveryPolicy(1).recovery_on


@pytest.mark.parametrize("version", [0, 1])
def test_the_stored_form_round_trips(version: int) -> None:
    policy = RecoveryPolicy(version)
    assert policy.to_json() == b'{"response_recovery_version":%d}' % version
    assert RecoveryPolicy.from_json(policy.to_json()) == policy
    assert RecoveryPolicy.from_mapping(policy.to_mapping()) == policy


def test_a_stored_version_1_stays_1_whatever_the_default() -> None:
    stored = {"response_recovery_version": 1, "max_steps": 12}  # beside other policy keys
    assert RecoveryPolicy.from_mapping(stored).response_recovery_version == 1


def test_a_policy_stored_before_the_field_existed_keeps_version_0() -> None:
    assert RecoveryPolicy.from_mapping({"max_steps": 12}).response_recovery_version == 0
    assert RecoveryPolicy.from_json(b"{}").response_recovery_version == 0


@pytest.mark.parametrize(
    ("version", "code"),
    [
        (2, POLICY_VERSION_UNKNOWN),
        (-1, POLICY_VERSION_UNKNOWN),
        (True, POLICY_INVALID),
        (1.0, POLICY_INVALID),
        ("1", POLICY_INVALID),
        (None, POLICY_INVALID),
    ],
)
def test_unknown_or_malformed_versions_are_refused(version: Any, code: str) -> None:
    with pytest.raises(PolicyError) as raised:
        RecoveryPolicy(version)
    assert raised.value.code == code
    with pytest.raises(PolicyError) as raised:
        RecoveryPolicy.from_mapping({"response_recovery_version": version})
    assert raised.value.code == code


@pytest.mark.parametrize(
    "data",
    [b"", b"[]", b'{"response_recovery_version":1,"response_recovery_version":0}', b"\xff"],
)
def test_malformed_stored_policies_are_refused(data: bytes) -> None:
    with pytest.raises(PolicyError) as raised:
        RecoveryPolicy.from_json(data)
    assert raised.value.code == POLICY_INVALID


def pipeline(policy: RecoveryPolicy, provider: FakeProvider | None = None) -> RecoveryPipeline:
    return RecoveryPipeline(policy, provider=provider or FakeProvider(), audit_store=None)


def test_a_running_investigation_is_never_switched() -> None:
    running = pipeline(RecoveryPolicy(1))
    with pytest.raises(PolicyError) as raised:
        running.switch_policy(RecoveryPolicy(0))
    assert raised.value.code == POLICY_FIXED
    for name in ("_policy", "policy", "anything"):
        with pytest.raises(PolicyError):
            setattr(running, name, RecoveryPolicy(0))
    with pytest.raises(PolicyError):
        del running._policy
    assert running.policy == RecoveryPolicy(1)


def test_a_new_investigation_must_initialize_the_policy() -> None:
    with pytest.raises(PolicyError):
        RecoveryPipeline(None, provider=FakeProvider(), audit_store=None)  # type: ignore[arg-type]


def test_resuming_keeps_the_stored_policy_and_refuses_a_switch() -> None:
    stored = {"response_recovery_version": 1}
    resumed = RecoveryPipeline.resume(stored, provider=FakeProvider(), audit_store=None)
    assert resumed.policy == RecoveryPolicy(1)
    same = RecoveryPipeline.resume(
        stored, provider=FakeProvider(), audit_store=None, requested=RecoveryPolicy(1)
    )
    assert same.policy == RecoveryPolicy(1)
    with pytest.raises(PolicyError) as raised:
        RecoveryPipeline.resume(
            stored, provider=FakeProvider(), audit_store=None, requested=RecoveryPolicy(0)
        )
    assert raised.value.code == POLICY_FIXED
    old = RecoveryPipeline.resume({}, provider=FakeProvider(), audit_store=None)
    assert old.policy == RecoveryPolicy(0)


def test_the_pipeline_runs_under_its_own_policy() -> None:
    fenced = "```json\n" + json.dumps(response(GOOD)) + "\n```"
    off = pipeline(RecoveryPolicy(0)).recover(
        fenced, contract=CONTRACT, context=CONTEXT, limits=LIMITS
    )
    assert off.reason == "syntax_error"
    on = pipeline(RecoveryPolicy(1)).recover(
        fenced, contract=CONTRACT, context=CONTEXT, limits=LIMITS
    )
    assert on.accepted and on.response == response(GOOD)
    provider = FakeProvider(reply(GOOD))
    flat = json.dumps(response(["name", "contains", "Wolpertinger", "id", "gt", 100]))
    repaired = pipeline(RecoveryPolicy(1), provider).recover(
        flat, contract=CONTRACT, context=CONTEXT, limits=LIMITS
    )
    assert repaired.accepted and len(provider.prompts) == 1
