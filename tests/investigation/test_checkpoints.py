"""CheckpointStore: transitions, blocking and operator resume, technical
rejections, strict reading, and the manifest status."""

from __future__ import annotations

import inspect
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis.case.canonical import canonical_bytes
from viano_bug_analysis.case.create import create_package
from viano_bug_analysis.case.lock import LOCK_NAMES
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.investigation import checkpoints
from viano_bug_analysis.investigation.checkpoints import (
    BLOCKED,
    CONCLUDED,
    INVALID_LLM_RESPONSES,
    INVESTIGATION,
    RESEARCH_UNAVAILABLE,
    CheckpointError,
    CheckpointStore,
)

SAMPLE_SPEC = Path(__file__).resolve().parents[2] / "samples" / "bug-20" / "case-spec.json"
PLAN = {"operation": "project.query", "arguments": {"kind": "git.grep", "pattern": "Wolp"}}
RESERVATION = "ab" * 32
START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def directory(root: Path) -> Path:
    return root / "analysis" / "checkpoints"


def error_of(call: Any) -> CheckpointError:
    with pytest.raises(CheckpointError) as caught:
        call()
    return caught.value


def code_of(call: Any) -> str:
    return error_of(call).code


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> CheckpointStore:
    store = CheckpointStore(tmp_path, now=clock)
    store.advance(INVESTIGATION, hypothesis="H1", step=1)
    return store


def block_for_outage(store: CheckpointStore, **extra: Any) -> None:
    store.advance(
        BLOCKED,
        code=RESEARCH_UNAVAILABLE,
        resume_state=INVESTIGATION,
        plan=PLAN,
        reservation_key=RESERVATION,
        hypothesis="H1",
        step=2,
        **extra,
    )


# -- transitions ----------------------------------------------------------------------


def test_an_empty_store_starts_with_an_investigation(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    assert (store.latest(), store.current(), store.state, store.history()) == (None, None, None, [])
    assert code_of(lambda: store.advance(CONCLUDED)) == "checkpoint_transition_refused"
    first = store.advance(INVESTIGATION, hypothesis="H1")
    assert (first.seq, first.kind, first.state, dict(first.payload)) == (
        1,
        "transition",
        INVESTIGATION,
        {"hypothesis": "H1"},
    )


def test_progress_and_conclusion(store: CheckpointStore, clock: Clock) -> None:
    clock.now += timedelta(seconds=5)
    step = store.advance(INVESTIGATION, plan=PLAN, step=2)
    assert step.time == "2026-03-01T12:00:05.000000Z"
    done = store.advance(CONCLUDED, verdict_ref="E7")
    assert done.state == CONCLUDED
    for state in (INVESTIGATION, BLOCKED, CONCLUDED):
        assert code_of(lambda s=state: store.advance(s)) in {
            "checkpoint_transition_refused",
        }
    assert [c.seq for c in store.history()] == [1, 2, 3]


def test_unknown_states_and_misplaced_fields_are_refused(store: CheckpointStore) -> None:
    assert code_of(lambda: store.advance("intake")) == "checkpoint_argument_invalid"
    assert code_of(lambda: store.advance(INVESTIGATION, code="X")) == "checkpoint_argument_invalid"
    assert code_of(lambda: store.advance(INVESTIGATION, operator="ops")) == (
        "checkpoint_argument_invalid"
    )
    assert code_of(lambda: store.advance(INVESTIGATION, confidence=0.5)) == (
        "checkpoint_argument_invalid"  # floats are not canonical JSON
    )
    assert len(store.history()) == 1


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"code": RESEARCH_UNAVAILABLE},
        {"resume_state": INVESTIGATION},
        {"code": "research unavailable", "resume_state": INVESTIGATION},
        {"code": RESEARCH_UNAVAILABLE, "resume_state": CONCLUDED},
        {"code": RESEARCH_UNAVAILABLE, "resume_state": INVESTIGATION, "feedback_lock": "Bad!"},
        {
            "code": RESEARCH_UNAVAILABLE,
            "resume_state": INVESTIGATION,
            "retry_not_before": datetime(2026, 3, 1),  # naive
        },
    ],
)
def test_blocking_needs_valid_code_and_resume_state(
    store: CheckpointStore, fields: dict[str, Any]
) -> None:
    assert code_of(lambda: store.advance(BLOCKED, **fields)) == "checkpoint_argument_invalid"


# -- blocked and resume ----------------------------------------------------------------


def test_research_outage_keeps_plan_and_reservation_resumable(
    store: CheckpointStore, clock: Clock
) -> None:
    block_for_outage(store)
    blocked = store.latest()
    assert blocked is not None and blocked.blocked is not None
    assert (blocked.state, blocked.blocked.code, blocked.resume_state) == (
        BLOCKED,
        RESEARCH_UNAVAILABLE,
        INVESTIGATION,
    )
    clock.now += timedelta(hours=1)
    resumed = store.resume("ops.anna")
    assert (resumed.kind, resumed.state, resumed.operator) == ("resume", INVESTIGATION, "ops.anna")
    assert resumed.time == "2026-03-01T13:00:00.000000Z"
    assert resumed.payload["plan"] == PLAN
    assert resumed.payload["reservation_key"] == RESERVATION
    # The same after a restart.
    again = CheckpointStore(store.package_path).current()
    assert again is not None and again.payload_dict()["plan"] == PLAN


def test_blocked_leaves_only_by_operator_resume(store: CheckpointStore) -> None:
    store.advance(BLOCKED, code=INVALID_LLM_RESPONSES, resume_state=INVESTIGATION)
    assert code_of(lambda: store.advance(CONCLUDED)) == "checkpoint_transition_refused"
    assert code_of(lambda: store.advance(INVESTIGATION)) == "checkpoint_operator_required"
    assert code_of(lambda: store.advance(BLOCKED, code="X", resume_state=INVESTIGATION)) == (
        "checkpoint_transition_refused"
    )
    assert code_of(lambda: store.resume("")) == "checkpoint_argument_invalid"
    # SPEC §8: an operator resume may also go through advance().
    resumed = store.advance(INVESTIGATION, operator="ops", note="fixed the prompt")
    assert (resumed.kind, resumed.operator, resumed.payload["note"]) == (
        "resume",
        "ops",
        "fixed the prompt",
    )
    assert code_of(lambda: store.resume("ops")) == "checkpoint_not_blocked"


def test_resume_before_the_retry_time_is_refused(store: CheckpointStore, clock: Clock) -> None:
    block_for_outage(store, retry_not_before=START + timedelta(minutes=10))
    clock.now = START + timedelta(minutes=9, seconds=59)
    err = error_of(lambda: store.resume("ops"))
    assert (err.code, err.details["retry_not_before"]) == (
        "checkpoint_retry_too_early",
        "2026-03-01T12:10:00.000000Z",
    )
    clock.now = START + timedelta(minutes=10)
    assert store.resume("ops").state == INVESTIGATION


def test_a_feedback_lock_needs_an_operator_to_clear_it(store: CheckpointStore) -> None:
    store.advance(
        BLOCKED,
        code=INVALID_LLM_RESPONSES,
        resume_state=INVESTIGATION,
        feedback_lock="operator_feedback_pending",
    )
    assert code_of(lambda: store.resume("ops")) == "checkpoint_feedback_locked"
    cleared = store.clear_feedback_lock("ops.ben")
    assert (cleared.kind, cleared.state, cleared.operator) == ("lock_cleared", BLOCKED, "ops.ben")
    assert cleared.blocked is not None and cleared.blocked.feedback_lock is None
    assert cleared.blocked.code == INVALID_LLM_RESPONSES
    assert code_of(lambda: store.clear_feedback_lock("ops")) == "checkpoint_no_feedback_lock"
    assert store.resume("ops.anna").state == INVESTIGATION
    kinds = [c.kind for c in CheckpointStore(store.package_path).history()]
    assert kinds == ["transition", "transition", "lock_cleared", "resume"]


def test_retry_time_and_lock_both_bind(store: CheckpointStore, clock: Clock) -> None:
    block_for_outage(store, retry_not_before=START + timedelta(hours=1), feedback_lock="await")
    clock.now = START + timedelta(hours=2)
    assert code_of(lambda: store.resume("ops")) == "checkpoint_feedback_locked"
    store.clear_feedback_lock("ops")
    clock.now = START + timedelta(minutes=30)  # a clock that went back is still bound
    assert code_of(lambda: store.resume("ops")) == "checkpoint_retry_too_early"


# -- technical rejections -----------------------------------------------------------------


def test_a_technical_rejection_changes_no_state(store: CheckpointStore) -> None:
    before = store.current()
    rejection = store.record_technical_rejection(
        "research_query_rejected", hypothesis="H1", step=3, request_sha256="cd" * 32
    )
    assert (rejection.kind, rejection.state, dict(rejection.payload)) == (
        "technical_rejection",
        INVESTIGATION,
        {},
    )
    assert rejection.rejection is not None and rejection.rejection.hypothesis == "H1"
    assert store.latest() == rejection
    assert store.current() == before


def test_a_technical_rejection_cannot_carry_verdicts(store: CheckpointStore) -> None:
    parameters = inspect.signature(store.record_technical_rejection).parameters
    assert set(parameters) == {"code", "hypothesis", "step", "request_sha256"}
    method: Any = store.record_technical_rejection
    with pytest.raises(TypeError):
        method("tool_rejected", hypothesis_status="refuted")
    with pytest.raises(TypeError):
        method("tool_rejected", evidence_rating={"E3": "weak"})
    assert code_of(lambda: store.record_technical_rejection("Tool Rejected")) == (
        "checkpoint_argument_invalid"
    )
    assert code_of(lambda: store.record_technical_rejection("x", hypothesis="H1 refuted")) == (
        "checkpoint_argument_invalid"
    )


def test_a_stored_rejection_with_a_verdict_is_corrupt(store: CheckpointStore) -> None:
    rejection = store.record_technical_rejection("tool_rejected", hypothesis="H1")
    path = directory(store.package_path) / f"{rejection.seq:08d}-technical_rejection.json"
    document = json.loads(path.read_bytes())
    document["payload"] = {"hypothesis_status": "refuted"}
    path.write_bytes(canonical_bytes(document))
    assert code_of(lambda: CheckpointStore(store.package_path)) == "checkpoint_log_corrupt"
    document["payload"] = {}
    document["rejection"]["evidence_rating"] = "weak"
    path.write_bytes(canonical_bytes(document))
    assert code_of(lambda: CheckpointStore(store.package_path)) == "checkpoint_log_corrupt"
    document["rejection"].pop("evidence_rating")
    document["state"] = CONCLUDED  # a rejection that would end the investigation
    path.write_bytes(canonical_bytes(document))
    assert code_of(lambda: CheckpointStore(store.package_path)) == "checkpoint_log_corrupt"


def test_rejections_are_recorded_only_during_an_investigation(store: CheckpointStore) -> None:
    block_for_outage(store)
    assert code_of(lambda: store.record_technical_rejection("x")) == (
        "checkpoint_transition_refused"
    )


# -- strict reading and crashes -------------------------------------------------------------


def test_reopening_gives_the_same_history(store: CheckpointStore) -> None:
    block_for_outage(store)
    store.resume("ops")
    store.record_technical_rejection("tool_rejected")
    assert CheckpointStore(store.package_path).history() == store.history()


def test_a_leftover_temporary_file_is_ignored(store: CheckpointStore) -> None:
    (directory(store.package_path) / ".00000002-transition.0011223344556677.tmp").write_bytes(
        b'{"format":"viano-checkpoint","seq":2'
    )
    reopened = CheckpointStore(store.package_path)
    assert reopened.history() == store.history()
    assert reopened.advance(INVESTIGATION).seq == 2


def test_a_failed_write_leaves_no_checkpoint(
    store: CheckpointStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_link(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "link", no_link)
    with pytest.raises(PackageFileError) as caught:  # the one durable writer's error
        store.advance(CONCLUDED)
    assert caught.value.code == "package_write_failed"
    monkeypatch.undo()
    assert store.state == INVESTIGATION
    assert [p.name for p in directory(store.package_path).iterdir()] == ["00000001-transition.json"]


def test_a_second_writer_is_detected(store: CheckpointStore) -> None:
    CheckpointStore(store.package_path).advance(INVESTIGATION, step=2)
    assert code_of(lambda: store.advance(CONCLUDED)) == "checkpoint_log_conflict"
    assert [c.payload.get("step") for c in store.history()] == [1, 2]
    assert store.advance(CONCLUDED).seq == 3


def edit_entry(root: Path, name: str, change: Any) -> None:
    path = directory(root) / name
    document = json.loads(path.read_bytes())
    change(document)
    path.write_bytes(canonical_bytes(document))


def forge_resume(root: Path, **changes: Any) -> None:
    document: dict[str, Any] = {
        "blocked": None,
        "format": "viano-checkpoint",
        "format_version": 1,
        "kind": "resume",
        "operator": "ops",
        "payload": {},
        "rejection": None,
        "seq": 4,
        "state": "investigation",
        "time": "2026-03-03T00:00:00.000000Z",
    }
    document.update(changes)
    (directory(root) / "00000004-resume.json").write_bytes(canonical_bytes(document))


@pytest.mark.parametrize(
    "damage",
    [
        lambda r: (directory(r) / "00000002-transition.json").write_bytes(b'{"format":"viano-'),
        lambda r: (directory(r) / "00000002-transition.json").unlink(),
        lambda r: (directory(r) / "00000002-resume.json").write_bytes(b"{}"),
        lambda r: (directory(r) / "README").write_bytes(b"x"),
        lambda r: edit_entry(r, "00000002-transition.json", lambda d: d.update(seq=3)),
        lambda r: edit_entry(r, "00000002-transition.json", lambda d: d.update(kind="resume")),
        lambda r: edit_entry(r, "00000002-transition.json", lambda d: d.update(extra=1)),
        lambda r: edit_entry(r, "00000002-transition.json", lambda d: d.update(time="now")),
        lambda r: edit_entry(r, "00000002-transition.json", lambda d: d.update(state="concluded")),
        lambda r: edit_entry(
            r, "00000003-transition.json", lambda d: d["blocked"].update(resume_state="concluded")
        ),
        lambda r: edit_entry(r, "00000003-transition.json", lambda d: d.update(blocked=None)),
        lambda r: forge_resume(r, time="2026-03-01T12:00:00.000000Z"),  # before the retry time
        lambda r: forge_resume(r, operator=None),
        lambda r: forge_resume(r, state="concluded"),
    ],
    ids=[
        "torn",
        "gap",
        "duplicate-seq",
        "foreign",
        "seq-mismatch",
        "kind-mismatch",
        "extra-field",
        "bad-time",
        "illegal-move",
        "bad-resume-state",
        "blocked-without-status",
        "resume-too-early",
        "resume-without-operator",
        "resume-elsewhere",
    ],
)
def test_damaged_logs_are_never_trusted(store: CheckpointStore, damage: Any) -> None:
    store.advance(INVESTIGATION, step=2)
    block_for_outage(store, retry_not_before=START + timedelta(days=1))
    root = store.package_path
    assert CheckpointStore(root).history() == store.history()  # intact before the damage
    damage(root)
    assert code_of(lambda: CheckpointStore(root)) == "checkpoint_log_corrupt"


def test_a_legal_entry_written_by_hand_is_accepted(store: CheckpointStore) -> None:
    # The control case for forge_resume: after the retry time, with an operator.
    store.advance(INVESTIGATION, step=2)
    block_for_outage(store, retry_not_before=START + timedelta(days=1))
    forge_resume(store.package_path)
    reopened = CheckpointStore(store.package_path)
    assert (reopened.state, reopened.history()[-1].operator) == (INVESTIGATION, "ops")


# -- manifest -----------------------------------------------------------------------------


@pytest.fixture
def package(tmp_path: Path) -> Path:
    create_package(SAMPLE_SPEC, tmp_path / "pkg")
    return tmp_path / "pkg"


def test_sync_manifest_follows_the_checkpoints(package: Path, clock: Clock) -> None:
    store = CheckpointStore(package, now=clock)
    store.advance(INVESTIGATION)
    assert store.sync_manifest() is False  # the sample already says investigation/active
    block_for_outage(store)
    assert store.sync_manifest() is True
    loaded = load_package(package)
    assert loaded.phase == INVESTIGATION
    assert loaded.status == {
        "state": "blocked",
        "code": RESEARCH_UNAVAILABLE,
        "resume_state": INVESTIGATION,
    }
    data = (package / "manifest.json").read_bytes()
    assert canonical_bytes(json.loads(data)) == data
    store.resume("ops")
    store.sync_manifest()
    store.advance(CONCLUDED)
    store.sync_manifest()
    loaded = load_package(package)
    assert (loaded.phase, loaded.status) == (CONCLUDED, {"state": "active"})
    # No temporary file is left; the build lock of the package is no temporary.
    assert not [p for p in package.iterdir() if p.name.startswith(".") and p.name not in LOCK_NAMES]


def test_write_manifest_status_refuses_a_status_outside_the_schema(package: Path) -> None:
    before = (package / "manifest.json").read_bytes()
    with pytest.raises(CheckpointError) as caught:
        checkpoints.write_manifest_status(
            package, phase="investigation", status={"state": "blocked"}
        )
    assert caught.value.code == "checkpoint_argument_invalid"
    assert (package / "manifest.json").read_bytes() == before


def test_sync_manifest_needs_a_checkpoint(package: Path) -> None:
    assert code_of(lambda: CheckpointStore(package).sync_manifest()) == "checkpoint_log_empty"
