"""Response formats against fake servers of each kind (the recipes of docs/llm-adapter.md).

``auto`` sends json_schema, falls back to json_object (with the schema) and
then text when a server refuses the format, whatever the status; the choice
is remembered per endpoint; a refusal is never retried as an outage, and
nothing of an error body is kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.investigation.llm import recipe_servers as recipes
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer, raw, reply, status
from viano_bug_analysis.errors import InvestigationConfigError
from viano_bug_analysis.exit_codes import LLM_SERVICE_CODES
from viano_bug_analysis.investigation.answer_schema import repair_schema, step_schema
from viano_bug_analysis.investigation.config import load_investigation_config
from viano_bug_analysis.investigation.llm import (
    ChatClient,
    InMemoryFormats,
    LlmConfig,
    LlmError,
    endpoint_key,
)

MESSAGES = [{"role": "user", "content": "investigate"}]
SOURCES = {"src-001": "source_file", "db-001": "database_snapshot"}
ANSWER = step_schema("H1", ("E1",), research=False, sources=SOURCES)
GOOD = '{"ok": true}'


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def client(server: ScriptedLlmServer, sleep: Sleeps | None = None, **config: Any) -> ChatClient:
    settings: dict[str, Any] = {"model": "m", "max_retries": 1, **config}
    return ChatClient(LlmConfig(base_urls=(server.base_url,), **settings), sleep=sleep or Sleeps())


# -- the recipes ----------------------------------------------------------------------------

RECIPES = [
    (
        "openai",
        recipes.openai(),
        {"response_format": "json_schema", "json_schema_strict": True},
        ["json_schema"],
    ),
    ("vllm", recipes.vllm(), {}, ["json_schema"]),
    ("llama_server", recipes.llama_server(), {"cache_prompt": True}, ["json_schema"]),
    ("llama_server_old", recipes.llama_server_old(), {}, ["json_schema", "grammar"]),
    ("llama_cpp_python", recipes.llama_cpp_python(), {}, ["json_schema", "grammar"]),
    (
        "llama_cpp_python_grammar",
        recipes.llama_cpp_python(),
        {"response_format": "grammar"},
        ["grammar"],
    ),
    (
        "llama_cpp_python_fixed",
        recipes.llama_cpp_python(),
        {"response_format": "json_object"},
        ["json_object"],
    ),
    ("ollama", recipes.ollama(), {}, ["json_schema"]),
    (
        "refuses_schema",
        recipes.refuses_schema(),
        {},
        ["json_schema", "grammar", "json_object"],
    ),
    ("ignores", recipes.ignores(), {}, ["json_schema"]),
]


@pytest.mark.parametrize(("name", "gate", "config", "sent"), RECIPES, ids=[r[0] for r in RECIPES])
def test_auto_finds_the_format_each_server_takes(
    name: str, gate: recipes.Gate, config: dict[str, Any], sent: list[str]
) -> None:
    sleeps = Sleeps()
    with ScriptedLlmServer([GOOD, GOOD], gate=gate) as server:
        chat = client(server, sleeps, **config)
        first = chat.chat(MESSAGES, answer=ANSWER)
        second = chat.chat(MESSAGES, answer=ANSWER)
        seen = server.requests
    assert recipes.sent_formats(seen) == [*sent, sent[-1]]  # the choice is remembered
    assert first.response_format is not None and first.response_format.type == sent[-1]
    assert second.attempts == 1 and first.attempts == len(sent)
    assert sleeps.calls == []  # a refusal is no outage: no backoff, no retry round
    body: dict[str, Any] = seen[-1].body  # type: ignore[assignment]
    if sent[-1] == "grammar":
        # The schema compiled: the hypothesis ID is a constant of the grammar too.
        assert "response_format" not in body
        assert 'root-hypothesis-id ::= "\\"H1\\""' in body["grammar"]
    else:
        # The schema goes along in either format: json_schema.schema, or json_object's schema.
        member = body["response_format"]
        schema = member["json_schema"]["schema"] if sent[-1] == "json_schema" else member["schema"]
        assert schema["properties"]["hypothesis_id"] == {"type": "string", "const": "H1"}
    assert first.request_sha256 == second.request_sha256  # the same bytes each time
    record = first.to_record()["response_format"]
    assert record["type"] == sent[-1] and len(record["schema_sha256"]) == 64
    if name == "llama_server":
        assert all(r.body["cache_prompt"] is True for r in seen)  # type: ignore[index]


def test_openai_strict_mode_gets_the_strict_subset_where_the_schema_has_one() -> None:
    repair = repair_schema({"$ref": "#/$defs/next_project_query"})
    with ScriptedLlmServer([GOOD, GOOD], gate=recipes.openai()) as server:
        chat = client(server, json_schema_strict=True)
        strict = chat.chat(MESSAGES, answer=repair)
        # The step's schema has an open mapping (database.lookup's filters): not strict.
        loose = chat.chat(MESSAGES, answer=ANSWER)
        seen = server.requests
    assert strict.response_format is not None and strict.response_format.strict
    assert loose.response_format is not None and not loose.response_format.strict
    inner = seen[0].body["response_format"]["json_schema"]  # type: ignore[index]
    assert inner["strict"] is True and inner["name"] == "format_repair"
    assert list(recipes.strict_problems(inner["schema"])) == []
    assert seen[1].body["response_format"]["json_schema"]["strict"] is False  # type: ignore[index]


def test_a_server_that_drops_the_grammar_member_gets_json_object_next() -> None:
    with ScriptedLlmServer([GOOD, GOOD], gate=recipes.drops_grammar()) as server:
        chat = client(server)
        memory = InMemoryFormats()
        dropped = chat.chat(MESSAGES, answer=ANSWER, formats=memory)
        honoured = chat.chat(MESSAGES, answer=ANSWER, formats=memory)
        sent = recipes.sent_formats(server.requests)
    # The prose answer is returned as it came (it was billed); the next
    # request of that endpoint asks for json_object.
    assert dropped.response_format is not None and dropped.response_format.type == "grammar"
    assert not dropped.content.startswith("{")
    assert sent == ["json_schema", "grammar", "json_object"]
    assert honoured.response_format is not None
    assert honoured.response_format.type == "json_object"
    assert memory.get(endpoint_key(server.base_url, "m")) == "json_object"


def test_a_grammar_answer_is_never_second_guessed_under_a_fixed_format() -> None:
    with ScriptedLlmServer([GOOD], gate=recipes.drops_grammar()) as server:
        chat = client(server, response_format="grammar")
        first = chat.chat(MESSAGES, answer=ANSWER)
        second = chat.chat(MESSAGES, answer=ANSWER)
        sent = recipes.sent_formats(server.requests)
    assert sent == ["grammar", "grammar"]
    assert first.content == second.content


def test_text_is_the_last_rung_and_then_nothing_is_classified() -> None:
    def refuses_both(body: dict[str, Any] | None) -> Any:
        if (body or {}).get("response_format") is not None:
            return status(400, b'{"error": "response_format is not supported here"}')
        if "grammar" in (body or {}):
            return status(400, b'{"error": "unknown field: grammar"}')
        return None

    with ScriptedLlmServer([GOOD], gate=refuses_both) as server:
        result = client(server).chat(MESSAGES, answer=ANSWER)
        sent = recipes.sent_formats(server.requests)
    assert sent == ["json_schema", "grammar", "json_object", "text"]
    assert result.response_format is not None and result.response_format.type == "text"
    assert result.response_format.schema_sha256 is None


# -- refusals, outages and what is kept -------------------------------------------------------


def test_a_fixed_format_that_is_refused_ends_the_call_without_a_retry() -> None:
    with ScriptedLlmServer([GOOD], gate=recipes.llama_cpp_python()) as server:
        chat = client(server, response_format="json_schema", max_retries=3)
        with pytest.raises(LlmError) as caught:
            chat.chat(MESSAGES, answer=ANSWER)
        assert len(server.requests) == 1
    err = caught.value
    assert err.code == "llm_format_refused" and err.code in LLM_SERVICE_CODES  # exit 3
    assert err.details == {
        "status": 500,
        "reason": "names_response_format",
        "endpoint_index": 0,
        "attempts": 1,
    }
    assert recipes.CANARY not in str(err) + repr(err.details)


def test_a_500_that_says_nothing_about_the_format_is_an_outage() -> None:
    sleeps = Sleeps()
    with ScriptedLlmServer([status(500), GOOD]) as server:
        result = client(server, sleeps).chat(MESSAGES, answer=ANSWER)
        sent = recipes.sent_formats(server.requests)
    assert sent == ["json_schema", "json_schema"]  # retried as it was
    assert sleeps.calls == [1.0] and result.attempts == 2


def test_only_the_first_kib_of_an_error_body_are_read() -> None:
    # The words come after 8 KiB of padding: beyond what the client looks at.
    late = b'{"pad": "' + b" " * 8192 + b'", "error": "response_format"}'
    with ScriptedLlmServer([raw(late, code=400)]) as server:
        with pytest.raises(LlmError) as caught:
            client(server).chat(MESSAGES, answer=ANSWER)
        assert len(server.requests) == 1
    assert caught.value.code == "llm_request_rejected"


def test_the_choice_is_asked_of_the_memory_and_stored_before_the_request() -> None:
    class Recording(InMemoryFormats):
        def __init__(self, server: ScriptedLlmServer) -> None:
            super().__init__()
            self.server = server
            self.puts: list[tuple[str, int]] = []

        def put(self, endpoint_key: str, response_format: str, reason: str) -> None:
            # How many requests the server had seen when the choice was stored.
            self.puts.append((response_format, len(self.server.requests)))
            super().put(endpoint_key, response_format, reason)

    with ScriptedLlmServer([GOOD], gate=recipes.refuses_schema()) as server:
        memory = Recording(server)
        client(server).chat(MESSAGES, answer=ANSWER, formats=memory)
        key = endpoint_key(server.base_url, "m")
    assert memory.puts == [("json_schema", 0), ("grammar", 1), ("json_object", 2)]
    assert memory.get(key) == "json_object"


def test_a_call_without_a_schema_asks_for_json_object() -> None:
    with ScriptedLlmServer([GOOD]) as server:
        result = client(server).chat(MESSAGES)
        body = server.requests[0].body
    assert body is not None and body["response_format"] == {"type": "json_object"}
    assert result.response_format is not None and result.response_format.type == "json_object"


def test_text_sends_no_response_format() -> None:
    with ScriptedLlmServer([reply("prose")]) as server:
        client(server, response_format="text").chat(MESSAGES, answer=ANSWER)
        body = server.requests[0].body
    assert body is not None and "response_format" not in body


# -- configuration ------------------------------------------------------------------------


def test_json_response_is_the_older_spelling() -> None:
    base = {"base_urls": ("http://127.0.0.1:9/v1",), "model": "m"}
    assert LlmConfig(**base).format == "auto"
    assert LlmConfig(**base, json_response=True).format == "json_object"
    assert LlmConfig(**base, json_response=False).format == "text"
    assert LlmConfig(**base, json_response=True, response_format="json_object").format == (
        "json_object"
    )
    assert LlmConfig(**base, response_format="json_schema").format == "json_schema"
    with pytest.raises(LlmError) as caught:
        LlmConfig(**base, json_response=True, response_format="json_schema")
    assert caught.value.code == "llm_config_invalid"
    assert caught.value.details["field"] == "json_response"
    with pytest.raises(LlmError):
        LlmConfig(**base, response_format="yaml")


@pytest.mark.parametrize(
    ("lines", "key"),
    [
        ('response_format = "json_schema"\njson_response = false\n', "llm.json_response"),
        ('response_format = "gbnf"\n', "llm.response_format"),
        ("json_schema_strict = 1\n", "llm.json_schema_strict"),
    ],
)
def test_a_bad_format_setting_is_a_config_error_naming_its_key(
    tmp_path: Path, lines: str, key: str
) -> None:
    path = tmp_path / "investigate.toml"
    path.write_text('[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n' + lines)
    with pytest.raises(InvestigationConfigError) as caught:
        load_investigation_config(path)
    assert caught.value.code == "investigation_config_invalid"
    assert caught.value.details["key"] == key


def test_the_recipe_config_lines_load(tmp_path: Path) -> None:
    path = tmp_path / "investigate.toml"
    path.write_text(
        '[llm]\nbase_url = "http://127.0.0.1:8080/v1"\nmodel = "m"\n'
        'response_format = "auto"\njson_schema_strict = false\ncache_prompt = true\n'
    )
    llm = load_investigation_config(path).llm
    assert (llm.format, llm.json_schema_strict, llm.cache_prompt) == ("auto", False, True)
