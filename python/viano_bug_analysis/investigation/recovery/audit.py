"""The append-only LLM call records of a case package.

Every provider call of an investigation — regular calls and repair calls —
leaves one record (``llm-call-record-v1``) in
``analysis/llm/calls/<seq>-<sha256>.json``: ``seq`` counts the calls from 1
without gaps (8 digits), ``sha256`` is the SHA-256 of exactly the stored
bytes. Those bytes are canonical JSON (:func:`canonical_json`), so the same
record always has the same name and hash, and a repair record can name its
source record by ``source_seq`` and ``source_sha256``.

Writes never overwrite: the bytes go to a temporary file, are fsynced, then
hard-linked to the final name (``os.link`` fails instead of replacing) and
the directory is fsynced. An exclusive ``flock`` on the directory's lock file
serializes writers, so two processes cannot take the same ``seq``. A crash
leaves either no record or the complete one; leftover temporary files are
ignored.

Reading is strict: a record whose bytes are not canonical, do not hash to
their name, break the schema, or whose sequence has a gap or a repeat is
``call_record_corrupt``. Records are the one place raw response text is
kept; errors from here never quote it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from viano_bug_analysis.durable import PackageFiles
from viano_bug_analysis.investigation.recovery.errors import (
    PACKAGE_MISSING,
    RECORD_CORRUPT,
    RECORD_INVALID,
    RECORD_NOT_FOUND,
    RECORD_WRITE_FAILED,
    CallRecordError,
)
from viano_bug_analysis.investigation.recovery.strict_json import JsonFailure, parse_strict
from viano_bug_analysis.schemas import fast_validator, schema_validator

RECORD_SCHEMA: Final = "llm-call-record-v1"
RECORD_FORMAT: Final = "viano-llm-call-record"
CALLS_DIR: Final = Path("analysis", "llm", "calls")
_NAME: Final = re.compile(r"(\d{8})-([0-9a-f]{64})\.json")
_LOCK_NAME: Final = ".lock"
_MAX_SEQ: Final = 99_999_999


def canonical_json(value: Any) -> bytes:
    """The one byte form that is hashed and stored: keys sorted, no whitespace, ASCII.

    Non-ASCII characters are escaped (``\\u00e4``) so that every string —
    even one with a lone surrogate, which strict JSON may carry — has exactly
    one encoding. Raises ``ValueError`` for values JSON cannot hold.
    """
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )
    return text.encode("ascii")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def text_bytes(text: str) -> bytes:
    """The UTF-8 bytes of a response text; a lone surrogate is kept, not dropped."""
    return text.encode("utf-8", "surrogatepass")


@dataclass(frozen=True, slots=True)
class StoredCallRecord:
    """One record as stored: its sequence number, the SHA-256 of its bytes, the document."""

    seq: int
    sha256: str
    document: Mapping[str, Any]


class CallRecordStore:
    """The LLM call records of one case package directory."""

    def __init__(self, package_path: str | os.PathLike[str]) -> None:
        self.package_path = Path(package_path)
        self.directory = self.package_path / CALLS_DIR

    def append(self, fields: Mapping[str, Any]) -> StoredCallRecord:
        """Stores a new record with the next ``seq``; returns it as stored.

        ``fields`` is the record without ``format``, ``format_version`` and
        ``seq``, which the store sets. The whole record must satisfy
        ``llm-call-record-v1``.
        """
        if {"format", "format_version", "seq"} & set(fields):
            raise CallRecordError(RECORD_INVALID, "format and seq are set by the store")
        directory = self._directory(create=True)
        try:
            with _locked(directory):
                seq = self._next_seq(directory)
                document = {"format": RECORD_FORMAT, "format_version": 1, "seq": seq, **fields}
                data = _encode(document)
                _check_schema(document, RECORD_INVALID)
                digest = sha256_hex(data)
                _write_new(self.package_path, f"{seq:08d}-{digest}.json", data)
        except OSError as err:
            raise CallRecordError(
                RECORD_WRITE_FAILED,
                "the call record could not be stored",
                {"reason": type(err).__name__},
            ) from None
        return StoredCallRecord(seq, digest, _decode(data, digest))

    def list(self) -> list[StoredCallRecord]:
        """Every record in ``seq`` order, each verified; the sequence must be 1..n."""
        records = [self._read(path, int(seq), digest) for seq, digest, path in self._entries()]
        for expected, record in enumerate(records, start=1):
            if record.seq != expected:
                raise CallRecordError(
                    RECORD_CORRUPT,
                    "the call records have a gap or a repeated sequence number",
                    {"seq": expected},
                )
            _check_repair_source(record, records)
        return records

    def get(self, seq: int) -> StoredCallRecord:
        """The verified record ``seq``."""
        found = [(digest, path) for s, digest, path in self._entries() if int(s) == seq]
        if not found:
            raise CallRecordError(RECORD_NOT_FOUND, "no call record with this number", {"seq": seq})
        if len(found) > 1:
            raise CallRecordError(RECORD_CORRUPT, "two call records share a number", {"seq": seq})
        digest, path = found[0]
        return self._read(path, seq, digest)

    def _entries(self) -> Iterator[tuple[str, str, Path]]:
        directory = self._directory(create=False)
        if not directory.is_dir():
            return iter(())
        matches = sorted(
            (match.group(1), match.group(2), entry)
            for entry in directory.iterdir()
            if (match := _NAME.fullmatch(entry.name))
        )
        return iter(matches)

    def _read(self, path: Path, seq: int, digest: str) -> StoredCallRecord:
        try:
            data = path.read_bytes()
        except OSError:
            raise CallRecordError(
                RECORD_CORRUPT, "a call record cannot be read", {"seq": seq}
            ) from None
        if sha256_hex(data) != digest:
            raise CallRecordError(
                RECORD_CORRUPT, "a call record does not match its SHA-256", {"seq": seq}
            )
        document = _decode(data, digest)
        if document.get("seq") != seq:
            raise CallRecordError(
                RECORD_CORRUPT, "a call record's seq differs from its name", {"seq": seq}
            )
        return StoredCallRecord(seq, digest, document)

    def _next_seq(self, directory: Path) -> int:
        # Under the lock; the file names alone decide, so a crash between
        # writing and linking costs nothing.
        numbers = [
            int(match.group(1)) for e in directory.iterdir() if (match := _NAME.fullmatch(e.name))
        ]
        seq = max(numbers, default=0) + 1
        if seq > _MAX_SEQ:
            raise CallRecordError(RECORD_INVALID, "too many call records", {"limit": _MAX_SEQ})
        return seq

    def _directory(self, *, create: bool) -> Path:
        if not self.package_path.is_dir():
            raise CallRecordError(PACKAGE_MISSING, "the case package directory does not exist")
        # Containment lives in the one durable writer: a symlinked analysis/ or
        # llm/ is package_path_outside there, for every store alike.
        files = PackageFiles(self.package_path)
        if create:
            files.make_dirs(CALLS_DIR.as_posix())
        else:
            files.is_dir(CALLS_DIR.as_posix())
        return self.directory


def _encode(document: Mapping[str, Any]) -> bytes:
    try:
        return canonical_json(document)
    except (TypeError, ValueError, RecursionError):
        raise CallRecordError(RECORD_INVALID, "the call record is not a JSON document") from None


def _decode(data: bytes, digest: str) -> dict[str, Any]:
    """Parses stored bytes back, strictly, and insists they are canonical and valid."""
    try:
        parsed = parse_strict(data.decode("ascii"))
    except UnicodeDecodeError:
        parsed = JsonFailure("syntax_error", 0)
    if isinstance(parsed, JsonFailure) or not isinstance(parsed.value, dict):
        raise CallRecordError(
            RECORD_CORRUPT, "a call record is not a JSON object", {"sha256": digest}
        )
    document = parsed.value
    if canonical_json(document) != data:
        raise CallRecordError(RECORD_CORRUPT, "a call record is not canonical", {"sha256": digest})
    _check_schema(document, RECORD_CORRUPT)
    return document


def _check_schema(document: Mapping[str, Any], code: str) -> None:
    if fast_validator(RECORD_SCHEMA).is_valid(document):
        return
    error = next(iter(schema_validator(RECORD_SCHEMA).iter_errors(document)), None)
    path = "".join(f"/{part}" for part in error.absolute_path) if error else ""
    # Only the place, never the offending value: it may be response text.
    raise CallRecordError(code, "a call record violates llm-call-record-v1", {"path": path})


def _check_repair_source(record: StoredCallRecord, records: list[StoredCallRecord]) -> None:
    """A repair record must name an earlier record by number and hash."""
    repair = record.document.get("repair")
    if not isinstance(repair, dict):
        return
    source_seq = repair["source_seq"]
    if (
        not 1 <= source_seq < record.seq
        or records[source_seq - 1].sha256 != repair["source_sha256"]
    ):
        raise CallRecordError(
            RECORD_CORRUPT, "a repair record does not name an earlier record", {"seq": record.seq}
        )


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    fd = os.open(
        directory / _LOCK_NAME,
        # Never through a symlinked lock file: that would create a file outside.
        os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
        0o644,
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _write_new(package_path: Path, name: str, data: bytes) -> None:
    if not PackageFiles(package_path).write_new(f"{CALLS_DIR.as_posix()}/{name}", data):
        raise FileExistsError(name)  # never replaces an existing record


__all__ = [
    "CALLS_DIR",
    "RECORD_FORMAT",
    "RECORD_SCHEMA",
    "CallRecordStore",
    "StoredCallRecord",
    "canonical_json",
    "sha256_hex",
    "text_bytes",
]
