"""BudgetManager: accounts, idempotent reservations, the journal and its replay."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viano_bug_analysis.case.canonical import canonical_bytes
from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.investigation.budget import BudgetError, BudgetManager

KEY = "5f2b" * 16  # a request SHA-256 used as idempotency key


def journal(root: Path) -> Path:
    return root / "analysis" / "budget" / "journal"


def entries(root: Path) -> list[str]:
    return sorted(p.name for p in journal(root).iterdir())


def error_of(call: Any) -> BudgetError:
    with pytest.raises(BudgetError) as caught:
        call()
    return caught.value


def code_of(call: Any) -> str:
    return error_of(call).code


@pytest.fixture
def budget(tmp_path: Path) -> BudgetManager:
    manager = BudgetManager(tmp_path)
    manager.open_account("H1", 100)
    return manager


# -- accounts and reservations ------------------------------------------------------


def test_reserve_then_settle_returns_the_unused_part(budget: BudgetManager) -> None:
    reservation = budget.reserve("H1", 40, KEY)
    assert (reservation.state, reservation.amount) == ("reserved", 40)
    state = budget.account("H1")
    assert (state.spent, state.reserved, state.available) == (0, 40, 60)
    settled = budget.settle(KEY, 25)
    assert (settled.state, settled.actual, settled.charged, settled.overrun) == (
        "settled",
        25,
        25,
        0,
    )
    state = budget.account("H1")
    assert (state.spent, state.reserved, state.available) == (25, 0, 75)


def test_a_model_answer_is_reserved_and_settled_once_from_its_stored_usage(
    budget: BudgetManager,
) -> None:
    # The shared steps of the controller and the case interpreter: a rerun after a
    # restart keeps the first reservation and is never charged twice.
    budget.reserve_once("H1", 40, "H1:1:1:llm")
    budget.reserve_once("H1", 70, "H1:1:1:llm")
    assert budget.reservation("H1:1:1:llm").amount == 40  # type: ignore[union-attr]
    chat = {
        "content": "{}",
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
    }
    budget.settle_answer("H1:1:1:llm", chat)
    budget.settle_answer("H1:1:1:llm", chat)
    assert budget.account("H1").spent == 25
    # Without reported usage the whole reservation counts.
    budget.reserve_once("H1", 30, "H1:2:1:llm")
    budget.settle_answer("H1:2:1:llm", {"content": "{}", "usage": None})
    assert budget.account("H1").spent == 55
    budget.reserve_once("H1", 10, "H1:2:1:dispatch")
    budget.settle_once("H1:2:1:dispatch", 10)
    budget.settle_once("H1:2:1:dispatch", 10)
    assert budget.account("H1").spent == 65
    # An answer without a reservation is a broken journal, not a free call.
    assert code_of(lambda: budget.settle_answer("H1:9:1:llm", chat)) == (
        "budget_reservation_unknown"
    )


def test_release_gives_everything_back(budget: BudgetManager) -> None:
    budget.reserve("H1", 40, KEY)
    assert budget.release(KEY).state == "released"
    assert budget.account("H1").available == 100


@pytest.mark.parametrize("amount", [0, -5, True, 1.5, "3", 2**53])
def test_reservations_must_be_positive_integers(budget: BudgetManager, amount: Any) -> None:
    assert code_of(lambda: budget.reserve("H1", amount, KEY)) == "budget_amount_invalid"


def test_more_than_available_is_refused(budget: BudgetManager) -> None:
    budget.reserve("H1", 70, "a")
    assert code_of(lambda: budget.reserve("H1", 31, "b")) == "budget_insufficient"
    assert budget.reserve("H1", 30, "b").amount == 30


def test_a_known_hypothesis_id_alone_never_authorizes_spending(tmp_path: Path) -> None:
    budget = BudgetManager(tmp_path)
    assert code_of(lambda: budget.reserve("H2", 1, KEY)) == "budget_account_unknown"
    assert not journal(tmp_path).exists()


@pytest.mark.parametrize("status", ["closed", "concluded", "exhausted"])
def test_terminal_accounts_never_spend(budget: BudgetManager, status: str) -> None:
    budget.close_account("H1", status)
    err = error_of(lambda: budget.reserve("H1", 1, KEY))
    assert (err.code, err.details["status"]) == ("budget_account_terminal", status)
    # Reopening the terminal account is no way around it.
    assert code_of(lambda: budget.open_account("H1", 100)) == "budget_account_terminal"


def test_an_account_that_spent_its_limit_is_exhausted(budget: BudgetManager) -> None:
    budget.reserve("H1", 100, "a")
    budget.settle("a", 100)
    assert budget.account("H1").status == "exhausted"
    assert code_of(lambda: budget.reserve("H1", 1, "b")) == "budget_account_terminal"


def test_open_reservations_can_still_be_settled_after_close(budget: BudgetManager) -> None:
    budget.reserve("H1", 10, "a")
    budget.reserve("H1", 10, "b")
    budget.close_account("H1", "concluded")
    assert budget.settle("a", 4).charged == 4
    assert budget.release("b").state == "released"
    state = budget.account("H1")
    assert (state.spent, state.reserved, state.status) == (4, 0, "concluded")


def test_open_account_is_idempotent_but_not_a_limit_change(budget: BudgetManager) -> None:
    assert budget.open_account("H1", 100).limit == 100
    assert code_of(lambda: budget.open_account("H1", 200)) == "budget_account_exists"
    assert code_of(lambda: budget.open_account("H1", 0)) == "budget_amount_invalid"


@pytest.mark.parametrize("name", ["", "../x", "a b", "-x", "x" * 129, 7])
def test_account_and_key_names_are_checked(budget: BudgetManager, name: Any) -> None:
    assert code_of(lambda: budget.open_account(name, 1)) == "budget_argument_invalid"
    assert code_of(lambda: budget.reserve("H1", 1, name)) == "budget_argument_invalid"


# -- idempotence ----------------------------------------------------------------------


def test_the_same_key_reserves_once(budget: BudgetManager, tmp_path: Path) -> None:
    first = budget.reserve("H1", 40, KEY)
    before = entries(tmp_path)
    assert budget.reserve("H1", 40, KEY) == first
    assert entries(tmp_path) == before
    assert budget.account("H1").reserved == 40


def test_the_same_key_after_settlement_returns_the_settled_reservation(
    budget: BudgetManager,
) -> None:
    budget.reserve("H1", 40, KEY)
    budget.settle(KEY, 30)
    again = budget.reserve("H1", 40, KEY)
    assert (again.state, again.charged) == ("settled", 30)
    assert budget.account("H1").spent == 30


def test_a_key_cannot_be_reused_for_something_else(budget: BudgetManager) -> None:
    budget.open_account("H2", 100)
    budget.reserve("H1", 40, KEY)
    assert code_of(lambda: budget.reserve("H1", 41, KEY)) == "budget_key_conflict"
    assert code_of(lambda: budget.reserve("H2", 40, KEY)) == "budget_key_conflict"


def test_settle_is_idempotent_and_refuses_a_different_actual(budget: BudgetManager) -> None:
    budget.reserve("H1", 40, KEY)
    first = budget.settle(KEY, 30)
    assert budget.settle(KEY, 30) == first
    assert code_of(lambda: budget.settle(KEY, 31)) == "budget_settlement_conflict"
    assert budget.account("H1").spent == 30


def test_an_actual_above_the_reservation_is_capped(budget: BudgetManager) -> None:
    budget.reserve("H1", 40, KEY)
    settled = budget.settle(KEY, 55)
    assert (settled.actual, settled.charged, settled.overrun) == (55, 40, 15)
    assert budget.account("H1").spent == 40


def test_release_and_settle_exclude_each_other(budget: BudgetManager) -> None:
    budget.reserve("H1", 10, "a")
    budget.reserve("H1", 10, "b")
    budget.release("a")
    assert budget.release("a").state == "released"  # idempotent
    assert code_of(lambda: budget.settle("a", 1)) == "budget_reservation_released"
    budget.settle("b", 5)
    assert code_of(lambda: budget.release("b")) == "budget_reservation_settled"
    assert code_of(lambda: budget.settle("zzz", 1)) == "budget_reservation_unknown"
    assert code_of(lambda: budget.settle("a", -1)) == "budget_amount_invalid"


# -- the journal ------------------------------------------------------------------------


def test_reopening_gives_the_same_state_and_keeps_idempotence(
    budget: BudgetManager, tmp_path: Path
) -> None:
    budget.reserve("H1", 40, KEY)
    budget.reserve("H1", 10, "step-2")
    budget.settle("step-2", 3)
    snapshot = budget.snapshot()
    reopened = BudgetManager(tmp_path)
    assert reopened.snapshot() == snapshot
    # A restart that repeats the dispatch with the same key charges nothing new.
    assert reopened.reserve("H1", 40, KEY).state == "reserved"
    assert reopened.snapshot() == snapshot
    reopened.settle(KEY, 40)
    assert BudgetManager(tmp_path).account("H1").spent == 43


def test_journal_entries_are_canonical_write_once_files(
    budget: BudgetManager, tmp_path: Path
) -> None:
    budget.reserve("H1", 40, KEY)
    budget.settle(KEY, 12)
    assert entries(tmp_path) == [
        "00000001-open.json",
        "00000002-reserve.json",
        "00000003-settle.json",
    ]
    for name in entries(tmp_path):
        data = (journal(tmp_path) / name).read_bytes()
        assert canonical_bytes(json.loads(data)) == data


def test_a_leftover_temporary_file_is_ignored(budget: BudgetManager, tmp_path: Path) -> None:
    budget.reserve("H1", 40, KEY)
    (journal(tmp_path) / ".00000003-settle.0011223344556677.tmp").write_bytes(b'{"seq":3,"ki')
    reopened = BudgetManager(tmp_path)
    assert reopened.snapshot() == budget.snapshot()
    reopened.settle(KEY, 10)  # the next entry takes seq 3 as if nothing happened
    assert "00000003-settle.json" in entries(tmp_path)


@pytest.mark.parametrize(
    "damage",
    [
        lambda j: (j / "00000002-reserve.json").write_bytes(b'{"account":"H1","amo'),
        lambda j: (j / "00000002-reserve.json").write_bytes(b""),
        lambda j: (j / "00000002-reserve.json").unlink(),
        lambda j: (j / "00000002-settle.json").write_bytes(b"{}"),
        lambda j: (j / "notes.txt").write_bytes(b"hello"),
        lambda j: os.rename(j / "00000002-reserve.json", j / "00000009-reserve.json"),
        lambda j: os.rename(j / "00000002-reserve.json", j / "00000002-release.json"),
    ],
    ids=["torn", "empty", "gap", "duplicate-seq", "foreign", "renumbered", "wrong-kind"],
)
def test_damaged_journals_are_never_replayed(
    budget: BudgetManager, tmp_path: Path, damage: Any
) -> None:
    budget.reserve("H1", 40, KEY)
    budget.reserve("H1", 10, "b")
    damage(journal(tmp_path))
    assert code_of(lambda: BudgetManager(tmp_path)) == "budget_journal_corrupt"


def test_a_journal_that_breaks_a_rule_is_corrupt(budget: BudgetManager, tmp_path: Path) -> None:
    entry = {
        "format": "viano-budget-entry",
        "format_version": 1,
        "seq": 2,
        "kind": "reserve",
        "time": "2026-01-01T00:00:00.000000Z",
        "account": "H1",
        "key": "greedy",
        "amount": 101,  # more than the limit
    }
    (journal(tmp_path) / "00000002-reserve.json").write_bytes(canonical_bytes(entry))
    err = error_of(lambda: BudgetManager(tmp_path))
    assert (err.code, err.details["seq"]) == ("budget_journal_corrupt", 2)


def test_non_canonical_bytes_are_corrupt(budget: BudgetManager, tmp_path: Path) -> None:
    path = journal(tmp_path) / "00000001-open.json"
    path.write_bytes(path.read_bytes() + b"\n")
    assert code_of(lambda: BudgetManager(tmp_path)) == "budget_journal_corrupt"


def test_a_failed_write_changes_nothing(
    budget: BudgetManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_link(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "link", no_link)
    with pytest.raises(PackageFileError) as caught:  # the one durable writer's error
        budget.reserve("H1", 40, KEY)
    err = caught.value
    assert (err.code, err.details["errno"]) == ("package_write_failed", "ENOSPC")
    assert budget.reservation(KEY) is None
    assert [p.name for p in journal(tmp_path).iterdir()] == ["00000001-open.json"]
    monkeypatch.undo()
    assert budget.reserve("H1", 40, KEY).state == "reserved"


def test_a_crash_after_the_link_is_recovered_by_rereading(
    budget: BudgetManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync

    def failing_fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(5, "I/O error")  # the directory fsync after the link
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(PackageFileError):
        budget.reserve("H1", 40, KEY)
    monkeypatch.undo()
    # The entry did reach the disk; memory followed it, so the retry is a no-op.
    assert budget.reserve("H1", 40, KEY).state == "reserved"
    assert entries(tmp_path) == ["00000001-open.json", "00000002-reserve.json"]
    assert BudgetManager(tmp_path).snapshot() == budget.snapshot()


def test_a_second_writer_is_detected_and_memory_follows_the_disk(
    budget: BudgetManager, tmp_path: Path
) -> None:
    other = BudgetManager(tmp_path)
    other.reserve("H1", 30, "from-other")
    err = error_of(lambda: budget.reserve("H1", 40, KEY))
    assert (err.code, err.details["seq"]) == ("budget_journal_conflict", 2)
    # The failed writer re-read the journal and now sees the other reservation.
    assert budget.reservation("from-other") is not None
    assert budget.reserve("H1", 40, KEY).state == "reserved"
    assert BudgetManager(tmp_path).account("H1").reserved == 70


def test_a_symlinked_analysis_directory_is_refused(tmp_path: Path) -> None:
    package, elsewhere = tmp_path / "pkg", tmp_path / "elsewhere"
    package.mkdir()
    elsewhere.mkdir()
    (package / "analysis").symlink_to(elsewhere)
    with pytest.raises(PackageFileError) as caught:
        BudgetManager(package)
    assert caught.value.code == "package_path_outside"


def test_a_missing_package_is_refused(tmp_path: Path) -> None:
    assert code_of(lambda: BudgetManager(tmp_path / "nope")) == "budget_journal_package_missing"


# -- property: never more than the limit, and replay is exact ---------------------------

ACCOUNTS = {"H1": 50, "H2": 20}
KEYS = ["k1", "k2", "k3", "k4", "k5"]
operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("reserve"),
            st.sampled_from([*ACCOUNTS, "H9"]),
            st.integers(-1, 60),
            st.sampled_from(KEYS),
        ),
        st.tuples(st.just("settle"), st.sampled_from(KEYS), st.integers(-1, 70)),
        st.tuples(st.just("release"), st.sampled_from(KEYS)),
        st.tuples(
            st.just("close"),
            st.sampled_from(list(ACCOUNTS)),
            st.sampled_from(["closed", "concluded"]),
        ),
        st.tuples(st.just("reopen")),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(operations)
def test_no_sequence_spends_more_than_the_limit(ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        budget = BudgetManager(directory)
        for name, limit in ACCOUNTS.items():
            budget.open_account(name, limit)
        first_amount: dict[str, int] = {}
        for op in ops:
            try:
                if op[0] == "reserve":
                    reservation = budget.reserve(op[1], op[2], op[3])
                    first_amount.setdefault(op[3], reservation.amount)
                    # A repeated key never gets a second, different reservation.
                    assert reservation.amount == first_amount[op[3]]
                elif op[0] == "settle":
                    budget.settle(op[1], op[2])
                elif op[0] == "release":
                    budget.release(op[1])
                elif op[0] == "close":
                    budget.close_account(op[1], op[2])
                else:
                    budget = BudgetManager(directory)  # a restart in the middle
            except BudgetError as err:
                assert not err.code.startswith("budget_journal")
            check_invariants(budget)
        assert BudgetManager(directory).snapshot() == budget.snapshot()


def check_invariants(budget: BudgetManager) -> None:
    snapshot = budget.snapshot()
    for name, account in snapshot["accounts"].items():
        assert account["spent"] + account["reserved"] <= account["limit"]
        mine = [r for r in snapshot["reservations"].values() if r["account"] == name]
        assert account["spent"] == sum(r["charged"] for r in mine if r["state"] == "settled")
        assert account["reserved"] == sum(r["amount"] for r in mine if r["state"] == "reserved")
        for reservation in mine:
            if reservation["state"] == "settled":
                assert reservation["charged"] <= reservation["amount"]
