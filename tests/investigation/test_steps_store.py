"""The investigation step log (StepLog): strict reading of step, outcome and
policy files, containment, and the writability check the controller runs
before its first request."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis.durable import compact_json
from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.investigation.steps import (
    POLICY_FILE,
    STEPS_DIR,
    StepLog,
    check_writable,
    investigation_directories,
)

RECORDS: dict[str, dict[str, Any]] = {
    "call": {"prompt_version": "investigation_v1", "context": {"evidence": []}},
    "reply": {"chat": {"content": "{}", "usage": None, "model": "m"}},
    "decision": {
        "status": "rejected",
        "response": None,
        "reason": "syntax_error",
        "hint": None,
        "violations": [],
        "applied_rules": [],
        "notes": [],
        "invalid_responses": 1,
        "epoch": 0,
    },
    "dispatch": {"evidence_id": "E1", "new": True},
}
OUTCOME = {
    "hypothesis_id": "H1",
    "reason": "concluded",
    "assessment": "refuted",
    "confidence": 0.5,
    "evidence": [],
    "summary": "s",
}


def error_of(action: Any) -> PackageFileError:
    with pytest.raises(PackageFileError) as info:
        action()
    return info.value


@pytest.fixture
def log(tmp_path: Path) -> StepLog:
    return StepLog(tmp_path)


@pytest.mark.parametrize("event", sorted(RECORDS))
def test_each_event_round_trips(log: StepLog, event: str) -> None:
    log.put("H1", 2, 1, event, RECORDS[event])
    assert log.get("H1", 2, 1, event) == RECORDS[event]
    assert log.events("H1") == [("H1", 2, 1, event)]
    log.put("H1", 2, 1, event, RECORDS[event])  # the same record again is not a conflict


@pytest.mark.parametrize(
    ("event", "damaged"),
    [
        ("call", {"prompt_version": 1, "context": {}}),
        ("call", {"prompt_version": "v"}),
        ("reply", {"chat": {"usage": None}}),
        ("decision", {**RECORDS["decision"], "status": "maybe"}),
        ("decision", {**RECORDS["decision"], "status": "accepted"}),  # accepted without response
        ("decision", {**RECORDS["decision"], "invalid_responses": True}),
        ("dispatch", {"new": True}),
        ("dispatch", {"rejected": 7}),
    ],
)
def test_a_record_without_the_fields_its_readers_use_is_corrupt(
    log: StepLog, tmp_path: Path, event: str, damaged: dict[str, Any]
) -> None:
    rel = f"{STEPS_DIR}/H1-001-01-{event}.json"
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_bytes(compact_json(damaged))
    err = error_of(lambda: log.get("H1", 1, 1, event))
    assert err.details == {"path": rel, "reason": f"not a {event} record"}


@pytest.mark.parametrize(
    "data", [b"", b'{"hypothesis_id":"H1"', b"\xff", b"[]", b'{"hypothesis_id":"H2"}']
)
def test_a_damaged_outcome_is_corrupt_naming_it(log: StepLog, tmp_path: Path, data: bytes) -> None:
    log.put_outcome("H1", OUTCOME)
    assert log.outcome("H1") == OUTCOME
    (tmp_path / "analysis/investigation/hypotheses/H1.json").write_bytes(data)
    err = error_of(lambda: log.outcome("H1"))
    assert (err.code, err.details["path"]) == (
        "package_corrupt",
        "analysis/investigation/hypotheses/H1.json",
    )


def test_the_policy_is_checked_to_be_an_object_in_its_stored_form(
    log: StepLog, tmp_path: Path
) -> None:
    assert log.policy() is None
    log.put_policy(b'{"response_recovery_version":1}')
    assert log.policy() == b'{"response_recovery_version":1}'
    (tmp_path / POLICY_FILE).write_bytes(b'{"response_recovery_version": 1}')
    err = error_of(log.policy)
    assert err.details == {"path": str(POLICY_FILE), "reason": "not in its stored byte form"}


def test_leftover_temporary_files_and_foreign_names_are_not_events(
    log: StepLog, tmp_path: Path
) -> None:
    log.put("H1", 1, 1, "call", RECORDS["call"])
    (tmp_path / STEPS_DIR / ".H1-001-01-reply.json.0011223344556677.tmp").write_bytes(b"{")
    assert log.events() == [("H1", 1, 1, "call")]


def test_a_symlinked_steps_directory_is_refused(log: StepLog, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "analysis/investigation").mkdir(parents=True)
    (tmp_path / STEPS_DIR).symlink_to(outside)
    for action in (
        lambda: log.put("H1", 1, 1, "call", RECORDS["call"]),
        lambda: log.get("H1", 1, 1, "call"),
        log.events,
    ):
        assert error_of(action).details == {"path": str(STEPS_DIR)}
    assert list(outside.iterdir()) == []


def test_check_writable_covers_every_investigation_directory(tmp_path: Path) -> None:
    check_writable(tmp_path)
    for rel in investigation_directories():
        assert (tmp_path / rel).is_dir() and list((tmp_path / rel).iterdir()) == []


def test_check_writable_fails_before_anything_on_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(_fd: int, _data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    err = error_of(lambda: check_writable(tmp_path))
    assert (err.code, err.details) == (
        "package_write_failed",
        {"path": str(STEPS_DIR), "errno": "ENOSPC"},
    )
