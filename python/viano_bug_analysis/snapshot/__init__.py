"""Verified, read-only access to packaged snapshots.

This is the public face of the native core: open a ZIP attachment, read a
member only against its expected SHA-256 and size, decode it as text or parse
it as a row snapshot, and search it. Nothing here writes anywhere.
"""

from viano_bug_analysis._native import SourceText
from viano_bug_analysis.snapshot.archive import ArchiveEntry, MemberRef, SnapshotArchive
from viano_bug_analysis.snapshot.rows import RowHit, RowPage, RowTable
from viano_bug_analysis.snapshot.text_search import (
    LineHit,
    LinePage,
    LineQuery,
    SearchMode,
    is_identifier,
    read_lines,
    search_lines,
)

__all__ = [
    "ArchiveEntry",
    "LineHit",
    "LinePage",
    "LineQuery",
    "MemberRef",
    "RowHit",
    "RowPage",
    "RowTable",
    "SearchMode",
    "SnapshotArchive",
    "SourceText",
    "is_identifier",
    "read_lines",
    "search_lines",
]
