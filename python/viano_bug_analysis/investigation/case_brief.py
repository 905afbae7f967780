"""The case brief and the evidence ledger of ``investigation_v3`` / ``investigation_project_v4``.

The prompt is a pure function of its stored context, so everything a view
renders is stored in the context as the text it rendered (the fact sections,
each answer's view, each ledger line): a stored prompt rebuilds byte for byte
however the views change later.

Scaled to the token budget, in this order: the parts every call has (the rules,
the operations, the report, what the case can read, the hypothesis, the ledger
lines, feedback) are measured first; of the room left, up to half goes to the
fact sections of the enrichment index (``facts.brief.fact_sections``; what does
not fit is left out whole and named), the rest to the newest answers in full,
newest first (``tools.answer_view.answer_view``, each at most
``MAX_ANSWER_CHARS``). An older answer keeps its ledger line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from viano_bug_analysis.facts.brief import fact_sections, table_access
from viano_bug_analysis.facts.query import facts_view
from viano_bug_analysis.investigation.evidence import CASE_FACTS_KIND
from viano_bug_analysis.investigation.recovery.repair import CASE_FACTS_OPERATION
from viano_bug_analysis.investigation.token_budget import (
    DEFAULT_CONTEXT_TOKENS,
    TokenBudget,
    count_tokens,
    message_tokens,
)
from viano_bug_analysis.tools.answer_view import answer_view

MAX_ANSWER_CHARS = 6000
# What the fit leaves unused: the count is conservative already; this keeps a
# rounding in the scaled parts from tipping a request over.
_MARGIN_TOKENS = 64
_FACTS_SHARE = 0.5
_SCALE_ROUNDS = 8

Build = Callable[[Mapping[str, Any]], list[dict[str, str]]]


def brief_of(index: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The parts of the brief that do not depend on the budget (facts come later)."""
    if index is None:
        return None
    access = table_access(index)
    origin = index.get("research_origin") or {}
    git = origin.get("git") if isinstance(origin, Mapping) else None
    return {
        "commit": git.get("commit") if isinstance(git, Mapping) else None,
        "allowed": None,
        "tables": {
            "read": list(access.read),
            "refused": {code: list(names) for code, names in access.refused.items()},
            "absent": list(access.absent),
        },
        "facts_text": "",
        "left_out": [],
    }


def shown_request(record: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """The operation of an evidence record and the request as the model made it."""
    request = record["request"]
    if record["kind"] == "project_query":
        return "project.query", request
    if record["kind"] == CASE_FACTS_KIND:
        return CASE_FACTS_OPERATION, request
    first = request["requests"][0]
    return str(first["operation"]), first


def ledger_line(record: Mapping[str, Any], payload: Any) -> str:
    """One line of the ledger: label, hypothesis, operation and what it found."""
    operation, request = shown_request(record)
    if operation == "project.query":
        operation = f"project.query {request.get('kind', '')}"
        target = request.get("table") or request.get("path") or request.get("symbol")
        target = target or request.get("text") or request.get("entity_type")
    elif operation == CASE_FACTS_OPERATION:
        target = request.get("table") or request.get("text") or request.get("fact_kind")
        target = target or ", ".join(request.get("ids") or ()) or request.get("entity")
    else:
        arguments = request.get("arguments", {})
        target = arguments.get("text") or arguments.get("symbol") or arguments.get("source_ref")
    what = f" {target!s:.60}" if target else ""
    label = f"{record['evidence_id']} ({record['hypothesis_id']})"
    return f"{label} {operation}{what}: {_found(payload)}"


def fit(
    context: dict[str, Any],
    *,
    build: Build,
    budget: TokenBudget | None,
    index: Mapping[str, Any] | None,
    answers: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """``context`` with the fact sections and the newest answers that fit the budget.

    ``answers``: every evidence item of the case, oldest first, each with
    evidence_id, hypothesis_id, kind, operation, request and payload."""
    limit = budget.prompt_tokens if budget is not None else DEFAULT_CONTEXT_TOKENS // 2
    room = limit - message_tokens(build(context)) - _MARGIN_TOKENS
    brief = context.get("brief")
    if brief is not None and index is not None and room > 0:
        share = int(room * _FACTS_SHARE)
        sections = _scaled(lambda chars: fact_sections(index, max_chars=chars), share)
        brief["facts_text"] = sections.text if sections is not None else ""
        brief["left_out"] = (
            list(sections.left_out)
            if sections is not None
            else [f["fact_id"] for f in index.get("facts", ())]
        )
        room -= count_tokens(brief["facts_text"]) + 32
    shown: list[dict[str, Any]] = []
    for item in reversed(answers):
        if room <= 0:
            break
        chars = min(MAX_ANSWER_CHARS, room * 2)
        text = _view(item, chars)
        cost = count_tokens(text) + 2 * count_tokens(item["evidence_id"]) + 48
        if cost > room:
            break
        room -= cost
        shown.append({**item, "view": text})
    context["evidence"] = list(reversed(shown))
    return context


def _view(item: Mapping[str, Any], chars: int) -> str:
    if item["operation"] == CASE_FACTS_OPERATION:
        text = facts_view(item["payload"])
        if len(text) <= chars:
            return text
        # A page too large for the room: its compact lines up to the room, said so.
        note = " …(cut for room; ask again with a smaller limit)"
        return text[: max(0, chars - len(note))] + note
    return answer_view(item["operation"], item["request"], item["payload"], max_chars=chars).text


def _scaled(render: Callable[[int], Any], tokens: int) -> Any:
    """The largest rendering whose text counts at most ``tokens``, by shrinking
    its character bound in proportion (a few rounds at most)."""
    chars = tokens * 2
    for _ in range(_SCALE_ROUNDS):
        if chars <= 0:
            return None
        result = render(chars)
        used = count_tokens(result.text)
        if used <= tokens:
            return result
        chars = chars * tokens // used - 1
    return None


def _found(payload: Any) -> str:
    """How many rows, lines or matches an answer holds, in a few words."""
    result = payload.get("result", payload) if isinstance(payload, Mapping) else payload
    if isinstance(result, Mapping):
        for key in (
            "rows",
            "matches",
            "hits",
            "lines",
            "files",
            "places",
            "columns",
            "entries",
            "facts",
        ):
            value = result.get(key)
            if isinstance(value, list):
                return f"{len(value)} {key}" if value else f"no {key}"
        if "count" in result:
            return f"count {result['count']}"
    return "an answer"


__all__ = ["MAX_ANSWER_CHARS", "brief_of", "fit", "ledger_line"]
