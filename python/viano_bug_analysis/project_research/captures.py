"""Captures (format v2, and v1 as stored) and the append-only capture store of a case package.

A capture is what a ProjectResearch answer looks like as evidence:

    {"format": "viano-project-capture", "format_version": 2,
     "schema": "project-result-v2", "request": <the query>,
     "origin": <git: kind, url, commit | database: kind, database, snapshot_id>,
     "result": <the project-result-v2 document>}

A capture's version is its result's: capture v1 holds a project-result-v1
document (whose git answers still say ``complete`` for what version 2 names
``files_unsearched``, ``examined_in_full`` and ``walk_finished``: see
``result_versions``), capture v2 a project-result-v2 one. New captures are
v2; a stored v1 capture reads, verifies and keeps its SHA-256 exactly as it
was stored, each version checked strictly against its own schemas.

Its identity is the SHA-256 of its compact form (UTF-8, keys sorted, no
whitespace: ``jsonio.canonical_bytes``, integers of any size exact). The store keeps
exactly those bytes in ``analysis/evidence/captures/<sha256>.json``, so the
file name is the hash of the file. The same answer to the same query at the
same commit or snapshot is the same capture: storing it again is not new
evidence (``put`` returns ``is_new=False`` and writes nothing).

Writes are append-only and atomic, through the package's one durable writer
(``durable.PackageFiles``): the bytes go to a temporary file in the captures
directory, are fsynced, then hard-linked to the final name (a link never
replaces an existing file), and the directory is fsynced. A crash at any
point leaves either no capture or the complete one; a leftover temporary
file is ignored by ``get`` and ``list``. No capture is written or read
through a symbolic link (``package_path_outside``), and an OS refusal is
``package_write_failed`` / ``package_read_failed`` naming the file.

Tools never write a case: the store is used by the controller or the case
builder around ``ProjectResearch.capture``, not by ``ProjectResearch.query``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import Any

from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import CaptureError as CaptureError
from viano_bug_analysis.jsonio import (
    MAX_ENCODE_DEPTH,
    JsonDecodeError,
    JsonEncodeError,
    canonical_bytes,
    sha256_hex,
    strict_loads,
)
from viano_bug_analysis.schema_errors import describe_first, disagreement
from viano_bug_analysis.schemas import fast_validator, schema_validator

CAPTURE_SCHEMA = "project-capture-v2"
RESULT_SCHEMA = "project-result-v2"
QUERY_SCHEMA = "project-query-v2"  # v1 plus whole_word and client.records: a superset
REFERENCES_SCHEMA = "references-v2"
CAPTURE_VERSION = 2
# Per capture version: its capture, result and references schemas.
SCHEMAS: dict[int, tuple[str, str, str]] = {
    1: ("project-capture-v1", "project-result-v1", "references-v1"),
    2: (CAPTURE_SCHEMA, RESULT_SCHEMA, REFERENCES_SCHEMA),
}
# The project-query kind answered over both providers (enrichment.reference_query).
REFERENCES_KIND = "references"
CAPTURES_DIR = PackageLayout.CAPTURES
_NAME = re.compile(r"[0-9a-f]{64}")


def compact(value: Any) -> bytes:
    """The hashed and stored byte form: ``jsonio.canonical_bytes`` (integers of any size exact)."""
    try:
        return canonical_bytes(value)
    except JsonEncodeError as err:
        raise CaptureError(
            "capture_invalid", "capture is not a JSON document", {"reason": err.code}
        ) from None


def _plain(data: bytes) -> Any:
    # orjson.loads would turn an integer beyond 64 bits into a float.
    return strict_loads(data, max_depth=MAX_ENCODE_DEPTH, max_bytes=max(len(data), 1))


@dataclass(frozen=True, slots=True)
class Capture:
    """One validated capture document, its stored bytes and their SHA-256."""

    document: Mapping[str, Any]
    data: bytes
    sha256: str

    @classmethod
    def from_result(cls, result: Mapping[str, Any]) -> Capture:
        """Wraps a project-result document into a capture of its version (new
        answers are version 2; a version 1 result gives the v1 capture it was)."""
        version = _version(result)
        document = {
            "format": "viano-project-capture",
            "format_version": version,
            "schema": SCHEMAS[version][1],
            "request": result["query"],
            "origin": result["origin"],
            "result": result,
        }
        return cls.from_document(document)

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> Capture:
        """Checks a capture against project-capture, -result (of its version) and -query-v1."""
        _check(document)
        data = compact(document)
        # Parsed back so that the object holds plain JSON values, not caller objects.
        return cls(_plain(data), data, sha256_hex(data))

    @classmethod
    def from_bytes(cls, data: bytes, sha256: str) -> Capture:
        """Reads stored bytes back; they must hash to ``sha256`` and be in compact form."""
        if sha256_hex(data) != sha256:
            raise CaptureError(
                "capture_corrupt", "stored capture does not match its SHA-256", {"sha256": sha256}
            )
        try:
            document = _plain(data)
        except JsonDecodeError:
            raise CaptureError(
                "capture_corrupt", "stored capture is not JSON", {"sha256": sha256}
            ) from None
        if not isinstance(document, dict) or compact(document) != data:
            raise CaptureError(
                "capture_corrupt", "stored capture is not in compact form", {"sha256": sha256}
            )
        try:
            _check(document)
        except CaptureError as err:
            raise CaptureError(
                "capture_corrupt", "stored capture violates its schema", {"sha256": sha256}
            ) from err
        return cls(document, data, sha256)

    @property
    def request(self) -> Mapping[str, Any]:
        request: Mapping[str, Any] = self.document["request"]
        return request

    @property
    def origin(self) -> Mapping[str, Any]:
        origin: Mapping[str, Any] = self.document["origin"]
        return origin

    @property
    def result(self) -> Mapping[str, Any]:
        result: Mapping[str, Any] = self.document["result"]
        return result


def _version(document: Mapping[str, Any]) -> int:
    """The document's format version when it is one this package reads, else the
    current one (whose schema then names what is wrong)."""
    version = document.get("format_version")
    if isinstance(version, int) and not isinstance(version, bool) and version in SCHEMAS:
        return version
    return CAPTURE_VERSION


def _check(document: Mapping[str, Any]) -> None:
    capture_schema, result_schema, _ = SCHEMAS[_version(document)]
    checks: tuple[tuple[str, tuple[str, ...], Any], ...] = (
        (capture_schema, (), document),
        (result_schema, ("result",), document.get("result")),
        (QUERY_SCHEMA, ("request",), document.get("request")),
    )
    for name, prefix, value in checks:
        if fast_validator(name).is_valid(value):
            continue
        found = describe_first(schema_validator(name), value, prefix) or disagreement(prefix)
        raise CaptureError(
            "capture_invalid", f"capture violates {name}: {found.message}", found.details()
        )
    result = document["result"]
    if result["query"] != document["request"] or result["origin"] != document["origin"]:
        raise CaptureError(
            "capture_invalid", "capture request or origin differs from its result", {"path": ""}
        )
    if result["query"]["kind"] == REFERENCES_KIND:
        check_parts(result["result"], version=document["format_version"])


def model_view(result: Mapping[str, Any]) -> Any:
    """What a model is shown of a project-result answer, and what its citations
    point into: the provider's result; of a references answer, the document
    without its part captures (they prove the rows and lines, which name them)."""
    body = result["result"]
    if result["query"]["kind"] == REFERENCES_KIND:
        return {k: v for k, v in body.items() if k != "captures"}
    return body


def check_parts(document: Mapping[str, Any], *, version: int = CAPTURE_VERSION) -> None:
    """A references answer (references-v1 in a version 1 capture, references-v2 in
    a version 2 one) proves itself: it satisfies its schema, each part capture it
    holds is a valid capture of the same version whose SHA-256 is the one named,
    and every row and line names a part it holds."""
    prefix = ("result", "result")
    schema = SCHEMAS[version][2]
    if not fast_validator(schema).is_valid(document):
        found = describe_first(schema_validator(schema), document, prefix)
        found = found or disagreement(prefix)
        raise CaptureError(
            "capture_invalid",
            f"capture violates {schema}: {found.message}",
            found.details(),
        )
    held = set()
    for index, part in enumerate(document["captures"]):
        where = {"path": f"/result/result/captures/{index}"}
        try:
            held_capture = Capture.from_document(part["capture"])
        except CaptureError:
            raise CaptureError("capture_invalid", "a part capture is not valid", where) from None
        if held_capture.document["format_version"] != version:
            raise CaptureError(
                "capture_invalid", "a part capture is of another capture version", where
            )
        sha256 = held_capture.sha256
        if sha256 != part["sha256"]:
            raise CaptureError(
                "capture_invalid", "a part capture does not match its SHA-256", where
            )
        held.add(sha256)
    for path, named in _named_parts(document):
        if named not in held:
            raise CaptureError(
                "capture_invalid",
                "a row or line names a part the capture does not hold",
                {"path": "/result/result" + path},
            )


def _named_parts(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(JSON Pointer, part SHA-256) of every row and line of a references document."""
    named: list[tuple[str, str]] = []
    database = document["database"]
    for e, entry in enumerate(database.get("entries", ())):
        base = f"/database/entries/{e}"
        named += [(f"{base}/captures/{i}", s) for i, s in enumerate(entry.get("captures", ()))]
        if entry.get("count_capture"):
            named.append((f"{base}/count_capture", entry["count_capture"]))
        named += [
            (f"{base}/rows/{i}", row["capture_sha256"]) for i, row in enumerate(entry["rows"])
        ]
    source = document["source"]
    if source["available"]:
        literal = source["literal"]
        named += [(f"/source/literal/captures/{i}", s) for i, s in enumerate(literal["captures"])]
        named += [
            (f"/source/literal/lines/{i}", line["capture_sha256"])
            for i, line in enumerate(literal["lines"])
        ]
        for c, constant in enumerate(source["constants"]):
            base = f"/source/constants/{c}"
            named += [(f"{base}/captures/{i}", s) for i, s in enumerate(constant["captures"])]
            named += [
                (f"{base}/lines/{i}", line["capture_sha256"])
                for i, line in enumerate(constant["lines"])
            ]
            named += [
                (f"{base}/defined_at/{i}", line["capture_sha256"])
                for i, line in enumerate(constant["defined_at"])
            ]
    return named


class CaptureStore:
    """The captures of one case package directory (``analysis/evidence/captures``).

    ``subdirectory`` (relative, inside the package) lets case enrichment keep
    its captures apart, under ``research/project/...``.
    """

    def __init__(
        self,
        package: PackageLayout | str | os.PathLike[str],
        subdirectory: PurePath = CAPTURES_DIR,
    ) -> None:
        if subdirectory.is_absolute() or ".." in subdirectory.parts or not subdirectory.parts:
            raise CaptureError("capture_path_outside_package", "captures must lie in the package")
        self.layout = PackageLayout.of(package)
        self.package_path = self.layout.root
        self._relative = PurePosixPath(subdirectory.as_posix())
        self._files = self.layout.files
        self.directory = self.layout.path(self._relative)

    def path_of(self, sha256: str) -> Path:
        _check_name(sha256)
        return self.directory / f"{sha256}.json"

    def put(self, capture: Capture) -> tuple[str, bool]:
        """Stores ``capture``; returns ``(sha256, is_new)``.

        An identical stored capture makes this a no-op (``is_new=False``). A
        different file under the same name raises ``capture_conflict`` and is
        left as it is.
        """
        Capture.from_bytes(capture.data, capture.sha256)  # never store unverified bytes
        self._require_package()
        rel = self._relative / f"{capture.sha256}.json"
        if self._same_as_stored(rel, capture):
            return capture.sha256, False
        if self._files.write_new(rel, capture.data):
            return capture.sha256, True
        # Another writer stored it first: fine if it is the same capture.
        self._same_as_stored(rel, capture)
        return capture.sha256, False

    def get(self, sha256: str) -> Capture:
        """The stored capture ``sha256``, verified against its name and schema."""
        _check_name(sha256)
        self._require_package()
        data = self._files.read(self._relative / f"{sha256}.json")
        if data is None:
            raise CaptureError(
                "capture_not_found", "no capture with this SHA-256", {"sha256": sha256}
            )
        return Capture.from_bytes(data, sha256)

    def list(self) -> list[Capture]:
        """Every stored capture, verified, ordered by SHA-256. Temporary files are ignored."""
        self._require_package()
        names = sorted(
            name[:-5]
            for name in self._files.list(self._relative) or ()
            if name.endswith(".json") and _NAME.fullmatch(name[:-5])
        )
        return [self.get(name) for name in names]

    def _same_as_stored(self, rel: PurePosixPath, capture: Capture) -> bool:
        stored = self._files.read(rel)
        if stored is None:
            return False
        if stored != capture.data:
            raise CaptureError(
                "capture_conflict",
                "a different file is stored under this capture's SHA-256",
                {"sha256": capture.sha256},
            )
        return True

    def _require_package(self) -> None:
        if not self.layout.is_package_dir():
            raise CaptureError("package_missing", "the case package directory does not exist")


def _check_name(sha256: object) -> None:
    if not isinstance(sha256, str) or not _NAME.fullmatch(sha256):
        raise CaptureError(
            "capture_name_invalid", "a capture name is 64 lowercase hex digits", {"path": ""}
        )
