"""The prompt ``case_interpretation_v1``, built as a pure function of a stored context.

The CaseInterpreter stores the prompt version and the whole context of each
call (``NN-call.json``), so a stored prompt is rebuilt byte for byte. The
context holds the report, the hypotheses the case already has (an
operator's: shown so that they are not proposed again), the labelled facts
(the report itself, each snapshot source by its ``source_ref``, and with
research the enrichment facts of the revision by fact ID), the operations a
first query may use, and the feedback on a rejected earlier attempt.

The operation list is generated from the bundled request schemas, so it
names exactly the arguments the contract requires: a model that copies it
is not rejected for a missing field. It never shows an investigation's
answer: no evidence, no assessment, no outcome.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.investigation.prompts import access_lines, bounded_report, id_ranges
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.schemas import load_schema

PROMPT_VERSION_V1 = "case_interpretation_v1"
# Version 2 (what new calls use): the case brief in place of every fact as JSON (the
# report bounded, what the case can read, the fact sections scaled to the budget,
# what was left out); the rules, the operations and the example are version 1's.
PROMPT_VERSION = "case_interpretation_v2"
PROMPT_VERSIONS = (PROMPT_VERSION_V1, PROMPT_VERSION)
PROJECT_OPERATION = "project.query"
REPORT_LABEL = "report"

_RULES = """You read a player's bug report about a game server and propose hypotheses for a
read-only investigation. You do not diagnose and you do not decide anything: each hypothesis
is a statement that the investigation will test against the case's data and source code.

Answer with exactly one JSON object and nothing else:
{"hypotheses": [
  {"statement": "<one falsifiable statement about what is wrong>",
   "refuted_if": "<the observation in the data or source that would show it false>",
   "rests_on": ["<label>", ...],
   "first_query": {"operation": "<operation>", "arguments": {...}}}
]}

Rules:
- 1 to {N} hypotheses, the most plausible first; each one different from the others and from
  the hypotheses the case already has.
- rests_on names the facts the statement rests on, by the labels shown below (at least one):
  "report" for the report text, a source_ref for a snapshot source, or a project fact ID.
- first_query is the first tool step that would test the statement: one operation from the
  list below with exactly its arguments (names ending in ? are optional).
- Facts describe configured data and source code; they are not runtime observations."""

_EXAMPLE_INTRO = "Example of one hypothesis (the names are placeholders):"


def build_messages(
    context: Mapping[str, Any], version: str = PROMPT_VERSION_V1
) -> list[dict[str, str]]:
    """The chat messages of one interpretation call (system rules, user context)."""
    if version not in PROMPT_VERSIONS:
        raise ValueError(f"unknown prompt version {version!r}")
    system = "\n\n".join(
        [
            _RULES.replace("{N}", str(max_hypotheses(context))),
            "Operations for first_query:\n" + "\n".join(operation_lines(context["operations"])),
            _EXAMPLE_INTRO + "\n" + _json(example_hypothesis(context)),
        ]
    )
    user = _user(context) if version == PROMPT_VERSION_V1 else _user_v2(context)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


MAX_HYPOTHESES = 8
"""The contract's limit (``case-interpretation-v1``); ``[investigation]
max_hypotheses`` narrows it, and the stored context says so where it does."""


def max_hypotheses(context: Mapping[str, Any]) -> int:
    """The most hypotheses the call asks for; a context stored without the key
    (the default, and every context written before the setting) means 8."""
    value = context.get("max_hypotheses", MAX_HYPOTHESES)
    return value if isinstance(value, int) and 1 <= value <= MAX_HYPOTHESES else MAX_HYPOTHESES


def example_hypothesis(context: Mapping[str, Any]) -> dict[str, Any]:
    """One hypothesis that holds the whole contract for ``context`` (tested so)."""
    source = next((f for f in context["facts"] if f["kind"] == "source_file"), None)
    if source is not None:
        query = {
            "operation": "source.find_text",
            "arguments": {
                "source_refs": [source["label"]],
                "text": "QuestComplete",
                "case_sensitive": True,
                "offset": 0,
                "limit": 20,
            },
        }
        rests_on = [REPORT_LABEL, source["label"]]
    else:
        snapshots = [f for f in context["facts"] if f["kind"] not in {REPORT_LABEL, "project_fact"}]
        if snapshots:
            label = snapshots[0]["label"]
            query = {"operation": "database.describe", "arguments": {"source_ref": label}}
            rests_on = [REPORT_LABEL, label]
        else:  # no snapshot at all: the interpreter only runs so with research enabled
            query = {
                "operation": PROJECT_OPERATION,
                "arguments": {
                    "kind": "source.search",
                    "text": "QuestComplete",
                    "case_sensitive": True,
                    "offset": 0,
                    "limit": 20,
                },
            }
            rests_on = [REPORT_LABEL]
    return {
        "statement": "The quest objective is never credited because the script does not run.",
        "refuted_if": "The script is registered and its handler credits the objective.",
        "rests_on": rests_on,
        "first_query": query,
    }


def _user(context: Mapping[str, Any]) -> str:
    parts = [
        f"Case {context['case_id']} (revision {context['analysis_revision']})",
        f"Report title: {context['report']['title']}",
        f"Report text: {context['report']['text']}",
    ]
    if context["kept_hypotheses"]:
        parts.append("Hypotheses the case already has (kept as they are; do not repeat them):")
        parts += [f"- {h['id']}: {h['statement']}" for h in context["kept_hypotheses"]]
    parts.append("Facts, by label:")
    parts.append(f'- "{REPORT_LABEL}": the report above')
    for fact in context["facts"]:
        if fact["kind"] == REPORT_LABEL:
            continue
        if fact["kind"] == "project_fact":
            parts.append(f'- "{fact["label"]}": {_json(fact["fact"])}')
        else:
            parts.append(f'- "{fact["label"]}": snapshot {fact["kind"]} {fact["member"]}')
    if context.get("feedback"):
        parts.append("Feedback on your previous answer (fix exactly this):")
        parts += [f"- {line}" for line in context["feedback"]]
    parts.append(f"Attempt {context['attempt']}. Answer now.")
    return "\n".join(parts)


def _user_v2(context: Mapping[str, Any]) -> str:
    parts = [f"Case {context['case_id']} (revision {context['analysis_revision']})"]
    parts += bounded_report(context["report"])
    if context["kept_hypotheses"]:
        parts.append("Hypotheses the case already has (kept as they are; do not repeat them):")
        parts += [f"- {h['id']}: {h['statement']}" for h in context["kept_hypotheses"]]
    parts.append("Facts, by label:")
    parts.append(f'- "{REPORT_LABEL}": the report above')
    for fact in context["facts"]:
        if fact["kind"] not in (REPORT_LABEL, "project_fact"):
            parts.append(f'- "{fact["label"]}": snapshot {fact["kind"]} {fact["member"]}')
    brief = context.get("brief")
    if brief is not None:
        parts.append("What the project research can read:")
        parts += access_lines(brief)
        parts.append("Project facts of the case build (their labels are the P-IDs):")
        parts.append(brief["facts_text"] or "(none fit)")
        if brief["left_out"]:
            parts.append(
                f"Left out for room: {len(brief['left_out'])} facts "
                f"({id_ranges(brief['left_out'])}); the investigation can read them."
            )
    if context.get("feedback"):
        parts.append("Feedback on your previous answer (fix exactly this):")
        parts += [f"- {line}" for line in context["feedback"]]
    parts.append(f"Attempt {context['attempt']}. Answer now.")
    return "\n".join(parts)


# -- the operation list, from the bundled schemas ---------------------------------------


def operation_lines(operations: list[str]) -> list[str]:
    """One line per operation with its argument names and value forms."""
    request = load_schema("investigation-request-v1")
    lines = []
    for operation in operations:
        if operation == PROJECT_OPERATION:
            lines += _project_lines()
            continue
        node = request["$defs"]["arguments"][operation]
        lines.append(f"- {operation} {_object_shape(node, request)}")
    return lines


def _project_lines() -> list[str]:
    query = load_schema("project-query-v1")
    lines = [
        f'- {PROJECT_OPERATION} (live project research; arguments are one query, "kind" first):'
    ]
    for kind, node in query["$defs"]["query"].items():
        shape = _object_shape(node, query, skip=("kind",))
        lines.append(f'  - {{"kind": "{kind}", {shape[1:]}' if shape != "{}" else f"  - {kind}")
    lines.append(
        "  filters are a list of {column, operator, value}; operators: eq, ne, lt, le, gt, ge,"
        " contains (a literal substring), in (a list). There is no like operator."
    )
    return lines


def _object_shape(
    node: Mapping[str, Any], root: Mapping[str, Any], skip: tuple[str, ...] = ()
) -> str:
    node = _resolve(node, root)
    required = set(node.get("required", ()))
    fields = []
    for name, sub in node.get("properties", {}).items():
        if name in skip:
            continue
        mark = "" if name in required else "?"
        fields.append(f'"{name}{mark}": {_shape(sub, root, depth=1)}')
    return "{" + ", ".join(fields) + "}"


def _shape(node: Mapping[str, Any], root: Mapping[str, Any], *, depth: int) -> str:
    node = _resolve(node, root)
    if "const" in node:
        return _json(node["const"])
    if "enum" in node:
        return " | ".join(_json(v) for v in node["enum"])
    kind = node.get("type")
    if isinstance(kind, list):
        return "scalar" if "null" in kind else " | ".join(kind)
    if kind == "array":
        return "[" + _shape(node.get("items", {}), root, depth=depth + 1) + "]"
    if kind == "object":
        if "properties" in node and depth < 3:
            return _object_shape(node, root)
        return "{name: scalar}" if "additionalProperties" in node else "{...}"
    return str(kind or "value")


def _resolve(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """A local ``#/$defs/...`` reference, followed (the bundled schemas use no others here)."""
    seen = 0
    while "$ref" in node and str(node["$ref"]).startswith("#/") and seen < 8:
        target: Any = root
        for part in str(node["$ref"])[2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
        seen += 1
    return node


def _json(value: Any) -> str:
    return canonical_bytes(value).decode()


def label_order(label: str) -> tuple[int, int, str]:
    """The order the labels are listed in: the report, then snapshot sources by
    name, then project fact IDs by number."""
    if label == REPORT_LABEL:
        return (0, 0, label)
    if label[:1] == "P" and label[1:].isdigit():
        return (2, int(label[1:]), label)
    return (1, 0, label)


__all__ = [
    "PROJECT_OPERATION",
    "PROMPT_VERSION",
    "PROMPT_VERSIONS",
    "PROMPT_VERSION_V1",
    "REPORT_LABEL",
    "build_messages",
    "example_hypothesis",
    "label_order",
    "operation_lines",
]
