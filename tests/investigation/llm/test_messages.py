"""The chat body that is hashed and the reply body that is parsed go through jsonio."""

from __future__ import annotations

import pytest

from viano_bug_analysis import jsonio
from viano_bug_analysis.investigation.answer_schema import step_schema
from viano_bug_analysis.investigation.llm.config import LlmConfig
from viano_bug_analysis.investigation.llm.errors import LlmError
from viano_bug_analysis.investigation.llm.messages import build_request, parse_reply

CONFIG = LlmConfig(base_urls=("http://127.0.0.1:9",), model="modèle", temperature=0.2)
MESSAGES = [{"role": "system", "content": "règles"}, {"role": "user", "content": "x"}]
GOOD = b'{"choices":[{"message":{"content":"fine"},"finish_reason":"stop"}],"model":"m"}'


def test_the_request_body_is_jsonio_bytes_in_build_order_and_hashed_as_sent() -> None:
    request = build_request(CONFIG, MESSAGES)
    body = jsonio.strict_loads(request.body)
    assert request.body == jsonio.ordered_bytes(body)
    assert request.sha256 == jsonio.sha256_hex(request.body)
    assert list(body) == ["model", "messages", "stream", "temperature", "response_format"]
    assert "modèle".encode() in request.body  # UTF-8, not ASCII escapes
    assert build_request(CONFIG, MESSAGES).body == request.body  # the same call, the same bytes


def test_the_answer_schema_goes_out_with_each_discriminating_constant_first() -> None:
    # A server that compiles the schema into a grammar generates the properties
    # in the order sent; sorted, "arguments" came before "operation" and every
    # variant stayed open (llama-cpp-python lost the constraint).
    answer = step_schema("H1", ("E1",), research=True, sources={"src-001": "source_file"})
    request = build_request(CONFIG, MESSAGES, answer=answer, response_format="json_object")
    schema = jsonio.strict_loads(request.body)["response_format"]["schema"]
    assert schema == answer.portable
    for variant in schema["properties"]["next"]["anyOf"]:
        assert next(iter(variant["properties"])) == "kind"
        if "operation" in variant["properties"]:
            assert list(variant["properties"])[:3] == ["kind", "operation", "arguments"]
    assert request.body != jsonio.canonical_bytes(jsonio.strict_loads(request.body))


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
