"""Cached prompt tokens, parsed where each kind of server reports them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from viano_bug_analysis.investigation.llm.messages import parse_reply


def _reply(**extra: Any) -> bytes:
    usage = {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}
    usage.update(extra.pop("usage", {}))
    choice = {"message": {"content": "{}"}, "finish_reason": "stop"}
    return json.dumps({"choices": [choice], "usage": usage, **extra}).encode()


@pytest.mark.parametrize(
    ("body", "cached"),
    [
        (_reply(usage={"prompt_tokens_details": {"cached_tokens": 64}}), 64),  # OpenAI, vLLM
        (_reply(tokens_cached=80), 80),  # llama-server
        (_reply(timings={"cache_n": 72, "prompt_n": 28}), 72),  # llama-server timings
        (_reply(usage={"prompt_tokens_details": {}}), None),
        (_reply(tokens_cached=-1), None),
        (_reply(), None),
    ],
)
def test_cached_prompt_tokens_are_read_where_the_server_puts_them(
    body: bytes, cached: int | None
) -> None:
    _content, usage, _model, _finish = parse_reply(body)
    assert usage is not None
    assert usage.cached_prompt_tokens == cached
    record = usage.to_record()
    # Absent when unreported: records of servers that say nothing keep their bytes.
    assert record.get("cached_prompt_tokens") == cached
    assert ("cached_prompt_tokens" in record) is (cached is not None)
