"""The errors of response-format recovery.

Each carries a stable ``code`` and ``details`` of numbers, JSON Pointers and
fixed phrases. None ever holds LLM response text: raw text lives only in the
package audit (:mod:`.audit`), never in an exception, a log or a diagnostic.
"""

from __future__ import annotations

from typing import Final

from viano_bug_analysis.errors import VbaError

# Policy.
POLICY_INVALID: Final = "recovery_policy_invalid"
POLICY_VERSION_UNKNOWN: Final = "recovery_policy_version_unknown"
POLICY_FIXED: Final = "recovery_policy_fixed"

# Call records.
RECORD_INVALID: Final = "call_record_invalid"
RECORD_CORRUPT: Final = "call_record_corrupt"
RECORD_NOT_FOUND: Final = "call_record_not_found"
RECORD_WRITE_FAILED: Final = "call_record_write_failed"
RECORD_PATH_OUTSIDE_PACKAGE: Final = "call_record_path_outside_package"
PACKAGE_MISSING: Final = "package_missing"

# The flow.
LIMITS_INVALID: Final = "recovery_limits_invalid"
NOTES_INVALID: Final = "recovery_notes_invalid"

ERROR_CODES: Final = frozenset(
    {
        POLICY_INVALID,
        POLICY_VERSION_UNKNOWN,
        POLICY_FIXED,
        RECORD_INVALID,
        RECORD_CORRUPT,
        RECORD_NOT_FOUND,
        RECORD_WRITE_FAILED,
        RECORD_PATH_OUTSIDE_PACKAGE,
        PACKAGE_MISSING,
        LIMITS_INVALID,
        NOTES_INVALID,
    }
)


class RecoveryError(VbaError):
    """Recovery cannot go on: a bad policy, limit or note (stable ``code``)."""


class PolicyError(RecoveryError):
    """A recovery policy that is unknown, malformed, or may not be switched."""


class CallRecordError(RecoveryError):
    """An LLM call record that cannot be stored or read back."""


__all__ = [
    "ERROR_CODES",
    "LIMITS_INVALID",
    "NOTES_INVALID",
    "PACKAGE_MISSING",
    "POLICY_FIXED",
    "POLICY_INVALID",
    "POLICY_VERSION_UNKNOWN",
    "RECORD_CORRUPT",
    "RECORD_INVALID",
    "RECORD_NOT_FOUND",
    "RECORD_PATH_OUTSIDE_PACKAGE",
    "RECORD_WRITE_FAILED",
    "CallRecordError",
    "PolicyError",
    "RecoveryError",
]
