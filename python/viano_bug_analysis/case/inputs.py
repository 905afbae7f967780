"""The inputs of a case package: the ``case-spec-v1`` document and its attachments.

Reading and checking a spec, and turning each attachment into the one ZIP the
package stores (a ZIP copied as it is, or a directory zipped reproducibly:
sorted names, fixed time and mode, deflate), with the digests of its declared
members read twice (``zipfile`` and the verified native reader, so that the
tools will read the same bytes). Nothing here writes into a package: where
the ZIPs go is ``CaseBuilder``'s, the one writer of the package format.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from viano_bug_analysis.case.canonical import JsonRejected, canonical_bytes, parse_json
from viano_bug_analysis.errors import CaseError, VbaError
from viano_bug_analysis.files import NotRegularFileError as _NotRegularFile
from viano_bug_analysis.files import open_regular_file as _open_input
from viano_bug_analysis.schema_errors import describe_first, disagreement
from viano_bug_analysis.schemas import fast_validator, schema_validator
from viano_bug_analysis.snapshot import ArchiveEntry, MemberRef, SnapshotArchive

SPEC_SCHEMA = "case-spec-v1"
FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
ZIP_FILE_MODE = 0o100644
DEFLATE_LEVEL = 6
MAX_SPEC_BYTES = 16 * 1024 * 1024
_CHUNK = 1024 * 1024


def _spec_invalid(reason: str, pointer: str = "", **details: Any) -> CaseError:
    return CaseError(
        "spec_invalid",
        f"case spec is invalid: {reason}" + (f" (at {pointer})" if pointer else ""),
        {"reason": reason, "pointer": pointer, **details},
    )


def read_spec(
    spec: Mapping[str, Any] | str | os.PathLike[str], base_dir: str | os.PathLike[str] | None
) -> tuple[dict[str, Any], Path]:
    if isinstance(spec, Mapping):
        return dict(spec), Path(os.path.abspath(base_dir if base_dir is not None else "."))
    path = Path(os.path.abspath(spec))
    try:
        with _open_input(path) as handle:
            data = handle.read(MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        raise _spec_invalid("spec file not found") from None
    except _NotRegularFile:
        raise _spec_invalid("spec file is not a regular file") from None
    except OSError:
        raise _spec_invalid("spec file cannot be read") from None
    if len(data) > MAX_SPEC_BYTES:
        raise _spec_invalid("spec file is larger than the size limit")
    try:
        document = parse_json(data)
    except JsonRejected as err:
        raise _spec_invalid(err.reason) from None
    if not isinstance(document, dict):
        raise _spec_invalid("spec must be a JSON object")
    return document, Path(os.path.abspath(base_dir)) if base_dir is not None else path.parent


def check_spec(spec: dict[str, Any]) -> None:
    try:
        canonical_bytes(spec)
    except CaseError as err:
        raise _spec_invalid(err.details["reason"], err.details["pointer"]) from None
    if not fast_validator(SPEC_SCHEMA).is_valid(spec):
        found = describe_first(schema_validator(SPEC_SCHEMA), spec) or disagreement()
        extra = {k: v for k, v in found.details().items() if k in {"property", "allowed"}}
        raise CaseError(
            "spec_invalid",
            f"case spec is invalid: {found.message}",
            {
                "reason": "does not match the schema",
                "pointer": found.pointer,
                "keyword": found.rule,
                **extra,
            },
        )
    ids: set[str] = set()
    for index, hypothesis in enumerate(spec["hypotheses"]):
        if hypothesis["id"] in ids:
            raise _spec_invalid("duplicate hypothesis id", f"/hypotheses/{index}/id")
        ids.add(hypothesis["id"])
    names: set[str] = set()
    refs: set[str] = set()
    for a_index, attachment in enumerate(spec["attachments"]):
        if attachment["name"] in names:
            raise _spec_invalid("duplicate attachment name", f"/attachments/{a_index}/name")
        names.add(attachment["name"])
        for m_index, member in enumerate(attachment["members"]):
            pointer = f"/attachments/{a_index}/members/{m_index}"
            where = {"attachment_index": a_index, "member_index": m_index}
            if member["source_ref"] in refs:
                raise _spec_invalid("duplicate source_ref", pointer + "/source_ref", **where)
            refs.add(member["source_ref"])
            if not _is_member_name(member["member"]):
                raise _spec_invalid("not a safe member name", pointer + "/member", **where)


def _is_member_name(name: str) -> bool:
    if name.startswith("/") or "\\" in name or "\x00" in name:
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def copy_zip(source: Path, target: Path, a_index: int) -> None:
    pointer = f"/attachments/{a_index}/zip"
    try:
        src = _open_input(source)
    except FileNotFoundError:
        raise _spec_invalid("zip file not found", pointer, attachment_index=a_index) from None
    except _NotRegularFile:
        reason = "zip is not a regular file"
        raise _spec_invalid(reason, pointer, attachment_index=a_index) from None
    except OSError:
        raise _spec_invalid("zip file cannot be read", pointer, attachment_index=a_index) from None
    with src, open(target, "xb") as dst:
        shutil.copyfileobj(src, dst, _CHUNK)
        dst.flush()
        os.fsync(dst.fileno())


def zip_directory(source: Path, target: Path, a_index: int) -> None:
    """Zips the regular files under ``source``: sorted names, fixed time and mode, deflate."""
    files = _directory_files(source, a_index)
    with open(target, "xb") as handle:
        with zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED, compresslevel=DEFLATE_LEVEL) as zf:
            for name, path in files:
                info = zipfile.ZipInfo(name, FIXED_ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.create_system = 3  # Unix, whatever the building platform
                info.external_attr = ZIP_FILE_MODE << 16
                try:
                    src = _open_input(path)
                except _NotRegularFile:
                    # Replaced by a FIFO or device after the walk looked at it.
                    raise _spec_invalid(
                        "directory contains a special file",
                        f"/attachments/{a_index}/directory",
                        attachment_index=a_index,
                    ) from None
                except OSError:
                    raise _spec_invalid(
                        "a file in the directory cannot be read",
                        f"/attachments/{a_index}/directory",
                        attachment_index=a_index,
                    ) from None
                large = os.fstat(src.fileno()).st_size >= zipfile.ZIP64_LIMIT
                with src, zf.open(info, "w", force_zip64=large) as dst:
                    shutil.copyfileobj(src, dst, _CHUNK)
        handle.flush()
        os.fsync(handle.fileno())


def _directory_files(source: Path, a_index: int) -> list[tuple[str, Path]]:
    pointer = f"/attachments/{a_index}/directory"

    def invalid(reason: str) -> CaseError:
        return _spec_invalid(reason, pointer, attachment_index=a_index)

    if not source.is_dir() or source.is_symlink():
        raise invalid("directory not found")
    files: list[tuple[str, Path]] = []
    try:
        walked = list(os.walk(source, onerror=_raise_walk_error))
    except OSError:
        raise invalid("directory cannot be read") from None
    for dirpath, dirnames, filenames in walked:
        for entry in (*dirnames, *filenames):
            path = Path(dirpath) / entry
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                raise invalid("directory cannot be read") from None
            if stat.S_ISLNK(mode):
                raise invalid("directory contains a symbolic link")
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                raise invalid("directory contains a special file")
            name = path.relative_to(source).as_posix()
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                raise invalid("a file name is not valid UTF-8") from None
            if not _is_member_name(name):
                raise invalid("a file name cannot be a ZIP member name")
            files.append((name, path))
    files.sort(key=lambda item: item[0])
    return files


def _raise_walk_error(error: OSError) -> None:
    raise error


def member_digests(
    archive_path: Path, members: list[dict[str, Any]], a_index: int
) -> list[tuple[str, int]]:
    """SHA-256 and size of each declared member, checked by the verified reader."""
    try:
        archive = SnapshotArchive(archive_path)
    except VbaError as err:
        raise _spec_invalid(
            "attachment is not a readable ZIP archive",
            f"/attachments/{a_index}",
            attachment_index=a_index,
            cause=err.code,
        ) from None
    by_name: dict[str, list[ArchiveEntry]] = {}
    for entry in archive.entries():
        by_name.setdefault(entry.name, []).append(entry)
    digests = []
    with zipfile.ZipFile(archive_path) as zf:
        for m_index, member in enumerate(members):
            name = member["member"]
            pointer = f"/attachments/{a_index}/members/{m_index}/member"
            where = {"attachment_index": a_index, "member_index": m_index}
            found = by_name.get(name, [])
            if not found:
                raise _spec_invalid("member not found in the attachment", pointer, **where)
            if len(found) != 1 or found[0].kind != "file":
                kind = "duplicate" if len(found) != 1 else found[0].kind
                raise _spec_invalid(
                    "member is not a readable file", pointer, **where, member_kind=kind
                )
            hasher = hashlib.sha256()
            size = 0
            try:
                with zf.open(name) as src:
                    while chunk := src.read(_CHUNK):
                        hasher.update(chunk)
                        size += len(chunk)
            except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError):
                raise _spec_invalid("member cannot be read", pointer, **where) from None
            ref = MemberRef(name, hasher.hexdigest(), size)
            try:
                archive.verify(ref, max_bytes=size)
            except VbaError as err:
                raise _spec_invalid(
                    "member failed the verified read", pointer, **where, cause=err.code
                ) from None
            digests.append((ref.sha256, ref.size))
    return digests


def hash_file(path: Path) -> tuple[str, int]:
    hasher = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            hasher.update(chunk)
            size += len(chunk)
    return hasher.hexdigest(), size


__all__ = [
    "FIXED_ZIP_TIME",
    "SPEC_SCHEMA",
    "check_spec",
    "copy_zip",
    "hash_file",
    "member_digests",
    "read_spec",
    "zip_directory",
]
