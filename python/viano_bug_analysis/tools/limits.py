"""`ToolLimits`: adjustable operational limits of one investigation batch.

These are defaults for safe operation, not caps of the v1 formats: an
operator may raise or lower them. Every limit rejects the batch when passed
(nothing is silently dropped), except the per-line character limit, which
cuts the returned line and marks it ``text_truncated``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

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
