"""Every example in every prompt is a valid value of its schema.

The examples are taken from the rendered prompts, not from the code that
writes them: each JSON object in the fixed parts of a prompt (the system
rules of every investigation prompt version in use, the instructions of the
repair prompt) is found by scanning the text, parsed, classified by what it
is and validated against the schema the model's answer must satisfy. An
example that drifts from its schema (a required property dropped, a
placeholder left in) fails here.

The interpretation prompt (``case_interpretation_v1``) is checked the same
way against ``case-interpretation-v1``: its answer template's placeholders
are rendered into values first, its example is checked for every form it
takes, and each operation shape it lists, filled in, must be valid arguments.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema.protocols import Validator

from viano_bug_analysis.investigation.interpretation_prompt import (
    PROJECT_OPERATION,
    REPORT_LABEL,
)
from viano_bug_analysis.investigation.interpretation_prompt import (
    build_messages as build_interpretation_messages,
)
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
from viano_bug_analysis.schemas import load_schema, schema_validator

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
        # Version 2 of each schema holds every version 1 value (and whole_word).
        return f"arguments of {operation}", schema_validator("investigation-request-v2").evolve(
            schema={"$ref": f"#/$defs/arguments/{operation}"}
        )
    if isinstance(value, dict) and "hypothesis_id" in value:
        return "answer", _validator()
    if isinstance(value, dict) and value.get("kind") in ("tool", "conclusion"):
        return "next step", _validator("$defs", "next")
    if isinstance(value, dict) and isinstance(value.get("kind"), str):
        return "project query", schema_validator("project-query-v2")
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
    # The tool-step example says why it asks (the step's rationale in the report).
    tools = [a["next"] for a in answers if a["next"]["kind"] == "tool"]
    assert tools and all(isinstance(t.get("rationale"), str) for t in tools)


def test_a_placeholder_or_a_dropped_property_is_caught() -> None:
    # The scan itself: a drifted example must fail it.
    with pytest.raises(AssertionError):
        list(json_objects('- source.find_text {"source_refs": [...]}'))
    lead, value = next(
        json_objects('- {"kind": "source.search", "text": "x", "offset": 0, "limit": 20}')
    )
    _, validator = validator_for(lead, value)
    assert not validator.is_valid(value)  # case_sensitive is required


# -- case_interpretation_v1 --------------------------------------------------------------
# Its answer template has placeholders ("<label>", {...}, ", ..."): they are
# rendered into values first, so the template itself must be a valid answer
# once filled in; the example and each generated operation shape are checked too.

INTERPRETATION = "case-interpretation-v1"
FORMS: dict[str, list[dict[str, Any]]] = {
    "source file": [{"label": "diag-001", "kind": "source_file", "member": "session.log"}],
    "database snapshot": [{"label": "db-001", "kind": "database_snapshot", "member": "w.sql"}],
    "project facts only": [{"label": "P1", "kind": "project_fact", "fact": {"fact_id": "P1"}}],
}
PLACEHOLDERS = [
    (re.compile(r'"<operation>"'), '"database.describe"'),
    (re.compile(r"\{\.\.\.\}"), '{"source_ref": "db-001"}'),
    (re.compile(r'"<label>"'), '"report"'),
    (re.compile(r",\s*\.\.\."), ""),
    (re.compile(r'"<[^"<>]+>"'), '"a statement"'),
]
SHAPE_VALUES = {
    "string": '"x"',
    "integer": "1",
    "number": "1",
    "boolean": "true",
    "scalar": "1",
    "value": "1",
}


def interpretation_context(form: str) -> dict[str, Any]:
    return {
        "case_id": "BUG-20",
        "analysis_revision": 1,
        "report": {"title": "t", "text": "x"},
        "kept_hypotheses": [],
        "facts": [{"label": REPORT_LABEL, "kind": REPORT_LABEL}, *FORMS[form]],
        "operations": [*SNAPSHOT_OPERATIONS, PROJECT_OPERATION],
        "attempt": 1,
    }


def brace_blocks(text: str) -> Iterator[str]:
    """Every top-level ``{...}`` of ``text``, braces inside JSON strings ignored."""
    index = 0
    while (start := text.find("{", index)) != -1:
        depth, quoted, at = 0, False, start
        while at < len(text):
            char = text[at]
            if quoted:
                if char == "\\":
                    at += 1
                elif char == '"':
                    quoted = False
            elif char == '"':
                quoted = True
            elif char in "{}":
                depth += 1 if char == "{" else -1
                if depth == 0:
                    break
            at += 1
        else:
            raise AssertionError(f"an unbalanced brace: {text[start : start + 60]!r}")
        yield text[start : at + 1]
        index = at + 1


def rendered(block: str) -> Any:
    """The value of an example, its placeholders rendered first."""
    for pattern, value in PLACEHOLDERS:
        block = pattern.sub(value, block)
    try:
        return json.loads(block)
    except json.JSONDecodeError as err:
        raise AssertionError(f"not an example once rendered: {block[:80]!r}") from err


def rendered_shape(shape: str) -> Any:
    """An operation's argument shape (``"text": string, "limit?": integer``) as a value."""
    shape = re.sub(r'("[^"]*")(?: \| "[^"]*")+', r"\1", shape)  # an enum: its first value
    shape = shape.replace("{name: scalar}", '{"ID": 1}')
    # The patterned strings no "x" satisfies: commit IDs of hex digits.
    shape = shape.replace('"revision": string', '"revision": "0123abc"')
    shape = shape.replace('"since": string', '"since": "' + "0" * 40 + '"')
    shape = re.sub(r'"([A-Za-z_]+)\?"', r'"\1"', shape)  # an optional name, given
    shape = re.sub(
        r'"[^"]*"|\b(' + "|".join(SHAPE_VALUES) + r")\b",
        lambda m: SHAPE_VALUES[m.group(1)] if m.group(1) else m.group(0),
        shape,
    )
    return json.loads(shape)


def interpretation_problems(answer: Any, labels: set[str]) -> list[str]:
    errors = [e.message for e in schema_validator(INTERPRETATION).iter_errors(answer)]
    if errors:
        return errors
    for hypothesis in answer["hypotheses"]:
        errors += [f"label {x!r} not shown" for x in hypothesis["rests_on"] if x not in labels]
        step = {"kind": "tool", **hypothesis["first_query"]}
        errors += [e.message for e in _validator("$defs", "next").iter_errors(step)]
    return errors


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_example_of_the_interpretation_prompt_is_valid(form: str) -> None:
    context = interpretation_context(form)
    labels = {fact["label"] for fact in context["facts"]}
    system = build_interpretation_messages(context)[0]["content"]
    examples = 0
    for section in system.split("\n\n"):
        if section.startswith("Operations for first_query:"):
            continue  # the shapes, checked below
        for block in brace_blocks(section):
            value = rendered(block)
            answer = value if "hypotheses" in value else {"hypotheses": [value]}
            assert interpretation_problems(answer, labels) == [], f"{form}: {block[:80]!r}"
            examples += 1
    assert examples == 2  # the answer template and the example hypothesis


def test_every_operation_shape_of_the_interpretation_prompt_gives_valid_arguments() -> None:
    system = build_interpretation_messages(interpretation_context("source file"))[0]["content"]
    request = schema_validator("investigation-request-v1")
    checked = set()
    for line in system.splitlines():
        snapshot = re.fullmatch(r"- ([a-z_.]+) (\{.*\})", line)
        project = re.fullmatch(r"  - (\{.*\})", line)
        if snapshot:
            operation, value = snapshot.group(1), rendered_shape(snapshot.group(2))
            validator = request.evolve(schema={"$ref": f"#/$defs/arguments/{operation}"})
        elif project:
            value = rendered_shape(project.group(1))
            operation, validator = f"query {value['kind']}", schema_validator("project-query-v1")
        else:
            continue
        errors = [e.message for e in validator.iter_errors(value)]
        assert errors == [], f"{operation}: {line.strip()!r}: {errors}"
        checked.add(operation)
    kinds = load_schema("project-query-v1")["$defs"]["query"]
    assert checked == {*SNAPSHOT_OPERATIONS, *(f"query {k}" for k in kinds)}


def test_a_drifted_interpretation_template_is_caught() -> None:
    system = build_interpretation_messages(interpretation_context("source file"))[0]["content"]
    template = next(brace_blocks(system))
    assert interpretation_problems(rendered(template), {"report"}) == []
    dropped = re.sub(r'\s*"refuted_if": "<[^"]*>",', "", template)
    assert dropped != template
    assert interpretation_problems(rendered(dropped), {"report"}) != []
    renamed = template.replace('"operation"', '"op"')
    assert interpretation_problems(rendered(renamed), {"report"}) != []
    with pytest.raises(AssertionError):
        rendered('{"hypotheses": [<one or more>]}')
