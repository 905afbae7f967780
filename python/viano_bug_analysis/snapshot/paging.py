"""Paging rule shared by every answer that returns one page of a total."""

from __future__ import annotations

from collections.abc import Sized
from typing import Protocol


class _Page(Protocol):
    @property
    def total(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def hits(self) -> Sized: ...


class PageMixin:
    """``truncated`` and ``next_offset`` for a frozen page with total/offset/hits."""

    __slots__ = ()

    @property
    def truncated(self: _Page) -> bool:
        """True when results exist beyond this page."""
        return self.offset + len(self.hits) < self.total

    @property
    def next_offset(self: _Page) -> int | None:
        """Offset of the next page; stable because the answers are immutable."""
        return self.offset + len(self.hits) if self.offset + len(self.hits) < self.total else None
