"""Investigation prompts, built as a pure function of a stored context.

A call record stores the prompt version and the whole context it was built
from, so any stored prompt can be rebuilt byte for byte with its own
version, even after newer versions exist:

- ``investigation_v1``: the case report, the hypothesis, the snapshot sources
  and the evidence so far;
- ``investigation_project_v1`` (research enabled): the same plus the labelled
  project facts of the case revision and the ``project.query`` operation.
  The input inventory and repeated earlier results are left out; evidence of
  other hypotheses keeps its IDs and provenance but not its payload.
- ``investigation_v2`` / ``investigation_project_v2``:
  the same content, but every example in the rules is a complete, valid
  value of its schema (a test extracts and validates each one), the rules
  say how to cite (each evidence item lists what can be cited in it) and
  ask for a short rationale with each tool call (why this call; it is shown
  in the report, never sent to the tool), and the text is ordered for
  prefix caching: the system rules (the same for every call of a version),
  then the case, hypothesis, sources and project facts (the same for every
  step of a hypothesis), then the evidence in the order it was taken
  (append-only), and only then what changes from call to call (feedback on
  the previous answer, the step and attempt line).

- ``investigation_project_v3`` (what new calls with research use): version 2
  with the ``references`` kind among the project examples (every place one
  ID is used as one entity type, by the profile's reference map).

- ``investigation_project_v5`` (what new calls with research use): version 4 with
  one example of every project query kind, rendered from ``query_examples`` (the
  revision, changes, tables and client-data kinds had none, so a model never
  learned them from the prompt).

- ``investigation_v3`` / ``investigation_project_v4``: the
  version 2 text (with the references example when research is enabled),
  assembled from its parts. Version 2 took its case lines by cutting its own
  version 1 text at the first ``"\nEvidence so far:"``, so a report holding that
  line lost the hypothesis, the sources and every project fact. The stored
  calls of version 2 keep that behaviour (their records hold the SHA-256 of the
  prompt as sent; ``_v2_stored_prefix``); no newer version ever parses a text
  it built.

Notes about a recovered previous answer are appended as the last section
(and only when there are some, so a context without notes gives exactly the
prompt it always gave).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from viano_bug_analysis.investigation.evidence import citation_hints
from viano_bug_analysis.investigation.query_examples import project_query_section
from viano_bug_analysis.investigation.recovery.notes import prompt_with_context_notes
from viano_bug_analysis.jsonio import canonical_bytes

PROMPT_VERSIONS = (
    "investigation_v1",
    "investigation_project_v1",
    "investigation_v2",
    "investigation_project_v2",
    "investigation_project_v3",
    "investigation_v3",
    "investigation_project_v4",
    "investigation_project_v5",
)
CURRENT_VERSION = "investigation_v3"
CURRENT_PROJECT_VERSION = "investigation_project_v5"
PROJECT_PROMPT_VERSIONS = frozenset(
    {
        "investigation_project_v1",
        "investigation_project_v2",
        "investigation_project_v3",
        "investigation_project_v4",
        "investigation_project_v5",
    }
)
_PROJECT_VERSIONS = PROJECT_PROMPT_VERSIONS
# The version 2 text with one more project kind (references) and no other change.
_V2_FAMILY = frozenset({"investigation_v2", "investigation_project_v2", "investigation_project_v3"})
# Assembled from parts only (never by cutting a text they built).
_PARTS_FAMILY = frozenset(
    {"investigation_v3", "investigation_project_v4", "investigation_project_v5"}
)
_CASE_FACTS = "case.facts"
MAX_EVIDENCE_PAYLOAD_CHARS = 6000

_RULES = """You investigate one hypothesis about a bug report of a game server, read-only.
You see the report, the hypothesis, the evidence gathered so far (each with an E-ID) and,
when enabled, facts from the live project (P-IDs, labelled). Facts describe configured data
and source code; they are not runtime observations.

Answer with exactly one JSON object and nothing else:
{"hypothesis_id": "<the hypothesis ID>",
 "assessment": "supported" | "refuted" | "undetermined",
 "confidence": <number from 0 to 1>,
 "evidence": [{"evidence_id": "E<n>", "role": "supports" | "contradicts" | "context",
               "reference": "<JSON Pointer into that evidence, or L12 / L12-L20>"}],
 "next": <exactly one next step>}

A next step is either a conclusion:
  {"kind": "conclusion", "summary": "<why the assessment is final>"}
or one tool call:
  {"kind": "tool", "operation": "<operation>", "arguments": {...}}
Cite only E-IDs you were shown. Filters are objects:
  {"column": "<name>", "operator": "<op>", "value": <value>}"""

_SNAPSHOT_OPERATIONS = """Snapshot operations (they read the case's own attachments, by source_ref):
- source.find_text {"source_refs": [...], "text": "...", "case_sensitive": true,
  "offset": 0, "limit": 20}
- source.find_symbol {"source_refs": [...], "symbol": "...", "offset": 0, "limit": 20}
- source.read_context {"source_ref": "...", "start_line": 1, "end_line": 40}
- database.describe {"source_ref": "..."}
- database.lookup {"source_ref": "...", "filters": [...], "columns": [...],
  "offset": 0, "limit": 20}
- database.find_references {"source_ref": "...", "search_columns": [...], "value": ...,
  "offset": 0, "limit": 20}"""

_PROJECT_OPERATION = """Live project research (operation "project.query"; arguments are one query):
- {"kind": "source.search", "text": "...", "path_prefix": "src/", "offset": 0, "limit": 20}
- {"kind": "source.symbol", "symbol": "...", "offset": 0, "limit": 20}
- {"kind": "source.read", "path": "...", "start_line": 1, "end_line": 60}
- {"kind": "source.files" | "source.registration" | "source.schema", ...}
- {"kind": "database.rows", "table": "...", "columns": [...], "filters": [...],
   "offset": 0, "limit": 20}
- {"kind": "database.schema", "table": "..."} / {"kind": "database.count", ...}
Operators: eq, ne, lt, le, gt, ge, contains (a literal substring; % and _ are not wildcards),
in (a list). There is no "like" operator."""


# -- version 2 ---------------------------------------------------------------------------
# Every JSON object in these texts is a complete, valid example of its schema
# (tests/investigation/test_prompt_examples.py extracts and validates each one).

# The examples of the answer, the same in versions 2 and 3 (each a valid value:
# tests/investigation/test_prompt_examples.py).
_EXAMPLES = """Example of a tool step:
{"hypothesis_id": "H1", "assessment": "undetermined", "confidence": 0.3, "evidence": [],
 "next": {"kind": "tool", "operation": "source.find_text", "arguments": {"source_refs":
 ["src-001"], "text": "QuestCredit", "case_sensitive": true, "offset": 0, "limit": 20},
 "rationale": "Where the quest credit is given; the hit handler should call it."}}
Example of a conclusion:
{"hypothesis_id": "H1", "assessment": "supported", "confidence": 0.8, "evidence": [
 {"evidence_id": "E1", "role": "supports", "reference": "/result/rows/0/row/RequiredNpcOrGo1"},
 {"evidence_id": "E2", "role": "context", "reference": "L40-L42"}],
 "next": {"kind": "conclusion", "summary": "The quest needs 90005; the net hits 90002."}}"""

_RULES_V2 = (
    """You investigate one hypothesis about a bug report of a game server, read-only.
You see the report, the hypothesis, the evidence gathered so far (each with an E-ID) and,
when enabled, facts from the live project (P-IDs, labelled). Facts describe configured data
and source code; they are not runtime observations.

Answer with exactly one JSON object and nothing else. Its fields:
- hypothesis_id: the ID of the hypothesis you investigate;
- assessment: "supported", "refuted" or "undetermined";
- confidence: a number from 0 to 1;
- evidence: the evidence you cite, a list of objects with evidence_id (an E-ID you were
  shown), role ("supports", "contradicts" or "context") and reference;
- next: exactly one next step: one tool call (kind "tool", operation, arguments and,
  optionally, rationale: one or two plain sentences, at most 500 characters, on why this
  call and what it should show; it is shown in the case report) or the conclusion (kind
  "conclusion", summary: why the assessment is final).

How to cite: reference is a JSON Pointer into the cited evidence's answer exactly as it is
shown after "answer:" (a snapshot answer starts with /result), or L12 / L12-L20 for source
lines that answer shows. Each evidence item says what can be cited in it. A conclusion is
accepted only when every citation resolves in the stored evidence.

"""
    + _EXAMPLES
)

_SNAPSHOT_HEADING_V2 = """Snapshot operations (they read the case's own attachments,
by source_ref); each line is the operation and an example of its arguments:"""
# One entry per operation, so a version that offers only the case's operations
# shows each with the same text.
_SNAPSHOT_LINES_V2 = {
    "source.find_text": """- source.find_text {"source_refs": ["src-001"], "text": "SpellHit", \
"case_sensitive": true,
  "offset": 0, "limit": 20}""",
    "source.find_symbol": """- source.find_symbol {"source_refs": ["src-001"], "symbol": \
"npc_wolpertinger", "offset": 0,
  "limit": 20}""",
    "source.read_context": """- source.read_context {"source_ref": "src-001", "start_line": 1, \
"end_line": 40}""",
    "database.describe": """- database.describe {"source_ref": "db-001"}""",
    "database.lookup": """- database.lookup {"source_ref": "db-001", "filters": {"ID": 90001}, \
"columns": ["ID", "LogTitle"],
  "offset": 0, "limit": 20}
  (snapshot filters are one object of column: value pairs, all of which must be equal)""",
    "database.find_references": """- database.find_references {"source_ref": "db-001", \
"search_columns": ["RequiredNpcOrGo1"],
  "value": 90005, "offset": 0, "limit": 20}""",
}
_SNAPSHOT_OPERATIONS_V2 = "\n".join([_SNAPSHOT_HEADING_V2, *_SNAPSHOT_LINES_V2.values()])

_PROJECT_OPERATION_V2 = """Live project research (operation "project.query"; its arguments
are one query). Examples:
- {"kind": "source.search", "text": "QUEST_", "case_sensitive": true, "path_prefix": "src/",
   "offset": 0, "limit": 20}
- {"kind": "source.symbol", "symbol": "npc_wolpertinger", "offset": 0, "limit": 20}
- {"kind": "source.read", "path": "src/game/Quest.cpp", "start_line": 1, "end_line": 60}
- {"kind": "source.files", "text": "quest", "offset": 0, "limit": 20}
- {"kind": "source.registration", "symbol": "npc_wolpertinger", "offset": 0, "limit": 20}
- {"kind": "source.schema", "text": "quest_template", "case_sensitive": false, "offset": 0,
   "limit": 20}
- {"kind": "database.rows", "table": "quest_template", "columns": ["ID", "LogTitle"],
   "filters": [{"column": "ID", "operator": "eq", "value": 90001}], "offset": 0, "limit": 20}
- {"kind": "database.schema", "table": "quest_template"}
- {"kind": "database.count", "table": "creature_template", "filters": [{"column": "name",
   "operator": "contains", "value": "Wolpertinger"}]}
Filters of a project query are a list of objects with column, operator and value.
Operators: eq, ne, lt, le, gt, ge, contains (a literal substring; % and _ are not wildcards),
in (a list). There is no "like" operator."""

_REFERENCES_EXAMPLE = """- {"kind": "references", "entity_type": "quest", "id": 90001, "limit": 20}
  (every place the ID is used as that type: the database rows of each reference-map entry,
  exact counts, the source lines naming it as a whole word or through a named constant)
"""
# Version 3 adds the references kind after the last example of version 2.
_PROJECT_OPERATION_V3 = _PROJECT_OPERATION_V2.replace(
    "Filters of a project query", _REFERENCES_EXAMPLE + "Filters of a project query", 1
)

# -- version 3 (investigation_v3 / investigation_project_v4) ----------------------------
# The version 2 rules with evidence of the whole case citable; the operations are
# the ones the case has, each line of version 2 kept as it was.
_RULES_V3 = (
    """You investigate one hypothesis about a bug report of a game server, read-only.
You see the case brief (the report, what the case can read and, when enabled, facts of
the case build, each with a P-ID), your hypothesis and the evidence of the whole case so
far (each with an E-ID; evidence taken for another hypothesis may be cited too). Facts
describe configured data and source code; they are not runtime observations.

Answer with exactly one JSON object and nothing else. Its fields:
- hypothesis_id: the ID of the hypothesis you investigate;
- assessment: "supported", "refuted" or "undetermined";
- confidence: a number from 0 to 1;
- evidence: the evidence you cite, a list of objects with evidence_id (an E-ID listed in
  the evidence of this case), role ("supports", "contradicts" or "context") and reference;
- next: exactly one next step: one tool call (kind "tool", operation, arguments and,
  optionally, rationale: one or two plain sentences, at most 500 characters, on why this
  call and what it should show; it is shown in the case report) or the conclusion (kind
  "conclusion", summary: why the assessment is final). Offer only the operations listed
  below: they are the ones this case has.

How to cite: reference is a JSON Pointer into the cited evidence's answer (a snapshot
answer starts with /result), or L12 / L12-L20 for source lines that answer shows. Each
answer shown in full says what can be cited in it. A conclusion is accepted only when
every citation resolves in the stored evidence.

"""
    + _EXAMPLES
)
MAX_REPORT_CHARS = 4000
_CASE_FACTS_OPERATION_V3 = """Facts of the case build on demand (operation "case.facts"; its
arguments filter the facts, every filter given applies; one page in fact-ID order). Examples:
- {"ids": ["P12", "P40-P44"], "offset": 0, "limit": 20}
- {"entity": {"type": "quest", "id": 90001}, "offset": 0, "limit": 20}
- {"table": "creature_template", "fact_kind": "project_rows", "offset": 0, "limit": 20}
- {"text": "spellclick", "offset": 0, "limit": 20}"""


def build_messages(version: str, context: Mapping[str, Any]) -> list[dict[str, str]]:
    """The chat messages of one investigation call (system rules, user context)."""
    if version not in PROMPT_VERSIONS:
        raise ValueError(f"unknown prompt version {version!r}")
    if version in _PARTS_FAMILY:
        system = [_RULES_V3, *_operation_sections(version, _offered(version, context))]
        user = _user_text_v3(version, context)
    elif version in _V2_FAMILY:
        system = [_RULES_V2, _SNAPSHOT_OPERATIONS_V2]
        if version == "investigation_project_v3":
            system.append(_PROJECT_OPERATION_V3)
        elif version in _PROJECT_VERSIONS:
            system.append(_PROJECT_OPERATION_V2)
        user = _user_text_v2(version, context)
    else:
        system = [_RULES, _SNAPSHOT_OPERATIONS]
        if version in _PROJECT_VERSIONS:
            system.append(_PROJECT_OPERATION)
        user = _user_text(version, context)
    return [
        {"role": "system", "content": "\n\n".join(system)},
        {"role": "user", "content": prompt_with_context_notes(user, context)},
    ]


def prompt_text(messages: Sequence[Mapping[str, str]]) -> str:
    """All message contents, for size measurements."""
    return "\n".join(m["content"] for m in messages)


def _case_lines(version: str, context: Mapping[str, Any]) -> list[str]:
    """The part of the user text that is the same for every step of a hypothesis:
    the case, the hypothesis, the other hypotheses, the sources and the project facts."""
    hypothesis = context["hypothesis"]
    parts = [
        f"Case {context['case_id']} (revision {context['analysis_revision']})",
        f"Report title: {context['report']['title']}",
        f"Report text: {context['report']['text']}",
        f"Hypothesis {hypothesis['id']}: {hypothesis['statement']}",
    ]
    if context.get("other_hypotheses"):
        parts.append("Other hypotheses (their evidence IDs only):")
        parts += [
            f"- {h['id']}: {h['statement']} (evidence: {', '.join(h['evidence_ids']) or 'none'})"
            for h in context["other_hypotheses"]
        ]
    parts.append("Snapshot sources (source_ref, role, member):")
    parts += [f"- {s['source_ref']} {s['role']} {s['member']}" for s in context["sources"]]
    if version in _PROJECT_VERSIONS and context.get("project_context"):
        project = context["project_context"]
        parts.append(
            "Project facts (selection "
            f"{project['selection']}; left out: input inventory, "
            f"{len(project['left_out']['duplicate_results'])} repeated results):"
        )
        parts += [_json(fact) for fact in project["facts"]]
    return parts


def _tail_lines(context: Mapping[str, Any], *, with_attempt: bool) -> list[str]:
    """What changes from call to call: feedback on the previous answer, the step line."""
    parts: list[str] = []
    if context.get("feedback"):
        parts.append("Feedback on your previous answer:")
        parts += [f"- {line}" for line in context["feedback"]]
    attempt = context.get("attempt", 1) if with_attempt else 1
    retry = f", attempt {attempt}" if attempt > 1 else ""
    parts.append(f"Step {context['step']} of at most {context['max_steps']}{retry}. Answer now.")
    return parts


def _user_text(version: str, context: Mapping[str, Any]) -> str:
    parts = _case_lines(version, context)
    parts.append("Evidence so far:" if context["evidence"] else "Evidence so far: none")
    parts += [_evidence_line(item) for item in context["evidence"]]
    parts += _tail_lines(context, with_attempt=False)
    return "\n".join(parts)


def _user_text_v2(version: str, context: Mapping[str, Any]) -> str:
    """The stable part first (case, hypothesis, sources, facts), then the evidence in
    the order it was taken, then what changes from call to call."""
    return _user_text_v2_from([_v2_stored_prefix(version, context)], context)


def _user_text_v3(version: str, context: Mapping[str, Any]) -> str:
    """Stable parts first: the case brief (the same for every call of the case), then
    the hypothesis (the same for its steps), then the evidence ledger of the whole case
    in the order it was taken (append-only: each record's line, the newest answers
    under their line), then what changes per call."""
    parts = [*_brief_lines(context), *_hypothesis_lines(context)]
    parts.append(
        "Evidence of this case in the order it was taken, one line each, the newest "
        "answers under their line (any may be cited):"
    )
    shown = {item["evidence_id"]: item for item in context["evidence"]}
    ledger = context.get("ledger", ())
    for entry in ledger:
        parts.append(entry["line"])
        item = shown.get(entry["evidence_id"])
        if item is not None:
            parts.append(f"  answer: {item['view']}")
            parts.append(f"  cite in {item['evidence_id']}: {citation_hints(item['payload'])}")
    if not ledger:
        parts.append("(no evidence yet)")
    parts += _tail_lines(context, with_attempt=True)
    return "\n".join(parts)


def _brief_lines(context: Mapping[str, Any]) -> list[str]:
    parts = [f"Case {context['case_id']} (revision {context['analysis_revision']})"]
    parts += bounded_report(context["report"])
    parts.append("What this case can read:")
    sources = context["sources"]
    if sources:
        parts.append("- snapshot sources (source_ref, role, member):")
        parts += [f"  {s['source_ref']} {s['role']} {s['member']}" for s in sources]
    else:
        parts.append("- no snapshot sources (no snapshot operation)")
    brief = context.get("brief")
    if brief is not None:
        parts += access_lines(brief)
        parts.append("Project facts of the case build (P-IDs):")
        # The sections end with what they left out, counted by kind, and how to ask for it.
        parts.append(brief["facts_text"] or "(none fit)")
        if brief["left_out"] and not brief["facts_text"]:
            parts.append(
                f"Left out for room: all {len(brief['left_out'])} facts; read them with "
                "case.facts by entity, table, fact_kind, text or ids."
            )
        if brief.get("unsearched"):
            parts.append(brief["unsearched"])
    return parts


def bounded_report(report: Mapping[str, Any]) -> list[str]:
    """The report's title and text, the text cut at ``MAX_REPORT_CHARS`` with a note."""
    text = report["text"]
    parts = [f"Report title: {report['title']}"]
    if len(text) > MAX_REPORT_CHARS:
        parts.append(f"Report text (the first {MAX_REPORT_CHARS} of {len(text)} characters):")
        parts.append(text[:MAX_REPORT_CHARS] + " …(cut)")
    else:
        parts.append("Report text:")
        parts.append(text)
    return parts


def access_lines(brief: Mapping[str, Any]) -> list[str]:
    """What the project research can read: the commit, the tables read, refused, absent."""
    tables = brief["tables"]
    parts = []
    if brief.get("commit"):
        parts.append(f"- project source: the git repository at commit {brief['commit']}")
    if brief.get("allowed") is not None:
        parts.append(f"- database tables project.query may read: {_names(brief['allowed'])}")
    parts.append(f"- tables the build read: {_names(tables['read'])}")
    for code, names in tables["refused"].items():
        parts.append(f"- tables refused ({code}): {_names(names)}")
    if tables["absent"]:
        parts.append(f"- tables absent from the database: {_names(tables['absent'])}")
    return parts


def _hypothesis_lines(context: Mapping[str, Any]) -> list[str]:
    hypothesis = context["hypothesis"]
    parts = [f"Hypothesis {hypothesis['id']}: {hypothesis['statement']}"]
    if context.get("other_hypotheses"):
        parts.append("Other hypotheses of the case:")
        parts += [f"- {h['id']}: {h['statement']}" for h in context["other_hypotheses"]]
    return parts


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def id_ranges(fact_ids: Sequence[str]) -> str:
    """P3, P5-P9, P12: consecutive IDs as one range."""
    numbers = sorted(int(f[1:]) for f in fact_ids)
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"P{a}" if a == b else f"P{a}-P{b}" for a, b in runs)


def _offered(version: str, context: Mapping[str, Any]) -> Sequence[str]:
    """The operations the context names (the controller stores the case's); a context
    without them (written by hand) offers every operation of the version."""
    if "operations" in context:
        return list(context["operations"])
    every = list(_SNAPSHOT_LINES_V2)
    return [*every, "project.query"] if version in _PROJECT_VERSIONS else every


_WHOLE_WORD_EXAMPLE = """- {"kind": "source.search", "text": "90002", "case_sensitive": true,
   "whole_word": true, "offset": 0, "limit": 20}
  (whole_word: only where the text stands as a whole word, so an ID does not match inside
  a longer number; source.find_text takes whole_word too)
"""
# Version 4 adds a whole-word search of an ID after the examples of version 3.
_PROJECT_OPERATION_V4 = _PROJECT_OPERATION_V3.replace(
    "Filters of a project query", _WHOLE_WORD_EXAMPLE + "Filters of a project query", 1
)


def _operation_sections(version: str, operations: Sequence[str]) -> list[str]:
    """Only the operations the case has (the answer schema offers the same ones)."""
    snapshot = [line for op, line in _SNAPSHOT_LINES_V2.items() if op in operations]
    sections = []
    if snapshot:
        sections.append("\n".join([_SNAPSHOT_HEADING_V2, *snapshot]))
    if "project.query" in operations:
        # Version 5 shows one example of every query kind, written once (query_examples).
        v4 = version == "investigation_project_v4"
        sections.append(_PROJECT_OPERATION_V4 if v4 else project_query_section())
    if _CASE_FACTS in operations:
        sections.append(_CASE_FACTS_OPERATION_V3)
    return sections


def _user_text_v2_from(case_lines: list[str], context: Mapping[str, Any]) -> str:
    parts = list(case_lines)
    # The header is there from the first step on, so the evidence taken later
    # only ever appends to the text before it.
    parts.append("Evidence so far, in the order it was taken:")
    for item in context["evidence"]:
        parts.append(_evidence_line(item))
        parts.append(f"  cite in {item['evidence_id']}: {citation_hints(item['payload'])}")
    if not context["evidence"]:
        parts.append("(no evidence yet)")
    parts += _tail_lines(context, with_attempt=True)
    return "\n".join(parts)


def _v2_stored_prefix(version: str, context: Mapping[str, Any]) -> str:
    """The case lines as the version 2 family stored them, kept as stored history.

    Version 2 took its case lines by cutting its own version 1 text at the first
    ``"\nEvidence so far:"``. For every context whose report, hypotheses, sources
    and facts do not contain that line this is the case lines exactly; for one that
    does, the stored prompt lost everything after it, and a rebuild must give those
    bytes again (the call record holds their SHA-256). New versions never do this:
    they are assembled from their parts (``investigation_v3``,
    ``investigation_project_v4``).
    """
    text = "\n".join(_case_lines(version, context))
    cut = text.find(_V1_EVIDENCE_HEADING)
    return text if cut < 0 else text[:cut]


_V1_EVIDENCE_HEADING = "\nEvidence so far:"


def _evidence_line(item: Mapping[str, Any]) -> str:
    payload = _json(item["payload"])
    if len(payload) > MAX_EVIDENCE_PAYLOAD_CHARS:
        payload = payload[:MAX_EVIDENCE_PAYLOAD_CHARS] + " …(cut; ask a narrower query)"
    return f"{item['evidence_id']} {item['kind']} {_json(item['request'])}\n  answer: {payload}"


def _json(value: Any) -> str:
    # The stored bytes of the value (so a prompt can be rebuilt from the
    # package), exact for integers beyond 64 bits, which orjson refuses.
    return canonical_bytes(value).decode()


__all__ = [
    "CURRENT_PROJECT_VERSION",
    "CURRENT_VERSION",
    "PROJECT_PROMPT_VERSIONS",
    "PROMPT_VERSIONS",
    "access_lines",
    "bounded_report",
    "build_messages",
    "id_ranges",
    "prompt_text",
]
