"""Typed row snapshots: exact lookups with JSON Pointers back to the stored row.

Equality never coerces: ``True``, ``1``, ``"1"`` and ``1.0`` are four
different values; integers are exact at any size; a missing key is not
``None``. A row's pointer (``/rows/N`` in a ``viano-database-snapshot``
document, ``/N`` in a raw array) always names the stored row, whatever the
projection.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis._native import RowSnapshot
from viano_bug_analysis.errors import InvalidArgumentError
from viano_bug_analysis.snapshot.paging import PageMixin

Scalar = None | bool | int | float | str


@dataclass(frozen=True, slots=True)
class RowHit:
    row_index: int
    pointer: str
    row: dict[str, Any]
    matched_columns: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RowPage(PageMixin):
    total: int
    hits: tuple[RowHit, ...]
    offset: int


@dataclass(frozen=True)
class RowTable:
    """A parsed snapshot member; immutable and safe to share between threads."""

    snapshot: RowSnapshot
    header: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, data: bytes) -> RowTable:
        snapshot = RowSnapshot.parse(data)
        header_json = snapshot.header_json
        # The stdlib parser keeps big integers exact; the core already validated it.
        header = json.loads(header_json) if header_json is not None else {}
        return cls(snapshot, header)

    @property
    def kind(self) -> str:
        """``document`` (a JSON object with ``rows``) or ``array`` (raw rows)."""
        return self.snapshot.kind

    @property
    def row_count(self) -> int:
        return self.snapshot.row_count

    def pointer(self, row_index: int) -> str:
        return f"/rows/{row_index}" if self.kind == "document" else f"/{row_index}"

    def observed_columns(self) -> list[str]:
        """Keys that occur in at least one stored row, in first-seen order."""
        return self.snapshot.columns()

    def lookup(
        self,
        filters: Mapping[str, Scalar],
        *,
        columns: Sequence[str] | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> RowPage:
        """Rows whose every filter column equals its value (typed, exact)."""
        if not filters:
            what = "filters must not be empty"
            raise InvalidArgumentError(
                "invalid_argument", f"invalid argument: {what}", {"what": what}
            )
        total, hits = self.snapshot.lookup(
            list(filters.items()), columns=_columns(columns), offset=offset, limit=limit
        )
        return RowPage(total, tuple(RowHit(i, self.pointer(i), row) for i, row in hits), offset)

    def find_references(
        self,
        value: Scalar,
        search_columns: Sequence[str],
        *,
        columns: Sequence[str] | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> RowPage:
        """Rows where any of ``search_columns`` equals ``value`` (no foreign-key claim)."""
        total, hits = self.snapshot.find_references(
            value, list(search_columns), columns=_columns(columns), offset=offset, limit=limit
        )
        return RowPage(
            total,
            tuple(RowHit(i, self.pointer(i), row, tuple(matched)) for i, matched, row in hits),
            offset,
        )


def _columns(columns: Sequence[str] | None) -> list[str] | None:
    return None if columns is None else list(columns)
