"""The case package on disk: its layout, and the one writer and strict reader every store uses.

``PackageLayout(root)`` is what a store is given: every folder and file name
of the package format is defined on it once (``PackageLayout.CHECKPOINTS``,
``PackageLayout.revision(2)`` ...), and it holds the package's
``PackageFiles``. A store never joins names onto a raw path itself.

``PackageFiles(root)`` owns the package's files below ``root``. Every path it
takes is relative to the package (``analysis/evidence/records/000001.json``)
and every operation walks it one component at a time from a descriptor of the
root, opening each directory with ``O_NOFOLLOW`` and acting on the final name
through its parent's descriptor (``dir_fd``). A symbolic link anywhere below
the root is therefore refused (``package_path_outside``), not followed, and
no check can be raced by swapping a directory for a link between a check and
the write: there is no separate check. The root itself may be reached through
a link; it is the caller's choice of package.

Writes are append-only and atomic: the bytes go to a hidden temporary file in
the target directory, are fsynced, and are hard-linked to the final name
(``link`` never replaces an existing file), after which the directory is
fsynced. A crash leaves the complete file or none, plus possibly a hidden
temporary file that readers skip. The one mutable file of a package, the
manifest, is replaced by ``rename`` instead (``replace``), and so is the
router's digest cache (``PackageLayout.DIGEST_CACHE``), which is no record.

Every failure is typed (``errors.PackageFileError``, a ``CaseError``) and its
details carry the path relative to the package and, for an OS refusal, the
errno name (``ENOSPC``, ``EROFS``, ``EACCES``), never an absolute path or the
OS message:

* ``package_write_failed``: the OS refused a write (read-only, disk full).
* ``package_read_failed``: the OS refused a read.
* ``package_path_outside``: a component is a symbolic link (it would lead
  outside the package) or the relative path is not a plain relative path.
* ``package_corrupt``: a stored file is not what was written (torn, garbled,
  not a regular file, not in its stored byte form).
* ``package_missing``: the root is not a directory.
* ``record_conflict``: an append-only file exists with other bytes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePath, PurePosixPath
from typing import Any, ClassVar, Final

from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.jsonio import (
    MAX_ENCODE_DEPTH,
    JsonDecodeError,
    JsonEncodeError,
    canonical_bytes,
    strict_loads,
)

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _CLOEXEC
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
# The space a controller step needs at most before its next write is checked
# again: a call record with the reply, a step file and an evidence result.
DEFAULT_RESERVE_BYTES = 4 * 1024 * 1024
_PROBE = b"\0" * 4096

Relative = str | PurePath


def compact_json(value: Any) -> bytes:
    """The stored byte form of the investigation stores: UTF-8, keys sorted, no whitespace.

    ``jsonio.canonical_bytes``: orjson's bytes wherever orjson can write the
    value (so stored hashes do not change), and integers beyond 64 bits
    exact, as router results and request filters may hold them.
    """
    return canonical_bytes(value)


class PackageFiles:
    """The files of one case package, reached only through contained relative paths."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    # -- writing ------------------------------------------------------------------------

    def write_new(self, rel: Relative, data: bytes) -> bool:
        """Writes ``rel`` unless the name exists; returns whether it was written.

        An existing name is left alone and its content is not read: the
        append-only logs treat any existing entry as another writer's.
        """
        parts = _parts(rel)
        with self._directory_fd(parts[:-1], create=True) as directory:
            assert directory is not None
            return self._link_new(directory, parts, data)

    def write_once(self, rel: Relative, data: bytes) -> bool:
        """Writes ``rel`` once; returns whether it was new.

        The same bytes already stored are not new (``False``); other bytes
        under the name are a conflict (``record_conflict``) and stay as they are.
        """
        parts = _parts(rel)
        with self._directory_fd(parts[:-1], create=True) as directory:
            assert directory is not None
            if self._read_at(directory, parts, None) is None and self._link_new(
                directory, parts, data
            ):
                return True
            if self._read_at(directory, parts, None) != data:
                raise PackageFileError(
                    "record_conflict",
                    "an append-only record already exists with other content",
                    {"path": _text(parts)},
                )
            return False

    def replace(self, rel: Relative, data: bytes) -> None:
        """For the one mutable file (the manifest): temporary file, fsync, rename."""
        parts = _parts(rel)
        with self._directory_fd(parts[:-1], create=True) as directory:
            assert directory is not None
            temporary = _temporary_name(parts[-1])
            try:
                self._write_synced(directory, temporary, data, parts)
                try:
                    os.replace(temporary, parts[-1], src_dir_fd=directory, dst_dir_fd=directory)
                    os.fsync(directory)
                except OSError as err:
                    raise _write_failed(parts, err) from None
            finally:
                _remove(directory, temporary)

    def make_dirs(self, rel: Relative) -> Path:
        """Creates ``rel`` and any missing parent (each fsynced into its parent)."""
        parts = _parts(rel)
        with self._directory_fd(parts, create=True):
            return self.root.joinpath(*parts)

    def check_writable(
        self, directories: Iterable[Relative], *, reserve_bytes: int = DEFAULT_RESERVE_BYTES
    ) -> None:
        """Fails with ``package_write_failed`` unless every directory takes a file now.

        Cheap enough to run before a paid model call: creates the directories,
        writes, fsyncs and removes one small probe file in each, and insists on
        ``reserve_bytes`` free for an unprivileged writer. A read-only file
        system, a directory without write permission and a full disk all fail
        here instead of after the provider billed the request.
        """
        for rel in directories:
            parts = _parts(rel)
            with self._directory_fd(parts, create=True) as directory:
                assert directory is not None
                try:
                    free = os.fstatvfs(directory)
                except OSError as err:
                    raise _write_failed(parts, err) from None
                if free.f_bavail * free.f_frsize < reserve_bytes:
                    raise _write_failed(parts, OSError(errno.ENOSPC, "no space"))
                probe = _temporary_name("write-probe")
                try:
                    self._write_synced(directory, probe, _PROBE, parts)
                finally:
                    _remove(directory, probe)

    # -- reading ------------------------------------------------------------------------

    def read(self, rel: Relative, *, limit: int | None = None) -> bytes | None:
        """The bytes of regular file ``rel``, or ``None`` when it (or a parent) is missing."""
        parts = _parts(rel)
        with self._directory_fd(parts[:-1], create=False) as directory:
            if directory is None:
                return None
            return self._read_at(directory, parts, limit)

    def read_document(
        self,
        rel: Relative,
        *,
        encode: Callable[[Any], bytes] = compact_json,
        limit: int | None = None,
    ) -> dict[str, Any] | None:
        """Reads a stored JSON object strictly, or ``None`` when it is missing.

        The bytes must parse as JSON, hold an object and be exactly ``encode``
        of that object (the form the store wrote): a torn, garbled or edited
        file is ``package_corrupt`` naming it, never a parser exception.
        """
        data = self.read(rel, limit=limit)
        if data is None:
            return None
        return parse_document(data, rel, encode=encode)

    def list(self, rel: Relative) -> list[str] | None:
        """The names in directory ``rel`` (unsorted), or ``None`` when it is missing."""
        parts = _parts(rel)
        with self._directory_fd(parts, create=False) as directory:
            if directory is None:
                return None
            try:
                return os.listdir(directory)
            except OSError as err:
                raise _read_failed(parts, err) from None

    def is_dir(self, rel: Relative) -> bool:
        """Whether directory ``rel`` exists (a link on the way is still refused)."""
        parts = _parts(rel)
        with self._directory_fd(parts, create=False) as directory:
            return directory is not None

    # -- mechanics ----------------------------------------------------------------------

    @contextlib.contextmanager
    def _directory_fd(self, parts: tuple[str, ...], *, create: bool) -> Iterator[int | None]:
        """A descriptor of directory ``parts`` below the root, walked without following links.

        Yields ``None`` when a component is missing and ``create`` is false.
        """
        try:
            current = os.open(self.root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        except OSError:
            raise PackageFileError(
                "package_missing", "the case package directory does not exist", {"path": "."}
            ) from None
        try:
            for depth, name in enumerate(parts, start=1):
                opened = self._open_child(current, name, parts[:depth], create=create)
                os.close(current)
                current = opened
                if current < 0:
                    break
            yield current if current >= 0 else None
        finally:
            if current >= 0:
                os.close(current)

    def _open_child(self, parent: int, name: str, parts: tuple[str, ...], *, create: bool) -> int:
        """Opens directory ``name`` in ``parent``; -1 when missing and not created."""
        for _attempt in range(2):
            try:
                return os.open(name, _DIR_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                if not create:
                    return -1
            except OSError as err:
                raise self._refused(parent, name, parts, err, writing=create) from None
            try:
                os.mkdir(name, 0o755, dir_fd=parent)
            except FileExistsError:
                continue  # another writer made it (or put something else there)
            except OSError as err:
                raise _write_failed(parts, err) from None
            try:
                os.fsync(parent)
            except OSError as err:
                raise _write_failed(parts, err) from None
        raise _corrupt(parts, "a directory keeps disappearing")

    def _refused(
        self, parent: int, name: str, parts: tuple[str, ...], err: OSError, *, writing: bool
    ) -> PackageFileError:
        """Why opening a path component failed: a link, not a directory, or the OS."""
        try:
            mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
        except OSError:
            mode = 0
        if stat.S_ISLNK(mode):
            return _outside(parts)
        if mode and not stat.S_ISDIR(mode):
            return _corrupt(parts, "a path component is not a directory")
        return _write_failed(parts, err) if writing else _read_failed(parts, err)

    def _read_at(self, directory: int, parts: tuple[str, ...], limit: int | None) -> bytes | None:
        try:
            fd = os.open(parts[-1], _READ_FLAGS, dir_fd=directory)
        except FileNotFoundError:
            return None
        except OSError as err:
            raise self._refused(directory, parts[-1], parts, err, writing=False) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise _corrupt(parts, "not a regular file")
            chunks = []
            size = 0
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
                size += len(chunk)
                if limit is not None and size > limit:
                    raise _corrupt(parts, "larger than the limit")
            return b"".join(chunks)
        except OSError as err:
            raise _read_failed(parts, err) from None
        finally:
            os.close(fd)

    def _link_new(self, directory: int, parts: tuple[str, ...], data: bytes) -> bool:
        temporary = _temporary_name(parts[-1])
        try:
            self._write_synced(directory, temporary, data, parts)
            try:
                os.link(
                    temporary,
                    parts[-1],
                    src_dir_fd=directory,
                    dst_dir_fd=directory,
                    follow_symlinks=False,
                )
            except FileExistsError:
                return False
            except OSError as err:
                raise _write_failed(parts, err) from None
            try:
                os.fsync(directory)
            except OSError as err:
                raise _write_failed(parts, err) from None
        finally:
            _remove(directory, temporary)
        return True

    def _write_synced(self, directory: int, name: str, data: bytes, parts: tuple[str, ...]) -> None:
        try:
            fd = os.open(name, _NEW_FLAGS, 0o644, dir_fd=directory)
        except OSError as err:
            raise _write_failed(parts, err) from None
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as err:
            raise _write_failed(parts, err) from None
        finally:
            os.close(fd)


class PackageLayout:
    """Where everything lives in one case package (docs/case-package-v1.md).

    The names are class attributes, so code that only needs a name (a schema
    check, a listing of what an investigation writes) needs no package. An
    instance binds them to one package root and holds its ``files``, through
    which every read and write goes (containment, atomic append-only writes).
    """

    # -- the case (written by ``vba case create`` / ``CaseBuilder``) -----------------------
    MANIFEST: Final = PurePosixPath("manifest.json")
    # A package of the first, flat form keeps its case here; revisions live below.
    FLAT_CASE: Final = PurePosixPath("case.json")
    ATTACHMENTS: Final = PurePosixPath("attachments")
    REVISIONS: Final = PurePosixPath("revisions")
    RESEARCH: Final = PurePosixPath("research", "project")
    # -- the investigation (written by ``vba investigate``) --------------------------------
    CHECKPOINTS: Final = PurePosixPath("analysis", "checkpoints")
    BUDGET_JOURNAL: Final = PurePosixPath("analysis", "budget", "journal")
    EVIDENCE_RECORDS: Final = PurePosixPath("analysis", "evidence", "records")
    EVIDENCE_RESULTS: Final = PurePosixPath("analysis", "evidence", "results")
    CAPTURES: Final = PurePosixPath("analysis", "evidence", "captures")
    STEPS: Final = PurePosixPath("analysis", "investigation", "steps")
    HYPOTHESES: Final = PurePosixPath("analysis", "investigation", "hypotheses")
    POLICY: Final = PurePosixPath("analysis", "investigation", "policy.json")
    LLM_CALLS: Final = PurePosixPath("analysis", "llm", "calls")
    # The response format chosen per LLM endpoint (``response_format = "auto"``).
    LLM_FORMATS: Final = PurePosixPath("analysis", "llm", "formats")
    # -- the case interpretation (written by ``vba interpret``), one folder per revision ---
    INTERPRETATION: Final = PurePosixPath("analysis", "interpretation")
    # -- an MCP session (written by ``vba mcp``): numbered call records, and the
    # requests, results and project captures they name, stored by SHA-256.
    MCP_CALLS: Final = PurePosixPath("analysis", "mcp", "calls")
    MCP_REQUESTS: Final = PurePosixPath("analysis", "mcp", "requests")
    MCP_RESULTS: Final = PurePosixPath("analysis", "mcp", "results")
    MCP_CAPTURES: Final = PurePosixPath("analysis", "mcp", "captures")
    # The case verdict, one append-only file per issued version (v0001.json ...).
    VERDICTS: Final = PurePosixPath("analysis", "investigation", "verdicts")
    # -- the router's digest cache (case/digest_cache.py): verified attachment
    # digests by file identity; the one replaced file besides the manifest, and
    # only a cache (a damaged one is ignored and rewritten).
    DIGEST_CACHE: Final = PurePosixPath("analysis", "cache", "digests.json")

    # Every directory a running investigation writes into (checked before a paid call).
    INVESTIGATION_DIRECTORIES: ClassVar[tuple[PurePosixPath, ...]] = (
        STEPS,
        HYPOTHESES,
        EVIDENCE_RECORDS,
        EVIDENCE_RESULTS,
        CAPTURES,
        LLM_CALLS,
        LLM_FORMATS,
        CHECKPOINTS,
        BUDGET_JOURNAL,
        VERDICTS,
        INTERPRETATION,
    )

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.files = PackageFiles(self.root)

    @classmethod
    def of(cls, package: PackageLayout | str | os.PathLike[str]) -> PackageLayout:
        """``package`` itself, or the layout of the package directory it names."""
        return package if isinstance(package, PackageLayout) else cls(package)

    @staticmethod
    def revision(number: int) -> PurePosixPath:
        """The folder of case revision ``number`` (``revisions/r0002``)."""
        return PackageLayout.REVISIONS / f"r{number:04d}"

    @staticmethod
    def revision_case(number: int) -> PurePosixPath:
        """The canonical case of revision ``number``."""
        return PackageLayout.revision(number) / "case.json"

    @staticmethod
    def revision_inputs(number: int) -> PurePosixPath:
        """The record of the inputs revision ``number`` was built from."""
        return PackageLayout.revision(number) / "inputs.json"

    @staticmethod
    def research_revision(number: int) -> PurePosixPath:
        """The enrichment folder of revision ``number`` (``research/project/r0002``):
        its ``index.json``, and the ``steps/`` and ``captures/`` of its journal."""
        return PackageLayout.RESEARCH / f"r{number:04d}"

    @staticmethod
    def research_index(number: int) -> PurePosixPath:
        return PackageLayout.research_revision(number) / "index.json"

    @staticmethod
    def verdict(version: int) -> PurePosixPath:
        """Version ``version`` of the case verdict (``.../verdicts/v0001.json``)."""
        return PackageLayout.VERDICTS / f"v{version:04d}.json"

    @staticmethod
    def interpretation(number: int) -> PurePosixPath:
        """The interpretation of revision ``number`` (``analysis/interpretation/r0001``):
        its write-once ``NN-call`` / ``NN-reply`` / ``NN-decision`` files per attempt."""
        return PackageLayout.INTERPRETATION / f"r{number:04d}"

    @staticmethod
    def attachment(name: str) -> PurePosixPath:
        return PackageLayout.ATTACHMENTS / name

    def path(self, rel: Relative) -> Path:
        """The absolute path of ``rel``, for what needs one (a lock, a message to the
        operator). Reads and writes go through ``files``, never through this path."""
        return self.root.joinpath(*_parts(rel))

    def is_package_dir(self) -> bool:
        return self.root.is_dir()

    def check_writable(self, *, reserve_bytes: int = DEFAULT_RESERVE_BYTES) -> None:
        """``package_write_failed`` now if any investigation directory cannot take a file."""
        self.files.check_writable(self.INVESTIGATION_DIRECTORIES, reserve_bytes=reserve_bytes)

    def __repr__(self) -> str:
        return f"PackageLayout({os.fspath(self.root)!r})"


def parse_document(
    data: bytes, rel: Relative, *, encode: Callable[[Any], bytes] = compact_json
) -> dict[str, Any]:
    """Parses stored bytes strictly (see ``PackageFiles.read_document``)."""
    parts = _parts(rel)
    try:
        # Not orjson.loads: it silently turns an integer beyond 64 bits into a float.
        document = strict_loads(data, max_depth=MAX_ENCODE_DEPTH, max_bytes=max(len(data), 1))
    except JsonDecodeError:
        raise _corrupt(parts, "not JSON") from None
    if not isinstance(document, dict):
        raise _corrupt(parts, "not a JSON object")
    try:
        stored_form = encode(document)
    except (TypeError, ValueError, JsonEncodeError):
        stored_form = b""
    if stored_form != data:
        raise _corrupt(parts, "not in its stored byte form")
    return document


def relative(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> PurePosixPath:
    """``path`` (below ``root``, as stores used to build it) as a package-relative path."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
    except ValueError:
        raise PackageFileError(
            "package_path_outside", "the path does not lie inside the package", {"path": ""}
        ) from None
    return PurePosixPath(rel.as_posix())


def _parts(rel: Relative) -> tuple[str, ...]:
    text = rel.as_posix() if isinstance(rel, PurePath) else rel
    parts = tuple(text.split("/"))
    if (
        not text
        or text.startswith("/")
        or "\\" in text
        or "\0" in text
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise PackageFileError(
            "package_path_outside",
            "a package path must be a plain relative path",
            {"path": ""},
        )
    return parts


def _text(parts: tuple[str, ...]) -> str:
    return "/".join(parts)


def _temporary_name(name: str) -> str:
    return f".{name}.{secrets.token_hex(8)}.tmp"


def _remove(directory: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=directory)


def _errno_name(err: OSError) -> str:
    return errno.errorcode.get(err.errno or 0, "EIO") if err.errno else type(err).__name__


def _write_failed(parts: tuple[str, ...], err: OSError) -> PackageFileError:
    return PackageFileError(
        "package_write_failed",
        "the package could not be written",
        {"path": _text(parts), "errno": _errno_name(err)},
    )


def _read_failed(parts: tuple[str, ...], err: OSError) -> PackageFileError:
    return PackageFileError(
        "package_read_failed",
        "a package file could not be read",
        {"path": _text(parts), "errno": _errno_name(err)},
    )


def _outside(parts: tuple[str, ...]) -> PackageFileError:
    return PackageFileError(
        "package_path_outside",
        "a package path passes through a symbolic link, which could lead outside the package",
        {"path": _text(parts)},
    )


def _corrupt(parts: tuple[str, ...], reason: str) -> PackageFileError:
    return PackageFileError(
        "package_corrupt",
        f"a stored package file is damaged: {reason}",
        {"path": _text(parts), "reason": reason},
    )


def create_package_root(path: str | os.PathLike[str]) -> None:
    """Creates the package directory itself (and missing parents), each fsynced
    into its parent. Where the package lies is the caller's choice, so this is
    the one path-based write; everything below the root goes through
    ``PackageFiles``."""
    missing = []
    current = Path(os.path.abspath(path))
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir()
        except FileExistsError:
            pass
        except OSError as err:
            raise PackageFileError(
                "package_write_failed",
                "the package directory could not be created",
                {"path": ".", "errno": _errno_name(err)},
            ) from None
        _fsync_path(directory.parent)
    if not current.is_dir() and not missing:
        raise PackageFileError(
            "package_missing", "the case package path is not a directory", {"path": "."}
        )


def _fsync_path(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError:
        return  # no directory handles on this platform
    try:
        os.fsync(fd)
    except OSError as err:
        raise PackageFileError(
            "package_write_failed",
            "the package directory could not be synced",
            {"path": ".", "errno": _errno_name(err)},
        ) from None
    finally:
        os.close(fd)


__all__ = [
    "DEFAULT_RESERVE_BYTES",
    "PackageFiles",
    "PackageLayout",
    "compact_json",
    "create_package_root",
    "parse_document",
    "relative",
]
