"""Evidence records: what a dispatched query returned, taken over with its capture.

An evidence record (``analysis/evidence/records/<n>.json``, ID ``E<n>``)
names the hypothesis and step that asked, the request, and where the
answer lies: a project capture (``analysis/evidence/captures/<sha256>.json``)
or a stored router result (``analysis/evidence/results/<sha256>.json``). The
answer file is content-addressed and written first; the record, written
once, is the commit. So a crash between the two leaves at most an
unreferenced answer file, and a rerun of the same step writes the record.

An identical repeated answer is not new evidence: the existing E-ID is
returned with ``new=False``. Before a record is written the case
generation is read again; if it changed since dispatch, nothing is taken
over (``case_changed``).

Records and results are read strictly through ``durable.PackageFiles``: a
torn or garbled file is ``package_corrupt`` naming it (relative to the
package), and no file is written or read through a symbolic link.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.durable import PackageLayout, compact_json, parse_document
from viano_bug_analysis.errors import EvidenceError
from viano_bug_analysis.jsonio import sha256_hex
from viano_bug_analysis.project_research import Capture, CaptureStore

RECORDS_DIR = PackageLayout.EVIDENCE_RECORDS
RESULTS_DIR = PackageLayout.EVIDENCE_RESULTS
CAPTURES_DIR = PackageLayout.CAPTURES
RECORD_FORMAT = "viano-evidence-record"
_RECORD_NAME = re.compile(r"[0-9]{6}\.json")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class TakenEvidence:
    evidence_id: str
    new: bool
    record: Mapping[str, Any]


class EvidenceStore:
    def __init__(self, package: PackageLayout | str | os.PathLike[str]) -> None:
        self.layout = PackageLayout.of(package)
        self.package_path = self.layout.root
        self._files = self.layout.files
        self._captures = CaptureStore(self.layout)

    # -- reading ------------------------------------------------------------------------

    def records(self) -> list[dict[str, Any]]:
        names = sorted(
            name for name in self._files.list(RECORDS_DIR) or () if _RECORD_NAME.fullmatch(name)
        )
        records = []
        for expected, name in enumerate(names, start=1):
            if name != f"{expected:06d}.json":
                raise EvidenceError(
                    "evidence_corrupt", "evidence records have a gap", {"n": expected}
                )
            rel = RECORDS_DIR / name
            record = self._files.read_document(rel)
            if record is None:
                raise EvidenceError(
                    "evidence_corrupt", "an evidence record disappeared", {"n": expected}
                )
            if not _is_record(record, expected):
                raise EvidenceError(
                    "evidence_corrupt",
                    "an evidence record is invalid",
                    {"n": expected, "path": rel.as_posix()},
                )
            records.append(record)
        return records

    def get(self, evidence_id: str) -> dict[str, Any]:
        for record in self.records():
            if record["evidence_id"] == evidence_id:
                return record
        raise EvidenceError(
            "evidence_unknown", "no evidence with this ID", {"evidence_id": evidence_id}
        )

    def answer(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """The stored answer of a record (the capture document or the router result)."""
        if record["kind"] == "project_query":
            return dict(self._captures.get(record["capture_sha256"]).document)
        rel = RESULTS_DIR / f"{record['result_sha256']}.json"
        data = self._files.read(rel)
        if data is None:
            raise EvidenceError(
                "evidence_corrupt", "a stored result is missing", {"path": rel.as_posix()}
            )
        if sha256_hex(data) != record["result_sha256"]:
            raise EvidenceError(
                "evidence_corrupt",
                "a stored result does not match its hash",
                {"path": rel.as_posix()},
            )
        return parse_document(data, rel)

    def payload(self, record: Mapping[str, Any]) -> Any:
        """What the model sees of a record, and what its references point into:
        the tool result (``result`` of a capture, the one router result)."""
        answer = self.answer(record)
        if record["kind"] == "project_query":
            return answer["result"]["result"]
        return answer["results"][0]

    # -- taking over --------------------------------------------------------------------

    def take_capture(
        self,
        capture: Capture,
        *,
        hypothesis_id: str,
        step_key: str,
        generation: int,
        current_generation: Callable[[], int],
    ) -> TakenEvidence:
        self._captures.put(capture)
        return self._take(
            {
                "kind": "project_query",
                "request": dict(capture.request),
                "capture_sha256": capture.sha256,
                "capture_path": f"{CAPTURES_DIR.as_posix()}/{capture.sha256}.json",
                "origin": dict(capture.origin),
            },
            "capture_sha256",
            hypothesis_id=hypothesis_id,
            step_key=step_key,
            generation=generation,
            current_generation=current_generation,
        )

    def take_router_result(
        self,
        request: Mapping[str, Any],
        result: Mapping[str, Any],
        *,
        hypothesis_id: str,
        step_key: str,
        generation: int,
        current_generation: Callable[[], int],
    ) -> TakenEvidence:
        data = compact_json(result)
        sha256 = sha256_hex(data)
        self._files.write_once(RESULTS_DIR / f"{sha256}.json", data)
        return self._take(
            {
                "kind": "snapshot_query",
                "request": dict(request),
                "result_sha256": sha256,
                "result_path": f"{RESULTS_DIR.as_posix()}/{sha256}.json",
            },
            "result_sha256",
            hypothesis_id=hypothesis_id,
            step_key=step_key,
            generation=generation,
            current_generation=current_generation,
        )

    def _take(
        self,
        fields: dict[str, Any],
        answer_key: str,
        *,
        hypothesis_id: str,
        step_key: str,
        generation: int,
        current_generation: Callable[[], int],
    ) -> TakenEvidence:
        records = self.records()
        for record in records:
            if record["step_key"] == step_key:
                return TakenEvidence(record["evidence_id"], False, record)  # a resumed step
        for record in records:
            if record.get(answer_key) == fields[answer_key]:
                return TakenEvidence(record["evidence_id"], False, record)  # the same answer
        if current_generation() != generation:
            raise EvidenceError(
                "case_changed",
                "the case generation changed between dispatch and persistence",
                {"generation": generation},
            )
        number = len(records) + 1
        record = {
            "format": RECORD_FORMAT,
            "format_version": 1,
            "evidence_id": f"E{number}",
            "hypothesis_id": hypothesis_id,
            "step_key": step_key,
            "generation": generation,
            **fields,
        }
        self._files.write_once(RECORDS_DIR / f"{number:06d}.json", compact_json(record))
        return TakenEvidence(record["evidence_id"], True, record)


def _is_record(record: Mapping[str, Any], number: int) -> bool:
    """The fields every later reader indexes must be there, with the right types."""
    if record.get("format") != RECORD_FORMAT or record.get("evidence_id") != f"E{number}":
        return False
    if not isinstance(record.get("step_key"), str) or not isinstance(record.get("request"), dict):
        return False
    kind = record.get("kind")
    key = "capture_sha256" if kind == "project_query" else "result_sha256"
    digest = record.get(key)
    return (
        kind in ("project_query", "snapshot_query")
        and isinstance(digest, str)
        and _SHA256.fullmatch(digest) is not None
    )


def resolve_reference(document: Any, reference: str) -> Any:
    """Resolves a JSON Pointer inside an answer document."""
    value = document
    for part in reference.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


__all__ = ["EvidenceError", "EvidenceStore", "TakenEvidence", "resolve_reference"]
