"""The exit codes of every command line entry point, defined once.

``vba`` and the ``python -m viano_bug_analysis.<package>`` entry points all
end through this module, so a script can tell "fix your input" (2) from "try
again later" (3, 7) from "an operator must act" (4, 5, 6) without parsing
messages. ``ExitCode`` and ``MEANINGS`` below are the table; ``--help``
prints it (``help_epilog``) and docs/errors.md repeats it, checked by
tests/cli/test_exit_codes.py.

Every typed error (``VbaError``) that reaches a command's top level is
mapped by its stable ``code`` (``exit_code_for``): first ``BY_CODE``, then
the suffixes in ``BY_SUFFIX``; any other code is a rejected input (2). An
exception that is not a ``VbaError`` is a bug: it is not caught, and Python
exits 1 with its traceback.
"""

from __future__ import annotations

import json
import sys
from enum import IntEnum
from typing import IO

from viano_bug_analysis.errors import LLM_CONFIG_INVALID, LLM_MESSAGES_INVALID, LlmError, VbaError


class ExitCode(IntEnum):
    OK = 0
    BUG = 1
    REJECTED = 2
    UNAVAILABLE = 3
    BLOCKED = 4
    DAMAGED = 5
    IO_FAILED = 6
    BUSY = 7
    PROFILE_GAPS = 8
    CREDENTIALS = 9


MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "done; the result is on stdout",
    ExitCode.BUG: "unexpected failure (a bug; Python prints a traceback)",
    ExitCode.REJECTED: "input rejected (request, spec, configuration, profile, arguments)",
    ExitCode.UNAVAILABLE: "a service is unavailable (research or LLM); run again later to resume",
    ExitCode.BLOCKED: "investigation blocked; fix the cause, then `vba resume`",
    ExitCode.DAMAGED: "package or stored state fails its integrity checks",
    ExitCode.IO_FAILED: "the OS refused to write or read the package (read-only, disk full)",
    ExitCode.BUSY: "another process holds the package; try again later",
    ExitCode.PROFILE_GAPS: (
        "the database lacks tables or columns the profile uses (`vba profile check`), or "
        "`vba case build` could read nothing from the database: every database query was "
        "refused (the revision is written; its summary's first line says why)"
    ),
    ExitCode.CREDENTIALS: (
        "the database refused the reader's user name or password; fix the credentials "
        "(running again unchanged fails the same way)"
    ),
}
# Not a command's result: the command was ended from outside (128 + the signal).
INTERRUPTED = 130  # Ctrl-C (SIGINT)

# Every LLM error except a bad configuration or a bad message list comes from
# talking to the endpoint: the service refused, failed or answered unusably,
# and a rerun resumes from the stored steps once it works again. (errors.py
# holds no client code, so `vba --version` still does not load the HTTP client.)
LLM_SERVICE_CODES = LlmError.codes - {LLM_CONFIG_INVALID, LLM_MESSAGES_INVALID}

BY_CODE: dict[str, ExitCode] = {
    "research_unavailable": ExitCode.UNAVAILABLE,
    "research_auth_failed": ExitCode.CREDENTIALS,
    **{code: ExitCode.UNAVAILABLE for code in LLM_SERVICE_CODES},
    # Stored bytes no longer match what the package records for them.
    "attachment_missing": ExitCode.DAMAGED,
    "attachment_mismatch": ExitCode.DAMAGED,
    "member_mismatch": ExitCode.DAMAGED,
    "case_stale": ExitCode.DAMAGED,
    "case_identity_mismatch": ExitCode.DAMAGED,
    "source_integrity_mismatch": ExitCode.DAMAGED,
    # An append-only record exists with other content than the same inputs give.
    "record_conflict": ExitCode.DAMAGED,
    "capture_conflict": ExitCode.DAMAGED,
    "budget_key_conflict": ExitCode.DAMAGED,
    "budget_settlement_conflict": ExitCode.DAMAGED,
    # A symbolic link inside the package could lead writes or reads outside it;
    # a manifest path that leaves the package (or passes through a link) is the
    # same damage, found while loading.
    "package_path_outside": ExitCode.DAMAGED,
    "manifest_path_outside_package": ExitCode.DAMAGED,
    # Another process holds the package or wrote the same log entry first.
    "package_busy": ExitCode.BUSY,
    "triage_busy": ExitCode.BUSY,
    "checkpoint_log_conflict": ExitCode.BUSY,
    "budget_journal_conflict": ExitCode.BUSY,
}

# Every store names its corruption and write failures by these suffixes (some
# build the code from a prefix), so a new store is mapped without an entry here.
BY_SUFFIX: dict[str, ExitCode] = {
    "_corrupt": ExitCode.DAMAGED,
    "_write_failed": ExitCode.IO_FAILED,
    "_read_failed": ExitCode.IO_FAILED,
}


def exit_code_for(error: VbaError) -> ExitCode:
    """The exit code a command ends with when ``error`` reaches its top level."""
    if error.code in BY_CODE:
        return BY_CODE[error.code]
    for suffix, code in BY_SUFFIX.items():
        if error.code.endswith(suffix):
            return code
    return ExitCode.REJECTED


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


_E = ExitCode
_PACKAGE_READ = (_E.OK, _E.REJECTED, _E.DAMAGED, _E.IO_FAILED)
_RESEARCH = (_E.UNAVAILABLE, _E.CREDENTIALS)
_INVESTIGATION = (*_PACKAGE_READ, *_RESEARCH, _E.BLOCKED, _E.BUSY)
# The codes each command can end with (besides 1, a bug): one table, read by
# each subcommand's --help (``command_epilog``). A command that reads the
# project (preflight, queries) can meet an outage (3) or a refused password (9).
COMMAND_CODES: dict[str, tuple[ExitCode, ...]] = {
    "query": _PACKAGE_READ,
    "schema": (_E.OK, _E.REJECTED),
    "case import": (_E.OK, _E.REJECTED, _E.IO_FAILED),
    "case create": (_E.OK, _E.REJECTED, _E.IO_FAILED),
    "case build": (*_PACKAGE_READ, *_RESEARCH, _E.BUSY, _E.PROFILE_GAPS),
    "case verify": _PACKAGE_READ,
    "case leads": _PACKAGE_READ,
    "profile check": (_E.OK, _E.REJECTED, *_RESEARCH, _E.PROFILE_GAPS),
    "research": (_E.OK, _E.REJECTED, *_RESEARCH),
    "references": (*_PACKAGE_READ, *_RESEARCH),
    "triage": _INVESTIGATION,
    "interpret": _INVESTIGATION,
    "investigate": _INVESTIGATION,
    "llm check": (_E.OK, _E.REJECTED, _E.UNAVAILABLE),
    "status": _PACKAGE_READ,
    "report": _PACKAGE_READ,
    "resume": (*_PACKAGE_READ, _E.BUSY),
    "mcp": (*_PACKAGE_READ, *_RESEARCH),
}


def command_epilog(command: str, examples: tuple[str, ...] = ()) -> str:
    """A subcommand's --help ending: its examples, then only the exit codes it can
    end with (the whole table is ``vba --help``'s and docs/errors.md's)."""
    lines = []
    if examples:
        lines += ["examples:", *(f"  {example}" for example in examples), ""]
    lines.append("exit codes (all of them: vba --help):")
    lines += [f"  {int(code)}  {MEANINGS[code]}" for code in sorted(set(COMMAND_CODES[command]))]
    lines.append(f"  {INTERRUPTED}  interrupted (Ctrl-C); what was written stays valid")
    return "\n".join(lines)


def help_epilog() -> str:
    """The table as printed at the end of every ``--help``."""
    lines = ["exit codes:"]
    lines += [f"  {int(code)}  {MEANINGS[code]}" for code in ExitCode]
    lines.append(
        f"  {INTERRUPTED}  interrupted (Ctrl-C): one line, no traceback; run again to go on"
    )
    lines.append(
        "On exit 2, 3, 5, 6, 7 and 9 stderr holds one JSON line {error, message, details}."
    )
    return "\n".join(lines)


__all__ = [
    "BY_CODE",
    "BY_SUFFIX",
    "COMMAND_CODES",
    "INTERRUPTED",
    "LLM_SERVICE_CODES",
    "MEANINGS",
    "ExitCode",
    "command_epilog",
    "exit_code_for",
    "help_epilog",
    "report",
]
