"""`ToolLimits`: adjustable operational limits of one investigation batch.

These are defaults for safe operation, not caps of the v1 formats: an
operator may raise or lower them. Every limit rejects the batch when passed
(nothing is silently dropped), except the per-line character limit, which
cuts the returned line and marks it ``text_truncated``.

``load_limits`` reads them from a JSON or TOML file (``vba query --limits
FILE``), checked against the bundled ``tool-limits-v1`` schema; every
problem is a ``ToolError`` with code ``limits_invalid``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from viano_bug_analysis.files import parse_toml, read_regular_file
from viano_bug_analysis.tools.errors import ToolError

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True, slots=True)
class ToolLimits:
    request_bytes: int = 64 * KIB
    """Size of the whole request document (compact sorted-key JSON, UTF-8)."""
    batch_requests: int = 16
    """Requests in one batch."""
    selected_files: int = 64
    """Distinct packaged members (attachment + member) one batch may read."""
    file_bytes: int = 8 * MIB
    """Declared size of one selected member."""
    selected_bytes: int = 32 * MIB
    """Declared sizes of all distinct selected members together."""
    database_rows: int = 100_000
    """Rows of one database snapshot."""
    matches_per_query: int = 100
    """Largest ``limit`` of a search, lookup or reference query."""
    context_lines: int = 200
    """Lines of one ``source.read_context``."""
    line_chars: int = 4096
    """Characters of one returned source line; longer lines are cut and marked."""
    result_bytes: int = 2 * MIB
    """Size of the serialized result document."""

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ToolLimits.{field.name} must be a positive integer")


LIMITS_SCHEMA = "tool-limits-v1"
MAX_LIMITS_FILE_BYTES = 64 * KIB


def load_limits(path: str | os.PathLike[str]) -> ToolLimits:
    """The limits of a JSON (or, for a ``.toml`` name, TOML) file; defaults for the rest.

    Raises ``ToolError("limits_invalid")`` whose details say why: ``reason``
    (``unreadable``, ``not_a_regular_file``, ``too_large``, a ``jsonio``
    failure code, ``toml_syntax``) or, for a schema violation, ``path``,
    ``rule``, ``property`` and ``allowed`` from the one schema-error mapper.
    Never any part of the file.
    """
    from viano_bug_analysis.jsonio import JsonDecodeError, strict_loads
    from viano_bug_analysis.schema_errors import check

    data = _read_limits_file(Path(path))
    document: Any
    if Path(path).suffix.lower() == ".toml":
        # The one TOML loader: line and column of a syntax error, dates as strings.
        document = parse_toml(data, schema=None, what="the limits file", refuse=_refused)
    else:
        try:
            document = strict_loads(data)
        except JsonDecodeError as err:
            reason = err.details["reason"]
            raise _invalid(
                f"the limits file is not strict JSON: {reason.replace('_', ' ')}",
                reason=reason,
                offset=err.details["offset"],
            ) from None
    if (found := check(LIMITS_SCHEMA, document)) is not None:
        raise ToolError("limits_invalid", f"limits file: {found.message}", found.details())
    return replace(ToolLimits(), **document)


def _read_limits_file(path: Path) -> bytes:
    return read_regular_file(
        path,
        max_bytes=MAX_LIMITS_FILE_BYTES,
        what="the limits file",
        refuse=_refused,
    )


def _refused(_reason: str, message: str, details: dict[str, Any]) -> ToolError:
    return ToolError("limits_invalid", message, details)


def _invalid(message: str, reason: str, **details: Any) -> ToolError:
    return ToolError("limits_invalid", message, {"reason": reason, **details})
