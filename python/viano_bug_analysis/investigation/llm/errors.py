"""The errors of the LLM adapter.

Every error carries a stable ``code`` and ``details`` made of numbers and
fixed phrases only. Nothing that passed over the wire is ever kept: no prompt,
no reply text, no HTTP error body, no header, no key and no URL (endpoints are
named by their index in the configuration). The underlying library exception
is dropped (``raise ... from None``) because its message can quote a status
line, a header or a path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.errors import VbaError

# Configuration and caller errors: fix the config or the call, retrying is useless.
CONFIG_INVALID = "llm_config_invalid"
KEY_MISSING = "llm_key_missing"
MESSAGES_INVALID = "llm_messages_invalid"

# Transport: every endpoint failed with retryable errors until the retries ran out.
UNAVAILABLE = "llm_unavailable"

# The endpoint answered, but with a refusal that retrying would only repeat.
AUTH_FAILED = "llm_auth_failed"
REQUEST_REJECTED = "llm_request_rejected"
UNEXPECTED_STATUS = "llm_unexpected_status"
TLS_FAILED = "llm_tls_failed"

# A 200 reply that cannot be used.
INVALID_REPLY = "llm_invalid_reply"
REPLY_TOO_LARGE = "llm_reply_too_large"

ERROR_CODES = frozenset(
    {
        CONFIG_INVALID,
        KEY_MISSING,
        MESSAGES_INVALID,
        UNAVAILABLE,
        AUTH_FAILED,
        REQUEST_REJECTED,
        UNEXPECTED_STATUS,
        TLS_FAILED,
        INVALID_REPLY,
        REPLY_TOO_LARGE,
    }
)


class LlmError(VbaError):
    """A chat-completions call or its configuration failed (stable ``code``)."""

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(code, message, details)


__all__ = [
    "AUTH_FAILED",
    "CONFIG_INVALID",
    "ERROR_CODES",
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
