"""Loading a case package v1 and checking that it can be trusted.

``load_package`` reads ``manifest.json`` and the canonical ``case.json`` and
checks, in this order: the manifest (strict JSON, schema, paths inside the
package, layout), the case file (present, hash equals the manifest's,
canonical bytes, schema, identity, cross-references) and finally each
attachment's presence and size. It never hashes attachment bytes; that is
``verify_attachment``'s job, with a cache keyed by file identity and
timestamps (``case.digest_cache``).

Everything here only reads. Every failure is a ``CaseError`` with a stable
code; messages and details name files of the package and JSON Pointers into
its documents, never their values.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from viano_bug_analysis.case.canonical import JsonRejected, canonical_bytes, parse_json, sha256_hex
from viano_bug_analysis.case.digest_cache import (
    PROCESS_DIGESTS,
    DigestCache,
    FileIdentity,
    clear_memory,
)
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import CaseError, VbaError
from viano_bug_analysis.files import READ_FLAGS
from viano_bug_analysis.schema_errors import describe_first, disagreement
from viano_bug_analysis.schemas import fast_validator, schema_validator
from viano_bug_analysis.snapshot import MemberRef, SnapshotArchive

MANIFEST_NAME = PackageLayout.MANIFEST.as_posix()
ATTACHMENTS_DIR = PackageLayout.ATTACHMENTS.as_posix()
MANIFEST_SCHEMA = "case-manifest-v1"
CASE_SCHEMA = "case-v1"
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_CASE_BYTES = 64 * 1024 * 1024
PHASES = ("intake", "generation", "investigation", "concluded")

# files.READ_FLAGS (O_NONBLOCK: the type is checked on the open handle, a
# FIFO would otherwise wait for a writer), and no symbolic link inside a package.
_OPEN_FLAGS = READ_FLAGS | getattr(os, "O_NOFOLLOW", 0)
_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class AttachmentRef:
    """An attachment as the manifest declares it."""

    path: str
    sha256: str
    size: int


@dataclass(frozen=True, slots=True)
class ContextEntry:
    """One ``source_context`` or ``database_context`` entry of ``case.json``."""

    source_ref: str
    kind: Literal["source", "database"]
    role: str
    attachment: str
    member: str
    sha256: str
    size: int
    metadata: Mapping[str, Any]

    @property
    def member_ref(self) -> MemberRef:
        """The member with its declared hash and size, ready for ``SnapshotArchive``."""
        return MemberRef(self.member, self.sha256, self.size)


@dataclass(frozen=True)
class CasePackage:
    """A loaded, checked package. Treat ``manifest`` and ``case`` as read-only."""

    path: Path
    manifest: dict[str, Any]
    case: dict[str, Any]
    case_sha256: str
    hypothesis_ids: frozenset[str]
    context_entries: dict[str, ContextEntry]
    attachments: dict[str, AttachmentRef]

    @property
    def package_id(self) -> str:
        return str(self.manifest["package_id"])

    @property
    def case_id(self) -> str:
        return str(self.manifest["case_id"])

    @property
    def analysis_revision(self) -> int:
        return int(self.manifest["analysis_revision"])

    @property
    def generation(self) -> int:
        return int(self.manifest["generation"])

    @property
    def phase(self) -> str:
        return str(self.manifest["phase"])

    @property
    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = self.manifest["status"]
        return status

    def attachment_path(self, rel_path: str) -> Path:
        """Absolute path of a declared attachment, re-checked against symlinks."""
        if rel_path not in self.attachments:
            raise CaseError(
                "attachment_not_declared",
                "the manifest declares no attachment with this path",
                {},
            )
        return Path(_inside_package(str(self.path), rel_path, "/attachments"))


def load_package(package_path: str | os.PathLike[str]) -> CasePackage:
    """Loads and checks the package directory ``package_path`` (read-only)."""
    root = os.path.realpath(package_path)
    if not os.path.isdir(root):
        raise CaseError(
            "manifest_invalid",
            "the package directory does not exist",
            {"file": MANIFEST_NAME, "reason": "package directory not found"},
        )
    manifest = _load_manifest(root)
    case_rel: str = manifest["case"]["path"]
    case_abs = _inside_package(root, case_rel, "/case/path")
    attachments = _manifest_attachments(root, manifest)

    case_bytes = _read_case(case_abs, case_rel)
    case_sha256 = sha256_hex(case_bytes)
    if case_sha256 != manifest["case"]["sha256"]:
        raise CaseError(
            "case_stale",
            f"{case_rel} does not hash to the SHA-256 the manifest records",
            {"file": case_rel},
        )
    case = _parse_case(case_bytes, case_rel)
    for field in ("case_id", "analysis_revision"):
        if case[field] != manifest[field]:
            raise CaseError(
                "case_identity_mismatch",
                f"{case_rel} and the manifest disagree on {field}",
                {"file": case_rel, "field": field},
            )
    hypothesis_ids = _hypothesis_ids(case)
    _check_inputs(case, attachments)
    _check_project_research(root, case, case_rel)
    entries = _context_entries(case)
    for ref in attachments.values():
        _check_attachment_stat(root, ref)
    return CasePackage(
        path=Path(root),
        manifest=manifest,
        case=case,
        case_sha256=case_sha256,
        hypothesis_ids=hypothesis_ids,
        context_entries=entries,
        attachments=attachments,
    )


def revision_case(package: CasePackage, revision: int) -> dict[str, Any]:
    """The case of an earlier (or the current) revision of ``package``, read and
    checked like the current one (canonical bytes, the case schema, its revision).

    Revisions are written once, so the case of a revision the package has moved
    past is still the one it was; a missing or damaged one is a ``CaseError``.
    """
    if type(revision) is not int or not 1 <= revision <= package.analysis_revision:
        raise CaseError(
            "case_missing",
            "the package has no such revision",
            {"file": PackageLayout.REVISIONS.as_posix(), "reason": "no such revision"},
        )
    if revision == package.analysis_revision:
        return package.case
    rel = PackageLayout.revision_case(revision).as_posix()
    case = _parse_case(_read_case(_inside_package(str(package.path), rel, "/case/path"), rel), rel)
    if case["analysis_revision"] != revision or case["case_id"] != package.case_id:
        raise CaseError(
            "case_identity_mismatch",
            f"{rel} does not hold revision {revision} of this case",
            {"file": rel, "field": "analysis_revision"},
        )
    return case


# -- manifest -------------------------------------------------------------------


def _load_manifest(root: str) -> dict[str, Any]:
    def invalid(reason: str, **details: Any) -> CaseError:
        return CaseError(
            "manifest_invalid",
            f"{MANIFEST_NAME} is not a valid case manifest: {reason}",
            {"file": MANIFEST_NAME, "reason": reason, **details},
        )

    try:
        data = _read_regular_file(os.path.join(root, MANIFEST_NAME), MAX_MANIFEST_BYTES)
    except _FileProblem as problem:
        raise invalid(problem.reason) from None
    try:
        manifest = parse_json(data)
    except JsonRejected as err:
        raise invalid(err.reason) from None
    try:
        canonical_bytes(manifest)  # the value domain only; the layout is not enforced
    except CaseError as err:
        raise invalid(err.details["reason"], pointer=err.details["pointer"]) from None
    error = _first_schema_error(MANIFEST_SCHEMA, manifest)
    if error is not None:
        raise invalid("does not match the schema", **error)
    seen: set[str] = set()
    for index, attachment in enumerate(manifest["attachments"]):
        if attachment["path"] in seen:
            raise invalid("duplicate attachment path", pointer=f"/attachments/{index}/path")
        seen.add(attachment["path"])
    result: dict[str, Any] = manifest
    return result


def _manifest_attachments(root: str, manifest: dict[str, Any]) -> dict[str, AttachmentRef]:
    case_rel: str = manifest["case"]["path"]
    if not case_rel.endswith(".json") or case_rel == MANIFEST_NAME:
        raise CaseError(
            "manifest_invalid",
            f"{MANIFEST_NAME}: the case path must name a .json file other than the manifest",
            {"file": MANIFEST_NAME, "reason": "bad case path", "pointer": "/case/path"},
        )
    attachments: dict[str, AttachmentRef] = {}
    for index, item in enumerate(manifest["attachments"]):
        pointer = f"/attachments/{index}/path"
        rel: str = item["path"]
        _inside_package(root, rel, pointer)
        parts = rel.split("/")
        if len(parts) != 2 or parts[0] != ATTACHMENTS_DIR or not parts[1].endswith(".zip"):
            raise CaseError(
                "manifest_invalid",
                f"{MANIFEST_NAME}: attachments live directly in attachments/ and end in .zip",
                {"file": MANIFEST_NAME, "reason": "bad attachment path", "pointer": pointer},
            )
        attachments[rel] = AttachmentRef(rel, item["sha256"], item["size"])
    return attachments


def _check_project_research(root: str, case: Mapping[str, Any], case_rel: str) -> None:
    """The enrichment index a case names must be there, unchanged."""
    ref = case.get("project_research")
    if ref is None:
        return
    index_rel: str = ref["index"]["path"]
    index_abs = _inside_package(root, index_rel, "/project_research/index/path")
    try:
        with open(index_abs, "rb", opener=lambda p, f: os.open(p, f | _OPEN_FLAGS)) as handle:
            data = handle.read(MAX_CASE_BYTES + 1)
    except OSError:
        raise CaseError(
            "case_invalid",
            f"{case_rel}: the enrichment index cannot be read",
            {"file": case_rel, "reason": "enrichment index missing"},
        ) from None
    if sha256_hex(data) != ref["index"]["sha256"]:
        raise CaseError(
            "case_stale",
            "the enrichment index does not hash to the SHA-256 the case records",
            {"file": index_rel},
        )


def _inside_package(root: str, rel: str, pointer: str) -> str:
    """The absolute path of ``rel`` after proving it stays inside ``root``.

    ``rel`` must be a normalized relative POSIX path (no empty, ``.`` or
    ``..`` segments, no backslash, no drive, no NUL) and no existing
    component of it may be a symbolic link.
    """

    def outside(reason: str) -> CaseError:
        return CaseError(
            "manifest_path_outside_package",
            f"{MANIFEST_NAME} points outside the package: {reason}",
            {"file": MANIFEST_NAME, "pointer": pointer, "reason": reason},
        )

    if rel.startswith("/") or (len(rel) > 1 and rel[1] == ":"):
        raise outside("absolute path")
    if "\\" in rel or "\x00" in rel:
        raise outside("backslash or NUL in path")
    parts = rel.split("/")
    if ".." in parts:
        raise outside("path contains a '..' segment")
    if "" in parts or "." in parts:
        raise outside("path is not normalized")
    current = root
    for part in parts:
        current = os.path.join(current, part)
        try:
            mode = os.lstat(current).st_mode
        except (FileNotFoundError, NotADirectoryError):
            break
        except OSError:
            raise outside("path cannot be inspected") from None
        if stat.S_ISLNK(mode):
            raise outside("path is or passes through a symbolic link")
    resolved = os.path.realpath(os.path.join(root, rel))
    if os.path.commonpath([root, resolved]) != root or resolved == root:
        raise outside("path resolves outside the package directory")
    return resolved


# -- case.json --------------------------------------------------------------------


def _read_case(case_abs: str, case_rel: str) -> bytes:
    try:
        return _read_regular_file(case_abs, MAX_CASE_BYTES)
    except _FileProblem as problem:
        code = "case_missing" if problem.missing else "case_invalid"
        if problem.reason == "cannot be read":
            code = "package_unreadable"
        raise CaseError(
            code, f"{case_rel}: {problem.reason}", {"file": case_rel, "reason": problem.reason}
        ) from None


def _parse_case(data: bytes, case_rel: str) -> dict[str, Any]:
    try:
        case = parse_json(data)
    except JsonRejected as err:
        raise CaseError(
            "case_invalid", f"{case_rel}: {err.reason}", {"file": case_rel, "reason": err.reason}
        ) from None
    try:
        canonical = canonical_bytes(case)
    except CaseError as err:
        raise CaseError(
            "case_not_canonical",
            f"{case_rel} is not canonical JSON: {err.details['reason']}",
            {"file": case_rel, **err.details},
        ) from None
    if canonical != data:
        raise CaseError(
            "case_not_canonical",
            f"{case_rel} is not canonical JSON: its bytes differ from the canonical form",
            {"file": case_rel, "reason": "bytes differ from the canonical form"},
        )
    error = _first_schema_error(CASE_SCHEMA, case)
    if error is not None:
        raise CaseError(
            "case_invalid",
            f"{case_rel} does not match the case schema at {error['pointer'] or '/'}",
            {"file": case_rel, "reason": "does not match the schema", **error},
        )
    result: dict[str, Any] = case
    return result


def _case_invalid(reason: str, pointer: str, **extra: Any) -> CaseError:
    return CaseError(
        "case_invalid",
        f"the canonical case is inconsistent: {reason}",
        {"reason": reason, "pointer": pointer, **extra},
    )


def _hypothesis_ids(case: dict[str, Any]) -> frozenset[str]:
    ids: set[str] = set()
    for index, hypothesis in enumerate(case["hypotheses"]):
        if hypothesis["id"] in ids:
            raise _case_invalid("duplicate hypothesis id", f"/hypotheses/{index}/id")
        ids.add(hypothesis["id"])
    return frozenset(ids)


def _check_inputs(case: dict[str, Any], attachments: Mapping[str, AttachmentRef]) -> None:
    listed: set[str] = set()
    for index, item in enumerate(case["inputs"]):
        pointer = f"/inputs/{index}/attachment"
        rel = item["attachment"]
        if rel in listed:
            raise _case_invalid("attachment listed twice in inputs", pointer)
        listed.add(rel)
        declared = attachments.get(rel)
        if declared is None:
            raise _case_invalid("input attachment is not declared by the manifest", pointer)
        if (item["sha256"], item["size"]) != (declared.sha256, declared.size):
            raise _case_invalid("input sha256/size differ from the manifest", f"/inputs/{index}")
    for index, rel in enumerate(attachments):
        if rel not in listed:
            raise _case_invalid(
                "manifest attachment missing from inputs",
                "/inputs",
                manifest_pointer=f"/attachments/{index}",
            )


def _context_entries(case: dict[str, Any]) -> dict[str, ContextEntry]:
    inputs = {item["attachment"] for item in case["inputs"]}
    entries: dict[str, ContextEntry] = {}
    members: dict[tuple[str, str], tuple[str, int]] = {}
    lists: tuple[tuple[str, Literal["source", "database"]], ...] = (
        ("source_context", "source"),
        ("database_context", "database"),
    )
    for list_name, kind in lists:
        for index, item in enumerate(case[list_name]):
            pointer = f"/{list_name}/{index}"
            if item["source_ref"] in entries:
                raise _case_invalid("duplicate source_ref", pointer + "/source_ref")
            if item["attachment"] not in inputs:
                raise _case_invalid("attachment is not listed in inputs", pointer + "/attachment")
            if not _is_safe_member(item["member"]):
                raise _case_invalid("member is not a safe relative name", pointer + "/member")
            key = (item["attachment"], item["member"])
            digest = (item["sha256"], item["size"])
            if members.setdefault(key, digest) != digest:
                raise _case_invalid("same member declared with another sha256/size", pointer)
            entries[item["source_ref"]] = ContextEntry(
                source_ref=item["source_ref"],
                kind=kind,
                role=item["role"],
                attachment=item["attachment"],
                member=item["member"],
                sha256=item["sha256"],
                size=item["size"],
                metadata=item["metadata"],
            )
    return entries


def _is_safe_member(name: str) -> bool:
    if name.startswith("/") or "\\" in name or "\x00" in name:
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


# -- attachments ----------------------------------------------------------------


def _check_attachment_stat(root: str, ref: AttachmentRef) -> None:
    try:
        st = os.lstat(os.path.join(root, ref.path))
    except FileNotFoundError:
        raise _attachment_missing(ref.path, "file not found") from None
    except OSError:
        raise _attachment_missing(ref.path, "cannot be inspected") from None
    if not stat.S_ISREG(st.st_mode):
        raise _attachment_missing(ref.path, "not a regular file")
    if st.st_size != ref.size:
        raise _attachment_mismatch(ref.path, "size differs from the manifest")


def _attachment_missing(rel: str, reason: str) -> CaseError:
    return CaseError(
        "attachment_missing", f"{rel}: {reason}", {"attachment": rel, "reason": reason}
    )


def _attachment_mismatch(rel: str, reason: str) -> CaseError:
    return CaseError(
        "attachment_mismatch", f"{rel}: {reason}", {"attachment": rel, "reason": reason}
    )


@dataclass(frozen=True, slots=True)
class VerifiedAttachment:
    """What ``verify_attachment`` checked: the file's identity and its SHA-256.

    ``hashed`` is False when the digest came from the cache for an unchanged,
    settled identity (see ``case.digest_cache``).
    """

    path: Path
    identity: FileIdentity
    sha256: str
    hashed: bool


def verify_attachment(
    package: CasePackage,
    rel_path: str,
    *,
    digests: DigestCache | None = PROCESS_DIGESTS,
) -> VerifiedAttachment:
    """Checks the attachment's size and SHA-256 against the manifest.

    ``digests`` remembers what was hashed (default: this process's memory
    only): a file whose identity (device, inode, size, mtime_ns, ctime_ns of
    the opened file) is unchanged and settled is not hashed again; ``None``
    hashes every time. A file that changes while it is hashed is rejected.
    Raises ``attachment_mismatch``, ``attachment_missing`` or
    ``attachment_not_declared``.
    """
    path = package.attachment_path(rel_path)  # raises unless declared and inside
    ref = package.attachments[rel_path]
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise _attachment_missing(rel_path, "file not found") from None
    except OSError:
        raise _attachment_missing(rel_path, "cannot be opened") from None
    # Taken before the fstat: a write after this moment gets times at or after
    # it, which the settled rule of the cache tells apart (racy-git).
    started = time.time_ns()
    before = os.fstat(fd)
    if not stat.S_ISREG(before.st_mode):
        os.close(fd)
        raise _attachment_missing(rel_path, "not a regular file")
    with os.fdopen(fd, "rb") as handle:
        if before.st_size != ref.size:
            raise _attachment_mismatch(rel_path, "size differs from the manifest")
        identity = FileIdentity.of(before)
        digest = None if digests is None else digests.trusted(package.path, identity)
        hashed = digest is None
        if digest is None:
            hasher = hashlib.sha256()
            while chunk := handle.read(_CHUNK):
                hasher.update(chunk)
            if FileIdentity.of(os.fstat(handle.fileno())) != identity:
                raise _attachment_mismatch(rel_path, "file changed while it was read")
            digest = hasher.hexdigest()
            if digests is not None:
                digests.remember(package.path, identity, digest, started)
    if digest != ref.sha256:
        raise _attachment_mismatch(rel_path, "SHA-256 differs from the manifest")
    return VerifiedAttachment(path, identity, digest, hashed)


def verify_package(package: CasePackage, *, max_member_bytes: int | None = None) -> None:
    """Full integrity check: every attachment, then every declared context member.

    Each member is read through the verified ZIP reader against its declared
    SHA-256 and size (``member_mismatch`` on failure, with the ``source_ref``
    and the reader's error code as ``cause``). ``max_member_bytes`` bounds a
    single read; by default the declared size.
    """
    for rel in package.attachments:
        verify_attachment(package, rel)
    by_attachment: dict[str, list[ContextEntry]] = {}
    for entry in package.context_entries.values():
        by_attachment.setdefault(entry.attachment, []).append(entry)
    for rel, entries in by_attachment.items():
        path = package.attachment_path(rel)
        archive: SnapshotArchive | None = None
        for entry in entries:
            try:
                archive = archive or SnapshotArchive(path)
                limit = entry.size if max_member_bytes is None else max_member_bytes
                archive.verify(entry.member_ref, max_bytes=limit)
            except VbaError as err:
                raise CaseError(
                    "member_mismatch",
                    f"a member of {rel} does not match its declaration in the case",
                    {"attachment": rel, "source_ref": entry.source_ref, "cause": err.code},
                ) from None


def clear_digest_cache() -> None:
    """Forgets every attachment digest held in memory by this process (for tests and
    benchmarks); persistent digest cache files stay and are read again."""
    clear_memory()


# -- helpers ----------------------------------------------------------------------


class _FileProblem(Exception):
    def __init__(self, reason: str, *, missing: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.missing = missing


def _read_regular_file(path: str, limit: int) -> bytes:
    """Reads a regular file (never through a final symlink) of at most ``limit`` bytes."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        raise _FileProblem("file not found", missing=True) from None
    except IsADirectoryError:
        raise _FileProblem("not a regular file", missing=True) from None
    except OSError:
        raise _FileProblem("cannot be read") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _FileProblem("not a regular file", missing=True)
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(limit + 1)
        except OSError:
            raise _FileProblem("cannot be read") from None
    if len(data) > limit:
        raise _FileProblem("file is larger than the size limit")
    return data


def _first_schema_error(schema: str, document: Any) -> dict[str, Any] | None:
    """Pointer, keyword and description of the first schema error, or None."""
    if fast_validator(schema).is_valid(document):
        return None
    found = describe_first(schema_validator(schema), document) or disagreement()
    details: dict[str, Any] = {"pointer": found.pointer, "keyword": found.rule}
    details.update(
        (key, value) for key, value in found.details().items() if key in {"property", "allowed"}
    )
    details["what"] = found.message
    return details


__all__ = [
    "ATTACHMENTS_DIR",
    "MANIFEST_NAME",
    "PHASES",
    "AttachmentRef",
    "CasePackage",
    "ContextEntry",
    "VerifiedAttachment",
    "clear_digest_cache",
    "load_package",
    "revision_case",
    "verify_attachment",
    "verify_package",
]
