"""Budget accounts with idempotent reservations, kept in an append-only journal.

The controller reserves a positive amount before every dispatch (an LLM call
or a tool query), under an idempotency key such as the request's SHA-256 or
the step ID, and settles the reservation with the actual cost afterwards (or
releases it if the dispatch never happened). Amounts are abstract units: the
controller decides whether they are tokens or query units.

Rules (see docs/budget-and-checkpoints.md):

* Accounts are opened explicitly with a limit. A hypothesis ID alone never
  authorizes spending: reserving on an unknown account is refused, and so is
  reserving on a terminal one (closed, concluded, or exhausted).
* ``reserve`` with a key that already exists returns the existing
  reservation (whatever its state) instead of charging again, as long as
  account and amount are the same; otherwise it is a key conflict.
* ``spent + reserved <= limit`` always holds. ``settle`` charges
  ``min(actual, reserved)``; an actual above the reservation is recorded as
  ``overrun`` but never charged, so a wrong estimate cannot break the limit.
  The unused part of the reservation goes back to the account.
* ``settle`` and ``release`` are idempotent; settling a released reservation,
  releasing a settled one, or settling again with a different actual is
  refused.

Every change is one journal entry, ``analysis/budget/journal/<seq>-<kind>.json``,
written once and atomically (see ``AppendOnlyLog``). Opening the manager
replays the journal through the same rules, so a restart gives the same state
and a journal that breaks a rule is reported as corrupt instead of trusted.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from viano_bug_analysis.case.canonical import MAX_SAFE_INTEGER
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import BudgetError, PackageFileError, VbaError
from viano_bug_analysis.investigation.append_log import (
    AppendOnlyLog,
    format_time,
    is_time,
    utc_now,
)

JOURNAL_DIR = PackageLayout.BUDGET_JOURNAL
FORMAT = "viano-budget-entry"
OPEN, RESERVE, SETTLE, RELEASE, CLOSE = "open", "reserve", "settle", "release", "close"
KINDS = frozenset({OPEN, RESERVE, SETTLE, RELEASE, CLOSE})
TERMINAL_STATUSES = frozenset({"closed", "exhausted", "concluded"})
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_FIELDS = {
    OPEN: {"account", "limit"},
    RESERVE: {"account", "key", "amount"},
    SETTLE: {"key", "actual"},
    RELEASE: {"key"},
    CLOSE: {"account", "status"},
}
_COMMON = {"format", "format_version", "seq", "kind", "time"}


@dataclass(frozen=True, slots=True)
class AccountState:
    """An account's numbers. ``status`` is ``open`` or a terminal status;
    ``exhausted`` also appears by itself once ``spent`` reaches ``limit``."""

    account: str
    limit: int
    spent: int
    reserved: int
    status: str

    @property
    def available(self) -> int:
        return self.limit - self.spent - self.reserved

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


@dataclass(frozen=True, slots=True)
class Reservation:
    """A reservation and, once settled, its outcome.

    ``state`` is ``reserved``, ``settled`` or ``released``. ``charged`` is what
    the account paid (``min(actual, amount)``), ``overrun`` what the actual
    cost exceeded the reservation by (recorded, not charged).
    """

    key: str
    account: str
    amount: int
    state: str
    actual: int | None = None
    charged: int | None = None

    @property
    def overrun(self) -> int:
        if self.actual is None or self.charged is None:
            return 0
        return self.actual - self.charged


@dataclass
class _Account:
    limit: int
    spent: int = 0
    reserved: int = 0
    closed_as: str | None = None

    def status(self) -> str:
        if self.closed_as is not None:
            return self.closed_as
        return "exhausted" if self.spent >= self.limit else "open"


class BudgetManager:
    """The budget of one case package, rebuilt from its journal on construction."""

    def __init__(
        self,
        package: PackageLayout | str | os.PathLike[str],
        *,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self._log = AppendOnlyLog(
            package, JOURNAL_DIR, KINDS, error=BudgetError, prefix="budget_journal"
        )
        self._now = now
        self._lock = threading.Lock()
        self._accounts: dict[str, _Account] = {}
        self._reservations: dict[str, Reservation] = {}
        self._seq = 0
        self._replay()

    @property
    def package_path(self) -> Path:
        return self._log.package_path

    # -- reading -----------------------------------------------------------------

    def account(self, account: str) -> AccountState:
        with self._lock:
            return self._state_of(account, self._known(account))

    def accounts(self) -> list[AccountState]:
        with self._lock:
            return [self._state_of(name, acc) for name, acc in sorted(self._accounts.items())]

    def reservation(self, key: str) -> Reservation | None:
        with self._lock:
            return self._reservations.get(key)

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain data (for comparisons and reports)."""
        with self._lock:
            return {
                "seq": self._seq,
                "accounts": {
                    name: {
                        "limit": acc.limit,
                        "spent": acc.spent,
                        "reserved": acc.reserved,
                        "status": acc.status(),
                    }
                    for name, acc in sorted(self._accounts.items())
                },
                "reservations": {
                    key: {
                        "account": r.account,
                        "amount": r.amount,
                        "state": r.state,
                        "actual": r.actual,
                        "charged": r.charged,
                    }
                    for key, r in sorted(self._reservations.items())
                },
            }

    # -- changes -----------------------------------------------------------------

    def open_account(self, account: str, limit: int) -> AccountState:
        """Opens ``account`` with ``limit`` units. Opening it again with the same
        limit is a no-op (a restart repeating its setup); anything else is refused."""
        _check_id(account, "account")
        _check_amount(limit, "limit", minimum=1)
        with self._lock:
            existing = self._accounts.get(account)
            if existing is not None:
                if existing.closed_as is not None:
                    raise _terminal(account, existing.status())
                if existing.limit != limit:
                    raise BudgetError(
                        "budget_account_exists",
                        "the account is already open with another limit",
                        {"account": account},
                    )
                return self._state_of(account, existing)
            self._write(OPEN, account=account, limit=limit)
            return self._state_of(account, self._accounts[account])

    def close_account(self, account: str, status: str = "closed") -> AccountState:
        """Makes ``account`` terminal (``closed``, ``exhausted`` or ``concluded``).

        Open reservations can still be settled or released; nothing new can be
        reserved. Closing a closed account is a no-op that keeps the first status.
        """
        if status not in TERMINAL_STATUSES:
            raise _argument("status", "the status must be closed, exhausted or concluded")
        with self._lock:
            existing = self._known(account)
            if existing.closed_as is None:
                self._write(CLOSE, account=account, status=status)
            return self._state_of(account, existing)

    def reserve(self, account: str, amount: int, key: str) -> Reservation:
        """Reserves ``amount`` (> 0) on ``account`` under the idempotency ``key``."""
        _check_id(account, "account")
        _check_id(key, "key")
        _check_amount(amount, "amount", minimum=1)
        with self._lock:
            existing = self._reservations.get(key)
            if existing is not None:
                if (existing.account, existing.amount) != (account, amount):
                    raise BudgetError(
                        "budget_key_conflict",
                        "this key already reserves a different account or amount",
                        {"key": key},
                    )
                return existing
            state = self._known(account)
            if state.status() in TERMINAL_STATUSES:
                raise _terminal(account, state.status())
            if amount > state.limit - state.spent - state.reserved:
                raise BudgetError(
                    "budget_insufficient",
                    "the account does not have this much left",
                    {"account": account, "amount": amount},
                )
            self._write(RESERVE, account=account, key=key, amount=amount)
            return self._reservations[key]

    def settle(self, key: str, actual: int) -> Reservation:
        """Records the actual cost (>= 0) of the dispatch reserved under ``key``."""
        _check_amount(actual, "actual", minimum=0)
        with self._lock:
            existing = self._reservation(key)
            if existing.state == "settled":
                if existing.actual != actual:
                    raise BudgetError(
                        "budget_settlement_conflict",
                        "the reservation was settled with another actual cost",
                        {"key": key},
                    )
                return existing
            if existing.state == "released":
                raise BudgetError(
                    "budget_reservation_released", "the reservation was released", {"key": key}
                )
            self._write(SETTLE, key=key, actual=actual)
            return self._reservations[key]

    def reserve_once(self, account: str, amount: int, key: str) -> None:
        """The reservation of ``key``, made once: a rerun after a restart keeps the
        first amount (an estimate from a prompt rebuilt after a restart may differ)."""
        if self.reservation(key) is None:
            self.reserve(account, amount, key)

    def settle_once(self, key: str, actual: int) -> None:
        """Settles ``key`` unless it is settled: a step rerun after a kill between its
        settlement and its record is not charged again."""
        reservation = self.reservation(key)
        if reservation is None or reservation.state != "settled":
            self.settle(key, actual)

    def settle_answer(self, key: str, chat: Mapping[str, Any]) -> None:
        """Settles ``key`` once with the tokens of the stored model answer ``chat`` (a
        ``ChatResult.to_record``: its ``usage.total_tokens``, at least 1), or with the
        whole reservation when the server reported no usage."""
        reservation = self.reservation(key)
        if reservation is not None and reservation.state == "settled":
            return
        usage = chat.get("usage")
        if usage is None:
            actual = reservation.amount if reservation is not None else 0
        else:
            actual = max(1, int(usage["total_tokens"]))
        self.settle(key, actual)

    def release(self, key: str) -> Reservation:
        """Gives back a reservation whose dispatch never happened."""
        with self._lock:
            existing = self._reservation(key)
            if existing.state == "settled":
                raise BudgetError(
                    "budget_reservation_settled",
                    "the reservation was already settled",
                    {"key": key},
                )
            if existing.state == "reserved":
                self._write(RELEASE, key=key)
            return self._reservations[key]

    # -- journal -----------------------------------------------------------------

    def _write(self, kind: str, **fields: Any) -> None:
        seq = self._seq + 1
        document = {
            "format": FORMAT,
            "format_version": 1,
            "seq": seq,
            "kind": kind,
            "time": format_time(self._now()),
            **fields,
        }
        try:
            self._log.append(seq, kind, document)
        except (BudgetError, PackageFileError):
            # The entry may or may not be on disk: re-read so memory matches it.
            self._replay()
            raise
        self._apply(document, self._log.corrupt)

    def _replay(self) -> None:
        self._accounts, self._reservations, self._seq = {}, {}, 0
        for entry in self._log.read():
            self._apply(entry.document, self._log.corrupt)

    def _apply(self, entry: Mapping[str, Any], corrupt: Callable[..., VbaError]) -> None:
        """Applies one entry, re-checking every rule: the journal is not trusted
        to be valid just because it is on disk."""
        kind = entry.get("kind")
        seq = entry.get("seq")

        def require(condition: bool) -> None:
            if not condition:
                raise corrupt("an entry breaks a budget rule", seq=seq)

        require(kind in _FIELDS and set(entry) == _COMMON | _FIELDS[kind])
        require(entry["format"] == FORMAT and entry["format_version"] == 1)
        require(seq == self._seq + 1 and is_time(entry["time"]))
        if kind == OPEN:
            account, limit = entry["account"], entry["limit"]
            require(_is_id(account) and account not in self._accounts and _is_amount(limit, 1))
            self._accounts[account] = _Account(limit)
        elif kind == CLOSE:
            account = self._accounts.get(entry["account"])
            require(account is not None and account.closed_as is None)
            require(entry["status"] in TERMINAL_STATUSES)
            assert account is not None
            account.closed_as = entry["status"]
        elif kind == RESERVE:
            key, amount = entry["key"], entry["amount"]
            account = self._accounts.get(entry["account"])
            require(_is_id(key) and key not in self._reservations and _is_amount(amount, 1))
            require(account is not None and account.status() not in TERMINAL_STATUSES)
            assert account is not None
            require(amount <= account.limit - account.spent - account.reserved)
            account.reserved += amount
            self._reservations[key] = Reservation(key, entry["account"], amount, "reserved")
        else:
            reservation = self._reservations.get(entry["key"])
            require(reservation is not None and reservation.state == "reserved")
            assert reservation is not None
            account = self._accounts[reservation.account]
            account.reserved -= reservation.amount
            if kind == SETTLE:
                actual = entry["actual"]
                require(_is_amount(actual, 0))
                charged = min(actual, reservation.amount)
                account.spent += charged
                self._reservations[reservation.key] = Reservation(
                    reservation.key,
                    reservation.account,
                    reservation.amount,
                    "settled",
                    actual,
                    charged,
                )
            else:
                self._reservations[reservation.key] = Reservation(
                    reservation.key, reservation.account, reservation.amount, "released"
                )
        self._seq += 1

    # -- helpers -----------------------------------------------------------------

    def _known(self, account: str) -> _Account:
        state = self._accounts.get(account)
        if state is None:
            raise BudgetError(
                "budget_account_unknown",
                "no account with this name was opened",
                {"account": account if _is_id(account) else ""},
            )
        return state

    def _reservation(self, key: str) -> Reservation:
        reservation = self._reservations.get(key)
        if reservation is None:
            raise BudgetError(
                "budget_reservation_unknown",
                "no reservation with this key",
                {"key": key if _is_id(key) else ""},
            )
        return reservation

    @staticmethod
    def _state_of(name: str, account: _Account) -> AccountState:
        return AccountState(name, account.limit, account.spent, account.reserved, account.status())


def _is_id(value: object) -> bool:
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def _is_amount(value: object, minimum: int) -> bool:
    return type(value) is int and minimum <= value <= MAX_SAFE_INTEGER


def _check_id(value: object, argument: str) -> None:
    if not _is_id(value):
        raise _argument(argument, "1-128 characters [A-Za-z0-9._:-], starting alphanumeric")


def _check_amount(value: object, argument: str, *, minimum: int) -> None:
    if not _is_amount(value, minimum):
        code = "budget_amount_invalid"
        raise BudgetError(
            code,
            f"{argument} must be an integer from {minimum} to 2**53-1",
            {"argument": argument, "minimum": minimum},
        )


def _argument(argument: str, reason: str) -> BudgetError:
    return BudgetError(
        "budget_argument_invalid",
        f"invalid budget argument {argument}: {reason}",
        {"argument": argument, "reason": reason},
    )


def _terminal(account: str, status: str) -> BudgetError:
    return BudgetError(
        "budget_account_terminal",
        f"the account is {status}; it cannot spend",
        {"account": account, "status": status},
    )


__all__ = [
    "JOURNAL_DIR",
    "KINDS",
    "TERMINAL_STATUSES",
    "AccountState",
    "BudgetError",
    "BudgetManager",
    "Reservation",
]
