"""Tokens per model call, step and hypothesis, cost, and the repeated prompt prefix.

Everything comes from the package's stored records, so ``vba status`` and
the report show the same numbers after any restart:

* the tokens of each answer are the ``usage`` the server reported, as stored
  in its reply record (the step log's ``reply`` and ``repair`` records, the
  case interpretation's ``NN-reply`` records); ``cached_prompt_tokens`` is
  there only when the server reported it (null in the sums when no answer did);
* the prompt of each call is rebuilt from its stored ``call`` record (prompt
  version and context: the prompt builders are pure functions of them), and
  its *repeated prefix* is the common prefix of its messages' bytes (canonical
  JSON of the message list, as in the request body) with the previous call's:
  the part a server with prompt caching can reuse. Repair calls are counted
  in the tokens, but their prompt is not stored (only its hash), so they are
  left out of the prefix comparison; calls are compared in stored order, the
  interpretation's first, then the steps by hypothesis, step and attempt.

Cost is tokens × the operator's prices (``[llm] price_per_million_prompt`` /
``price_per_million_completion``) and is shown only when both are set;
cached prompt tokens are priced as prompt tokens.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.investigation import interpretation_prompt, prompts
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.jsonio import canonical_bytes

_REVISION_NAME = re.compile(r"r([0-9]{4})")
_EVENT_NAME = re.compile(r"([0-9]{2})-(call|reply)\.json")
INTERPRETATION = "interpretation"


@dataclass(frozen=True, slots=True)
class Prices:
    """Prices per million tokens, in whatever currency the operator uses."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return round(
            (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1_000_000, 6
        )


def token_use(
    package: PackageLayout | str | os.PathLike[str], prices: Prices | None = None
) -> dict[str, Any]:
    """The ``tokens`` view of a package (see the module doc)."""
    layout = PackageLayout.of(package)
    calls = _interpretation_calls(layout) + _step_calls(layout)
    _mark_prefixes(calls)
    groups: dict[str, dict[str, Any]] = {}
    steps: dict[tuple[str, int], dict[str, Any]] = {}
    for call in calls:
        owner = call["hypothesis"] or INTERPRETATION
        _add(groups.setdefault(owner, _zero()), call)
        if call["hypothesis"] is not None:
            _add(steps.setdefault((owner, call["step"]), _zero()), call)
    total = _zero()
    for call in calls:
        _add(total, call)
    prompt_bytes = sum(c["prompt_bytes"] for c in calls if c["prompt_bytes"] is not None)
    repeated = sum(c["repeated_prefix_bytes"] or 0 for c in calls if c["prompt_bytes"] is not None)
    view: dict[str, Any] = {
        "total": total,
        "by_hypothesis": [{"hypothesis": owner, **sums} for owner, sums in groups.items()],
        "by_step": [
            {"hypothesis": owner, "step": step, **sums} for (owner, step), sums in steps.items()
        ],
        "calls": [{k: v for k, v in c.items() if not k.startswith("_")} for c in calls],
        "prompt_prefix": {
            "compared_calls": sum(1 for c in calls if c["prefix_share"] is not None),
            "prompt_bytes": prompt_bytes,
            "repeated_bytes": repeated,
            "share": round(repeated / prompt_bytes, 4) if prompt_bytes else None,
        },
        "prices": None
        if prices is None
        else {"prompt": prices.prompt, "completion": prices.completion},
    }
    if prices is not None:
        for entry in (view["total"], *view["by_hypothesis"], *view["by_step"], *view["calls"]):
            prompt, completion = entry["prompt_tokens"], entry["completion_tokens"]
            # A call whose answer reported no usage has no cost to show.
            entry["cost"] = None if prompt is None else prices.cost(prompt, completion)
    return view


def _zero() -> dict[str, Any]:
    return {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cached_prompt_tokens": None,
        "answers": 0,
        "answers_without_usage": 0,
    }


def _add(sums: dict[str, Any], call: Mapping[str, Any]) -> None:
    sums["answers"] += 1
    if call["prompt_tokens"] is None:
        sums["answers_without_usage"] += 1
        return
    sums["prompt_tokens"] += call["prompt_tokens"]
    sums["completion_tokens"] += call["completion_tokens"]
    if call["cached_prompt_tokens"] is not None:
        sums["cached_prompt_tokens"] = (sums["cached_prompt_tokens"] or 0) + call[
            "cached_prompt_tokens"
        ]


def _call(
    kind: str,
    hypothesis: str | None,
    step: int | None,
    attempt: int,
    chat: Mapping[str, Any],
    messages: list[dict[str, str]] | None,
) -> dict[str, Any]:
    usage = chat.get("usage")
    counts = usage if isinstance(usage, Mapping) else {}
    return {
        "kind": kind,
        "hypothesis": hypothesis,
        "step": step,
        "attempt": attempt,
        "prompt_tokens": _count(counts.get("prompt_tokens")),
        "completion_tokens": _count(counts.get("completion_tokens")),
        "cached_prompt_tokens": _count(counts.get("cached_prompt_tokens")),
        "prompt_bytes": None,
        "repeated_prefix_bytes": None,
        "prefix_share": None,
        "_prompt": None if messages is None else canonical_bytes(messages),
    }


def _mark_prefixes(calls: Iterable[dict[str, Any]]) -> None:
    previous: bytes | None = None
    for call in calls:
        current = call["_prompt"]
        if current is None:
            continue
        call["prompt_bytes"] = len(current)
        if previous is not None:
            shared = _common_prefix(previous, current)
            call["repeated_prefix_bytes"] = shared
            call["prefix_share"] = round(shared / len(current), 4) if current else None
        previous = current


def _common_prefix(a: bytes, b: bytes) -> int:
    # Binary search on slice equality: memcmp-fast, without a Python loop per byte.
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _step_calls(layout: PackageLayout) -> list[dict[str, Any]]:
    log = StepLog(layout)
    calls = []
    for hid, step, attempt, event in log.events():
        if event not in ("reply", "repair"):
            continue
        record = log.get(hid, step, attempt, event) or {}
        messages = None
        if event == "reply":
            call = log.get(hid, step, attempt, "call")
            messages = _rebuilt(_step_messages, call)
        calls.append(_call(event, hid, step, attempt, record["chat"], messages))
    return calls


def _step_messages(call: Mapping[str, Any]) -> list[dict[str, str]]:
    return prompts.build_messages(call["prompt_version"], call["context"])


def _interpretation_calls(layout: PackageLayout) -> list[dict[str, Any]]:
    files = layout.files
    calls = []
    for revision in sorted(files.list(PackageLayout.INTERPRETATION) or ()):
        if _REVISION_NAME.fullmatch(revision) is None:
            continue
        folder = PackageLayout.INTERPRETATION / revision
        names = set(files.list(folder) or ())
        for name in sorted(names):
            match = _EVENT_NAME.fullmatch(name)
            if match is None or match.group(2) != "reply":
                continue
            reply = files.read_document(folder / name) or {}
            chat = reply.get("chat")
            if not isinstance(chat, Mapping):
                continue  # verdict.usage_of names a damaged reply; this view only counts
            call_name = f"{match.group(1)}-call.json"
            call = files.read_document(folder / call_name) if call_name in names else None
            messages = _rebuilt(
                lambda c: interpretation_prompt.build_messages(c["context"], c["prompt_version"]),
                call,
            )
            calls.append(_call("interpretation", None, None, int(match.group(1)), chat, messages))
    return calls


def _rebuilt(build: Any, call: Mapping[str, Any] | None) -> list[dict[str, str]] | None:
    if call is None:
        return None
    try:
        messages: list[dict[str, str]] = build(call)
    except (KeyError, TypeError, ValueError):
        return None  # a record of an older prompt version this build cannot rebuild
    return messages


def _count(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


__all__ = ["INTERPRETATION", "Prices", "token_use"]
