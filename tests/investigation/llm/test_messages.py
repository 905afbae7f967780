"""The chat body that is hashed and the reply body that is parsed go through jsonio."""

from __future__ import annotations

import pytest

from viano_bug_analysis import jsonio
from viano_bug_analysis.investigation.llm.config import LlmConfig
from viano_bug_analysis.investigation.llm.errors import LlmError
from viano_bug_analysis.investigation.llm.messages import build_request, parse_reply

CONFIG = LlmConfig(base_urls=("http://127.0.0.1:9",), model="modèle", temperature=0.2)
MESSAGES = [{"role": "system", "content": "règles"}, {"role": "user", "content": "x"}]
GOOD = b'{"choices":[{"message":{"content":"fine"},"finish_reason":"stop"}],"model":"m"}'


def test_the_request_body_and_its_hash_are_the_canonical_ones() -> None:
    request = build_request(CONFIG, MESSAGES)
    body = jsonio.strict_loads(request.body)
    assert request.body == jsonio.canonical_bytes(body)
    assert request.sha256 == jsonio.canonical_sha256(body)
    assert "modèle".encode() in request.body  # UTF-8, not ASCII escapes


def test_a_good_reply_is_parsed() -> None:
    assert parse_reply(GOOD) == ("fine", None, "m", "stop")


@pytest.mark.parametrize(
    "body",
    [
        # Which "choices" counts would depend on the parser: refused instead.
        b'{"choices":[{"message":{"content":"LEAK-CANARY"}}],'
        b'"choices":[{"message":{"content":"other"}}]}',
        b'{"choices":[{"message":{"content":"a","content":"LEAK-CANARY"}}]}',
        b'{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1e400,'
        b'"completion_tokens":1}}',
        b'{"choices":[{"message":{"content":"\\ud800LEAK-CANARY"}}]}',
    ],
    ids=["duplicate_choices", "duplicate_content", "overflow", "lone_surrogate"],
)
def test_a_reply_that_is_not_strict_json_is_an_invalid_reply(body: bytes) -> None:
    with pytest.raises(LlmError) as caught:
        parse_reply(body)
    assert caught.value.code == "llm_invalid_reply"
    assert caught.value.details["reason"] == "the body is not JSON"
    assert "LEAK-CANARY" not in str(caught.value) + repr(caught.value.details)
