"""The errors of response-format recovery: its codes and classes, defined in
:mod:`viano_bug_analysis.errors` and re-exported here under recovery's names.

Each carries a stable ``code`` and ``details`` of numbers, JSON Pointers and
fixed phrases. None ever holds LLM response text: raw text lives only in the
package audit (:mod:`.audit`), never in an exception, a log or a diagnostic.
"""

from __future__ import annotations

from typing import Final

from viano_bug_analysis.errors import CALL_RECORD_CORRUPT as RECORD_CORRUPT
from viano_bug_analysis.errors import CALL_RECORD_INVALID as RECORD_INVALID
from viano_bug_analysis.errors import CALL_RECORD_NOT_FOUND as RECORD_NOT_FOUND
from viano_bug_analysis.errors import CALL_RECORD_WRITE_FAILED as RECORD_WRITE_FAILED
from viano_bug_analysis.errors import PACKAGE_MISSING, CallRecordError, PolicyError, RecoveryError
from viano_bug_analysis.errors import RECOVERY_LIMITS_INVALID as LIMITS_INVALID
from viano_bug_analysis.errors import RECOVERY_NOTES_INVALID as NOTES_INVALID
from viano_bug_analysis.errors import RECOVERY_POLICY_FIXED as POLICY_FIXED
from viano_bug_analysis.errors import RECOVERY_POLICY_INVALID as POLICY_INVALID
from viano_bug_analysis.errors import (
    RECOVERY_POLICY_VERSION_UNKNOWN as POLICY_VERSION_UNKNOWN,
)

ERROR_CODES: Final = RecoveryError.codes | PolicyError.codes | CallRecordError.codes

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
    "RECORD_WRITE_FAILED",
    "CallRecordError",
    "PolicyError",
    "RecoveryError",
]
