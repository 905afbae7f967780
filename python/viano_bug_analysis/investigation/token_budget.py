"""The token budget of one model request: the context window, and a conservative count.

Every request — its prompt plus the answer's room (``max_tokens``) — must fit the
context window the server runs with. The window is, in this order:
``[llm] context_tokens`` of the investigation configuration, else the window
the server advertises (what ``vba llm check`` reads: the model listing's
``n_ctx`` / ``max_model_len`` / ``context_length``, or llama-server's
``/props``), else ``DEFAULT_CONTEXT_TOKENS`` (8192: what a small local server
commonly runs with). A request that cannot fit is refused before it is sent
(``context_budget_exceeded``, naming the window, the prompt's count, the
answer's room and what to change), never sent for the server to answer with
an HTTP 400.

The count (``count_tokens``) does not know the model's tokenizer; it is meant
as an upper bound for the small models this project runs against: every ASCII
digit is one token (SmolLM2's tokenizer splits numbers into single digits), every
run of other ASCII bytes between digits one token per 2.5 bytes, rounded up (the
space in "90001 90002" is a token of its own), every character beyond ASCII two
tokens, plus ``MESSAGE_OVERHEAD`` per message (the chat template's role markers)
and ``REQUEST_OVERHEAD`` once. Measured against SmolLM2-135M-Instruct's own
tokenizer (llama-cpp-python's ``/extras/tokenize``): 1.33 times the real count on
the prompts of a fixture-world investigation, 1.07 on compact JSON rows, exact on
a list of numbers, 0.96 on JSON rows written with spaces after ``:`` and ``,``
(the prompts hold canonical JSON, without them). Table in
docs/budget-and-checkpoints.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from viano_bug_analysis.errors import ContextBudgetError

DEFAULT_CONTEXT_TOKENS = 8192
# The answer's room when [llm] max_tokens is not set (the server's own default
# applies to the answer; this is what a request is planned with).
DEFAULT_ANSWER_TOKENS = 2048
MESSAGE_OVERHEAD = 8
REQUEST_OVERHEAD = 16
CONTEXT_BUDGET_EXCEEDED = "context_budget_exceeded"
_ASCII_RUN = re.compile(rb"[\x00-\x2f\x3a-\x7f]+")


def count_tokens(text: str) -> int:
    """A conservative token count of ``text`` (see the module's note)."""
    data = text.encode("utf-8")
    digits = sum(data.count(d) for d in b"0123456789")
    # Each run of other ASCII bytes between digits is at least one token of its own.
    ascii_runs = sum(-(-2 * len(run) // 5) for run in _ASCII_RUN.findall(data))
    # A character beyond ASCII: two tokens (SmolLM2 spends one to two on a CJK character).
    wide = 2 * sum(1 for byte in data if byte >= 0xC0)
    return digits + ascii_runs + wide


def message_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    """The conservative count of a whole chat request's prompt."""
    return REQUEST_OVERHEAD + sum(MESSAGE_OVERHEAD + count_tokens(m["content"]) for m in messages)


def reservation(messages: Sequence[Mapping[str, str]], answer_tokens: int) -> int:
    """The budget units one request reserves: its prompt and its answer's room."""
    return message_tokens(messages) + answer_tokens


@dataclass(frozen=True, slots=True)
class TokenBudget:
    """The context window requests must fit, where it came from, and the answer's room."""

    context_tokens: int
    source: str  # "config", "server" or "default"
    answer_tokens: int = DEFAULT_ANSWER_TOKENS

    @property
    def prompt_tokens(self) -> int:
        """The most a prompt may count."""
        return self.context_tokens - self.answer_tokens

    def check(self, messages: Sequence[Mapping[str, str]], *, what: str) -> int:
        """The prompt's count; ``context_budget_exceeded`` when it and the answer
        do not fit."""
        needed = message_tokens(messages)
        if needed + self.answer_tokens > self.context_tokens:
            raise ContextBudgetError(
                CONTEXT_BUDGET_EXCEEDED,
                f"the {what} prompt needs about {needed} tokens and the answer "
                f"{self.answer_tokens}, more than the context window of "
                f"{self.context_tokens} tokens ({self.source}): raise [llm] context_tokens "
                "(and the server's context size) or lower [llm] max_tokens",
                {
                    "what": what,
                    "context_tokens": self.context_tokens,
                    "context_source": self.source,
                    "prompt_tokens": needed,
                    "answer_tokens": self.answer_tokens,
                },
            )
        return needed


def resolve_budget(
    *, configured: int | None, advertised: int | None, max_tokens: int | None
) -> TokenBudget:
    """The budget from the configuration, else the server, else the default."""
    answer = max_tokens if max_tokens is not None else DEFAULT_ANSWER_TOKENS
    if configured is not None:
        budget = TokenBudget(configured, "config", answer)
    elif advertised is not None:
        budget = TokenBudget(advertised, "server", answer)
    else:
        budget = TokenBudget(DEFAULT_CONTEXT_TOKENS, "default", answer)
    if budget.answer_tokens >= budget.context_tokens:
        raise ContextBudgetError(
            CONTEXT_BUDGET_EXCEEDED,
            f"[llm] max_tokens ({budget.answer_tokens}) leaves no room for a prompt in the "
            f"context window of {budget.context_tokens} tokens ({budget.source}): lower "
            "max_tokens or raise [llm] context_tokens",
            {
                "what": "answer",
                "context_tokens": budget.context_tokens,
                "context_source": budget.source,
                "prompt_tokens": 0,
                "answer_tokens": budget.answer_tokens,
            },
        )
    return budget


__all__ = [
    "CONTEXT_BUDGET_EXCEEDED",
    "DEFAULT_ANSWER_TOKENS",
    "DEFAULT_CONTEXT_TOKENS",
    "TokenBudget",
    "count_tokens",
    "message_tokens",
    "reservation",
    "resolve_budget",
]
