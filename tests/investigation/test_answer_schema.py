"""The answer schemas sent as the response format admit every valid answer of a
step and refuse invalid ones, with the step's own binding; the strict subset
is OpenAI's; an answer to a strict schema comes back to the contract's form.

The valid answers are the prompts' own documented examples (each operation's
arguments, each project query, both conclusion forms), so a schema that only
admits a canned answer fails here.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from tests.investigation.llm.recipe_servers import strict_problems
from tests.investigation.test_prompt_examples import CONTEXT, json_objects, validator_for
from viano_bug_analysis.investigation.answer_schema import (
    MAX_CITABLE_POINTERS,
    _wire_safe,
    drop_strict_nulls,
    interpretation_schema,
    repair_schema,
    step_schema,
    strict_form,
    structured_reply,
)
from viano_bug_analysis.investigation.evidence import citable_pointers, resolve_reference
from viano_bug_analysis.investigation.prompts import (
    CURRENT_PROJECT_VERSION,
    CURRENT_VERSION,
    build_messages,
)
from viano_bug_analysis.investigation.recovery.admission import admit_repair
from viano_bug_analysis.investigation.recovery.contract import ResponseContract, full_violations
from viano_bug_analysis.investigation.recovery.repair import SNAPSHOT_OPERATIONS
from viano_bug_analysis.schemas import compiled_validator, schema_validator

VISIBLE = ("E1", "E2")
# The refs the prompts' examples name, with their roles.
SOURCES = {"src-001": "source_file", "db-001": "database_snapshot"}
LABELS = ("report", "src-001", "db-001")
# Project queries the prompt shows no example of, valid as project-query-v1 has them.
MORE_QUERIES: list[dict[str, Any]] = [
    {"kind": "source.revision", "revision": "0a1b2c3"},
    {
        "kind": "source.changes",
        "since": "0" * 40,
        "terms": ["QuestCredit"],
        "offset": 0,
        "limit": 10,
    },
    {"kind": "database.tables", "name_contains": "quest", "offset": 0, "limit": 20},
    {
        "kind": "database.rows",
        "table": "t",
        "columns": ["a"],
        "filters": [
            {"column": "a", "operator": "in", "value": [1, "x"]},
            {"column": "b", "operator": "ne", "value": None},
            {"column": "c", "operator": "le", "value": 2.5},
        ],
        "offset": 0,
        "limit": 5,
    },
]


def shell(next_step: dict[str, Any], evidence: list[Any] | None = None) -> dict[str, Any]:
    return {
        "hypothesis_id": "H1",
        "assessment": "undetermined",
        "confidence": 0.5,
        "evidence": evidence or [],
        "next": next_step,
    }


def documented_answers(version: str) -> Iterator[dict[str, Any]]:
    """Every example of a prompt's rules as a whole answer of a step."""
    system = build_messages(version, CONTEXT)[0]["content"]
    for lead, value in json_objects(system):
        what, _ = validator_for(lead, value)
        if what == "answer":
            yield value
        elif what.startswith("arguments of "):
            operation = what.removeprefix("arguments of ")
            yield shell({"kind": "tool", "operation": operation, "arguments": value})
        elif what == "project query":
            yield shell({"kind": "tool", "operation": "project.query", "arguments": value})
        elif what == "next step":
            yield shell(value)
        elif what == "citation":
            yield shell({"kind": "conclusion", "summary": "s"}, [value])


def test_every_documented_example_is_admitted_by_the_schema_of_a_step() -> None:
    for version, research in ((CURRENT_VERSION, False), (CURRENT_PROJECT_VERSION, True)):
        # The current versions' answers are checked against investigation-response-v2.
        validator = compiled_validator(
            step_schema("H1", VISIBLE, research=research, sources=SOURCES, version2=True).portable
        )
        answers = list(documented_answers(version))
        seen = {a["next"].get("operation") for a in answers}
        assert set(SNAPSHOT_OPERATIONS) <= seen  # each operation's own example is there
        for answer in answers:
            assert validator.is_valid(answer), (version, answer)
    validator = compiled_validator(
        step_schema("H1", VISIBLE, research=True, sources=SOURCES).portable
    )
    for query in MORE_QUERIES:
        answer = shell({"kind": "tool", "operation": "project.query", "arguments": query})
        assert schema_validator("investigation-response-v1").is_valid(answer)
        assert validator.is_valid(answer), query


def test_both_conclusion_forms_are_admitted() -> None:
    validator = compiled_validator(
        step_schema("H1", VISIBLE, research=False, sources=SOURCES).portable
    )
    cited = shell(
        {"kind": "conclusion", "summary": "The quest needs 90005."},
        [
            {"evidence_id": "E1", "role": "supports", "reference": "/result/rows/0/row/ID"},
            {"evidence_id": "E2", "role": "contradicts", "reference": "L40-L42"},
        ],
    )
    uncited = shell({"kind": "conclusion", "summary": "Nothing to see."})
    uncited["assessment"] = "refuted"
    assert validator.is_valid(cited)
    assert validator.is_valid(uncited)
    # Before any evidence exists nothing can be cited, and the schema says so.
    first = compiled_validator(step_schema("H1", (), research=False, sources=SOURCES).portable)
    assert first.is_valid(uncited) and not first.is_valid(cited)


def _mutations() -> Iterator[tuple[str, dict[str, Any]]]:
    good = shell(
        {
            "kind": "tool",
            "operation": "source.read_context",
            "arguments": {"source_ref": "src-001", "start_line": 1, "end_line": 4},
        },
        [{"evidence_id": "E1", "role": "context", "reference": "L1"}],
    )
    changes: dict[str, Any] = {
        "another hypothesis": ("hypothesis_id", "H2"),
        "an evidence ID not shown": ("evidence", [dict(good["evidence"][0], evidence_id="E9")]),
        "an unknown operation": ("next", dict(good["next"], operation="source.grep")),
        "project.query without research": (
            "next",
            {"kind": "tool", "operation": "project.query", "arguments": MORE_QUERIES[0]},
        ),
        "another operation's arguments": (
            "next",
            dict(good["next"], arguments={"source_ref": "db-001", "filters": {"ID": 1}}),
        ),
        "an unknown filter operator": (
            "next",
            {
                "kind": "tool",
                "operation": "database.lookup",
                "arguments": {"source_ref": "db-001", "filters": [["ID", "like", 1]]},
            },
        ),
        "a property outside the contract": ("extra", 1),
        "a conclusion without summary": ("next", {"kind": "conclusion"}),
        "a confidence above 1": ("confidence", 2),
    }
    for name, (key, value) in changes.items():
        changed = copy.deepcopy(good)
        changed[key] = value
        yield name, changed
    yield "the valid answer itself", good


@pytest.mark.parametrize(("name", "answer"), list(_mutations()), ids=lambda v: str(v)[:30])
def test_invalid_answers_are_refused(name: str, answer: dict[str, Any]) -> None:
    validator = compiled_validator(
        step_schema("H1", VISIBLE, research=False, sources=SOURCES).portable
    )
    assert validator.is_valid(answer) == (name == "the valid answer itself")


def test_the_interpretation_schema_binds_first_queries_to_the_operations() -> None:
    def proposal(query: dict[str, Any]) -> dict[str, Any]:
        return {
            "hypotheses": [
                {"statement": "s", "refuted_if": "r", "rests_on": ["report"], "first_query": query}
            ]
        }

    find = {
        "operation": "source.find_text",
        "arguments": {
            "source_refs": ["src-001"],
            "text": "QuestID",
            "case_sensitive": True,
            "offset": 0,
            "limit": 5,
        },
    }
    rows = {"operation": "project.query", "arguments": MORE_QUERIES[3]}
    plain = compiled_validator(
        interpretation_schema(research=False, labels=LABELS, sources=SOURCES).portable
    )
    live = compiled_validator(
        interpretation_schema(research=True, labels=LABELS, sources=SOURCES).portable
    )
    assert plain.is_valid(proposal(find)) and live.is_valid(proposal(find))
    assert live.is_valid(proposal(rows)) and not plain.is_valid(proposal(rows))
    assert not live.is_valid(proposal({"operation": "source.grep", "arguments": {}}))
    assert schema_validator("case-interpretation-v1").is_valid(proposal(rows))


def test_snapshot_refs_and_labels_are_the_cases_own() -> None:
    step = compiled_validator(step_schema("H1", VISIBLE, research=False, sources=SOURCES).portable)

    def tool(operation: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return shell({"kind": "tool", "operation": operation, "arguments": arguments})

    def find(*refs: str) -> dict[str, Any]:
        arguments = {"source_refs": list(refs), "text": "x", "case_sensitive": True}
        return tool("source.find_text", {**arguments, "offset": 0, "limit": 5})

    assert step.is_valid(find("src-001"))
    assert not step.is_valid(find("src-009"))  # no such ref in the case
    assert not step.is_valid(find("db-001"))  # a table is no source file (wrong_role)
    assert not step.is_valid(find("src-001", "src-001"))
    assert step.is_valid(tool("database.describe", {"source_ref": "db-001"}))
    assert not step.is_valid(tool("database.describe", {"source_ref": "src-001"}))
    # A case without tables: the database operations cannot run, so they are not offered.
    files_only = step_schema("H1", VISIBLE, research=False, sources={"src-001": "source_file"})
    operations = {
        v["properties"].get("operation", {}).get("const")
        for v in files_only.portable["properties"]["next"]["anyOf"]
    }
    assert operations == {None, "source.find_text", "source.find_symbol", "source.read_context"}
    # The bound array holds each ref once at most, which a grammar can express.
    refs = files_only.portable["properties"]["next"]["anyOf"][0]["properties"]["arguments"]
    assert refs["properties"]["source_refs"]["maxItems"] == 1
    plain = interpretation_schema(research=False, labels=LABELS, sources=SOURCES).portable
    rests_on = plain["properties"]["hypotheses"]["items"]["properties"]["rests_on"]
    assert rests_on["items"] == {"type": "string", "enum": ["report", "db-001", "src-001"]}
    assert rests_on["maxItems"] == 3


# -- the strict subset -------------------------------------------------------------------


def repair_excerpts() -> list[dict[str, Any]]:
    broken = shell(
        {
            "kind": "tool",
            "operation": "project.query",
            "arguments": dict(MORE_QUERIES[3], filters=["ID", "eq", 1, "ID", "gt", 0]),
        }
    )
    admission = admit_repair(broken)
    assert admission.schema_excerpt is not None
    return [
        admission.schema_excerpt,
        {"$ref": "#/$defs/next_conclusion"},
        {"$ref": "#/$defs/next_project_query"},
        {"$ref": "#/$defs/evidence"},
    ]


@pytest.mark.parametrize("excerpt", repair_excerpts(), ids=lambda e: str(e)[:40])
def test_the_strict_form_keeps_to_the_subset_and_admits_what_the_portable_form_admits(
    excerpt: dict[str, Any],
) -> None:
    schema = repair_schema(excerpt)
    assert schema.strict is not None
    assert schema.strict["type"] == "object"
    assert list(strict_problems(schema.strict)) == []


def test_a_schema_the_subset_cannot_describe_has_no_strict_form() -> None:
    # database.lookup's filters are an open mapping of column names.
    assert step_schema("H1", VISIBLE, research=False, sources=SOURCES).strict is None
    assert strict_form({"type": "object", "additionalProperties": {"type": "string"}}) is None
    assert strict_form({"type": "array", "items": {"type": "string"}}) is None  # not an object


def test_an_answer_to_a_strict_schema_comes_back_to_the_contract_form() -> None:
    schema = repair_schema({"$ref": "#/$defs/next_project_query"})
    assert schema.strict is not None
    query = {"kind": "source.read", "path": "src/a.cpp", "start_line": 1, "end_line": 2}
    # Strict mode makes the server write every optional property, as null.
    written = {
        "replacement": {
            "kind": "tool",
            "operation": "project.query",
            "arguments": query,
            "rationale": None,
        }
    }
    assert compiled_validator(schema.strict).is_valid(written)
    assert not compiled_validator(schema.portable).is_valid(written)
    restored = drop_strict_nulls(written, schema.portable)
    assert restored == {
        "replacement": {"kind": "tool", "operation": "project.query", "arguments": query}
    }
    # A null that a property admits is a value, and stays.
    filter_answer = shell(
        {
            "kind": "tool",
            "operation": "project.query",
            "arguments": MORE_QUERIES[3],
        }
    )
    portable = step_schema("H1", VISIBLE, research=True, sources=SOURCES).portable
    assert drop_strict_nulls(filter_answer, portable) == filter_answer


def test_a_strict_answer_still_meets_the_whole_contract() -> None:
    # A citation that does not resolve is beyond any schema: the contract refuses it.
    answer = shell(
        {"kind": "conclusion", "summary": "s"},
        [{"evidence_id": "E1", "role": "supports", "reference": "/result/rows/7"}],
    )
    assert compiled_validator(
        step_schema("H1", VISIBLE, research=False, sources=SOURCES).portable
    ).is_valid(answer)
    contract = ResponseContract(
        hypothesis_id="H1",
        visible_evidence_ids=frozenset(VISIBLE),
        citations=lambda _eid, _ref: "E1 has /result/rows/0 only",
    )
    assert full_violations(answer, contract) == ["citation_unresolved"]
    # An answer sent without strict mode reaches recovery byte for byte.
    chat = {"content": ' {"a": null} ', "response_format": {"strict": False}}
    loose = step_schema("H1", VISIBLE, research=False, sources=SOURCES)
    assert structured_reply(chat, loose).text == chat["content"]


# -- patterns a grammar reads on the JSON text ----------------------------------------


@pytest.mark.parametrize(
    ("pattern", "safe"),
    [
        ("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", True),
        ("^E[1-9][0-9]*$", True),
        ("^[A-Za-z0-9_$]+$", True),
        ("^\\d+\\.\\w$", True),
        ("^[^\\r\\n\\u0000]+$", False),  # a negated class admits a quote
        ("^(/([^~/]|~[01])*)*$", False),
        ("^a.b$", False),
        ("^[ -~]+$", False),  # a range over the quote
        ("^[#-~]+$", False),  # a range over the backslash
        ("^\\s+$", False),
        ('^"$', False),
        ("^é$", False),
        ("^[a-z", False),
    ],
)
def test_a_pattern_is_sent_only_where_it_reads_the_same_on_the_json_text(
    pattern: str, safe: bool
) -> None:
    assert _wire_safe(pattern) is safe


def test_no_sent_schema_holds_a_pattern_that_admits_a_quote() -> None:
    def patterns(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "pattern":
                    yield value
                else:
                    yield from patterns(value)
        elif isinstance(node, list):
            for item in node:
                yield from patterns(item)

    schemas = [
        step_schema("H1", VISIBLE, research=True, sources=SOURCES).portable,
        interpretation_schema(research=True, labels=LABELS, sources=SOURCES).portable,
    ]
    sent = [p for schema in schemas for p in patterns(schema)]
    assert sent and all(_wire_safe(p) for p in sent)
    # The contract keeps the pattern: a search text with a line break is still refused.
    answer = shell(
        {
            "kind": "tool",
            "operation": "source.find_text",
            "arguments": {
                "source_refs": ["src-001"],
                "text": "a\nb",
                "case_sensitive": True,
                "offset": 0,
                "limit": 5,
            },
        }
    )
    assert compiled_validator(schemas[0]).is_valid(answer)
    assert not schema_validator("investigation-response-v1").is_valid(answer)


def test_each_citation_is_bound_to_what_resolves_in_its_own_answer() -> None:
    lines = {"result": {"lines": [{"line": 40, "text": "a"}, {"line": 41, "text": "b"}]}}
    rows = {"result": {"rows": [{"row": {"ID": 90001, "a/b~": "x"}}]}}
    schema = step_schema(
        "H1", VISIBLE, research=False, sources=SOURCES, payloads={"E1": lines, "E2": rows}
    ).portable
    validator = compiled_validator(schema)

    def cite(evidence_id: str, reference: str) -> dict[str, Any]:
        return shell(
            {"kind": "conclusion", "summary": "s"},
            [{"evidence_id": evidence_id, "role": "supports", "reference": reference}],
        )

    for pointer in citable_pointers(rows, 100) or []:
        resolve_reference(rows, pointer)  # every listed pointer resolves
        assert validator.is_valid(cite("E2", pointer))
    assert validator.is_valid(cite("E2", "/result/rows/0/row/a~1b~0"))
    assert validator.is_valid(cite("E1", "L40-L41")) and validator.is_valid(cite("E1", "/result"))
    assert not validator.is_valid(cite("E2", "L40"))  # that answer shows no lines
    assert not validator.is_valid(cite("E2", "/result/rows/1"))  # no such row
    assert not validator.is_valid(cite("E3", "/result"))
    # An answer with more nodes than the bound: its reference is any string again.
    big = {"result": {"rows": list(range(MAX_CITABLE_POINTERS))}}
    loose = step_schema("H1", ("E1",), research=False, sources=SOURCES, payloads={"E1": big})
    assert citable_pointers(big, MAX_CITABLE_POINTERS) is None
    assert compiled_validator(loose.portable).is_valid(cite("E1", "/nowhere"))


def test_a_switch_with_a_rule_when_on_leaves_off_and_absent_admitted() -> None:
    # find_text's whole_word (investigation-request-v2) narrows text when true; folded
    # into variants, the schema sent must still admit the search without it.
    schema = step_schema(
        "H1", [], research=True, sources={"src-001": "source_file"}, case_facts=True
    )
    validator = compiled_validator(schema.portable)
    base = {
        "source_refs": ["src-001"],
        "text": "quest credit",
        "case_sensitive": True,
        "offset": 0,
        "limit": 20,
    }

    def step(arguments: dict[str, Any]) -> dict[str, Any]:
        tool = {"kind": "tool", "operation": "source.find_text", "arguments": arguments}
        return {
            "hypothesis_id": "H1",
            "assessment": "undetermined",
            "confidence": 0.3,
            "evidence": [],
            "next": tool,
        }

    assert validator.is_valid(step(base))
    assert validator.is_valid(step({**base, "whole_word": False}))
    assert validator.is_valid(step({**base, "text": "90001", "whole_word": True}))
    assert not validator.is_valid(step({**base, "whole_word": True}))  # a phrase is no word
    assert not validator.is_valid(step({**base, "source_refs": ["src-009"]}))
