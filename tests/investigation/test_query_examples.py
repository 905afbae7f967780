"""The project query examples the model learns the kinds from: one per kind of the
query schema, each valid, and the current prompt shows them all."""

from __future__ import annotations

import json

from viano_bug_analysis.investigation.prompts import CURRENT_PROJECT_VERSION, build_messages
from viano_bug_analysis.investigation.query_examples import (
    QUERY_EXAMPLES,
    QUERY_SCHEMA,
    project_query_section,
)
from viano_bug_analysis.schemas import load_schema, schema_validator


def test_every_kind_of_the_query_schema_has_an_example() -> None:
    kinds = load_schema(QUERY_SCHEMA)["properties"]["kind"]["enum"]
    shown = {example.query["kind"] for example in QUERY_EXAMPLES}
    assert set(kinds) == shown


def test_every_example_is_a_valid_query() -> None:
    validator = schema_validator(QUERY_SCHEMA)
    for example in QUERY_EXAMPLES:
        errors = [e.message for e in validator.iter_errors(example.query)]
        assert errors == [], example.query


def test_the_current_project_prompt_shows_every_example_kind_first() -> None:
    context = {
        "case_id": "C",
        "analysis_revision": 1,
        "report": {"title": "t", "text": "x"},
        "hypothesis": {"id": "H1", "statement": "s"},
        "other_hypotheses": [],
        "sources": [],
        "ledger": [],
        "evidence": [],
        "operations": ["project.query"],
        "step": 1,
        "max_steps": 4,
    }
    system = build_messages(CURRENT_PROJECT_VERSION, context)[0]["content"]
    assert project_query_section() in system
    lines = [line[2:] for line in project_query_section().splitlines() if line.startswith("- {")]
    assert [json.loads(line) for line in lines] == [dict(e.query) for e in QUERY_EXAMPLES]
    assert all(line.startswith('{"kind":') for line in lines)
