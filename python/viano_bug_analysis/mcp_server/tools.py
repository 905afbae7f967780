"""The tools ``vba mcp`` offers, as plain synchronous Python (no MCP SDK here).

``McpTools`` is built once per server process with everything fixed: the
package, the router of the profile (its limits and schema adapter), the
ProjectResearch service of the configuration. A tool argument can only say
what the tool's schema allows; nothing names a path of this machine, a
server, a credential or a commit.

Each call returns an ``Outcome``: the structured content (the same document
``vba query`` / ``vba research`` print, or the error line the CLI prints on
stderr: ``{"error": code, "message", "details"}``), a short text rendering,
whether it is an error, and what the audit trail recorded. Every call is
recorded (``audit.CallLog``) before its answer is returned; when the record
cannot be written the answer is withheld and the write failure is the error.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viano_bug_analysis.case.package import CasePackage, load_package
from viano_bug_analysis.enrichment.leads import leads_first
from viano_bug_analysis.enrichment.profile import EnrichmentProfile
from viano_bug_analysis.errors import (
    JsonEncodeError,
    McpError,
    ResearchError,
    ToolError,
    VbaError,
)
from viano_bug_analysis.facts.query import FACTS_QUERY_SCHEMA, MAX_LIMIT, facts_query, facts_view
from viano_bug_analysis.facts.registry import fact_kind
from viano_bug_analysis.investigation.project_context import load_index
from viano_bug_analysis.jsonio import DUPLICATE_KEY
from viano_bug_analysis.mcp_server.audit import CallLog, Recorded, request_bytes
from viano_bug_analysis.mcp_server.rendering import render_case_query, render_project_query
from viano_bug_analysis.project_research.captures import Capture
from viano_bug_analysis.project_research.service import ProjectResearch
from viano_bug_analysis.schema_errors import check
from viano_bug_analysis.schemas import load_schema
from viano_bug_analysis.tools.router import InvestigationToolRouter

# Decoded source members kept between calls (the router's cache_source_texts).
TEXT_CACHE_BYTES = 256 << 20
# A batch is at most 64 KiB (ToolLimits.request_bytes) and a query 64 KiB:
# anything far beyond is refused before it is stored.
MAX_ARGUMENT_BYTES = 1 << 20
NO_ARGUMENTS_SCHEMA = "mcp-no-arguments-v1"
FACTS_SCHEMA = "mcp-case-facts-v1"
REPORT_SCHEMA = "mcp-case-report-v1"
REFERENCES_ARGUMENTS_SCHEMA = "mcp-references-arguments-v1"
FACTS_RESULT_SCHEMA = "case-facts-result-v1"

ReportBuilder = Callable[[Path], tuple[dict[str, Any], str]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]


@dataclass(slots=True)
class Outcome:
    structured: dict[str, Any]
    text: str
    is_error: bool = False
    recorded: Recorded | None = None


def error_content(error: VbaError) -> dict[str, Any]:
    """The CLI's error line as structured content: code, message, details."""
    return {"error": error.code, "message": error.message, "details": error.details}


class McpTools:
    def __init__(
        self,
        package: Path,
        router: InvestigationToolRouter,
        *,
        research: ProjectResearch | None = None,
        report: ReportBuilder | None = None,
        text_cache_bytes: int = TEXT_CACHE_BYTES,
        profile: EnrichmentProfile | None = None,
    ) -> None:
        self.package = package
        self.router = router
        # The process lives long: sources stay decoded between calls (their
        # attachment is still verified on every call).
        router.cache_source_texts(text_cache_bytes)
        self.research = research
        self.report = report
        self.log = CallLog(str(package))
        # One call at a time: the router and the log number calls in order.
        self._lock = threading.Lock()
        self._handlers: dict[str, Callable[[Mapping[str, Any], bytes], Outcome]] = {
            "case_query": self._case_query,
            "case_facts": self._case_facts,
            "case_facts_query": self._case_facts_query,
        }
        if report is not None:
            self._handlers["case_report"] = self._case_report
        if research is not None:
            self._handlers["project_query"] = self._project_query
        if research is not None and research.config.client_data is not None:
            self._handlers["client_records"] = self._client_records
        # The reference map is the profile's; the live profile (its database and
        # column names) is resolved at the first call and kept for the session.
        self.profile = profile
        self._live_profile: EnrichmentProfile | None = None
        if research is not None and profile is not None:
            self._handlers["project_references"] = self._project_references

    # -- what the client sees --------------------------------------------------------------

    def specs(self) -> list[ToolSpec]:
        specs = [
            ToolSpec(
                "case_query",
                "Answer one investigation-request-v1 batch over the case package's declared "
                "source and database snapshots (read-only; the whole batch is checked first, "
                "all or nothing). Results carry SHA-256, line numbers and row pointers. "
                "case_facts gives the case_id, package_id, analysis_revision and source_refs.",
                load_schema("investigation-request-v1"),
                load_schema("investigation-result-v1"),
            ),
            ToolSpec(
                "case_facts",
                "The labelled enrichment facts of the case's current revision with their "
                "provenance, the case identity a case_query batch must name, and the "
                "declared source_refs it may read.",
                load_schema(NO_ARGUMENTS_SCHEMA),
                load_schema(FACTS_SCHEMA),
            ),
            ToolSpec(
                "case_facts_query",
                "Enrichment facts of the case's current revision on demand, in the compact "
                'view of the case brief: by label or range (ids: ["P12", "P40-P44"]), '
                "entity ({type, id}), table, fact_kind or text; every filter given must hold; "
                f"paged (limit at most {MAX_LIMIT}, next_offset for the next page). "
                "case_facts gives every fact with its full provenance.",
                load_schema(FACTS_QUERY_SCHEMA),
                load_schema(FACTS_RESULT_SCHEMA),
            ),
        ]
        if self.report is not None:
            specs.append(
                ToolSpec(
                    "case_report",
                    "The case report of the package as Markdown (read-only).",
                    load_schema(NO_ARGUMENTS_SCHEMA),
                    load_schema(REPORT_SCHEMA),
                )
            )
        if self.research is not None:
            specs.append(
                ToolSpec(
                    "project_query",
                    "One project-query-v1 query against the configured git commit or the "
                    "allowlisted database tables (read-only; no SQL, values travel as "
                    f"parameters). Kinds: {', '.join(project_query_kinds())}.",
                    load_schema("project-query-v1"),
                    load_schema("project-result-v2"),
                )
            )
        if "client_records" in self._handlers:
            specs.append(
                ToolSpec(
                    "client_records",
                    "What a spell, spell effect, item, area, map or faction ID is: records of the "
                    "server's own client data files (DBC/DB2) by ID, exact name or integer field, "
                    "with the world DB's override rows merged as the engine merges them; a spell "
                    "carries its effects and aura types by their engine names (read-only).",
                    load_schema("mcp-client-records-arguments-v1"),
                    load_schema("project-result-v2"),
                )
            )
        if "project_references" in self._handlers:
            specs.append(
                ToolSpec(
                    "project_references",
                    "Every place the project uses one ID as one entity type of the profile: "
                    "the database rows of each reference-map entry holding the type (exact "
                    "counts past the listed rows), the lines of the pinned commit naming the "
                    "ID as a whole word, the constants of the type's prefixes assigned it and "
                    "where they are used, and the case package's own snapshots. Every row and "
                    "line names its capture (SHA-256 and JSON Pointer). Read-only.",
                    load_schema(REFERENCES_ARGUMENTS_SCHEMA),
                    load_schema("references-v2"),
                )
            )
        return specs

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> Outcome:
        """Answers one tool call; never raises for a refused call."""
        with self._lock:
            handler = self._handlers.get(name)
            if handler is None:
                allowed = ", ".join(sorted(self._handlers))
                return _refused(
                    McpError(
                        "mcp_tool_unknown",
                        f"this server offers no such tool; allowed: {allowed}",
                        {"allowed": allowed},
                    )
                )
            args: Mapping[str, Any] = arguments if arguments is not None else {}
            try:
                data = request_bytes(args)
            except JsonEncodeError as err:
                return _refused(
                    McpError(
                        "mcp_arguments_invalid",
                        "the arguments are not a JSON document",
                        {"path": "", "reason": err.code},
                    )
                )
            if len(data) > MAX_ARGUMENT_BYTES:
                return _refused(
                    McpError(
                        "mcp_arguments_too_large",
                        "the arguments exceed the size limit",
                        {"limit": MAX_ARGUMENT_BYTES, "size": len(data)},
                    )
                )
            try:
                return handler(args, data)
            except VbaError as err:  # the record itself could not be written
                return _refused(err)
            except Exception as err:  # a bug: say only its class, never its text
                sys.stderr.write(f"vba mcp: {name} failed unexpectedly: {type(err).__name__}\n")
                return _refused(
                    McpError(
                        "mcp_tool_failed",
                        "the tool failed unexpectedly; the server log names the class",
                        {"type": type(err).__name__},
                    )
                )

    def refuse_duplicate_key(self, name: str, offset: int) -> Outcome:
        """A call whose JSON-RPC line repeats a key in one object (``wire``).

        Refused with the code the command line gives a request file with a
        repeated key, before anything runs; like arguments that are not JSON,
        it leaves no record (the arguments the SDK parsed are not the ones sent).
        """
        if name not in self._handlers:
            return self.call(name, None)  # mcp_tool_unknown, as for any other call
        details = {"path": "", "reason": DUPLICATE_KEY, "offset": offset}
        message = "the tool call is not strict JSON: duplicate key (an object repeats a key)"
        error: VbaError
        if name == "case_query":
            error = ToolError("request_invalid", message, details)
        elif name == "project_query":
            error = ResearchError("query_invalid", message, details)
        else:
            error = McpError("mcp_arguments_invalid", message, details)
        return _refused(error)

    # -- the tools ---------------------------------------------------------------------

    def _case_query(self, args: Mapping[str, Any], data: bytes) -> Outcome:
        try:
            result = self.router.query(self.package, args)
        except VbaError as err:
            return self._record_error("case_query", data, err)
        package = {
            "analysis_revision": result["analysis_revision"],
            "case_sha256": result["case_ref"]["sha256"],
        }
        recorded = self.log.record("case_query", data, package=package, result=result)
        return Outcome(result, _query_text(result, recorded), recorded=recorded)

    def _project_query(self, args: Mapping[str, Any], data: bytes) -> Outcome:
        assert self.research is not None
        try:
            capture = self.research.capture(args)
        except VbaError as err:
            return self._record_error("project_query", data, err)
        recorded = self.log.record(
            "project_query", data, package=self._package_state(), capture=capture
        )
        return Outcome(dict(capture.result), _project_text(capture, recorded), recorded=recorded)

    def _client_records(self, args: Mapping[str, Any], data: bytes) -> Outcome:
        # The project_query path with the kind filled in: the same capture and log.
        assert self.research is not None
        try:
            capture = self.research.capture({**args, "kind": "client.records"})
        except VbaError as err:
            return self._record_error("client_records", data, err)
        recorded = self.log.record(
            "client_records", data, package=self._package_state(), capture=capture
        )
        return Outcome(dict(capture.result), _project_text(capture, recorded), recorded=recorded)

    def _project_references(self, args: Mapping[str, Any], data: bytes) -> Outcome:
        from viano_bug_analysis.enrichment.reference_search import (
            Bounds,
            check_request,
            find_references,
            live_profile,
        )
        from viano_bug_analysis.tools.reference_snapshots import snapshot_references
        from viano_bug_analysis.tools.references_command import text_lines

        assert self.research is not None and self.profile is not None
        try:
            if (found := check(REFERENCES_ARGUMENTS_SCHEMA, dict(args))) is not None:
                raise McpError("mcp_arguments_invalid", found.message, found.details())
            entity_type, value = args["entity_type"], args["id"]
            shown = args.get("limit", 20)
            entity_type = check_request(self.profile, entity_type, value)
            config = self.research.config
            if self._live_profile is None:
                self._live_profile = live_profile(self.profile, config, self.research.query)
            bounds = Bounds.for_research(config.limits, shown=shown)
            document = find_references(
                self._live_profile, self.research, entity_type, value, bounds
            )
            document["snapshots"] = snapshot_references(
                self.router, self.package, self.profile, entity_type, value, shown=shown
            )
        except VbaError as err:
            return self._record_error("project_references", data, err)
        recorded = self.log.record(
            "project_references", data, package=self._package_state(), result=document
        )
        text = "\n".join(text_lines(document)) + _recorded_text(recorded)
        return Outcome(document, text, recorded=recorded)

    def _case_facts(self, args: Mapping[str, Any], data: bytes) -> Outcome:
        try:
            _no_arguments(args)
            package = load_package(self.package)
            facts = case_facts(package)
        except VbaError as err:
            return self._record_error("case_facts", data, err)
        recorded = self.log.record("case_facts", data, package=_state_of(package), result=facts)
        count = len(facts["facts"])
        text = (
            f"case {facts['case_id']} revision {facts['analysis_revision']}: "
            f"{count} labelled fact(s), {len(facts['sources'])} declared source_ref(s)"
            + _recorded_text(recorded)
        )
        return Outcome(facts, text, recorded=recorded)

    def _case_facts_query(self, args: Mapping[str, Any], data: bytes) -> Outcome:
        try:
            package = load_package(self.package)
            result = facts_query(load_index(package) or {"facts": []}, args)
        except VbaError as err:
            return self._record_error("case_facts_query", data, err)
        recorded = self.log.record(
            "case_facts_query", data, package=_state_of(package), result=result
        )
        return Outcome(result, facts_view(result) + _recorded_text(recorded), recorded=recorded)

    def _case_report(self, args: Mapping[str, Any], data: bytes) -> Outcome:
        assert self.report is not None
        try:
            _no_arguments(args)
            package = load_package(self.package)
            report, markdown = self.report(self.package)
        except VbaError as err:
            return self._record_error("case_report", data, err)
        content = {
            "format": "viano-mcp-case-report",
            "format_version": 1,
            "case_id": package.case_id,
            "analysis_revision": package.analysis_revision,
            "report": report,
            "markdown": markdown,
        }
        recorded = self.log.record("case_report", data, package=_state_of(package), result=content)
        return Outcome(content, markdown, recorded=recorded)

    # -- helpers -----------------------------------------------------------------------

    def _package_state(self) -> dict[str, Any] | None:
        try:
            return _state_of(load_package(self.package))
        except VbaError:
            return None

    def _record_error(self, tool: str, data: bytes, error: VbaError) -> Outcome:
        recorded = self.log.record(tool, data, package=self._package_state(), error=error)
        outcome = _refused(error)
        outcome.recorded = recorded
        outcome.text += _recorded_text(recorded)
        return outcome


def _refused(error: VbaError) -> Outcome:
    """The refusal as structured content (as the CLI reports it) and one text line.

    The text says each thing once: the pointer and the hint are added only
    when the message does not already say them (schema messages name the
    pointer and the allowed values themselves).
    """
    where = error.details.get("path")
    text = f"refused: {error.code}: {error.message}"
    if isinstance(where, str) and where and not _mentions(error.message, where):
        text += f" (at {where})"
    hint = error.details.get("hint")
    if isinstance(hint, str) and hint and hint not in error.message:
        text += f"; {hint}"
    return Outcome(error_content(error), text, is_error=True)


def _mentions(message: str, where: str) -> bool:
    """Whether ``message`` names the pointer ``where`` itself (not a longer one)."""
    return re.search(re.escape(where) + r"(?![^\s;,)])", message) is not None


def _no_arguments(args: Mapping[str, Any]) -> None:
    if (found := check(NO_ARGUMENTS_SCHEMA, dict(args))) is not None:
        details = found.details()
        raise McpError("mcp_arguments_invalid", "this tool takes no arguments", details)


def _state_of(package: CasePackage) -> dict[str, Any]:
    return {"analysis_revision": package.analysis_revision, "case_sha256": package.case_sha256}


def case_facts(package: CasePackage) -> dict[str, Any]:
    """The ``mcp-case-facts-v1`` document of a loaded package."""
    manifest = package.manifest
    index = load_index(package)
    # Leads first, ranked as every other listing ranks them; then the rest in index order.
    facts = [
        {**fact, "label": fact_kind(fact.get("kind")).label}
        for fact in leads_first((index or {}).get("facts", []))
    ]
    sources = [
        {
            "source_ref": entry.source_ref,
            "kind": entry.kind,
            "role": entry.role,
            "member": entry.member,
        }
        for entry in package.context_entries.values()
    ]
    return {
        "format": "viano-mcp-case-facts",
        "format_version": 1,
        "case_id": manifest["case_id"],
        "package_id": manifest["package_id"],
        "analysis_revision": manifest["analysis_revision"],
        "generation": manifest["generation"],
        "phase": manifest["phase"],
        "state": manifest["status"]["state"],
        "case_ref": {"path": manifest["case"]["path"], "sha256": package.case_sha256},
        "hypothesis_ids": sorted(package.hypothesis_ids),
        "sources": sources,
        "research_origin": (index or {}).get("research_origin"),
        "facts": facts,
    }


def project_query_kinds() -> list[str]:
    """The kinds of ``project-query-v1``, read from the schema: the one list of them."""
    kinds: list[str] = load_schema("project-query-v1")["properties"]["kind"]["enum"]
    return kinds


def _recorded_text(recorded: Recorded | None) -> str:
    if recorded is None:
        return ""
    text = f"\nrecorded as MCP call {recorded.seq}"
    if recorded.repeat_of is not None:
        text += (
            f"; identical to call {recorded.repeat_of} (same request, same package revision, "
            "same answer): nothing new"
        )
    return text


def _query_text(result: Mapping[str, Any], recorded: Recorded) -> str:
    return render_case_query(result) + _recorded_text(recorded)


def _project_text(capture: Capture, recorded: Recorded) -> str:
    return render_project_query(capture.result, capture.sha256) + _recorded_text(recorded)


__all__ = ["McpTools", "Outcome", "ToolSpec", "case_facts", "error_content"]
