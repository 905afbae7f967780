"""The exit codes of every command line entry point, defined once.

``vba`` and the ``python -m viano_bug_analysis.<package>`` entry points all
exit through this table, so a script can tell "fix your input" from "try
again later" from "an operator must act" without parsing messages:

====  ===========  ===========================================================
code  name         meaning
====  ===========  ===========================================================
0     OK           done; the result is on stdout
1     BUG          an unexpected failure (a bug): Python prints the traceback
2     REJECTED     the input was refused (request, spec, configuration,
                   profile, command line); the same input fails again
3     UNAVAILABLE  a service is unavailable: ProjectResearch (database or
                   git) or the LLM endpoint; the same command may succeed
                   once the service is back, and resumes where it stopped
4     BLOCKED      the investigation is blocked; an operator fixes the cause
                   and runs ``vba resume``
5     DAMAGED      the package or its stored state fails its integrity
                   checks (hash or size mismatch, torn or garbled file)
6     WRITE_FAILED the package cannot be written (read-only, disk full)
7     BUSY         another process holds the package; try again later
====  ===========  ===========================================================

Every typed error (``VbaError``) that reaches a command's top level is
mapped by its stable ``code`` (``exit_code_for``); a code that is not listed
under 3, 5, 6 or 7 is a rejected input. docs/errors.md holds the same table
and tests/cli/test_exit_codes.py checks that the two agree.
"""

from __future__ import annotations

import json
import sys
from enum import IntEnum
from typing import IO

from viano_bug_analysis.errors import VbaError


class ExitCode(IntEnum):
    OK = 0
    BUG = 1
    REJECTED = 2
    UNAVAILABLE = 3
    BLOCKED = 4
    DAMAGED = 5
    WRITE_FAILED = 6
    BUSY = 7


MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "done; the result is on stdout",
    ExitCode.BUG: "unexpected failure (a bug; Python prints a traceback)",
    ExitCode.REJECTED: "input rejected (request, spec, configuration, profile, arguments)",
    ExitCode.UNAVAILABLE: "a service is unavailable (research or LLM); run again later to resume",
    ExitCode.BLOCKED: "investigation blocked; fix the cause, then `vba resume`",
    ExitCode.DAMAGED: "package or stored state fails its integrity checks",
    ExitCode.WRITE_FAILED: "the package cannot be written (read-only, disk full)",
    ExitCode.BUSY: "another process holds the package; try again later",
}

# Every LLM error except a bad configuration or a bad message list comes from
# talking to the endpoint: the service refused, failed or answered unusably,
# and a rerun resumes from the stored steps once it works again. Listed here
# rather than imported so that `vba --version` does not load the HTTP client;
# a test checks this against investigation/llm/errors.py.
LLM_SERVICE_CODES = frozenset(
    {
        "llm_key_missing",
        "llm_unavailable",
        "llm_auth_failed",
        "llm_request_rejected",
        "llm_unexpected_status",
        "llm_tls_failed",
        "llm_invalid_reply",
        "llm_reply_too_large",
    }
)

BY_CODE: dict[str, ExitCode] = {
    "research_unavailable": ExitCode.UNAVAILABLE,
    **{code: ExitCode.UNAVAILABLE for code in LLM_SERVICE_CODES},
    "attachment_missing": ExitCode.DAMAGED,
    "attachment_mismatch": ExitCode.DAMAGED,
    "member_mismatch": ExitCode.DAMAGED,
    "case_stale": ExitCode.DAMAGED,
    "case_identity_mismatch": ExitCode.DAMAGED,
    "source_integrity_mismatch": ExitCode.DAMAGED,
    "capture_corrupt": ExitCode.DAMAGED,
    "evidence_corrupt": ExitCode.DAMAGED,
    "journal_corrupt": ExitCode.DAMAGED,
    "call_record_corrupt": ExitCode.DAMAGED,
    "store_corrupt": ExitCode.DAMAGED,
    "package_corrupt": ExitCode.DAMAGED,
    "checkpoint_corrupt": ExitCode.DAMAGED,
    "budget_corrupt": ExitCode.DAMAGED,
    "record_conflict": ExitCode.DAMAGED,
    "package_write_failed": ExitCode.WRITE_FAILED,
    "manifest_write_failed": ExitCode.WRITE_FAILED,
    "capture_write_failed": ExitCode.WRITE_FAILED,
    "call_record_write_failed": ExitCode.WRITE_FAILED,
    "package_busy": ExitCode.BUSY,
}


def exit_code_for(error: VbaError) -> ExitCode:
    """The exit code a command ends with when ``error`` reaches its top level."""
    return BY_CODE.get(error.code, ExitCode.REJECTED)


def report(error: VbaError, stream: IO[str] | None = None) -> ExitCode:
    """Writes the one JSON error line (to stderr); returns the exit code for ``error``.

    The line holds only the code, the message and the details, which are
    safe to log by contract (docs/errors.md): never the underlying exception.
    """
    out = stream if stream is not None else sys.stderr
    line = {"error": error.code, "message": error.message, "details": error.details}
    out.write(json.dumps(line, default=str) + "\n")
    out.flush()
    return exit_code_for(error)


def help_epilog() -> str:
    """The table as printed at the end of every ``--help``."""
    lines = ["exit codes:"]
    lines += [f"  {int(code)}  {MEANINGS[code]}" for code in ExitCode]
    lines.append("On exit 2, 3, 5, 6 and 7 stderr holds one JSON line {error, message, details}.")
    return "\n".join(lines)


__all__ = [
    "BY_CODE",
    "LLM_SERVICE_CODES",
    "MEANINGS",
    "ExitCode",
    "exit_code_for",
    "help_epilog",
    "report",
]
