"""Every example in every prompt is a valid value of its schema.

The examples are taken from the rendered prompts, not from the code that
writes them: each JSON object in the fixed parts of a prompt (the system
rules of every investigation prompt version in use, the instructions of the
repair prompt) is found by scanning the text, parsed, classified by what it
is and validated against the schema the model's answer must satisfy. An
example that drifts from its schema (a required property dropped, a
placeholder left in) fails here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema.protocols import Validator

from viano_bug_analysis.investigation.prompts import (
    CURRENT_PROJECT_VERSION,
    CURRENT_VERSION,
    build_messages,
)
from viano_bug_analysis.investigation.recovery.admission import admit_repair
from viano_bug_analysis.investigation.recovery.repair import (
    SNAPSHOT_OPERATIONS,
    RepairBinding,
    build_repair_prompt,
)
from viano_bug_analysis.schemas import schema_validator

RESPONSE = "investigation-response-v1"
CONTEXT: dict[str, Any] = {
    "case_id": "BUG-20",
    "analysis_revision": 1,
    "report": {"title": "t", "text": "x"},
    "hypothesis": {"id": "H1", "statement": "s"},
    "sources": [],
    "evidence": [],
    "step": 1,
    "max_steps": 4,
}


def json_objects(text: str) -> Iterator[tuple[str, Any]]:
    """Every top-level ``{...}`` in ``text``: (the text of its line before it, the value).

    A brace that does not start a JSON object (a placeholder such as
    ``{...}``) fails the test: in a fixed prompt text every brace is an example.
    """
    decoder = json.JSONDecoder()
    index = 0
    while (start := text.find("{", index)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as err:
            raise AssertionError(f"not a JSON example: {text[start : start + 60]!r}") from err
        line_start = text.rfind("\n", 0, start) + 1
        yield text[line_start:start], value
        index = end


def _validator(*path: str) -> Validator:
    root = schema_validator(RESPONSE)
    return root.evolve(schema={"$ref": "#/" + "/".join(path)}) if path else root


def validator_for(lead: str, value: Any) -> tuple[str, Validator]:
    """Which schema an example is an example of, from its shape and its line."""
    operation = next((op for op in SNAPSHOT_OPERATIONS if lead.rstrip().endswith(op)), None)
    if operation is not None:
        return f"arguments of {operation}", schema_validator("investigation-request-v1").evolve(
            schema={"$ref": f"#/$defs/arguments/{operation}"}
        )
    if isinstance(value, dict) and "hypothesis_id" in value:
        return "answer", _validator()
    if isinstance(value, dict) and value.get("kind") in ("tool", "conclusion"):
        return "next step", _validator("$defs", "next")
    if isinstance(value, dict) and isinstance(value.get("kind"), str):
        return "project query", schema_validator("project-query-v1")
    if isinstance(value, dict) and {"evidence_id", "role", "reference"} <= set(value):
        return "citation", _validator("$defs", "evidence")
    raise AssertionError(f"an example of nothing known: {value!r}")


def fixed_texts() -> list[tuple[str, str]]:
    texts = []
    for version in (CURRENT_VERSION, CURRENT_PROJECT_VERSION):
        system = build_messages(version, CONTEXT)[0]["content"]
        texts.append((version, system))
    broken = {
        "hypothesis_id": "H1",
        "assessment": "undetermined",
        "confidence": 0.5,
        "evidence": [],
        "next": {
            "kind": "tool",
            "operation": "project.query",
            "arguments": {
                "kind": "database.rows",
                "table": "quest_template",
                "columns": ["ID"],
                "filters": ["ID", "eq", 1, "ID", "gt", 0],
                "offset": 0,
                "limit": 5,
            },
        },
    }
    admission = admit_repair(broken)
    assert admission.admitted and admission.schema_excerpt is not None
    binding = RepairBinding("H1", "s", "", ())
    repair = build_repair_prompt(
        json.dumps(broken), admission.target, admission.schema_excerpt, binding
    )
    # The instructions of the repair prompt, before the data it carries.
    texts.append(("repair", repair.split("\nHypothesis ")[0]))
    return texts


@pytest.mark.parametrize(("name", "text"), fixed_texts(), ids=lambda v: str(v)[:24])
def test_every_example_in_a_prompt_is_valid_for_its_schema(name: str, text: str) -> None:
    for lead, value in json_objects(text):
        what, validator = validator_for(lead, value)
        errors = [e.message for e in validator.iter_errors(value)]
        assert errors == [], f"{name}: invalid example ({what}): {value!r}: {errors}"


def test_the_prompts_show_an_example_of_every_operation_and_query() -> None:
    system = build_messages(CURRENT_PROJECT_VERSION, CONTEXT)[0]["content"]
    kinds = {what for what, _ in (validator_for(lead, v) for lead, v in json_objects(system))}
    assert {f"arguments of {op}" for op in SNAPSHOT_OPERATIONS} <= kinds
    assert {"answer", "project query"} <= kinds
    queries = {
        v["kind"] for _, v in json_objects(system) if "kind" in v and "hypothesis_id" not in v
    }
    assert {"source.search", "source.read", "database.rows", "database.count"} <= queries
    # One valid example of citing, with a pointer and with a line reference.
    answers = [v for _, v in json_objects(system) if "hypothesis_id" in v]
    references = [c["reference"] for a in answers for c in a["evidence"]]
    assert any(r.startswith("/result/") for r in references)
    assert any(r.startswith("L") for r in references)


def test_a_placeholder_or_a_dropped_property_is_caught() -> None:
    # The scan itself: a drifted example must fail it.
    with pytest.raises(AssertionError):
        list(json_objects('- source.find_text {"source_refs": [...]}'))
    lead, value = next(
        json_objects('- {"kind": "source.search", "text": "x", "offset": 0, "limit": 20}')
    )
    _, validator = validator_for(lead, value)
    assert not validator.is_valid(value)  # case_sensitive is required
