"""The append-only LLM call records of a case package.

Every provider call of an investigation — regular calls and repair calls —
leaves one record (``llm-call-record-v1``) in
``analysis/llm/calls/<seq>-<sha256>.json``: ``seq`` counts the calls from 1
without gaps (8 digits), ``sha256`` is the SHA-256 of exactly the stored
bytes. Those bytes are the package's canonical JSON
(:func:`viano_bug_analysis.jsonio.canonical_bytes`), so the same record
always has the same name and hash, and a repair record can name its source
record by ``source_seq`` and ``source_sha256``.

Records are keyed by their content: appending a record whose fields equal
those of a stored record returns the stored one and writes nothing. A
process killed after storing a record but before acting on it therefore
finds, when it reruns the same decision, the record it already wrote — the
same reply gives the same record, never a second one. Two distinct calls are
told apart by ``call_key`` (see :class:`~.flow.RecoveryContext`).

Writes never overwrite: the bytes go to a temporary file, are fsynced, then
hard-linked to the final name (``os.link`` fails instead of replacing) and
the directory is fsynced. An exclusive ``flock`` on the directory's lock file
serializes writers, so two processes cannot take the same ``seq``. A crash
leaves either no record or the complete one; leftover temporary files are
ignored.

Reading is strict: a record whose bytes are not canonical, do not hash to
their name, break the schema, or whose sequence has a gap or a repeat, and
any other file in the directory (except the lock and temporary leftovers)
is ``call_record_corrupt``, with ``details["path"]`` naming the file
relative to the package. :meth:`CallRecordStore.verify` checks all of it;
opening a store with records and every :meth:`~CallRecordStore.append` run
it, so a damaged audit stops an investigation before its next paid call.
Records written before the canonical encoding became UTF-8 (non-ASCII
escaped as ``\\u00e4``) are still read. Records are the one place raw
response text is kept; errors from here never quote it.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.investigation.recovery.errors import (
    PACKAGE_MISSING,
    RECORD_CORRUPT,
    RECORD_INVALID,
    RECORD_NOT_FOUND,
    RECORD_WRITE_FAILED,
    CallRecordError,
)
from viano_bug_analysis.jsonio import (
    MAX_DEPTH,
    JsonEncodeError,
    JsonFailure,
    canonical_bytes,
    sha256_hex,
    strict_parse,
)
from viano_bug_analysis.schema_errors import check

RECORD_SCHEMA: Final = "llm-call-record-v1"
RECORD_FORMAT: Final = "viano-llm-call-record"
CALLS_DIR: Final = PackageLayout.LLM_CALLS
_NAME: Final = re.compile(r"(\d{8})-([0-9a-f]{64})\.json")
_LOCK_NAME: Final = ".lock"
_MAX_SEQ: Final = 99_999_999
# A record nests a response (at most MAX_DEPTH levels, as parsed) a few levels
# down (outcome.rejected_repair.patch.replacement is the deepest), so a record
# of any parsed response stays readable.
_RECORD_DEPTH: Final = MAX_DEPTH + 8


def canonical_json(value: Any) -> bytes:
    """The byte form that is hashed and stored: :func:`~viano_bug_analysis.jsonio.canonical_bytes`.

    Raises :class:`~viano_bug_analysis.jsonio.JsonEncodeError` for values
    JSON cannot hold (``NaN``, lone surrogates, other types).
    """
    return canonical_bytes(value)


def _legacy_json(value: Any) -> bytes:
    """The byte form of records written before: the same, with non-ASCII escaped."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")


def text_bytes(text: str) -> bytes:
    """The UTF-8 bytes of a response text that are hashed and measured.

    A lone surrogate (which no provider reply can carry, but a direct caller
    may pass) is encoded as is rather than dropped, so two different texts
    never share a hash.
    """
    return text.encode("utf-8", "surrogatepass")


def storable_text(text: str) -> bool:
    """Whether a text can be kept in a record (it is valid Unicode: no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class StoredCallRecord:
    """One record as stored: its sequence number, the SHA-256 of its bytes, the document."""

    seq: int
    sha256: str
    document: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class _Verified:
    """What a strict read established about one record file."""

    size: int
    legacy: bool  # written in the earlier ASCII-escaped encoding
    source: tuple[int, str] | None  # a repair record's source_seq and source_sha256


@dataclass(frozen=True, slots=True)
class _Entry:
    seq: int
    digest: str
    name: str
    document: dict[str, Any] | None


def _source_of(document: Mapping[str, Any]) -> tuple[int, str] | None:
    repair = document.get("repair")
    if not isinstance(repair, dict):
        return None
    return int(repair["source_seq"]), str(repair["source_sha256"])


class CallRecordStore:
    """The LLM call records of one case package directory.

    Opening a store whose records directory exists verifies it
    (:meth:`verify`), so a torn or garbled record is reported before the
    caller pays for another model call.
    """

    def __init__(self, package: PackageLayout | str | os.PathLike[str]) -> None:
        self.layout = PackageLayout.of(package)
        self.package_path = self.layout.root
        self.directory = self.layout.path(CALLS_DIR)
        # What the strict read found out about each record, by file name. A
        # name holds the SHA-256 of the bytes and every read re-hashes them,
        # so a name seen before stands for exactly the bytes verified then:
        # the pure-Python strict parse and the schema check run once per
        # record and process, not on every append.
        self._known: dict[str, _Verified] = {}
        if self.directory.is_dir():
            self.verify()

    def verify(self) -> None:
        """Reads and checks every record and the directory; raises ``call_record_corrupt``."""
        self._scan(documents=False)

    def append(self, fields: Mapping[str, Any]) -> StoredCallRecord:
        """Stores a record with the next ``seq``, or finds the one already stored.

        ``fields`` is the record without ``format``, ``format_version`` and
        ``seq``, which the store sets. The whole record must satisfy
        ``llm-call-record-v1``. When a stored record has exactly these
        fields, that record is returned and nothing is written (a rerun of
        the same decision). The existing records are verified first: a
        damaged audit is never appended to.
        """
        if {"format", "format_version", "seq"} & set(fields):
            raise CallRecordError(RECORD_INVALID, "format and seq are set by the store")
        # Checked before the lock is taken, so that a bad record costs no I/O.
        probe = {"format": RECORD_FORMAT, "format_version": _version(fields), "seq": 1, **fields}
        _encode(probe)
        _check_schema(probe, RECORD_INVALID)
        directory = self._directory(create=True)
        try:
            with _locked(directory):
                scanned = self._scan(documents=False)
                found = self._find(fields, scanned)
                if found is not None:
                    return found
                seq = self._next_seq(scanned)
                document = {
                    "format": RECORD_FORMAT,
                    "format_version": _version(fields),
                    "seq": seq,
                    **fields,
                }
                data = _encode(document)
                digest = sha256_hex(data)
                _write_new(self.layout, f"{seq:08d}-{digest}.json", data)
        except OSError as err:
            raise CallRecordError(
                RECORD_WRITE_FAILED,
                "the call record could not be stored",
                {"reason": type(err).__name__},
            ) from None
        name = f"{seq:08d}-{digest}.json"
        stored = _decode(data, digest, self._relative(directory / name))
        self._known[name] = _Verified(len(data), False, _source_of(stored))
        return StoredCallRecord(seq, digest, stored)

    def list(self) -> list[StoredCallRecord]:
        """Every record in ``seq`` order, each verified; the sequence must be 1..n."""
        return [
            StoredCallRecord(entry.seq, entry.digest, entry.document)
            for entry in self._scan(documents=True)
            if entry.document is not None
        ]

    def get(self, seq: int) -> StoredCallRecord:
        """The verified record ``seq``."""
        found = [(digest, path) for s, digest, path in self._entries() if int(s) == seq]
        if not found:
            raise CallRecordError(RECORD_NOT_FOUND, "no call record with this number", {"seq": seq})
        if len(found) > 1:
            raise CallRecordError(RECORD_CORRUPT, "two call records share a number", {"seq": seq})
        digest, path = found[0]
        document = self._read(path, seq, digest, document=True)
        assert document is not None
        return StoredCallRecord(seq, digest, document)

    def _scan(self, *, documents: bool) -> Sequence[_Entry]:
        """Every record checked (bytes, hash, and once per record the strict
        parse, canonical form and schema), then the numbering and repair sources."""
        entries: builtins.list[_Entry] = []
        for seq_text, digest, path in self._entries():
            seq = int(seq_text)
            document = self._read(path, seq, digest, document=documents)
            entries.append(_Entry(seq, digest, path.name, document))
        directory = self._relative(self.directory)
        for expected, entry in enumerate(entries, start=1):
            if entry.seq != expected:
                raise CallRecordError(
                    RECORD_CORRUPT,
                    "the call records have a gap or a repeated sequence number",
                    {"seq": expected, "path": directory},
                )
            source = self._known[entry.name].source
            if source is not None and (
                not 1 <= source[0] < entry.seq or entries[source[0] - 1].digest != source[1]
            ):
                raise CallRecordError(
                    RECORD_CORRUPT,
                    "a repair record does not name an earlier record",
                    {"seq": entry.seq, "path": f"{directory}/{entry.name}"},
                )
        return entries

    def _find(
        self, fields: Mapping[str, Any], scanned: Sequence[_Entry]
    ) -> StoredCallRecord | None:
        """The stored record with exactly these fields, if any.

        Compared by hash: the record these fields would make under each
        stored number is encoded and hashed against that record's name, so
        no stored document has to be read or parsed again.
        """
        for entry in scanned:
            known = self._known[entry.name]
            document = {
                "format": RECORD_FORMAT,
                "format_version": _version(fields),
                "seq": entry.seq,
                **fields,
            }
            encodings = [_encode(document)]
            if known.legacy:
                encodings.append(_legacy_json(document))
            for data in encodings:
                if len(data) == known.size and sha256_hex(data) == entry.digest:
                    return StoredCallRecord(entry.seq, entry.digest, json.loads(data))
        return None

    def _entries(self) -> Iterator[tuple[str, str, Path]]:
        directory = self._directory(create=False)
        if not directory.is_dir():
            return iter(())
        matches = []
        for entry in directory.iterdir():
            match = _NAME.fullmatch(entry.name)
            if match is not None and not entry.is_symlink() and entry.is_file():
                matches.append((match.group(1), match.group(2), entry))
            elif not _is_own_leftover(entry.name):
                # A record with a damaged name, or something else altogether:
                # either way the audit is no longer what the store wrote.
                raise CallRecordError(
                    RECORD_CORRUPT,
                    "the call records directory holds a file that is not a call record",
                    {"path": self._relative(entry)},
                )
        return iter(sorted(matches))

    def _read(self, path: Path, seq: int, digest: str, *, document: bool) -> dict[str, Any] | None:
        """Checks one record; returns its document when asked (or when it was parsed anyway)."""
        relative = self._relative(path)
        where = {"seq": seq, "path": relative}
        try:
            data = path.read_bytes()
        except OSError:
            raise CallRecordError(RECORD_CORRUPT, "a call record cannot be read", where) from None
        if sha256_hex(data) != digest:
            raise CallRecordError(RECORD_CORRUPT, "a call record does not match its SHA-256", where)
        if path.name in self._known:
            # The very bytes the strict parse accepted before: the C parser
            # gives the same value, much faster.
            return json.loads(data) if document else None
        parsed = _decode(data, digest, relative)
        if parsed.get("seq") != seq:
            raise CallRecordError(
                RECORD_CORRUPT, "a call record's seq differs from its name", where
            )
        legacy = data != canonical_json(parsed)
        self._known[path.name] = _Verified(len(data), legacy, _source_of(parsed))
        return parsed

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.package_path).as_posix()

    def _next_seq(self, records: Sequence[_Entry]) -> int:
        # Under the lock, from the verified records (numbered 1..n), so a
        # crash between writing and linking costs nothing.
        seq = len(records) + 1
        if seq > _MAX_SEQ:
            raise CallRecordError(RECORD_INVALID, "too many call records", {"limit": _MAX_SEQ})
        return seq

    def _directory(self, *, create: bool) -> Path:
        if not self.layout.is_package_dir():
            raise CallRecordError(PACKAGE_MISSING, "the case package directory does not exist")
        # Containment lives in the one durable writer: a symlinked analysis/ or
        # llm/ is package_path_outside there, for every store alike.
        files = self.layout.files
        if create:
            files.make_dirs(CALLS_DIR.as_posix())
        else:
            files.is_dir(CALLS_DIR.as_posix())
        return self.directory


def _is_own_leftover(name: str) -> bool:
    """The lock file and temporary files of an interrupted write (``.<name>.<hex>.tmp``)."""
    return name == _LOCK_NAME or (name.startswith(".") and name.endswith(".tmp"))


def _encode(document: Mapping[str, Any]) -> bytes:
    try:
        return canonical_json(document)
    except JsonEncodeError as error:
        raise CallRecordError(
            RECORD_INVALID,
            "the call record is not a JSON document",
            {"reason": error.code},
        ) from None


def _decode(data: bytes, digest: str, path: str) -> dict[str, Any]:
    """Parses stored bytes back, strictly, and insists they are canonical and valid."""
    parsed = strict_parse(data, max_depth=_RECORD_DEPTH)
    if isinstance(parsed, JsonFailure) or not isinstance(parsed.value, dict):
        raise CallRecordError(
            RECORD_CORRUPT, "a call record is not a JSON object", {"sha256": digest, "path": path}
        )
    document = parsed.value
    if data not in (canonical_json(document), _legacy_json(document)):
        raise CallRecordError(
            RECORD_CORRUPT, "a call record is not canonical", {"sha256": digest, "path": path}
        )
    _check_schema(document, RECORD_CORRUPT, path)
    return document


def _version(fields: Mapping[str, Any]) -> int:
    """Version 2 records carry the response format the request asked for; a
    caller that does not know it writes version 1, as before."""
    return 2 if "response_format" in fields else 1


def _check_schema(document: Mapping[str, Any], code: str, file: str | None = None) -> None:
    """Raises ``code`` unless the record satisfies the schema.

    ``details["path"]`` is the JSON Pointer of the failing place for a record
    about to be written, and the file (relative to the package) for a stored
    one, whose pointer is then ``details["pointer"]``.
    """
    # Only the place and the schema's own names, never a value: it may be response text.
    found = check(RECORD_SCHEMA, document, name_unknown=False)
    if found is None:
        return
    pointer = found.pointer
    details: dict[str, Any] = (
        {"path": pointer} if file is None else {"path": file, "pointer": pointer}
    )
    details["rule"] = found.rule
    if found.property is not None:
        details["property"] = found.property
    raise CallRecordError(
        code, f"a call record violates llm-call-record-v1: {found.message}", details
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


def _write_new(layout: PackageLayout, name: str, data: bytes) -> None:
    if not layout.files.write_new(CALLS_DIR / name, data):
        raise FileExistsError(name)  # never replaces an existing record


__all__ = [
    "CALLS_DIR",
    "RECORD_FORMAT",
    "RECORD_SCHEMA",
    "CallRecordStore",
    "StoredCallRecord",
    "canonical_json",
    "sha256_hex",
    "storable_text",
    "text_bytes",
]
