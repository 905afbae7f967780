"""The case report as data (``case-report-v3``): what the renderers show, and what tools read.

Documents of versions 1 and 2 (facts as JSON excerpts; written by older
versions) still render: the renderers read every version.

``build_report`` reads the package and writes nothing: the case, the
enrichment facts, the step log, the evidence, the hypothesis outcomes, the
checkpoint log, the budget journal and the issued verdict versions. Every
citation is checked again here against the stored evidence: its reference is
resolved in the evidence payload and the value's SHA-256 compared with the
one stored at the conclusion. Only a citation whose stored hash is matched
now is ``verified``; one the controller never verified (an outcome written
before citations were checked) is ``unverified`` and one whose value no
longer matches is ``mismatch``.

Texts here are the stored ones (report text, rows, source lines, the model's
summaries): hostile input for the renderers, which escape all of it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.enrichment.fixes.render import report_section
from viano_bug_analysis.enrichment.leads import leads_left_out, leads_of, location_text
from viano_bug_analysis.errors import EvidenceError
from viano_bug_analysis.investigation.checkpoints import (
    BLOCKED,
    CONCLUDED,
    CheckpointStore,
)
from viano_bug_analysis.investigation.evidence import (
    CASE_FACT_KIND,
    CITATION_UNRESOLVED,
    CaseFacts,
    CitationResolver,
    EvidenceStore,
    resolve_lines,
    resolve_reference,
)
from viano_bug_analysis.investigation.interpretation_state import (
    InterpretationState,
    interpretation_state,
)
from viano_bug_analysis.investigation.project_context import load_index
from viano_bug_analysis.investigation.research_block import research_of
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.investigation.token_use import (
    Prices,
    token_use,
)
from viano_bug_analysis.investigation.verdict import (
    GROUPS,
    VerdictStore,
    hypothesis_entries,
    usage_of,
)
from viano_bug_analysis.report.fact_tables import fact_tables, report_entities
from viano_bug_analysis.schemas import schema_validator

REPORT_FORMAT = "viano-case-report"
REPORT_SCHEMA = "case-report-v1"
REPORT_SCHEMAS = {1: REPORT_SCHEMA, 2: "case-report-v2", 3: "case-report-v3"}
# What ``build_report`` writes; the renderers read every version (older documents too).
REPORT_VERSION = 3
# An excerpt is enough to recognise a value; the stored evidence keeps it whole.
EXCERPT_CHARS = 2000
_LINE_REF = re.compile(r"L[1-9][0-9]{0,9}(?:-L[1-9][0-9]{0,9})?")


def build_report(
    package_path: str | os.PathLike[str], prices: Prices | None = None
) -> dict[str, Any]:
    """The report of the package at ``package_path`` (valid against ``case-report-v3``);
    with ``prices`` its ``tokens`` carry the cost."""
    package = load_package(package_path)
    layout = PackageLayout(package.path)
    index = load_index(package)
    # A conclusion may cite the case build's facts by P-ID (investigation-response-v2).
    facts = (
        CaseFacts.of(package.case["project_research"]["index"], index)
        if index is not None
        else None
    )
    evidence = _Evidence(EvidenceStore(layout), facts)
    current = CheckpointStore(layout).current()
    verdicts = VerdictStore(layout).versions()
    entries = hypothesis_entries(layout, package.case["hypotheses"])
    groups: dict[str, list[str]] = {group: [] for group in GROUPS}
    log = StepLog(layout)
    hypotheses = []
    for entry in entries:
        groups[entry["group"]].append(entry["id"])
        citations = [
            evidence.citation(entry["id"], number, cited, verified=True)
            for number, cited in enumerate(entry["citations"], start=1)
        ]
        citations += [
            evidence.citation(entry["id"], number, cited, verified=False)
            for number, cited in enumerate(entry["unverified_references"], start=len(citations) + 1)
        ]
        hypotheses.append(
            {
                "id": entry["id"],
                "statement": entry["statement"],
                "status": entry["group"],
                "assessment": entry["assessment"],
                "confidence": entry["confidence"],
                "summary": entry["summary"],
                "reason": entry["reason"],
                "steps": _steps(log, entry["id"], evidence),
                "citations": citations,
            }
        )
    state = current.state if current is not None else "not started"
    blocked: dict[str, Any] | None = None
    if current is not None and current.state == BLOCKED and current.blocked is not None:
        hypothesis = current.payload.get("hypothesis")
        blocked = {
            "code": current.blocked.code,
            "resume_state": current.blocked.resume_state,
            "hypothesis": hypothesis if isinstance(hypothesis, str) else None,
        }
        research = research_of(current.blocked.code, current.payload)
        if research is not None:
            blocked["research"] = research
    report: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "format_version": REPORT_VERSION,
        "package_id": package.package_id,
        "case_id": package.case_id,
        "analysis_revision": package.analysis_revision,
        "state": {
            "state": state,
            "blocked": blocked,
            "notice": _notice(state, blocked, groups, interpretation_state(package)),
        },
        "report": {
            "title": package.case["report"]["title"],
            "text": package.case["report"]["text"],
        },
        "sources": [
            {
                "source_ref": e["source_ref"],
                "role": e["role"],
                "attachment": e["attachment"],
                "member": e["member"],
                "sha256": e["sha256"],
            }
            for e in package.case["source_context"] + package.case["database_context"]
        ],
        **_leads(index),
        "entities": report_entities((index or {}).get("facts", [])),
        "fact_tables": fact_tables((index or {}).get("facts", [])),
        "case": groups,
        "hypotheses": hypotheses,
        "verdict": None
        if not verdicts
        else {
            "version": verdicts[-1]["version"],
            "analysis_revision": verdicts[-1]["analysis_revision"],
            "issued_at": verdicts[-1]["issued_at"],
            "versions": len(verdicts),
            "current": _verdict_matches(verdicts[-1], entries),
        },
        "usage": usage_of(layout),
        "tokens": token_use(layout, prices),
    }
    if not schema_validator(REPORT_SCHEMAS[report["format_version"]]).is_valid(report):
        raise AssertionError("built report does not match its case-report schema")
    return report


def _notice(
    state: str,
    blocked: Mapping[str, Any] | None,
    groups: Mapping[str, Any],
    interpretation: InterpretationState,
) -> str | None:
    """What a reader must know before reading the rest, or ``None`` for a finished case."""
    if interpretation.report_changed:
        return (
            f"The report was edited after revision {interpretation.interpreted_revision} was "
            "interpreted: the hypotheses and the verdict below answer the earlier text. "
            "Run `vba investigate --reinvestigate` to investigate the report as it is now."
        )
    if state == "not started":
        return "The investigation has not started: no hypothesis has been investigated."
    if blocked is not None:
        where = f" on {blocked['hypothesis']}" if blocked["hypothesis"] else ""
        return (
            f"The investigation is BLOCKED{where} ({blocked['code']}): this report is "
            "incomplete. An operator resumes it with `vba resume`."
        )
    if state != CONCLUDED:
        return (
            "The investigation is still running (or was stopped before it ended): "
            "this report is incomplete."
        )
    if groups["open"]:
        return (
            "Hypotheses were added after the verdict and are not investigated yet: "
            + ", ".join(groups["open"])
            + ". Run `vba investigate` to complete the verdict."
        )
    return None


def _verdict_matches(verdict: Mapping[str, Any], entries: list[dict[str, Any]]) -> bool:
    """Whether the latest issued verdict covers exactly the hypotheses shown."""
    issued = [(h["id"], h["assessment"], h["reason"]) for h in verdict["hypotheses"]]
    return issued == [(e["id"], e["assessment"], e["reason"]) for e in entries]


def _leads(index: Mapping[str, Any] | None) -> dict[str, Any]:
    """Where to look first: the ranked leads, each resting on facts listed under facts."""
    facts = (index or {}).get("facts", [])
    fixed = report_section(facts)
    return {
        **({"already_fixed": fixed} if fixed is not None else {}),
        "leads": [
            {
                "fact_id": str(lead["fact_id"]),
                "rank": lead["rank"],
                "lead": lead["lead"],
                "where": location_text(lead["location"]),
                "why": lead["why"],
                "location": dict(lead["location"]),
                "rests_on": list(lead["rests_on"]),
                "entity": f"{lead['entity_type']} {lead['entity_id']}"
                if "entity_type" in lead
                else None,
            }
            for lead in leads_of(facts)
        ],
        "leads_left_out": leads_left_out(facts),
    }


def _steps(log: StepLog, hid: str, evidence: _Evidence) -> list[dict[str, Any]]:
    attempts: dict[tuple[int, int], dict[str, Any]] = {}
    for _h, step, attempt, event in log.events(hid):
        record = log.get(hid, step, attempt, event) or {}
        attempts.setdefault((step, attempt), {})[event] = record
    steps = []
    for (step, attempt), records in sorted(attempts.items()):
        decision = records.get("decision")
        dispatch = records.get("dispatch")
        response = decision.get("response") if decision else None
        entry: dict[str, Any] = {
            "step": step,
            "attempt": attempt,
            "status": "pending" if decision is None else decision["status"],
            "rejection": None,
            "assessment": None,
            "confidence": None,
            "reasoning": None,
            "rationale": None,
            "conclusion": False,
            "query": None,
            "result": None,
            "dispatch_rejected": None,
        }
        if decision is not None and decision["status"] == "rejected":
            # The reason code, then what the model was told about it.
            said = [decision.get("reason"), decision.get("hint")]
            said += [line for line in decision.get("feedback") or () if isinstance(line, str)]
            entry["rejection"] = excerpt(" — ".join(str(p) for p in said if p))[0]
        if isinstance(response, dict):
            nxt = response.get("next") or {}
            entry["assessment"] = response.get("assessment")
            entry["confidence"] = response.get("confidence")
            entry["reasoning"] = _reasoning(response)
            if nxt.get("kind") == "conclusion":
                entry["conclusion"] = True
            else:
                entry["query"] = {
                    "operation": str(nxt.get("operation")),
                    "arguments": excerpt(nxt.get("arguments"), compact=True)[0],
                }
                # The model's short "why this query" (optional; older answers have none).
                rationale = nxt.get("rationale")
                entry["rationale"] = rationale if isinstance(rationale, str) else None
        if dispatch is not None:
            if "rejected" in dispatch:
                entry["dispatch_rejected"] = dispatch["rejected"]
            else:
                entry["result"] = evidence.result(dispatch["evidence_id"])
        steps.append(entry)
    return steps


def _reasoning(response: Mapping[str, Any]) -> str | None:
    """The model's own words for a step: a reasoning field if the contract has one,
    else the summary of a conclusion."""
    for holder in (response, response.get("next") or {}):
        for key in ("reasoning", "reasoning_summary", "summary"):
            value = holder.get(key)
            if isinstance(value, str) and value:
                return value
    return None


class _Evidence:
    """Evidence records and payloads, each read once per report."""

    def __init__(self, store: EvidenceStore, facts: CaseFacts | None = None) -> None:
        self._store = store
        self._records = {r["evidence_id"]: r for r in store.records()}
        self._facts = facts
        if facts is not None:
            self._records.update(facts.records())
        self._resolver = CitationResolver(store, facts=facts)
        self._payloads: dict[str, Any] = {}

    def payload(self, evidence_id: str) -> Any:
        if evidence_id not in self._payloads:
            record = self._records.get(evidence_id)
            if record is None:
                raise EvidenceError(
                    "evidence_unknown", "no evidence with this ID", {"evidence_id": evidence_id}
                )
            if record["kind"] == CASE_FACT_KIND and self._facts is not None:
                self._payloads[evidence_id] = self._facts.by_id[evidence_id]
            else:
                self._payloads[evidence_id] = self._store.payload(record)
        return self._payloads[evidence_id]

    def origin(self, evidence_id: str) -> dict[str, Any]:
        record = self._records.get(evidence_id) or {}
        origin: dict[str, Any] = {"kind": record.get("kind")}
        if record.get("kind") == CASE_FACT_KIND:
            # A fact of the case build: the enrichment index it stands in.
            origin["index_path"] = record["index"].get("path")
            origin["index_sha256"] = record["index"].get("sha256")
        for key in ("capture_sha256", "capture_path", "result_sha256", "result_path", "step_key"):
            if isinstance(record.get(key), str):
                origin[key] = record[key]
        return origin

    def result(self, evidence_id: str) -> dict[str, Any]:
        text, truncated = excerpt(self.payload(evidence_id))
        return {"evidence_id": evidence_id, "excerpt": text, "truncated": truncated}

    def empty(self, evidence_id: str, reference: str) -> tuple[str, bool]:
        """``no rows matched: <the query>`` for a cited empty list."""
        record = self._records.get(evidence_id) or {}
        request = record.get("request") or {}
        if record.get("kind") != "project_query" and isinstance(request.get("requests"), list):
            first = request["requests"][0]
            request = {"operation": first.get("operation"), "arguments": first.get("arguments")}
        last = reference.rstrip("/").rsplit("/", 1)[-1]
        query, _cut = excerpt(request, compact=True)
        return excerpt(f"{_EMPTY_NOUNS.get(last, 'nothing')} matched: {query}")

    def citation(
        self, hid: str, number: int, cited: Mapping[str, Any], *, verified: bool
    ) -> dict[str, Any]:
        evidence_id, reference = cited["evidence_id"], cited["reference"]
        stored = cited.get("value_sha256") if verified else None
        found, value_hash, value = self._resolve(evidence_id, reference)
        if not found:
            verification = "unresolved"
        elif stored is None:
            verification = "unverified"
        else:
            verification = "verified" if value_hash == stored else "mismatch"
        text, truncated = excerpt(value) if found else ("", False)
        if found and value == []:
            # An empty answer is a finding only with the question it answers.
            text, truncated = self.empty(evidence_id, reference)
        provenance = cited.get("provenance") if verified else None
        return {
            "anchor": f"cite-{hid}-{number}",
            "number": number,
            "evidence_id": evidence_id,
            "role": cited["role"],
            "reference": reference,
            "verification": verification,
            "value_sha256": stored,
            "computed_sha256": value_hash,
            "excerpt": text,
            "truncated": truncated,
            "provenance": dict(provenance) if isinstance(provenance, dict) else None,
            "evidence": self.origin(evidence_id),
        }

    def _resolve(self, evidence_id: str, reference: str) -> tuple[bool, str | None, Any]:
        """(found, SHA-256 of the value as the controller hashes citations, value).

        The hash comes from the controller's own ``CitationResolver``, so a
        citation is checked here exactly as it was checked at the conclusion.
        """
        if evidence_id not in self._records:
            return False, None, None
        payload = self.payload(evidence_id)
        try:
            resolved = self._resolver.resolve(
                {"evidence_id": evidence_id, "role": "context", "reference": reference}
            )
            if _LINE_REF.fullmatch(reference):
                lines = resolve_lines(payload, reference)
                value: Any = "\n".join(item["text"] for _pointer, item in lines)
            else:
                value = resolve_reference(payload, reference)
        except EvidenceError as err:
            if err.code != CITATION_UNRESOLVED:
                raise
            return False, None, None
        return True, resolved.value_sha256, value


# What an empty list of each name says was not found.
_EMPTY_NOUNS = {
    "rows": "no rows",
    "matches": "no lines",
    "lines": "no lines",
    "files": "no files",
    "tables": "no tables",
}


def excerpt(value: Any, *, compact: bool = False) -> tuple[str, bool]:
    """A value as text for a reader (a string as itself, anything else as indented
    JSON in its stored key order, or on one line with ``compact``), cut to
    ``EXCERPT_CHARS``; and whether it was cut.

    Display only: what is hashed is always ``jsonio.canonical_bytes``.
    """
    if isinstance(value, str):
        text = value
    elif compact:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    else:
        text = json.dumps(value, indent=1, ensure_ascii=False)
    if len(text) <= EXCERPT_CHARS:
        return text, False
    return text[:EXCERPT_CHARS], True


__all__ = ["EXCERPT_CHARS", "REPORT_FORMAT", "REPORT_VERSION", "build_report", "excerpt"]
