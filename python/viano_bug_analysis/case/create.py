"""Building a case package v1 from a ``case-spec-v1`` document.

``create_package(spec, out_dir)`` is the public way to make a package:

1. read and check the spec (schema, canonical values, unique ids and names);
2. build everything in a fresh temporary directory next to ``out_dir``:
   copy or zip each attachment into ``attachments/``, hash each declared
   member (reading it once with ``zipfile`` and once more through the
   verified native reader, so that the tools will read the same bytes),
   write ``case.json`` and then ``manifest.json`` canonically, fsync all;
3. load the result with ``load_package`` and verify every attachment;
4. rename the temporary directory to ``out_dir`` in one step.

Any failure removes the temporary directory, so ``out_dir`` either holds a
complete, checked package or does not exist. The same spec over the same
inputs gives byte-identical files (see docs/case-package-v1.md for the one
caveat: deflate output depends on the zlib build).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import stat
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: no flock, so stale temporary directories are kept
    fcntl = None  # type: ignore[assignment]

from viano_bug_analysis.case.canonical import JsonRejected, canonical_bytes, parse_json, sha256_hex
from viano_bug_analysis.case.documents import (
    PlacedAttachment,
    case_document,
    default_package_id,
    manifest_document,
)
from viano_bug_analysis.case.package import (
    ATTACHMENTS_DIR,
    MANIFEST_NAME,
    CasePackage,
    load_package,
    verify_attachment,
)
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import CaseError, VbaError
from viano_bug_analysis.files import NotRegularFileError as _NotRegularFile
from viano_bug_analysis.files import open_regular_file as _open_input
from viano_bug_analysis.schema_errors import describe_first, disagreement
from viano_bug_analysis.schemas import fast_validator, schema_validator
from viano_bug_analysis.snapshot import ArchiveEntry, MemberRef, SnapshotArchive

SPEC_SCHEMA = "case-spec-v1"
CASE_FILE = PackageLayout.FLAT_CASE.as_posix()
FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
ZIP_FILE_MODE = 0o100644
DEFLATE_LEVEL = 6
MAX_SPEC_BYTES = 16 * 1024 * 1024
_CHUNK = 1024 * 1024


def create_package(
    spec: Mapping[str, Any] | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> CasePackage:
    """Builds the package described by ``spec`` at ``out_dir`` and returns it loaded.

    ``spec`` is a spec document or the path of a spec file. Relative paths in
    the spec resolve against the spec file's directory, or against
    ``base_dir`` (default: the current directory) for a document.
    ``out_dir`` must not exist or be an empty directory; missing parent
    directories are created.
    """
    document, base = _read_spec(spec, base_dir)
    _check_spec(document)
    out = Path(os.path.abspath(out_dir))
    _refuse_existing(out)
    _remove_stale_temps(out)
    temp = out.parent / f".{out.name}.tmp-{os.getpid()}-{secrets.token_hex(8)}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(temp)
    except OSError as err:
        raise _write_failed(err) from None
    held = _lock_dir(temp)
    try:
        try:
            _build(document, base, temp)
        except OSError as err:
            # Reading the inputs maps its own errors to spec_invalid; what is
            # left is writing the package (disk full, permissions).
            raise _write_failed(err) from None
        built = load_package(temp)
        for rel in built.attachments:
            verify_attachment(built, rel)
        _fsync_dir(temp)
        try:
            os.rename(temp, out)
        except OSError:
            raise _package_exists() from None
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    finally:
        if held is not None:
            os.close(held)
    _fsync_dir(out.parent)
    return load_package(out)


# -- temporary directories --------------------------------------------------------------

# The name create_package gives its temporary directory after ".{OUT}":
# the builder's pid, then a random part.
_TEMP_TAIL = re.compile(r"\.tmp-([0-9]{1,10})-[0-9a-f]{16}")


def _lock_dir(path: Path) -> int | None:
    """A descriptor holding an exclusive ``flock`` on the directory, or ``None``.

    The lock lives as long as the descriptor, so the kernel drops it when the
    holder dies, even by SIGKILL: a directory whose lock can be taken has no
    live builder. ``None`` where it is held elsewhere or cannot be taken.
    """
    if fcntl is None:
        return None
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another create_package in this process (a thread)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _remove_stale_temps(out: Path) -> None:
    """Removes the temporary directories a killed ``create_package`` of ``out`` left.

    SIGKILL (or a power cut) skips every cleanup. Only names of this
    function's own pattern for this ``out`` are considered, and only when the
    pid in the name is no live process and the directory's lock is free: the
    pid covers the moment between ``mkdir`` and ``flock``, the lock a pid
    reused by an unrelated process and a builder on another host. Without
    ``flock`` (Windows) nothing is removed.
    """
    if fcntl is None:
        return
    prefix = f".{out.name}"
    try:
        names = os.listdir(out.parent)
    except OSError:
        return
    for name in names:
        found = _TEMP_TAIL.fullmatch(name, len(prefix)) if name.startswith(prefix) else None
        if found is None or _process_alive(int(found[1])):
            continue
        stale = out.parent / name
        held = _lock_dir(stale)
        if held is None:
            continue
        try:
            shutil.rmtree(stale, ignore_errors=True)
        finally:
            os.close(held)


# -- the spec -------------------------------------------------------------------------


def _spec_invalid(reason: str, pointer: str = "", **details: Any) -> CaseError:
    return CaseError(
        "spec_invalid",
        f"case spec is invalid: {reason}" + (f" (at {pointer})" if pointer else ""),
        {"reason": reason, "pointer": pointer, **details},
    )


def _read_spec(
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


def _check_spec(spec: dict[str, Any]) -> None:
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


def _refuse_existing(out: Path) -> None:
    try:
        taken = out.is_symlink() or (out.exists() and (not out.is_dir() or any(out.iterdir())))
    except OSError:
        taken = True  # cannot even look: certainly not ours to replace
    if taken:
        raise _package_exists()


def _write_failed(err: OSError) -> CaseError:
    return CaseError(
        "package_write_failed",
        "the package could not be written",
        {"reason": "operating system error", "kind": type(err).__name__},
    )


def _package_exists() -> CaseError:
    return CaseError(
        "package_exists",
        "the output directory already exists and is not empty",
        {"reason": "output directory exists and is not empty"},
    )


# -- building -------------------------------------------------------------------------


def _build(spec: dict[str, Any], base: Path, temp: Path) -> None:
    os.mkdir(temp / ATTACHMENTS_DIR)
    placed: list[PlacedAttachment] = []
    for a_index, attachment in enumerate(spec["attachments"]):
        rel = PackageLayout.attachment(attachment["name"]).as_posix()
        target = temp / rel
        if "zip" in attachment:
            _copy_zip(base / attachment["zip"], target, a_index)
        else:
            _zip_directory(base / attachment["directory"], target, a_index)
        sha256, size = _hash_file(target)
        digests = _member_digests(target, attachment["members"], a_index)
        placed.append(PlacedAttachment(rel, sha256, size, attachment, digests))
    _fsync_dir(temp / ATTACHMENTS_DIR)

    case_bytes = canonical_bytes(case_document(spec, 1, placed))
    case_sha256 = sha256_hex(case_bytes)
    _write_new(temp / CASE_FILE, case_bytes)
    manifest = manifest_document(
        spec,
        package_id=default_package_id(spec, case_sha256),
        revision=1,
        case_path=CASE_FILE,
        case_sha256=case_sha256,
        attachments=placed,
    )
    _write_new(temp / MANIFEST_NAME, canonical_bytes(manifest))


def _copy_zip(source: Path, target: Path, a_index: int) -> None:
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


def _zip_directory(source: Path, target: Path, a_index: int) -> None:
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


def _member_digests(
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


# -- files ----------------------------------------------------------------------------


def _hash_file(path: Path) -> tuple[str, int]:
    hasher = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            hasher.update(chunk)
            size += len(chunk)
    return hasher.hexdigest(), size


def _write_new(path: Path, data: bytes) -> None:
    with open(path, "xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # platforms without directory handles (Windows) cannot fsync them
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["FIXED_ZIP_TIME", "create_package"]
