"""The exception hierarchy of VianoBugAnalysis.

Every error carries a stable ``code`` (part of the public contract: match on
it, never on the message) and ``details``, a dict of numbers and fixed
phrases. Messages and details never contain source text, row values, search
terms, LLM output or credentials, so they are safe to log.

The native extension raises these classes too: it looks them up here by name,
so this module is the one place that owns the hierarchy.

Every class declares the codes it can carry in ``codes``. Call sites pass the
code as a string literal (so ``grep`` finds where a code comes from); the drift
test (``tests/test_errors_drift.py``) reads every such literal, the Rust
``code()`` match arms and the index of ``docs/errors.md``, and fails when the
three disagree. A code written without a literal (built from a prefix) is
declared here by hand and also listed in ``DYNAMIC_CODES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final

if TYPE_CHECKING:
    from viano_bug_analysis.jsonio import JsonFailure


class VbaError(Exception):
    """Base of every error this package raises on purpose."""

    codes: ClassVar[frozenset[str]] = frozenset()
    code: str
    details: dict[str, Any]

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.details = dict(details or {})

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


# -- the codes of the append-only logs (investigation/checkpoints.py) ----------------

# ``AppendOnlyLog`` builds its codes from the log's prefix, so no literal names them.
_LOG_SUFFIXES: Final = ("corrupt", "entry_too_large", "conflict", "write_failed", "package_missing")
BUDGET_JOURNAL_CODES: Final = frozenset(f"budget_journal_{s}" for s in _LOG_SUFFIXES)
CHECKPOINT_LOG_CODES: Final = frozenset(f"checkpoint_log_{s}" for s in _LOG_SUFFIXES)

# ``cli.read_json_input`` builds ``{kind}_invalid`` and ``{kind}_too_large``.
_INPUT_CODES: Final = frozenset(
    f"{kind}_{what}" for kind in ("request", "query") for what in ("invalid", "too_large")
)

# -- the codes of the LLM adapter (investigation/llm) ---------------------------------

# Configuration and caller errors: fix the config or the call, retrying is useless.
LLM_CONFIG_INVALID: Final = "llm_config_invalid"
LLM_KEY_MISSING: Final = "llm_key_missing"
LLM_MESSAGES_INVALID: Final = "llm_messages_invalid"
# Transport: every endpoint failed with retryable errors until the retries ran out.
LLM_UNAVAILABLE: Final = "llm_unavailable"
# The endpoint answered, but with a refusal that retrying would only repeat.
LLM_AUTH_FAILED: Final = "llm_auth_failed"
LLM_REQUEST_REJECTED: Final = "llm_request_rejected"
LLM_UNEXPECTED_STATUS: Final = "llm_unexpected_status"
LLM_TLS_FAILED: Final = "llm_tls_failed"
# The endpoint refused the response format the request asked for (what its error
# body says about response_format, whatever the status): never retried as an outage.
LLM_FORMAT_REFUSED: Final = "llm_format_refused"
# A 200 reply that cannot be used.
LLM_INVALID_REPLY: Final = "llm_invalid_reply"
LLM_REPLY_TOO_LARGE: Final = "llm_reply_too_large"

# -- the codes of response-format recovery (investigation/recovery) -------------------

RECOVERY_POLICY_INVALID: Final = "recovery_policy_invalid"
RECOVERY_POLICY_VERSION_UNKNOWN: Final = "recovery_policy_version_unknown"
RECOVERY_POLICY_FIXED: Final = "recovery_policy_fixed"
CALL_RECORD_INVALID: Final = "call_record_invalid"
CALL_RECORD_CORRUPT: Final = "call_record_corrupt"
CALL_RECORD_NOT_FOUND: Final = "call_record_not_found"
CALL_RECORD_WRITE_FAILED: Final = "call_record_write_failed"
PACKAGE_MISSING: Final = "package_missing"
RECOVERY_LIMITS_INVALID: Final = "recovery_limits_invalid"
RECOVERY_NOTES_INVALID: Final = "recovery_notes_invalid"


class JsonRejected(ValueError):
    """``case.canonical.parse_json`` refused its input; ``reason`` is a fixed phrase
    without content. Not a ``VbaError``: its callers catch it and raise their own
    code (``manifest_invalid``, ``case_invalid``, ``spec_invalid``, ``…_corrupt``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# -- the snapshot core (raised by the native extension) -------------------------------


class ArchiveError(VbaError):
    """The ZIP archive or the named member cannot be trusted or read."""

    codes = frozenset(
        {
            "zip_corrupt",
            "zip_truncated",
            "zip_header_mismatch",
            "zip_unsupported_method",
            "zip_encrypted",
            "zip_member_not_found",
            "zip_member_unsafe",
        }
    )


class IntegrityError(VbaError):
    """A member's bytes do not match its declared SHA-256, size or CRC-32."""

    codes = frozenset({"crc_mismatch", "size_mismatch", "hash_mismatch"})


class LimitError(VbaError):
    """Input or output would exceed a configured limit."""

    codes = frozenset({"byte_limit_exceeded"})


class TextDecodeError(VbaError):
    """A member is not UTF-8 text (NUL byte or invalid sequence); details hold the offset."""

    codes = frozenset({"text_nul_byte", "text_invalid_utf8"})


class RowSnapshotError(VbaError):
    """A JSON member is not a usable row snapshot."""

    codes = frozenset(
        {"rows_invalid_json", "rows_duplicate_key", "rows_not_object", "rows_bad_shape"}
    )


class InvalidArgumentError(VbaError):
    """A caller passed an argument outside the documented contract."""

    codes = frozenset({"invalid_argument", "invalid_response_limit_invalid"})


class ReadError(VbaError):
    """The operating system refused a read or an allocation (missing file,
    permissions, out of memory); ``details["kind"]`` names the OS error kind."""

    codes = frozenset({"io_error", "not_a_regular_file"})


# -- the case package ------------------------------------------------------------------


class CaseError(VbaError):
    """A case package (manifest, case.json, attachments) or a case spec is unusable."""

    codes = frozenset(
        {
            "attachment_mismatch",
            "attachment_missing",
            "attachment_name_taken",
            "attachment_not_declared",
            "case_identity_mismatch",
            "case_invalid",
            "case_missing",
            "case_not_canonical",
            "case_not_canonical_value",
            "case_stale",
            "manifest_invalid",
            "manifest_path_outside_package",
            "member_mismatch",
            "package_busy",
            "package_exists",
            "package_not_buildable",
            "package_unreadable",
            "package_write_failed",
            "spec_invalid",
        }
    )


class PackageFileError(CaseError):
    """A package file could not be written or read back safely (``durable.PackageFiles``).

    ``details["path"]`` is the path relative to the package; an OS refusal adds
    ``details["errno"]`` (the errno name, such as ``ENOSPC``), never the OS message.
    """

    codes = frozenset(
        {
            "package_corrupt",
            PACKAGE_MISSING,
            "package_path_outside",
            "package_read_failed",
            "package_write_failed",
            "record_conflict",
        }
    )


class ReportImportError(VbaError):
    """``vba case import`` cannot turn a tracker report into a case spec, or cannot
    write the spec where it was asked to.

    ``details["field"]`` is the JSON Pointer of the report field at fault
    (``""`` for the whole document; ``/3/title`` for an item of a list, with
    ``details["index"]``); ``details["reason"]`` is a fixed phrase. Never any
    part of the report's text, nor a file path.
    """

    codes = frozenset(
        {
            "import_output_exists",
            "import_output_invalid",
            "import_write_failed",
            "report_invalid",
            "report_too_large",
            "report_unreadable",
        }
    )


class TriageError(VbaError):
    """``vba triage`` cannot start or cannot use its output folder: another run
    holds it (``triage_busy``), the issue list or folder is unusable
    (``triage_input_invalid``, ``details["reason"]``), or a selection option is
    malformed (``triage_selection_invalid``, ``details["option"]``). A single
    report's failure is not raised: it is recorded in the index."""

    codes = frozenset({"triage_busy", "triage_input_invalid", "triage_selection_invalid"})


class EnrichmentError(VbaError):
    """Case enrichment could not run: a bad enrichment profile
    (``details["key"]`` names the key), or an unfinished build that does not
    match the inputs or journal it would resume."""

    codes = frozenset(
        {
            "build_pending_differs",
            "entity_id_invalid",
            "entity_type_unknown",
            "journal_corrupt",
            "journal_mismatch",
            "profile_invalid",
            "profile_missing",
            "profile_unknown",
            "profile_unreadable",
            "report_revision_missing",
            "report_revision_unresolved",
            "research_required",
        }
    )


class FactError(VbaError):
    """A fact outside the fact vocabulary (``facts/registry.py``), an enrichment index
    that does not match ``enrichment-index-v1``, or a facts query the
    ``case-facts-query-v1`` schema refuses (``details`` name the pointer, the
    property and the allowed values, never a value of the document)."""

    codes = frozenset({"facts_query_invalid"})


class UnknownFactKind(FactError):
    """``details["kind"]`` is the name when it looks like one (else null);
    ``details["allowed"]`` lists the vocabulary."""

    codes = frozenset({"unknown_fact_kind"})


# -- strict JSON (jsonio) ----------------------------------------------------------------


class JsonDecodeError(VbaError):
    """:func:`jsonio.strict_loads` refused its input.

    ``code`` is ``json_`` plus the failure code (``json_duplicate_key``, ...);
    ``details`` hold ``reason`` (the failure code) and ``offset``.
    """

    codes = frozenset(
        f"json_{reason}"
        for reason in (
            "syntax_error",
            "duplicate_key",
            "non_finite_number",
            "number_too_long",
            "too_deep",
            "invalid_string",
            "not_utf8",
            "too_large",
        )
    )
    failure: JsonFailure

    def __init__(self, failure: JsonFailure) -> None:
        super().__init__(
            f"json_{failure.code}",
            f"not strict JSON: {failure.code.replace('_', ' ')} at offset {failure.offset}",
            {"reason": failure.code, "offset": failure.offset},
        )
        self.failure = failure


class JsonEncodeError(VbaError):
    """:func:`jsonio.canonical_bytes` cannot encode a value.

    ``code`` is one of ``json_non_finite_number``, ``json_invalid_string``,
    ``json_non_string_key``, ``json_unsupported_type``, ``json_too_deep``;
    ``details["depth"]`` is the nesting depth where it was found. No part of
    the value (not even a key) is kept.
    """

    codes = frozenset(
        {
            "json_invalid_string",
            "json_non_finite_number",
            "json_non_string_key",
            "json_too_deep",
            "json_unsupported_type",
        }
    )


# -- the investigation ------------------------------------------------------------------


class InvestigationConfigError(VbaError):
    """The investigation configuration is unusable; ``details["key"]`` names the key."""

    codes = frozenset({"investigation_config_invalid"})


class EvidenceError(VbaError):
    """Evidence could not be taken over or read back (stable ``code``)."""

    codes = frozenset(
        {"case_changed", "citation_unresolved", "evidence_corrupt", "evidence_unknown"}
    )


class BudgetError(VbaError):
    """A refused budget operation or a corrupt journal (stable ``code``)."""

    codes = BUDGET_JOURNAL_CODES | {
        "budget_account_exists",
        "budget_account_terminal",
        "budget_account_unknown",
        "budget_amount_invalid",
        "budget_argument_invalid",
        "budget_insufficient",
        "budget_key_conflict",
        "budget_reservation_released",
        "budget_reservation_settled",
        "budget_reservation_unknown",
        "budget_settlement_conflict",
    }


class CheckpointError(VbaError):
    """A refused checkpoint operation or a corrupt checkpoint log (stable ``code``)."""

    codes = CHECKPOINT_LOG_CODES | {
        "checkpoint_argument_invalid",
        "checkpoint_feedback_locked",
        "checkpoint_log_empty",
        "checkpoint_no_feedback_lock",
        "checkpoint_not_blocked",
        "checkpoint_operator_required",
        "checkpoint_retry_too_early",
        "checkpoint_transition_refused",
    }


class InterpretationError(VbaError):
    """The case interpretation or the investigation cannot start on this case (stable ``code``)."""

    codes = frozenset(
        {
            "case_has_no_hypotheses",
            "interpretation_after_conclusion",
            "interpretation_without_sources",
            "report_changed_since_interpretation",
        }
    )


class ContextBudgetError(VbaError):
    """A model request would not fit the context window (investigation/token_budget.py)."""

    codes = frozenset({"context_budget_exceeded"})


class LlmError(VbaError):
    """A chat-completions call or its configuration failed (stable ``code``).

    Nothing that passed over the wire is ever kept: no prompt, no reply text,
    no HTTP error body, no header, no key and no URL.
    """

    codes = frozenset(
        {
            LLM_CONFIG_INVALID,
            LLM_KEY_MISSING,
            LLM_MESSAGES_INVALID,
            LLM_UNAVAILABLE,
            LLM_AUTH_FAILED,
            LLM_REQUEST_REJECTED,
            LLM_UNEXPECTED_STATUS,
            LLM_TLS_FAILED,
            LLM_FORMAT_REFUSED,
            LLM_INVALID_REPLY,
            LLM_REPLY_TOO_LARGE,
        }
    )


class RecoveryError(VbaError):
    """Recovery cannot go on: a bad policy, limit or note (stable ``code``)."""

    codes = frozenset({RECOVERY_LIMITS_INVALID, RECOVERY_NOTES_INVALID})


class PolicyError(RecoveryError):
    """A recovery policy that is unknown, malformed, or may not be switched."""

    codes = frozenset(
        {RECOVERY_POLICY_INVALID, RECOVERY_POLICY_VERSION_UNKNOWN, RECOVERY_POLICY_FIXED}
    )


class CallRecordError(RecoveryError):
    """An LLM call record that cannot be stored or read back."""

    codes = frozenset(
        {
            CALL_RECORD_INVALID,
            CALL_RECORD_CORRUPT,
            CALL_RECORD_NOT_FOUND,
            CALL_RECORD_WRITE_FAILED,
            PACKAGE_MISSING,
        }
    )


# -- project research ---------------------------------------------------------------------


class ResearchError(VbaError):
    """A rejected project query or configuration problem, with a stable code.

    ``ResearchError`` is a rejected query or an unusable configuration: asking
    again unchanged will fail again. Details hold fixed phrases, names of
    identifiers that passed validation, and numbers; never values, search text,
    row contents, hosts, user names, passwords or file system paths of secrets.
    """

    codes = frozenset(
        {
            "commit_invalid",
            "commit_missing",
            "config_invalid",
            "config_unreadable",
            "database_ambiguous",
            "database_error",
            "database_not_found",
            "entity_id_invalid",
            "entity_type_unknown",
            "identifier_invalid",
            "invalid_filter_value",
            "kind_unknown",
            "limit_exceeded",
            "line_out_of_range",
            "line_range_invalid",
            "operator_unknown",
            "path_invalid",
            "path_not_found",
            "path_not_readable",
            "permission_denied",
            "provider_not_configured",
            "provider_result_invalid",
            "query_timeout",
            "selection_too_large",
            "since_not_ancestor",
            "table_not_allowed",
            "table_not_found",
            "unknown_column",
            "unknown_field",
            "input_unreadable",
            "query_invalid",
            "query_too_large",
            "repository_unreadable",
        }
    )


class ResearchUnavailable(ResearchError):
    """The research service (``details["provider"]``: ``database`` or ``git``) cannot
    be reached; ``details["reason"]`` is a fixed phrase such as
    ``connection_refused``, ``timeout``, ``auth_failed`` or ``server_gone``.

    An outage, not a refusal: the controller maps it to ``BLOCKED /
    RESEARCH_UNAVAILABLE`` and the same query may succeed later."""

    codes = frozenset({"research_unavailable"})
    # The git core's outage codes (rust ``GitError::code``) become the ``reason``.
    git_reasons: ClassVar[frozenset[str]] = frozenset({"repository_unavailable", "timeout"})
    # The client data reader's (rust ``ClientFile*``/``ClientString*``), provider client_data.
    client_data_reasons: ClassVar[frozenset[str]] = frozenset(
        {"client_file_invalid", "client_file_truncated", "client_string_invalid"}
    )

    def __init__(
        self,
        provider: str,
        reason: str,
        message: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(
            "research_unavailable",
            message or f"research provider {provider!r} is unavailable ({reason})",
            {**(details or {}), "provider": provider, "reason": reason},
        )

    @property
    def provider(self) -> str:
        return str(self.details["provider"])

    @property
    def reason(self) -> str:
        return str(self.details["reason"])


class ResearchAuthFailed(ResearchUnavailable):
    """The database refused the reader's user name or password (``reason``
    ``auth_failed``): an outage to the controller like every
    ``ResearchUnavailable`` (the case blocks, nothing is lost), but its own
    code and exit code, since running again unchanged cannot help."""

    codes = frozenset({"research_auth_failed"})

    def __init__(self, provider: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(
            provider,
            "auth_failed",
            f"the {provider} refused the reader's user name or password; fix the "
            "credentials the project config names ([database] user, password_env or "
            "password_file)",
            details,
        )
        self.code = "research_auth_failed"


class CaptureError(ResearchError):
    """A capture that cannot be stored or read back (stable ``code``, safe ``details``)."""

    codes = frozenset(
        {
            "capture_conflict",
            "capture_corrupt",
            "capture_invalid",
            "capture_name_invalid",
            "capture_not_found",
            "capture_path_outside_package",
            PACKAGE_MISSING,
        }
    )


# -- the investigation tools ----------------------------------------------------------------


class ToolError(VbaError):
    """A request or batch the investigation tools refuse, with a stable code.

    Errors of the native core are wrapped into a ToolError with the core code
    kept in ``details["cause"]``; a refusal of the case package keeps its
    ``CaseError`` code as the ToolError's own.
    """

    codes = frozenset(
        {
            "adapter_failed",
            "adapter_invalid_output",
            "adapter_missing",
            "batch_too_large",
            "case_blocked",
            "context_too_large",
            "descriptor_invalid",
            "descriptor_not_schema_only",
            "duplicate_action",
            "duplicate_request_id",
            "file_too_large",
            "identity_mismatch",
            "invalid_argument",
            "invalid_filter_value",
            "limit_exceeded",
            "limits_invalid",
            "line_out_of_range",
            "line_range_invalid",
            "package_unreadable",
            "phase_not_queryable",
            "request_invalid",
            "request_too_large",
            "result_too_large",
            "revision_mismatch",
            "schema_unknown",
            "selection_too_large",
            "snapshot_duplicate_column",
            "snapshot_invalid",
            "snapshot_schema_only_has_rows",
            "snapshot_too_many_rows",
            "snapshot_undeclared_column",
            "source_integrity_mismatch",
            "source_not_text",
            "source_unreadable",
            "too_many_files",
            "unknown_column",
            "unknown_field",
            "unknown_hypothesis",
            "unknown_operation",
            "unknown_role",
            "unknown_source_ref",
            "wrong_role",
            "input_unreadable",
        }
    )


class McpError(VbaError):
    """A call ``vba mcp`` refuses itself, or an MCP audit trail that does not verify.

    The tools' own refusals keep their classes and codes (``ToolError``,
    ``ResearchError``, ``CaseError``): an MCP client sees the same code as
    the command line.
    """

    codes = frozenset(
        {
            "mcp_arguments_invalid",
            "mcp_arguments_too_large",
            "mcp_audit_corrupt",
            "mcp_sdk_missing",
            "mcp_tool_failed",
            "mcp_tool_unknown",
        }
    )


class ReportError(VbaError):
    """``vba report`` cannot put the report where it was asked to (the package is
    only read: a report file inside it is refused)."""

    codes = frozenset(
        {"report_format_unknown", "report_output_inside_package", "report_write_failed"}
    )


# Codes no string literal names (see above): the drift test cannot see them raised.
DYNAMIC_CODES: Final = BUDGET_JOURNAL_CODES | CHECKPOINT_LOG_CODES | _INPUT_CODES


def declared_codes() -> frozenset[str]:
    """Every code of every class of the hierarchy."""
    found: set[str] = set()
    pending: list[type[VbaError]] = [VbaError]
    while pending:
        cls = pending.pop()
        found |= cls.codes
        pending.extend(cls.__subclasses__())
    return frozenset(found)
