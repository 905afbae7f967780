"""The errors of the LLM adapter: its codes and :class:`LlmError`, defined in
:mod:`viano_bug_analysis.errors` and re-exported here under the adapter's names.

Every error carries a stable ``code`` and ``details`` made of numbers and
fixed phrases only. Nothing that passed over the wire is ever kept: no prompt,
no reply text, no HTTP error body, no header, no key and no URL (endpoints are
named by their index in the configuration). The underlying library exception
is dropped (``raise ... from None``) because its message can quote a status
line, a header or a path.
"""

from __future__ import annotations

from viano_bug_analysis.errors import LLM_AUTH_FAILED as AUTH_FAILED
from viano_bug_analysis.errors import LLM_CONFIG_INVALID as CONFIG_INVALID
from viano_bug_analysis.errors import LLM_FORMAT_REFUSED as FORMAT_REFUSED
from viano_bug_analysis.errors import LLM_INVALID_REPLY as INVALID_REPLY
from viano_bug_analysis.errors import LLM_KEY_MISSING as KEY_MISSING
from viano_bug_analysis.errors import LLM_MESSAGES_INVALID as MESSAGES_INVALID
from viano_bug_analysis.errors import LLM_REPLY_TOO_LARGE as REPLY_TOO_LARGE
from viano_bug_analysis.errors import LLM_REQUEST_REJECTED as REQUEST_REJECTED
from viano_bug_analysis.errors import LLM_TLS_FAILED as TLS_FAILED
from viano_bug_analysis.errors import LLM_UNAVAILABLE as UNAVAILABLE
from viano_bug_analysis.errors import LLM_UNEXPECTED_STATUS as UNEXPECTED_STATUS
from viano_bug_analysis.errors import LlmError

ERROR_CODES = LlmError.codes

__all__ = [
    "AUTH_FAILED",
    "CONFIG_INVALID",
    "ERROR_CODES",
    "FORMAT_REFUSED",
    "INVALID_REPLY",
    "KEY_MISSING",
    "MESSAGES_INVALID",
    "REPLY_TOO_LARGE",
    "REQUEST_REJECTED",
    "TLS_FAILED",
    "UNAVAILABLE",
    "UNEXPECTED_STATUS",
    "LlmError",
]
