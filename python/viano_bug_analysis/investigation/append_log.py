"""Append-only logs inside a case package: numbered, write-once, strictly read.

The checkpoint log (``checkpoints.py``) and the budget journal (``budget.py``)
are both such a log: a directory of ``<seq>-<kind>.json`` files numbered from
1 without gaps. Also the stored time form both use.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from viano_bug_analysis.case.canonical import JsonRejected, canonical_bytes, parse_json
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import CaseError, VbaError

SEQ_DIGITS = 8
MAX_SEQ = 10**SEQ_DIGITS - 1
_ENTRY_NAME = re.compile(r"([0-9]{8})-([a-z][a-z_]{0,31})\.json")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")


def format_time(moment: datetime) -> str:
    """UTC, fixed width, so that stored times compare correctly as strings."""
    if moment.tzinfo is None:
        raise ValueError("a timezone-aware datetime is required")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def is_time(value: object) -> bool:
    return isinstance(value, str) and _TIME.fullmatch(value) is not None


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One verified entry: its number, kind and parsed document."""

    seq: int
    kind: str
    document: dict[str, Any]


class AppendOnlyLog:
    """A directory of numbered, write-once JSON files inside a package.

    Writing: the canonical JSON bytes go to a hidden temporary file in the same
    directory, are fsynced, then hard-linked to ``<seq>-<kind>.json``
    (``os.link`` never replaces an existing file), the temporary name is
    removed and the directory fsynced. A crash leaves either no entry or the
    complete one, plus possibly a hidden temporary file, which readers skip.

    Reading is strict: every visible file must be named ``<seq>-<kind>.json``
    with a known kind, hold canonical JSON whose ``seq`` and ``kind`` match
    the name, and the numbers must run 1, 2, ... without gap or repeat.
    Anything else is corruption (``<prefix>_corrupt``), never skipped: a torn
    or foreign file must not be replayed as if it were valid.
    """

    def __init__(
        self,
        package: PackageLayout | str | os.PathLike[str],
        relative_dir: PurePosixPath,
        kinds: frozenset[str],
        *,
        error: type[VbaError],
        prefix: str,
        max_entry_bytes: int = 1024 * 1024,
    ) -> None:
        self.layout = PackageLayout.of(package)
        self.package_path = self.layout.root
        self.relative_dir = relative_dir
        self.directory = self.layout.path(relative_dir)
        self.kinds = kinds
        self._error = error
        self._prefix = prefix
        self._max_entry_bytes = max_entry_bytes

    def corrupt(self, reason: str, **details: Any) -> VbaError:
        return self._error(
            f"{self._prefix}_corrupt",
            f"the {self._prefix.replace('_', ' ')} is corrupt: {reason}",
            {"reason": reason, **details},
        )

    def read(self) -> list[LogEntry]:
        """Every entry in order, verified. A missing directory is an empty log."""
        directory = self._checked_directory(create=False)
        if directory is None:
            return []
        found: dict[int, str] = {}
        with os.scandir(directory) as listing:
            names = [entry.name for entry in listing]
        for name in names:
            if name.startswith("."):
                continue  # a temporary file left by an interrupted write
            match = _ENTRY_NAME.fullmatch(name)
            if match is None or match.group(2) not in self.kinds:
                raise self.corrupt("unexpected file in the log directory")
            seq = int(match.group(1))
            if seq in found:
                raise self.corrupt("two entries share a sequence number", seq=seq)
            found[seq] = match.group(2)
        if sorted(found) != list(range(1, len(found) + 1)):
            raise self.corrupt("the sequence numbers have a gap")
        return [self._read_entry(directory, seq, found[seq]) for seq in sorted(found)]

    def _read_entry(self, directory: Path, seq: int, kind: str) -> LogEntry:
        name = f"{seq:0{SEQ_DIGITS}d}-{kind}.json"
        try:
            fd = os.open(directory / name, _OPEN_FLAGS)
        except OSError as err:
            raise self.corrupt(
                "an entry cannot be opened", seq=seq, kind=type(err).__name__
            ) from None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise self.corrupt("an entry is not a regular file", seq=seq)
            data = handle.read(self._max_entry_bytes + 1)
        if len(data) > self._max_entry_bytes:
            raise self.corrupt("an entry is larger than the limit", seq=seq)
        try:
            document = parse_json(data)
            canonical = canonical_bytes(document)
        except (JsonRejected, CaseError):
            raise self.corrupt("an entry is not canonical JSON", seq=seq) from None
        if canonical != data:
            raise self.corrupt("an entry is not canonical JSON", seq=seq)
        if not isinstance(document, dict):
            raise self.corrupt("an entry is not a JSON object", seq=seq)
        if document.get("seq") != seq or document.get("kind") != kind:
            raise self.corrupt("an entry's seq or kind differs from its name", seq=seq)
        return LogEntry(seq, kind, document)

    def append(self, seq: int, kind: str, document: Mapping[str, Any]) -> None:
        """Writes entry ``seq`` once. ``document`` must carry the same seq and kind."""
        if kind not in self.kinds or not 1 <= seq <= MAX_SEQ:
            raise ValueError("unknown kind or sequence number out of range")
        if document.get("seq") != seq or document.get("kind") != kind:
            raise ValueError("the document's seq and kind must match the entry")
        data = canonical_bytes(dict(document))
        if len(data) > self._max_entry_bytes:
            raise self._error(
                f"{self._prefix}_entry_too_large",
                "the entry is larger than the limit",
                {"limit": self._max_entry_bytes},
            )
        try:
            self._write_once(seq, kind, data)
        except FileExistsError:
            # Another writer (a second store object or process) got there first.
            raise self._error(
                f"{self._prefix}_conflict",
                "an entry with this sequence number was written by someone else",
                {"seq": seq},
            ) from None
        except OSError as err:
            raise self._error(
                f"{self._prefix}_write_failed",
                "the entry could not be written",
                {"seq": seq, "kind": type(err).__name__},
            ) from None

    def _write_once(self, seq: int, kind: str, data: bytes) -> None:
        # The package's one durable writer: contained (no symlink is followed),
        # and a refusal is package_write_failed naming the entry.
        self._checked_directory(create=True)
        rel = self.relative_dir / f"{seq:0{SEQ_DIGITS}d}-{kind}.json"
        if not self.layout.files.write_new(rel, data):
            raise FileExistsError(rel.as_posix())

    def _checked_directory(self, *, create: bool) -> Path | None:
        if not self.layout.is_package_dir():
            raise self._error(
                f"{self._prefix}_package_missing", "the case package directory does not exist"
            )
        # Containment lives in PackageFiles (a symlinked analysis/ is
        # package_path_outside); a file where the directory belongs is corruption.
        files = self.layout.files
        if create:
            files.make_dirs(self.relative_dir)
        elif not files.is_dir(self.relative_dir):
            return None
        return self.directory


__all__ = [
    "MAX_SEQ",
    "SEQ_DIGITS",
    "AppendOnlyLog",
    "LogEntry",
    "format_time",
    "is_time",
    "parse_time",
    "utc_now",
]
