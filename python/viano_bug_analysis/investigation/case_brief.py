"""The case brief and the evidence ledger of ``investigation_v3`` and ``investigation_project_v4``
/ ``_v5``.

The prompt is a pure function of its stored context, so everything a view
renders is stored in the context as the text it rendered (the fact sections,
each answer's view, each ledger line): a stored prompt rebuilds byte for byte
however the views change later.

Scaled to the token budget, in this order: the parts every call has (the rules,
the operations, the report, what the case can read, the hypothesis, the ledger
lines, feedback) are measured first; of the room left, up to a fifth of the
prompt's room in the window goes to the fact sections of the enrichment index
(``facts.brief.fact_sections``; what does not fit is left out whole and named),
up to as much to the newest answers in full, newest first
(``tools.answer_view.answer_view``, each at most ``MAX_ANSWER_CHARS``). An older
answer keeps its ledger line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.facts.brief import fact_sections, table_access
from viano_bug_analysis.facts.query import facts_view
from viano_bug_analysis.investigation.evidence import CASE_FACTS_KIND, citation_hints
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
# Of the prompt's room in the window: at most this share for the fact sections and
# about as much for the answers shown in full. A fifth each keeps a step near a third
# of the window, so a case of many steps stays small (a model asks for more:
# case.facts, and an older answer's line names its E-ID); the facts take a little
# less since investigation_project_v5 shows an example of every query kind.
_FACTS_SHARE = 0.19
_ANSWERS_SHARE = 0.2
_INTERPRETATION_FACTS_SHARE = 0.5
# The whole interpretation prompt stays within this share of the room, however long
# the report: one call, but a window that must also hold the answer is not a reason
# to fill it (a 4,000-character report used to add its length on top of the facts).
_INTERPRETATION_PROMPT_SHARE = 0.65
# ... but never fewer facts than this share of it (a small window, a long report).
_INTERPRETATION_MIN_FACTS_SHARE = 0.4
_SCALE_ROUNDS = 8
_MIN_ANSWER_TOKENS = 64  # less room than this: the answer keeps its ledger line only
_LINE_TOKENS = 8  # the line breaks and indentation of an answer shown

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


def fit_interpretation(
    context: dict[str, Any],
    *,
    build: Build,
    budget: TokenBudget | None,
    index: Mapping[str, Any],
) -> None:
    """The interpretation's brief: one call, so the facts may take the room the
    prompt leaves, up to ``_INTERPRETATION_FACTS_SHARE`` of it, the whole prompt
    within ``_INTERPRETATION_PROMPT_SHARE`` unless that leaves the facts less than
    ``_INTERPRETATION_MIN_FACTS_SHARE``; ``brief["shown"]`` names the facts shown
    (the labels a hypothesis may rest on)."""
    limit = budget.prompt_tokens if budget is not None else DEFAULT_CONTEXT_TOKENS // 2
    brief = context["brief"]
    steady = message_tokens(build(context))
    wanted = max(
        int(limit * _INTERPRETATION_PROMPT_SHARE),
        steady + int(limit * _INTERPRETATION_MIN_FACTS_SHARE),
    )
    ceiling = min(limit - _MARGIN_TOKENS, wanted)
    share = min(int(limit * _INTERPRETATION_FACTS_SHARE), ceiling - steady)
    for _ in range(_SCALE_ROUNDS):
        sections = (
            _scaled(lambda c: fact_sections(index, max_chars=c), share) if share > 0 else None
        )
        _set_facts(brief, index, sections)
        brief["shown"] = list(sections.shown) if sections is not None else []
        over = message_tokens(build(context)) - ceiling
        if over <= 0 or sections is None:
            return
        share -= over + _MARGIN_TOKENS


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
    brief = context.get("brief")
    if brief is not None and index is not None:
        # Measured without what changes from step to step (the ledger, the answers,
        # feedback), so the facts are the same in every step of a hypothesis and the
        # prompt's prefix stays cacheable; the answers' share is kept free for them.
        steady = {
            **context,
            "ledger": [],
            "evidence": [],
            "feedback": [],
            "recovery_notes": [],
        }
        reserve = int(limit * _ANSWERS_SHARE) + _MARGIN_TOKENS
        share = min(int(limit * _FACTS_SHARE), limit - reserve - message_tokens(build(steady)))
        for _ in range(_SCALE_ROUNDS):
            if share <= 0:
                _set_facts(brief, index, None)
                break
            _set_facts(brief, index, _scaled(lambda c: fact_sections(index, max_chars=c), share))
            steady["brief"] = brief
            # The left-out lines grow as the sections shrink: measure the whole.
            over = message_tokens(build(steady)) - (limit - reserve)
            if over <= 0:
                break
            share -= over + _MARGIN_TOKENS
    room = limit - _MARGIN_TOKENS - message_tokens(build(context))
    shown: list[dict[str, Any]] = []
    for item in reversed(answers):
        # Each answer as much as the room left allows (a cut one says so); the
        # newest first, so the answer to the last request is always there.
        cite = f"  cite in {item['evidence_id']}: {citation_hints(item['payload'])}"
        fixed = count_tokens(f"  answer: \n{cite}") + _LINE_TOKENS
        if room - fixed < _MIN_ANSWER_TOKENS:
            break
        view = _scaled(_viewer(item), room - fixed)
        if view is None:
            break
        room -= fixed + count_tokens(view.text)
        shown.append({**item, "view": view.text})
    context["evidence"] = list(reversed(shown))
    # The count above is per part; the whole request is what must fit. Should the
    # parts' rounding tip it over, the oldest answer shown goes back to its line.
    while context["evidence"] and message_tokens(build(context)) > limit:
        context["evidence"] = context["evidence"][1:]
    return context


@dataclass(frozen=True)
class _Text:
    text: str


def _viewer(item: Mapping[str, Any]) -> Callable[[int], _Text]:
    def render(chars: int) -> _Text:
        return _Text(_view(item, min(chars, MAX_ANSWER_CHARS)))

    return render


def _set_facts(brief: dict[str, Any], index: Mapping[str, Any], sections: Any) -> None:
    facts = index.get("facts", ())
    brief["facts_text"] = sections.text if sections is not None else ""
    brief["left_out"] = (
        list(sections.left_out) if sections is not None else [f["fact_id"] for f in facts]
    )
    kinds = {f["fact_id"]: f["kind"] for f in facts}
    counted: dict[str, int] = {}
    for fact_id in brief["left_out"]:
        counted[kinds[fact_id]] = counted.get(kinds[fact_id], 0) + 1
    # What kinds of fact were left out, most first: what there is to ask for.
    # A list of pairs, not an object: a stored object comes back with sorted keys.
    brief["left_out_kinds"] = [
        [kind, count] for kind, count in sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


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
