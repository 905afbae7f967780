"""Which skipped files make a source search partial, defined once.

The git source counts ``files_unsearched`` of its own answer with this set
and the service counts coverage ``files_unsearched`` (and so ``complete``)
of a capture with it, as does the reading of a version 1 result by the
version 2 names (``result_versions``); two copies had
drifted apart before (a reason added to one would leave the other calling a
search complete that is not).

A skip reason is a coverage gap when the file may hold text that was not
searched: ``too_large`` (never read), ``not_utf8`` (not decoded),
``path_invalid`` (a path that is never read) and ``missing`` (a partial
clone does not hold the blob yet; a ``git fetch`` can bring it). A
``binary`` blob holds no text lines by definition; symlinks and submodules
are no files of this repository.
"""

from __future__ import annotations

from typing import Final

COVERAGE_GAPS: Final[frozenset[str]] = frozenset(
    {"too_large", "not_utf8", "path_invalid", "missing"}
)
"""Skip reasons that can hide a hit: a search with one of them is not complete."""

__all__ = ["COVERAGE_GAPS"]
