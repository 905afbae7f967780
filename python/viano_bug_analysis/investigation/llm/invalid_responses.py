"""Counting invalid LLM responses against the configured limit.

"An invalid response counts against the configured invalid-response limit
(repair attempts included)": every response that fails validation, and every
repair answer that is rejected, is one ``record_invalid()``. When the count
reaches the limit the controller stops asking and blocks the case with
``INVALID_LLM_RESPONSES``.

The counter never resets by itself; whether a valid response clears it is
the controller's policy (``reset()``). It holds no files: the controller
persists ``to_state()`` in its checkpoints and rebuilds with ``from_state``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.errors import InvalidArgumentError

MAX_LIMIT = 1000


class InvalidResponseCounter:
    """How many invalid responses (repairs included) were seen, against ``limit``."""

    __slots__ = ("_count", "_limit")

    def __init__(self, limit: int, count: int = 0) -> None:
        if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
            raise InvalidArgumentError(
                "invalid_response_limit_invalid",
                f"the invalid-response limit must be an integer from 1 to {MAX_LIMIT}",
                {"argument": "limit"},
            )
        if type(count) is not int or not 0 <= count <= limit:
            raise InvalidArgumentError(
                "invalid_response_limit_invalid",
                "the count must be an integer from 0 to the limit",
                {"argument": "count"},
            )
        self._limit = limit
        self._count = count

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def count(self) -> int:
        return self._count

    @property
    def remaining(self) -> int:
        return self._limit - self._count

    @property
    def reached(self) -> bool:
        return self._count >= self._limit

    def record_invalid(self) -> bool:
        """Counts one invalid response or rejected repair; True once the limit is reached.

        The count stops at the limit, so a caller that keeps recording after
        ignoring True still sees True and a state that round-trips.
        """
        if self._count < self._limit:
            self._count += 1
        return self.reached

    def reset(self) -> None:
        self._count = 0

    def to_state(self) -> dict[str, int]:
        """Canonical-JSON-safe state for a checkpoint payload."""
        return {"count": self._count, "limit": self._limit}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> InvalidResponseCounter:
        if not isinstance(state, Mapping) or set(state) != {"count", "limit"}:
            raise InvalidArgumentError(
                "invalid_response_limit_invalid",
                "the stored counter state needs exactly 'count' and 'limit'",
                {"argument": "state"},
            )
        return cls(state["limit"], state["count"])

    def __repr__(self) -> str:
        return f"InvalidResponseCounter(count={self._count}, limit={self._limit})"


__all__ = ["InvalidResponseCounter"]
