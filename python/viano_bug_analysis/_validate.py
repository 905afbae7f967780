"""Argument checks shared by the public wrappers (typed errors, never OverflowError)."""

from __future__ import annotations

from viano_bug_analysis.errors import InvalidArgumentError


def require_non_negative(**values: object) -> None:
    """Each value must be an ``int`` (not ``bool``) and at least 0."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            what = f"{name} must be a non-negative integer"
            raise InvalidArgumentError(
                "invalid_argument", f"invalid argument: {what}", {"what": what}
            )
