"""The audit trail of an MCP session, kept append-only inside the case package.

Every tool call of ``vba mcp`` leaves one numbered call record,
``analysis/mcp/calls/00000001.json``, ``00000002.json`` ... (schema
``mcp-call-record-v1``). The record names the tool, the SHA-256 of the
request (the tool's arguments in ``jsonio.canonical_bytes`` form), the
package revision it was answered against, and either the SHA-256 of the
result or the error (code, message, details: safe by contract). The request
and the result themselves are stored once each under their SHA-256
(``analysis/mcp/requests/<sha256>.json``, ``analysis/mcp/results/<sha256>.json``);
a project query's answer is stored as a capture v1 under
``analysis/mcp/captures/`` (the capture holds the result, so no result file
is written for it). Storing the same bytes again writes nothing.

A call whose tool, request, revision and result are those of an earlier call
is recognized: its record says ``repeat_of`` (the number of the first such
call), and the answer tells the client that nothing new was learned.

Every write goes through ``durable.PackageFiles``: a temporary file, fsync,
hard link to the final name (never replacing one), directory fsync. Two
servers on one package cannot take the same number: a number already taken
is re-read and the next one tried. ``verify_calls`` re-reads the whole trail
strictly and checks every hash and reference.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any

from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import McpError, VbaError
from viano_bug_analysis.jsonio import canonical_bytes, sha256_hex
from viano_bug_analysis.project_research.captures import Capture, CaptureStore
from viano_bug_analysis.schema_errors import check

RECORD_SCHEMA = "mcp-call-record-v1"
RECORD_FORMAT = "viano-mcp-call"
SEQ_DIGITS = 8
_RECORD_NAME = re.compile(r"([0-9]{8})\.json")
_SHA_NAME = re.compile(r"[0-9a-f]{64}")
# A record is small: hashes, a revision and at most an error's details.
MAX_RECORD_BYTES = 256 << 10


@dataclass(frozen=True, slots=True)
class Recorded:
    """What the server tells the client about the record of its call."""

    seq: int
    request_sha256: str
    result_sha256: str | None
    capture_sha256: str | None
    repeat_of: int | None

    def meta(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "request_sha256": self.request_sha256,
            "result_sha256": self.result_sha256,
            "capture_sha256": self.capture_sha256,
            "repeat_of": self.repeat_of,
        }


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class CallLog:
    """The call records of one package, with the index that recognizes repeats."""

    def __init__(self, package: PackageLayout | str) -> None:
        self.layout = PackageLayout.of(package)
        self._files = self.layout.files
        self._captures = CaptureStore(self.layout, PackageLayout.MCP_CAPTURES)
        self._lock = threading.Lock()
        self._next = 1
        # (tool, request, revision, case hash, outcome hash) -> first call with them.
        self._first: dict[tuple[str, str, int | None, str | None, str], int] = {}
        # Request and result files this log wrote or found with the same bytes:
        # a repeated call does not walk and re-read them again (verify_calls
        # still checks every one).
        self._stored: set[PurePosixPath] = set()
        self._load()

    def _load(self) -> None:
        for record in _records(self.layout):
            self._remember(record)

    def _remember(self, record: Mapping[str, Any]) -> None:
        self._next = max(self._next, record["seq"] + 1)
        key = _repeat_key(record)
        self._first.setdefault(key, record["seq"])

    def check_writable(self) -> None:
        """``package_write_failed`` at start-up, not at the first call."""
        self._files.check_writable(
            (
                PackageLayout.MCP_CALLS,
                PackageLayout.MCP_REQUESTS,
                PackageLayout.MCP_RESULTS,
                PackageLayout.MCP_CAPTURES,
            ),
            reserve_bytes=1 << 20,
        )

    def _store_once(self, rel: PurePosixPath, data: bytes) -> None:
        if rel not in self._stored:
            self._files.write_once(rel, data)
            self._stored.add(rel)

    def record(
        self,
        tool: str,
        request_data: bytes,
        *,
        package: Mapping[str, Any] | None,
        result: Any = None,
        capture: Capture | None = None,
        error: VbaError | None = None,
    ) -> Recorded:
        """Stores the request, the result (or capture) and the numbered record."""
        request_sha256 = sha256_hex(request_data)
        self._store_once(PackageLayout.MCP_REQUESTS / f"{request_sha256}.json", request_data)
        result_sha256: str | None = None
        capture_sha256: str | None = None
        if capture is not None:
            capture_sha256, _ = self._captures.put(capture)
            result_sha256 = sha256_hex(canonical_bytes(capture.result))
        elif error is None:
            data = canonical_bytes(result)
            result_sha256 = sha256_hex(data)
            self._store_once(PackageLayout.MCP_RESULTS / f"{result_sha256}.json", data)
        document: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "format_version": 1,
            "seq": 0,
            "tool": tool,
            "recorded_at": _utc_now(),
            "request_sha256": request_sha256,
            "package": dict(package) if package is not None else None,
            "outcome": "error" if error is not None else "result",
            "result_sha256": result_sha256,
            "capture_sha256": capture_sha256,
            "error": _error_view(error) if error is not None else None,
            "repeat_of": None,
        }
        with self._lock:
            while True:
                seq = self._next
                document["seq"] = seq
                document["repeat_of"] = self._first.get(_repeat_key(document))
                rel = PackageLayout.MCP_CALLS / f"{seq:0{SEQ_DIGITS}d}.json"
                if self._files.write_new(rel, canonical_bytes(document)):
                    self._remember(document)
                    break
                # Another server on this package took the number: learn its record.
                taken = self._files.read_document(rel, limit=MAX_RECORD_BYTES)
                if taken is None or not isinstance(taken.get("seq"), int):
                    raise McpError(
                        "mcp_audit_corrupt",
                        "a call record is unreadable",
                        {"seq": seq, "reason": "unreadable"},
                    )
                self._remember(taken)
        return Recorded(seq, request_sha256, result_sha256, capture_sha256, document["repeat_of"])


def _error_view(error: VbaError) -> dict[str, Any]:
    return {"code": error.code, "message": error.message, "details": error.details}


def _repeat_key(record: Mapping[str, Any]) -> tuple[str, str, int | None, str | None, str]:
    package = record.get("package") or {}
    if record["outcome"] == "error":
        outcome = "error:" + sha256_hex(canonical_bytes(record["error"]))
    else:
        outcome = "result:" + str(record["capture_sha256"] or record["result_sha256"])
    return (
        record["tool"],
        record["request_sha256"],
        package.get("analysis_revision"),
        package.get("case_sha256"),
        outcome,
    )


def _corrupt(seq: int | None, reason: str, **details: Any) -> McpError:
    return McpError(
        "mcp_audit_corrupt",
        f"the MCP call records do not verify: {reason.replace('_', ' ')}",
        {"seq": seq, "reason": reason, **details},
    )


def _records(layout: PackageLayout) -> list[dict[str, Any]]:
    """Every call record, strictly read, numbered 1, 2, ... without a gap."""
    files = layout.files
    names = files.list(PackageLayout.MCP_CALLS) or []
    numbers: list[int] = []
    for name in names:
        if name.startswith("."):
            continue  # a temporary file a crash left behind
        match = _RECORD_NAME.fullmatch(name)
        if match is None:
            raise _corrupt(None, "foreign_file")
        numbers.append(int(match.group(1)))
    numbers.sort()
    if numbers != list(range(1, len(numbers) + 1)):
        raise _corrupt(None, "numbering_gap")
    records = []
    for seq in numbers:
        rel = PackageLayout.MCP_CALLS / f"{seq:0{SEQ_DIGITS}d}.json"
        document = files.read_document(rel, encode=canonical_bytes, limit=MAX_RECORD_BYTES)
        if document is None:
            raise _corrupt(seq, "record_missing")
        if (found := check(RECORD_SCHEMA, document)) is not None:
            raise _corrupt(seq, "record_invalid", path=found.pointer, rule=found.rule)
        if document["seq"] != seq:
            raise _corrupt(seq, "seq_mismatch")
        records.append(document)
    return records


def _stored(layout: PackageLayout, directory: PurePosixPath, sha256: str, seq: int) -> bytes:
    data = layout.files.read(directory / f"{sha256}.json")
    if data is None:
        raise _corrupt(seq, "file_missing", sha256=sha256)
    if sha256_hex(data) != sha256:
        raise _corrupt(seq, "hash_mismatch", sha256=sha256)
    return data


def verify_calls(package: PackageLayout | str) -> dict[str, Any]:
    """Re-reads every call record and what it names; raises ``mcp_audit_corrupt``.

    Checks: the numbering, each record's schema, that every stored request
    and result hashes to its name, that each capture verifies (name, schema)
    and holds the result the record hashes, and that ``repeat_of`` names an
    earlier call with the same tool, request, revision and answer. Returns
    counts: calls, errors, repeats, captures.
    """
    layout = PackageLayout.of(package)
    captures = CaptureStore(layout, PackageLayout.MCP_CAPTURES)
    records = _records(layout)
    first: dict[tuple[str, str, int | None, str | None, str], int] = {}
    counts = {"calls": len(records), "errors": 0, "repeats": 0, "captures": 0}
    for record in records:
        seq = record["seq"]
        _stored(layout, PackageLayout.MCP_REQUESTS, record["request_sha256"], seq)
        if record["outcome"] == "error":
            counts["errors"] += 1
        elif record["capture_sha256"] is not None:
            try:
                capture = captures.get(record["capture_sha256"])
            except VbaError as err:
                raise _corrupt(seq, "capture_invalid", cause=err.code) from None
            if sha256_hex(canonical_bytes(capture.result)) != record["result_sha256"]:
                raise _corrupt(seq, "capture_result_mismatch")
            counts["captures"] += 1
        else:
            _stored(layout, PackageLayout.MCP_RESULTS, record["result_sha256"], seq)
        key = _repeat_key(record)
        expected = first.setdefault(key, seq)
        repeat_of = record["repeat_of"]
        if repeat_of is not None:
            counts["repeats"] += 1
        if repeat_of != (expected if expected != seq else None):
            raise _corrupt(seq, "repeat_mismatch")
    return counts


def request_bytes(arguments: Mapping[str, Any]) -> bytes:
    """The stored (and hashed) form of a call's arguments."""
    return canonical_bytes(arguments)


__all__ = ["CallLog", "Recorded", "request_bytes", "verify_calls"]
