"""The token budget: a conservative count, the window's source, and a typed refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from viano_bug_analysis.errors import ContextBudgetError
from viano_bug_analysis.investigation.config import load_investigation_config
from viano_bug_analysis.investigation.token_budget import (
    DEFAULT_ANSWER_TOKENS,
    DEFAULT_CONTEXT_TOKENS,
    MESSAGE_OVERHEAD,
    REQUEST_OVERHEAD,
    TokenBudget,
    count_tokens,
    message_tokens,
    reservation,
    resolve_budget,
)


def test_digits_one_token_each_other_ascii_one_per_two_and_a_half_bytes() -> None:
    assert count_tokens("") == 0
    assert count_tokens("abcde") == 2
    assert count_tokens("abcdef") == 3  # rounded up
    assert count_tokens("12345") == 5
    assert count_tokens("90001 90002") == 11  # the space between is a token of its own
    assert count_tokens("é") == 2  # beyond ASCII: two tokens a character
    assert count_tokens("任务") == 4


def test_a_request_counts_its_messages_and_overheads() -> None:
    messages = [{"role": "system", "content": "abcde"}, {"role": "user", "content": "123"}]
    assert message_tokens(messages) == REQUEST_OVERHEAD + 2 * MESSAGE_OVERHEAD + 2 + 3
    assert reservation(messages, 100) == message_tokens(messages) + 100


def test_the_window_comes_from_the_config_else_the_server_else_the_default() -> None:
    assert resolve_budget(configured=16384, advertised=4096, max_tokens=None) == TokenBudget(
        16384, "config", DEFAULT_ANSWER_TOKENS
    )
    assert resolve_budget(configured=None, advertised=4096, max_tokens=512).source == "server"
    default = resolve_budget(configured=None, advertised=None, max_tokens=None)
    assert (default.context_tokens, default.source) == (DEFAULT_CONTEXT_TOKENS, "default")


def test_a_prompt_that_does_not_fit_is_a_typed_error_naming_the_budget() -> None:
    budget = TokenBudget(2048, "config", 1024)
    fits = [{"role": "user", "content": "x" * 2400}]
    assert budget.check(fits, what="investigation") == message_tokens(fits)
    with pytest.raises(ContextBudgetError) as caught:
        budget.check([{"role": "user", "content": "x" * 2600}], what="investigation")
    err = caught.value
    assert err.code == "context_budget_exceeded"
    assert err.details["context_tokens"] == 2048 and err.details["answer_tokens"] == 1024
    assert "context_tokens" in err.message and "max_tokens" in err.message


def test_an_answer_that_fills_the_window_is_refused_at_once() -> None:
    with pytest.raises(ContextBudgetError):
        resolve_budget(configured=2048, advertised=None, max_tokens=2048)


def test_context_tokens_is_read_from_the_llm_table(tmp_path: Path) -> None:
    path = tmp_path / "investigate.toml"
    path.write_text(
        '[llm]\nbase_urls = ["http://127.0.0.1:9/v1"]\nmodel = "m"\ncontext_tokens = 16384\n'
    )
    config = load_investigation_config(path)
    assert config.context_tokens == 16384
    path.write_text('[llm]\nbase_urls = ["http://127.0.0.1:9/v1"]\nmodel = "m"\n')
    assert load_investigation_config(path).context_tokens is None
