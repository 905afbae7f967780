"""One model-call step, shared by the case interpreter and the investigation controller.

Both phases ask the model the same way, each record written once:

1. a stored ``decision`` is the answer (nothing is asked again);
2. at the invalid-response limit of the current epoch nothing is asked
   (``None``: the caller blocks the case);
3. the ``call`` record (prompt version and context) is written before anything
   is sent, so the prompt can be rebuilt byte for byte;
4. budget is reserved for the request under its key, the request is sent and
   its ``reply`` stored: the commit point, never sent again;
5. the reservation is settled from the stored answer's tokens, the answer is
   recovered and checked by the caller, and the ``decision`` stored.

The phases differ only in where their records live (``CallSlot``), how a
context is built and checked, and whether an exhausted budget ends the work
(the controller: the hypothesis ends) or is an error (the interpreter).

The epoch: operator resumes and reopenings so far; each gives a fresh
invalid-response count. (The interpreter counted operator resumes only; a
reopening is written before the first attempt of the revision it opens, so
within one interpretation log both counts agree for every decision but those of
an interpretation interrupted by the upgrade itself, which then gets a fresh
count once.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.investigation.budget import BudgetError, BudgetManager
from viano_bug_analysis.investigation.checkpoints import REOPENED, CheckpointStore
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.llm import AnswerSchema, ChatModel
from viano_bug_analysis.investigation.llm_formats import PackageFormats
from viano_bug_analysis.investigation.recovery import RecoveryPolicy
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.investigation.token_budget import TokenBudget, reservation

Messages = list[dict[str, str]]
# A reservation the account cannot give: the work it belongs to ends.
_EXHAUSTED = frozenset({"budget_insufficient", "budget_account_terminal"})
UNMEASURED_ANSWER = 4096  # the answer's room reserved without a token budget
BUDGET_EXHAUSTED: dict[str, Any] = {"budget_exhausted": True, "status": "rejected"}


@dataclass(frozen=True)
class CallSlot:
    """Where the records of one call live and how it is named."""

    get: Callable[[str], dict[str, Any] | None]  # event -> stored record
    put: Callable[[str, Any], None]  # write once
    hook: str  # the after-step name prefix, e.g. "H1-2-1" or "03"
    account: str  # the budget account charged
    key: str  # the reservation key prefix, e.g. "H1:2:1"


@dataclass(frozen=True)
class CallPlan:
    """What differs between the phases for one call."""

    new_call: Callable[[], dict[str, Any]]  # prompt_version and context of a new call
    messages: Callable[[Mapping[str, Any]], Messages]  # from the stored call
    answer: Callable[[Mapping[str, Any]], AnswerSchema | None]  # from the stored call
    recover: Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]  # call, reply
    invalid_count: Callable[[], int]
    asking: Callable[[], None]  # the progress line before the request
    what: str  # names the prompt in a context_budget_exceeded error
    ends_on_exhausted_budget: bool = False


class ModelCallStep:
    def __init__(
        self,
        *,
        model: ChatModel,
        budget: BudgetManager,
        formats: PackageFormats,
        settings: InvestigationSettings,
        tokens: TokenBudget | None,
        hook: Callable[[str], None],
    ) -> None:
        self._model = model
        self._budget = budget
        self._formats = formats
        self._settings = settings
        self._tokens = tokens
        self._hook = hook

    def decide(self, slot: CallSlot, plan: CallPlan) -> dict[str, Any] | None:
        stored = slot.get("decision")
        if stored is not None:
            return stored
        if plan.invalid_count() >= self._settings.invalid_response_limit:
            return None
        call = slot.get("call")
        if call is None:
            call = plan.new_call()
            slot.put("call", call)
            self._hook(f"{slot.hook}-call")
        reply = slot.get("reply")
        key = f"{slot.key}:llm"
        if reply is None:
            messages = plan.messages(call)
            try:
                self._budget.reserve_once(slot.account, self.units(messages, plan.what), key)
            except BudgetError as err:
                if plan.ends_on_exhausted_budget and err.code in _EXHAUSTED:
                    return dict(BUDGET_EXHAUSTED)
                raise
            plan.asking()
            # The answer schema is a function of the stored call, like the messages.
            result = self._model.chat(messages, answer=plan.answer(call), formats=self._formats)
            # The stored answer is the commit point of the call: it is written
            # before the settlement, which every later start completes from it.
            reply = {"chat": result.to_record()}
            slot.put("reply", reply)
            self._hook(f"{slot.hook}-reply")
        self._budget.settle_answer(key, reply["chat"])
        decision = plan.recover(call, reply)
        slot.put("decision", decision)
        self._hook(f"{slot.hook}-decision")
        return decision

    def units(self, messages: Messages, what: str) -> int:
        """The budget units a request reserves; with a token budget, the request must
        fit its window (``context_budget_exceeded`` before anything is sent)."""
        if self._tokens is None:
            # No window known (a library caller): the estimate of earlier versions.
            return sum(len(m["content"]) for m in messages) // 3 + UNMEASURED_ANSWER
        self._tokens.check(messages, what=what)
        return reservation(messages, self._tokens.answer_tokens)


def epoch(checkpoints: CheckpointStore) -> int:
    """Operator resumes and reopenings so far: each gives a fresh invalid-response
    count. A reopening asks only about what had no answer before it, so earlier
    answers never count against it."""
    return sum(1 for c in checkpoints.history() if c.operator or c.payload.get("event") == REOPENED)


def invalid_count(decisions: Iterable[Mapping[str, Any]], current_epoch: int) -> int:
    """The rejected answers charged in ``current_epoch``."""
    return sum(
        int(d.get("invalid_responses", 0)) for d in decisions if d.get("epoch") == current_epoch
    )


def stored_policy(
    steps: StepLog, settings: InvestigationSettings, stored: Callable[[], None] | None = None
) -> RecoveryPolicy:
    """A running investigation keeps the recovery policy it started with: the one
    stored, or set now from the settings (``stored`` is called after writing it)."""
    data = steps.policy()
    if data is not None:
        return RecoveryPolicy.from_json(data)
    policy = RecoveryPolicy(settings.response_recovery_version)
    steps.put_policy(policy.to_json())
    if stored is not None:
        stored()
    return policy


__all__ = [
    "BUDGET_EXHAUSTED",
    "CallPlan",
    "CallSlot",
    "ModelCallStep",
    "epoch",
    "invalid_count",
    "stored_policy",
]
