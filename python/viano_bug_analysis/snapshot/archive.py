"""ZIP attachments read member by member against declared hashes.

A member is never extracted to disk. Every read streams the member, checks
CRC-32, byte count and SHA-256 against what the caller declares, and stops as
soon as output passes the declared size or ``max_bytes`` (so a zip bomb costs
at most ``max_bytes``). Entries with duplicate names, absolute or ``..``
paths, symlinks and directories are listed with their ``kind`` but can never
be read as files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from viano_bug_analysis import _native
from viano_bug_analysis._native import SourceText
from viano_bug_analysis._validate import require_non_negative


@dataclass(frozen=True, slots=True)
class MemberRef:
    """A member as declared by the case: name plus expected SHA-256 and size."""

    name: str
    sha256: str
    size: int


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    name: str
    kind: str  # file, directory, symlink, duplicate, unsafe_path, bad_name
    method: int
    compressed_size: int
    size: int
    crc32: int
    encrypted: bool
    zip64: bool


class SnapshotArchive:
    """An opened ZIP attachment (central directory parsed and checked once)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._zip = _native.ZipArchive(path)

    def entries(self) -> list[ArchiveEntry]:
        return [ArchiveEntry(**entry) for entry in self._zip.entries()]  # type: ignore[arg-type]

    def verify(self, member: MemberRef, *, max_bytes: int) -> None:
        self._zip.verify(member.name, sha256=member.sha256, size=member.size, max_bytes=max_bytes)

    def read_bytes(self, member: MemberRef, *, max_bytes: int) -> bytes:
        return self._zip.read_bytes(
            member.name, sha256=member.sha256, size=member.size, max_bytes=max_bytes
        )

    def read_text(self, member: MemberRef, *, max_bytes: int) -> SourceText:
        return self._zip.read_text(
            member.name, sha256=member.sha256, size=member.size, max_bytes=max_bytes
        )

    def read_texts(
        self, members: list[MemberRef], *, max_bytes: int, threads: int = 0
    ) -> list[SourceText]:
        """Reads and decodes several members, on up to ``threads`` cores (0 = all)."""
        require_non_negative(threads=threads)
        return self._zip.read_texts(
            [(m.name, m.sha256, m.size) for m in members], max_bytes=max_bytes, threads=threads
        )
