"""Response formats through the controller, with fake servers on loopback.

- ``auto`` concludes a case on a server that refuses json_schema (llama-cpp-python's
  500): the fallback is stored in the package before the request that uses it, every
  later request goes out as a grammar compiled from the step's own schema, and each
  call record (version 2) names the format; a server that refuses json_schema and
  the grammar member gets json_object with the step's own schema;
- a resumed run finds the stored format and sends the same bytes, never json_schema
  again;
- a json_schema answer whose citation does not resolve is still rejected;
- a server that ignores the schema and answers prose gets its answers rejected as
  any malformed answer; the format stays.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.investigation.llm import recipe_servers as recipes
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer, reply
from tests.investigation.package_fixtures import (
    CONCLUDE,
    FIND,
    SETTINGS,
    Stopped,
    answer,
    built_package,
    scripted_client,
)
from viano_bug_analysis import jsonio
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import CallRecordError, PackageFileError
from viano_bug_analysis.investigation.controller import InvestigationController, RunOutcome
from viano_bug_analysis.investigation.llm_formats import PackageFormats
from viano_bug_analysis.investigation.recovery import CallRecordStore
from viano_bug_analysis.investigation.recovery.audit import _check_schema
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.schemas import compiled_validator


def run(root: Path, server: ScriptedLlmServer, stop_at: str | None = None) -> RunOutcome:
    def hook(point: str) -> None:
        if point == stop_at:
            raise Stopped(point)

    controller = InvestigationController(
        root, model=scripted_client(server), settings=SETTINGS, after_step=hook
    )
    return controller.run()


def stored_formats(root: Path) -> list[dict[str, Any]]:
    folder = root / PackageLayout.LLM_FORMATS
    return [json.loads(p.read_bytes()) for p in sorted(folder.iterdir())]


def test_auto_concludes_a_case_on_a_server_that_refuses_json_schema(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    with ScriptedLlmServer(
        [answer(FIND), answer(CONCLUDE)], gate=recipes.llama_cpp_python()
    ) as server:
        outcome = run(root, server)
        requests = server.requests
    assert outcome.state == "concluded"
    assert recipes.sent_formats(requests) == ["json_schema", "grammar", "grammar"]
    assert [(f["response_format"], f["reason"]) for f in stored_formats(root)] == [
        ("json_schema", "first_choice"),
        ("grammar", "names_response_format"),
    ]
    # Each request carries its own step's binding: step 2 may cite the evidence step 1 took.
    grammars = [r.body["grammar"] for r in requests[1:]]  # type: ignore[index]
    assert 'root-evidence ::= "[" "]"' in grammars[0]  # nothing to cite yet
    assert '"\\"E1\\""' not in grammars[0] and '"\\"E1\\""' in grammars[1]
    assert '"\\"/result\\""' in grammars[1]  # E1's own pointers
    records = CallRecordStore(root).list()
    assert [r.document["format_version"] for r in records] == [2, 2]
    assert {r.document["response_format"]["type"] for r in records} == {"grammar"}
    # The stored answer names the request actually sent, by its hash.
    reply_record = StepLog(root).get("H1", 1, 1, "reply")
    assert reply_record is not None
    sent = jsonio.ordered_bytes(requests[1].body)  # the body as parsed keeps its order
    assert reply_record["chat"]["request_sha256"] == hashlib.sha256(sent).hexdigest()


def test_json_object_carries_each_steps_own_schema(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    with ScriptedLlmServer([answer(FIND), answer(CONCLUDE)], gate=recipes.refuses_schema()) as s:
        outcome = run(root, s)
        requests = s.requests
    assert outcome.state == "concluded"
    assert recipes.sent_formats(requests) == [
        "json_schema",
        "grammar",
        "json_object",
        "json_object",
    ]
    assert [(f["response_format"], f["reason"]) for f in stored_formats(root)] == [
        ("json_schema", "first_choice"),
        ("json_object", "names_grammar"),
        ("grammar", "names_response_format"),
    ]
    schemas = [r.body["response_format"]["schema"] for r in requests[2:]]  # type: ignore[index]
    evidence = [s["properties"]["evidence"] for s in schemas]
    assert evidence[0]["maxItems"] == 0
    (cited,) = evidence[1]["items"]["anyOf"]  # E1, its reference bound to its own answer
    assert cited["properties"]["evidence_id"] == {"type": "string", "const": "E1"}
    pointers, lines = cited["properties"]["reference"]["anyOf"]  # the answer shows lines
    assert "/result" in pointers["enum"] and lines["pattern"].startswith("^L")
    records = CallRecordStore(root).list()
    assert {r.document["response_format"]["type"] for r in records} == {"json_object"}


def test_auto_concludes_on_a_server_that_drops_the_grammar_member(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    script = [answer(FIND), answer(CONCLUDE)]
    with ScriptedLlmServer(script, gate=recipes.drops_grammar()) as server:
        outcome = run(root, server)
        sent = recipes.sent_formats(server.requests)
    assert outcome.state == "concluded"
    # One prose answer (rejected, counted, billed), then json_object for good.
    assert sent == ["json_schema", "grammar", "json_object", "json_object"]
    assert [(f["response_format"], f["reason"]) for f in stored_formats(root)] == [
        ("json_schema", "first_choice"),
        ("json_object", "grammar_ignored"),
        ("grammar", "names_response_format"),
    ]
    first = StepLog(root).get("H1", 1, 1, "decision")
    assert first is not None and first["reason"] == "syntax_error"


def test_a_resumed_run_sends_the_stored_format_and_the_same_bytes(tmp_path: Path) -> None:
    once = built_package(tmp_path / "once")
    twice = built_package(tmp_path / "twice")
    script = [answer(FIND), answer(CONCLUDE)]
    with ScriptedLlmServer(list(script), gate=recipes.refuses_schema()) as server:
        run(once, server)
        uninterrupted = [jsonio.canonical_bytes(r.body) for r in server.requests]
    with ScriptedLlmServer(list(script), gate=recipes.refuses_schema()) as server:
        with contextlib.suppress(Stopped):
            run(twice, server, stop_at="H1-1-1-reply")
        # A new process: a new client, whose only memory is the package.
        outcome = run(twice, server)
        resumed = [jsonio.canonical_bytes(r.body) for r in server.requests]
    assert outcome.state == "concluded"
    assert recipes.sent_formats(server.requests) == [
        "json_schema",
        "grammar",
        "json_object",
        "json_object",
    ]
    # The two packages hold the same case, so the same requests went out.
    assert resumed == uninterrupted


def test_a_json_schema_answer_with_an_unresolved_citation_is_still_rejected(
    tmp_path: Path,
) -> None:
    root = built_package(tmp_path)
    unresolved = answer(
        CONCLUDE, [{"evidence_id": "E1", "role": "supports", "reference": "/result/nowhere/9"}]
    )
    resolved = answer(CONCLUDE, [{"evidence_id": "E1", "role": "supports", "reference": "L2"}])
    script = [answer(FIND), unresolved, resolved]
    with ScriptedLlmServer(list(script), gate=recipes.vllm()) as server:
        outcome = run(root, server)
        requests = server.requests
    assert recipes.sent_formats(requests) == ["json_schema"] * 3
    # Every request's schema admits the valid answer that followed it, and no other
    # hypothesis's; the unresolved citation it refuses (its pointers are E1's own), so
    # only a server that does not honour the schema sends it, and the resolver refuses it.
    for request, text in zip(requests, script, strict=True):
        schema = request.body["response_format"]["json_schema"]["schema"]  # type: ignore[index]
        validator = compiled_validator(schema)
        sent = json.loads(text)
        assert validator.is_valid(sent) is (text != unresolved)
        assert not validator.is_valid({**sent, "hypothesis_id": "H2"})
    assert outcome.state == "concluded"
    rejected = StepLog(root).get("H1", 2, 1, "decision")
    assert rejected is not None and rejected["reason"] == "citation_unresolved"


def test_prose_from_a_server_that_ignores_the_schema_is_rejected(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    prose = reply("I think the quest is broken because the NPC is wrong.")
    with ScriptedLlmServer([prose, prose, prose], gate=recipes.ignores()) as server:
        outcome = run(root, server)
        formats = recipes.sent_formats(server.requests)
    assert (outcome.state, outcome.code) == ("blocked", "INVALID_LLM_RESPONSES")
    assert formats == ["json_schema"] * 3  # prose is no refusal of the format
    decision = StepLog(root).get("H1", 1, 1, "decision")
    assert decision is not None and decision["reason"] == "syntax_error"


def test_the_interpretation_sends_its_own_schema_and_falls_back_the_same_way(
    tmp_path: Path,
) -> None:
    from tests.investigation.test_interpreter import GOOD as PROPOSAL
    from tests.investigation.test_interpreter import built, interpreter

    root = built(tmp_path)
    with ScriptedLlmServer([PROPOSAL], gate=recipes.llama_server_old()) as server:
        outcome = interpreter(root, server).run()
        requests = server.requests
    assert outcome.state == "interpreted"
    assert recipes.sent_formats(requests) == ["json_schema", "grammar"]
    first = requests[0].body["response_format"]["json_schema"]  # type: ignore[index]
    assert first["name"] == "case_interpretation"
    queries = first["schema"]["properties"]["hypotheses"]["items"]["properties"]["first_query"]
    operations = {q["properties"]["operation"]["const"] for q in queries["anyOf"]}
    assert "source.find_text" in operations and "project.query" not in operations
    (record,) = CallRecordStore(root).list()
    assert record.document["response_format"]["type"] == "grammar"


def test_call_records_of_either_version_are_read_strictly(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    with ScriptedLlmServer([answer(FIND), answer(CONCLUDE)], gate=recipes.vllm()) as server:
        run(root, server)
    document = dict(CallRecordStore(root).list()[0].document)
    assert document["format_version"] == 2
    _check_schema(document, "call_record_corrupt")
    old = {k: v for k, v in document.items() if k != "response_format"}
    _check_schema({**old, "format_version": 1}, "call_record_corrupt")  # a version-1 record
    for broken in ({**old, "format_version": 2}, {**document, "format_version": 1}):
        with pytest.raises(CallRecordError) as caught:
            _check_schema(broken, "call_record_corrupt")
        assert caught.value.code == "call_record_corrupt"


def test_a_damaged_format_choice_names_its_file(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    with ScriptedLlmServer([answer(FIND), answer(CONCLUDE)], gate=recipes.refuses_schema()) as s:
        run(root, s)
    folder = root / PackageLayout.LLM_FORMATS
    (victim,) = folder.glob("*-json_object.json")
    victim.write_bytes(victim.read_bytes().replace(b"json_object", b"json_obiect"))
    key = victim.name.split("-")[0]
    with pytest.raises(PackageFileError) as caught:
        PackageFormats(PackageLayout(root)).get(key)
    assert caught.value.code == "package_corrupt"
    assert caught.value.details["path"].endswith(victim.name)


def test_format_files_keep_the_rung_numbers_packages_were_written_with(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    formats = PackageFormats(PackageLayout(root))
    old, new = "0" * 16, "1" * 16
    # A package written before the grammar rung: the same names, the same choice.
    formats.put(old, "json_schema", "first_choice")
    formats.put(old, "json_object", "names_response_format")
    assert formats.get(old) == "json_object"
    formats.put(new, "json_schema", "first_choice")
    formats.put(new, "grammar", "names_response_format")
    assert formats.get(new) == "grammar"  # rung 4 on disk, second on the ladder
    formats.put(new, "json_object", "names_grammar")
    assert formats.get(new) == "json_object"
    names = sorted(p.name for p in (root / PackageLayout.LLM_FORMATS).iterdir())
    assert names == [
        f"{old}-1-json_schema.json",
        f"{old}-2-json_object.json",
        f"{new}-1-json_schema.json",
        f"{new}-2-json_object.json",
        f"{new}-4-grammar.json",
    ]
    # A name whose rung is not its format's is a damaged package.
    (root / PackageLayout.LLM_FORMATS / f"{new}-4-grammar.json").rename(
        root / PackageLayout.LLM_FORMATS / f"{new}-3-grammar.json"
    )
    with pytest.raises(PackageFileError) as caught:
        formats.get(new)
    assert caught.value.code == "package_corrupt"
