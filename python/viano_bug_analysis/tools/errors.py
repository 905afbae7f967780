"""`ToolError`: the one exception the investigation tools raise for a request.

A rejected batch raises exactly one ToolError and returns nothing else. Its
``code`` is stable (see docs/investigation-tools-v1.md); ``details`` may name
the request (``request_index``, ``request_id``), the argument path and limits,
but never source text, row values, search text or file contents. Errors of
the native core (archive, integrity, decoding) are wrapped into a ToolError
with the core code kept in ``details["cause"]``.
"""

from __future__ import annotations

from typing import Any

from viano_bug_analysis.errors import ToolError, VbaError

__all__ = ["ToolError", "wrap_core_error"]


def wrap_core_error(err: VbaError, code: str, message: str, **details: Any) -> ToolError:
    """A ToolError for a core error: keeps the core code and its safe details."""
    return ToolError(code, message, {**details, "cause": err.code, **err.details})
