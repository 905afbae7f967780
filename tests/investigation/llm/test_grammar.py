"""The answer schema as a GBNF grammar (``response_format = "grammar"``).

Checked with an independent recognizer (``gbnf_reference``): the grammar of a
step admits every documented example and both conclusion forms as the
schema does, refuses what the schema refuses, and bounds what
llama-cpp-python's own converter leaves open (integer ranges, repeated enum
values). Integer ranges and patterns are checked against Python's own
comparison and ``re`` on generated values.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.investigation.llm.gbnf_reference import admits, parse
from tests.investigation.test_answer_schema import (
    LABELS,
    MORE_QUERIES,
    SOURCES,
    VISIBLE,
    _mutations,
    documented_answers,
    shell,
)
from viano_bug_analysis.investigation.answer_schema import interpretation_schema, step_schema
from viano_bug_analysis.investigation.llm.grammar import schema_grammar
from viano_bug_analysis.investigation.prompts import CURRENT_PROJECT_VERSION, CURRENT_VERSION
from viano_bug_analysis.schemas import compiled_validator


def _text(value: Any, *, spaced: bool = False) -> str:
    # Compact, and as models write it (a space after ':' and ','): both admitted.
    if spaced:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _step(research: bool) -> str:
    schema = step_schema("H1", VISIBLE, research=research, sources=SOURCES, version2=True)
    return schema_grammar(schema.portable)


def test_every_documented_example_is_admitted_by_the_grammar_of_a_step() -> None:
    for version, research in ((CURRENT_VERSION, False), (CURRENT_PROJECT_VERSION, True)):
        rules = parse(_step(research))
        for answer in documented_answers(version):
            assert admits(rules, _text(answer)), answer
            assert admits(rules, _text(answer, spaced=True)), answer
    rules = parse(_step(True))
    for query in MORE_QUERIES:
        answer = shell({"kind": "tool", "operation": "project.query", "arguments": query})
        assert admits(rules, _text(answer)), query


def test_both_conclusion_forms_are_admitted() -> None:
    rules = parse(_step(False))
    cited = shell(
        {"kind": "conclusion", "summary": "The quest needs 90005."},
        [
            {"evidence_id": "E1", "role": "supports", "reference": "/result/rows/0/row/ID"},
            {"evidence_id": "E2", "role": "contradicts", "reference": "L40-L42"},
        ],
    )
    uncited = shell({"kind": "conclusion", "summary": 'Nothing "quoted" \\ here.'})
    assert admits(rules, _text(cited)) and admits(rules, _text(uncited))


@pytest.mark.parametrize(("name", "answer"), list(_mutations()), ids=lambda v: str(v)[:30])
def test_what_the_schema_refuses_the_grammar_refuses(name: str, answer: dict[str, Any]) -> None:
    grammar = _step(False)
    assert admits(grammar, _text(answer)) == (name == "the valid answer itself")


def _read(start_line: int, end_line: int) -> dict[str, Any]:
    arguments = {"source_ref": "src-001", "start_line": start_line, "end_line": end_line}
    return shell({"kind": "tool", "operation": "source.read_context", "arguments": arguments})


def test_integers_are_bounded_where_llama_cpp_pythons_converter_is_not() -> None:
    # llama-cpp-python 0.3.36 wrote "offset": 3147589667 under its own converter.
    rules = parse(_step(False))
    schema = compiled_validator(
        step_schema("H1", VISIBLE, research=False, sources=SOURCES).portable
    )
    for start, end in ((1, 1), (1, 2147483647), (0, 4), (1, 2147483648), (-1, 4), (1, 10**12)):
        answer = _read(start, end)
        assert admits(rules, _text(answer)) is schema.is_valid(answer), (start, end)
    assert not admits(rules, _text(_read(1, 1)).replace('"end_line":1', '"end_line":01'))


def test_unique_enum_arrays_admit_each_set_once() -> None:
    proposal = {
        "hypotheses": [
            {
                "statement": "s",
                "refuted_if": "r",
                "rests_on": ["report", "src-001"],
                "first_query": {
                    "operation": "database.describe",
                    "arguments": {"source_ref": "db-001"},
                },
            }
        ]
    }
    portable = interpretation_schema(research=False, labels=LABELS, sources=SOURCES).portable
    rules = parse(schema_grammar(portable))
    assert admits(rules, _text(proposal))
    for rests_on in (["report", "report"], [], ["P9"]):
        proposal["hypotheses"][0]["rests_on"] = rests_on
        assert not admits(rules, _text(proposal)), rests_on
        assert not compiled_validator(portable).is_valid(proposal)


def test_max_hypotheses_bounds_the_array() -> None:
    hypothesis = {
        "statement": "s",
        "refuted_if": "r",
        "rests_on": ["report"],
        "first_query": {"operation": "database.describe", "arguments": {"source_ref": "db-001"}},
    }
    two = {"hypotheses": [hypothesis, dict(hypothesis, statement="t")]}
    for bound, admitted in ((None, True), (2, True), (1, False)):
        portable = interpretation_schema(
            research=False, labels=LABELS, sources=SOURCES, max_hypotheses=bound
        ).portable
        assert admits(schema_grammar(portable), _text(two)) is admitted, bound
        assert compiled_validator(portable).is_valid(two) is admitted, bound


def test_the_grammar_is_deterministic_and_every_empty_alternative_comes_first() -> None:
    # llama.cpp's parser reads "x | " at a line end into the next line's rule:
    # that crashed llama-cpp-python 0.3.36 (SIGSEGV). gbnf_reference refuses it too.
    portable = step_schema("H1", VISIBLE, research=True, sources=SOURCES).portable
    first, second = schema_grammar(portable), schema_grammar(portable)
    assert first == second
    assert all(not line.rstrip().endswith("|") for line in first.splitlines())
    assert first.startswith("root ::= ")
    assert len(first) < 64 * 1024  # one rule per distinct body: the offsets share one


@settings(max_examples=300, deadline=None)
@given(
    low=st.one_of(st.none(), st.integers(-(10**6), 10**12)),
    span=st.integers(0, 10**12),
    value=st.integers(-(10**13), 10**13),
)
def test_an_integer_range_admits_exactly_its_members(
    low: int | None, span: int, value: int
) -> None:
    schema: dict[str, Any] = {"type": "integer"}
    if low is not None:
        schema["minimum"] = low
        schema["maximum"] = low + span
    grammar = schema_grammar(schema)
    inside = low is None or low <= value <= low + span
    if low is None and abs(value) >= 10**19:
        inside = False
    assert admits(grammar, str(value)) is inside
    if low is not None:
        assert admits(grammar, str(low)) and admits(grammar, str(low + span))
        assert not admits(grammar, str(low + span + 1)) and not admits(grammar, str(low - 1))


@settings(max_examples=200, deadline=None)
@given(value=st.floats(-2, 3, allow_nan=False))
def test_a_number_in_zero_to_one_admits_exactly_its_members(value: float) -> None:
    grammar = schema_grammar({"type": "number", "minimum": 0, "maximum": 1})
    text = repr(value)
    if "e" in text or text.startswith("-0.0"):
        return  # exponents and a negative zero are left out of the bounded form (0.0 is in)
    assert admits(grammar, text) is (0 <= value <= 1)


PATTERNS = [
    "^[A-Za-z_][A-Za-z0-9_]*$",
    "^[0-9a-f]{7,40}$",
    "^[A-Za-z0-9_$]+$",
    "^[A-Za-z_][A-Za-z0-9_$]{0,63}$",
    "^[a-z-]{2,3}$",
]


@settings(max_examples=300, deadline=None)
@given(pattern=st.sampled_from(PATTERNS), text=st.text("aZ_09$-f.x", max_size=70))
def test_a_pattern_admits_what_re_matches(pattern: str, text: str) -> None:
    grammar = schema_grammar({"type": "string", "pattern": pattern})
    assert admits(grammar, json.dumps(text)) is (re.fullmatch(pattern[1:-1], text) is not None)


def test_a_pattern_outside_the_subset_leaves_a_plain_string() -> None:
    grammar = schema_grammar({"type": "string", "pattern": "^\\d+(x|y)$", "maxLength": 4})
    assert admits(grammar, '"abcd"') and not admits(grammar, '"abcde"')


def test_strings_escape_as_json_does() -> None:
    grammar = schema_grammar({"type": "string", "maxLength": 3})
    for text in ("", 'a"b', "\\\n", "é€"):
        assert admits(grammar, json.dumps(text)) and admits(
            grammar, json.dumps(text, ensure_ascii=False)
        )
    assert not admits(grammar, '"a\nb"')  # a raw control character is no JSON
    assert not admits(grammar, json.dumps("abcd"))
