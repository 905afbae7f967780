"""Verified digests, trusted per file identity (docs/case-package-v1.md, "The digest cache").

Hashing an attachment (and inflating and hashing a member inside it) is the
cost of a warm batch once its rows are parsed. A ``DigestCache`` remembers
what was verified, so that an unchanged file is not hashed again:

* the SHA-256 of an attachment file, under the file's identity
  ``FileIdentity(device, inode, size, mtime_ns, ctime_ns)`` from ``fstat``
  of the opened file, with the time its hashing began (``verified_ns``);
* which members (name, declared SHA-256 and size; stored as a 128-bit key,
  ``member_key``) were read and verified inside the attachment bytes of a
  given SHA-256. That fact depends on the bytes only, so it holds for any
  file with that digest.

**What is trusted.** An identity is looked up on every use, from a fresh
``fstat``; a remembered digest is used only when all five fields are equal
*and* the entry is settled: the file's mtime and ctime were both more than
``GRANULE_NS`` (2 s) older than the moment its hashing began. This is the
racy-git rule of git's index: a file written in the same timestamp granule
as its verification could be changed again within that granule without
its times moving, so such an entry is hashed again on every use until a
later hash finds it settled. Two seconds cover FAT's 2-second timestamps,
the kernel's coarse clock and a small skew of a file server's clock.

A write to the file moves its mtime and ctime; ``os.utime`` can put the
mtime back but the kernel sets the ctime to now, which no unprivileged
process can set back; a file replaced by ``rename`` has another inode; a
truncated or extended one another size. So a changed attachment has another
identity and is hashed again. Not covered: someone who sets the system
clock back (root) and rewrites the file within a granule, or a file system
that does not keep mtime/ctime (the cache is then only as good as its
timestamps; ``--no-digest-cache`` turns it off).

**Where it is kept.** In the process (every ``DigestCache`` holds its own
entries), and for a persistent cache also on disk, one file per package:

* ``analysis/cache/digests.json`` inside the package when the package is
  writable (its root, ``analysis/`` and ``analysis/cache/``, as far as they
  exist, accept writes and carry a write permission bit: a package made
  read-only with ``chmod -R a-w`` counts as read-only even for root); who
  can write it can also rewrite the attachments and the manifest;
* otherwise ``$XDG_CACHE_HOME/viano-bug-analysis/digests/<id>.json``
  (``~/.cache`` without it; ``<id>``: 32 hex digits of the SHA-256 of the
  package's real path), in directories of mode 0700 owned by the user; a
  directory or file that another user owns or that others may write is not
  used. A read-only package stays byte for byte unchanged.

The file holds identities, digests, times and member keys; no path, member
name or content. It is written atomically (temporary file, fsync, rename,
fsync of the directory) and only with entries that are settled, so a
freshly written package causes no write until it is 2 s old.

**Strict reads.** The file must be exactly what this version writes (its
canonical bytes, every field checked, ``written_by`` this package's
version). Anything else (torn, edited, foreign, too large, not a regular
file, wrongly owned) is ignored: the cache starts empty, the reason is kept
(``DigestCache.ignored``), and the next write replaces the file. A cache
can only save a hash, so a damaged one never fails a command. A failed
write is kept as ``DigestCache.write_failure`` and never raised.

Concurrent processes each merge the file's entries into theirs before they
write; the last rename wins, so an entry may be lost and is then hashed
again, never wrongly trusted.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viano_bug_analysis.durable import PackageFiles, PackageLayout, compact_json, parse_document
from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.jsonio import sha256_hex

FORMAT = "viano-digest-cache"
FORMAT_VERSION = 1
# An entry is trusted only when the file's times are this much older than its hashing.
GRANULE_NS = 2_000_000_000
MAX_FILES = 1024
"""File entries kept per package (the newest by ``verified_ns``)."""
MAX_MEMBERS = 65_536
"""Member keys kept per attachment digest."""
MAX_CACHE_BYTES = 16 * 1024 * 1024
USER_CACHE_NAME = "viano-bug-analysis"

_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX32 = re.compile(r"[0-9a-f]{32}")
_FILE_KEYS = frozenset({"device", "inode", "size", "mtime_ns", "ctime_ns", "sha256", "verified_ns"})
_DOCUMENT_KEYS = frozenset({"format", "format_version", "written_by", "files", "members"})
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """What says a file is the one that was hashed: ``fstat`` of the opened file."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileIdentity:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def settled_before(self, when_ns: int, granule_ns: int) -> bool:
        """Whether both times lie more than ``granule_ns`` before ``when_ns`` (racy-git)."""
        return max(self.mtime_ns, self.ctime_ns) + granule_ns < when_ns


def member_key(name: str, sha256: str, size: int) -> str:
    """The stored key of a verified member: 32 hex digits of SHA-256 over its declaration."""
    text = f"{name}\0{sha256}\0{size}".encode("utf-8", "surrogatepass")
    return sha256_hex(text)[:32]


def _version() -> str:
    from viano_bug_analysis import __version__

    return __version__


class _Store:
    """What one package's cache holds, in memory."""

    def __init__(self) -> None:
        self.files: dict[FileIdentity, tuple[str, int]] = {}  # -> (sha256, verified_ns)
        self.members: dict[str, set[str]] = {}  # attachment sha256 -> member keys
        self.location: _Location | None = None
        self.loaded = False
        self.dirty = False
        self.ignored: str | None = None
        self.write_failure: str | None = None


class DigestCache:
    """Verified attachment digests and member verifications (see the module text).

    ``persistent=False`` keeps them in this process only. ``user_dir`` is the
    directory for packages that are not writable (default: the user's cache
    directory); ``granule_ns`` the racy-git margin (default ``GRANULE_NS``).
    Thread-safe.
    """

    def __init__(
        self,
        *,
        persistent: bool,
        user_dir: str | os.PathLike[str] | None = None,
        granule_ns: int | None = None,
    ) -> None:
        self.persistent = persistent
        self._user_dir = Path(user_dir) if user_dir is not None else None
        self._granule_ns = granule_ns
        self._stores: dict[str, _Store] = {}
        self._real: dict[str, str] = {}  # a root as given -> its real path
        self._lock = threading.Lock()

    @property
    def granule_ns(self) -> int:
        return GRANULE_NS if self._granule_ns is None else self._granule_ns

    # -- queries ------------------------------------------------------------------------

    def trusted(self, root: str | os.PathLike[str], identity: FileIdentity) -> str | None:
        """The SHA-256 verified for ``identity``, or None (unknown or not settled)."""
        with self._lock:
            store = self._store(root)
            entry = store.files.get(identity)
        if entry is None or not identity.settled_before(entry[1], self.granule_ns):
            return None
        return entry[0]

    def verified_members(self, root: str | os.PathLike[str], sha256: str) -> frozenset[str]:
        """Keys (``member_key``) of the members verified in attachment bytes ``sha256``."""
        with self._lock:
            return frozenset(self._store(root).members.get(sha256, ()))

    def location(self, root: str | os.PathLike[str]) -> str | None:
        """``"package"``, ``"user"`` or None (not persistent, or no usable place)."""
        with self._lock:
            where = self._store(root).location
        return None if where is None else where.kind

    def ignored(self, root: str | os.PathLike[str]) -> str | None:
        """Why the stored file was ignored when it was read (None: it was used, or absent)."""
        with self._lock:
            return self._store(root).ignored

    def write_failure(self, root: str | os.PathLike[str]) -> str | None:
        """The errno name or reason of the last failed write (None: none failed)."""
        with self._lock:
            return self._store(root).write_failure

    # -- updates ------------------------------------------------------------------------

    def remember(
        self, root: str | os.PathLike[str], identity: FileIdentity, sha256: str, verified_ns: int
    ) -> None:
        """Records that the file of ``identity`` hashed to ``sha256``; hashing began at
        ``verified_ns`` (``time.time_ns()`` taken before the ``fstat``)."""
        with self._lock:
            store = self._store(root)
            previous = store.files.get(identity)
            store.files[identity] = (sha256, verified_ns)
            was_settled = previous is not None and identity.settled_before(
                previous[1], self.granule_ns
            )
            if identity.settled_before(verified_ns, self.granule_ns) and (
                not was_settled or previous is None or previous[0] != sha256
            ):
                store.dirty = True

    def remember_members(
        self, root: str | os.PathLike[str], sha256: str, keys: Iterable[str]
    ) -> None:
        """Records members (``member_key``) verified in the attachment bytes ``sha256``."""
        with self._lock:
            store = self._store(root)
            known = store.members.setdefault(sha256, set())
            new = [key for key in keys if key not in known]
            if not new or len(known) + len(new) > MAX_MEMBERS:
                return
            known.update(new)
            if self._has_settled(store, sha256):
                store.dirty = True

    def flush(self, root: str | os.PathLike[str]) -> None:
        """Writes the settled entries when something new was learned; never raises."""
        with self._lock:
            store = self._store(root)
            if not store.dirty or store.location is None:
                return
            store.dirty = False
            on_disk = store.location.read()
            if isinstance(on_disk, _Parsed):
                self._merge(store, on_disk)
            data = self._encode(store)
            failure = store.location.write(data)
            if failure is not None and store.location.kind == "package":
                fallback = _user_location(self._user_dir, _real(root))
                store.location = fallback
                if fallback is not None:
                    failure = fallback.write(data)
            store.write_failure = failure

    def clear(self) -> None:
        """Forgets everything held in memory (stored files stay; they are read again)."""
        with self._lock:
            self._stores.clear()
            self._real.clear()

    # -- mechanics ----------------------------------------------------------------------

    def _store(self, root: str | os.PathLike[str]) -> _Store:
        given = os.fspath(root)
        key = self._real.get(given)
        if key is None:
            if len(self._real) > 4 * MAX_FILES:
                self._real.clear()
            key = self._real[given] = _real(given)
        store = self._stores.get(key)
        if store is None:
            store = self._stores[key] = _Store()
        if not store.loaded:
            store.loaded = True
            if self.persistent:
                store.location = _choose_location(key, self._user_dir)
                if store.location is not None:
                    found = store.location.read()
                    if isinstance(found, _Parsed):
                        self._merge(store, found)
                    else:
                        store.ignored = found
        return store

    def _has_settled(self, store: _Store, sha256: str) -> bool:
        return any(
            digest == sha256 and identity.settled_before(when, self.granule_ns)
            for identity, (digest, when) in store.files.items()
        )

    def _merge(self, store: _Store, parsed: _Parsed) -> None:
        for identity, entry in parsed.files.items():
            store.files.setdefault(identity, entry)
        for digest, keys in parsed.members.items():
            known = store.members.setdefault(digest, set())
            if len(known) + len(keys) <= MAX_MEMBERS:
                known.update(keys)

    def _encode(self, store: _Store) -> bytes:
        settled = [
            (identity, digest, when)
            for identity, (digest, when) in store.files.items()
            if identity.settled_before(when, self.granule_ns)
        ]
        settled.sort(key=lambda item: item[2], reverse=True)
        settled = settled[:MAX_FILES]
        digests = {digest for _, digest, _ in settled}
        document = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "written_by": _version(),
            "files": sorted(
                (
                    {
                        "device": identity.device,
                        "inode": identity.inode,
                        "size": identity.size,
                        "mtime_ns": identity.mtime_ns,
                        "ctime_ns": identity.ctime_ns,
                        "sha256": digest,
                        "verified_ns": when,
                    }
                    for identity, digest, when in settled
                ),
                key=lambda item: (item["device"], item["inode"], item["verified_ns"]),
            ),
            "members": {
                digest: sorted(keys)
                for digest, keys in store.members.items()
                if digest in digests and keys
            },
        }
        return compact_json(document)


# -- the stored file ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Parsed:
    files: dict[FileIdentity, tuple[str, int]]
    members: dict[str, set[str]]


def parse_cache(data: bytes) -> _Parsed | str:
    """The entries of a stored cache file, or the reason it is not used."""
    try:
        document = parse_document(data, PackageLayout.DIGEST_CACHE)
    except PackageFileError as err:
        return str(err.details.get("reason", "damaged"))
    if set(document) != _DOCUMENT_KEYS:
        return "unexpected fields"
    if document["format"] != FORMAT or document["format_version"] != FORMAT_VERSION:
        return "another format"
    if document["written_by"] != _version():
        return "written by another version"
    files_in, members_in = document["files"], document["members"]
    if not isinstance(files_in, list) or len(files_in) > MAX_FILES:
        return "bad files"
    if not isinstance(members_in, dict) or len(members_in) > MAX_FILES:
        return "bad members"
    files: dict[FileIdentity, tuple[str, int]] = {}
    for item in files_in:
        if not isinstance(item, dict) or set(item) != _FILE_KEYS:
            return "bad file entry"
        numbers = [item[k] for k in ("device", "inode", "size", "mtime_ns", "ctime_ns")]
        if not all(_natural(n) for n in [*numbers, item["verified_ns"]]):
            return "bad file entry"
        if not isinstance(item["sha256"], str) or not _HEX64.fullmatch(item["sha256"]):
            return "bad file entry"
        files[FileIdentity(*numbers)] = (item["sha256"], item["verified_ns"])
    members: dict[str, set[str]] = {}
    for digest, keys in members_in.items():
        if not _HEX64.fullmatch(digest) or not isinstance(keys, list) or len(keys) > MAX_MEMBERS:
            return "bad members"
        if not all(isinstance(k, str) and _HEX32.fullmatch(k) for k in keys):
            return "bad members"
        members[digest] = set(keys)
    return _Parsed(files, members)


def _natural(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class _Location:
    kind = ""

    def read(self) -> _Parsed | str | None:
        """The parsed file, the reason it is ignored, or None when there is none."""
        raise NotImplementedError

    def write(self, data: bytes) -> str | None:
        """Replaces the file atomically; the failure's errno name or reason, or None."""
        raise NotImplementedError


class _PackageLocation(_Location):
    kind = "package"

    def __init__(self, root: str) -> None:
        self._files = PackageFiles(root)

    def read(self) -> _Parsed | str | None:
        try:
            data = self._files.read(PackageLayout.DIGEST_CACHE, limit=MAX_CACHE_BYTES)
        except PackageFileError as err:
            return str(err.details.get("reason") or err.details.get("errno") or err.code)
        return None if data is None else parse_cache(data)

    def write(self, data: bytes) -> str | None:
        try:
            self._files.replace(PackageLayout.DIGEST_CACHE, data)
        except PackageFileError as err:
            return str(err.details.get("errno") or err.details.get("reason") or err.code)
        return None


class _UserLocation(_Location):
    kind = "user"

    def __init__(self, directory: Path, name: str) -> None:
        self._directory = directory
        self._name = name

    def read(self) -> _Parsed | str | None:
        try:
            fd = os.open(self._directory / self._name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as err:
            return _errno_name(err)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return "not a regular file"
            if st.st_uid != os.geteuid() or st.st_mode & 0o022:
                return "owned by another user or writable by others"
            if st.st_size > MAX_CACHE_BYTES:
                return "larger than the limit"
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
                if sum(map(len, chunks)) > MAX_CACHE_BYTES:
                    return "larger than the limit"
        except OSError as err:
            return _errno_name(err)
        finally:
            os.close(fd)
        return parse_cache(b"".join(chunks))

    def write(self, data: bytes) -> str | None:
        temporary = f".{self._name}.{secrets.token_hex(8)}.tmp"
        try:
            directory = os.open(self._directory, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
        except OSError as err:
            return _errno_name(err)
        try:
            fd = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                0o600,
                dir_fd=directory,
            )
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, self._name, src_dir_fd=directory, dst_dir_fd=directory)
            os.fsync(directory)
        except OSError as err:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=directory)
            return _errno_name(err)
        finally:
            os.close(directory)
        return None


def _real(root: str | os.PathLike[str]) -> str:
    return os.path.realpath(root)


def _choose_location(root: str, user_dir: Path | None) -> _Location | None:
    if _package_writable(root):
        return _PackageLocation(root)
    return _user_location(user_dir, root)


def _package_writable(root: str) -> bool:
    """Whether the package's root, ``analysis/`` and ``analysis/cache/`` (those that
    exist) take writes and carry a write permission bit (see the module text)."""
    current = root
    for part in ("", *PackageLayout.DIGEST_CACHE.parent.parts):
        current = os.path.join(current, part) if part else current
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode) or not st.st_mode & 0o222:
            return False
        if not os.access(current, os.W_OK | os.X_OK):
            return False
    return True


def user_cache_directory(user_dir: Path | None = None) -> Path | None:
    """The directory of the user's digest caches (not created), or None without a home."""
    if user_dir is not None:
        return user_dir
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / USER_CACHE_NAME / "digests"


def _user_location(user_dir: Path | None, root: str) -> _Location | None:
    directory = user_cache_directory(user_dir)
    if directory is None or not _private_directory(directory):
        return None
    name = sha256_hex(os.fsencode(root))[:32] + ".json"
    return _UserLocation(directory, name)


def _private_directory(directory: Path) -> bool:
    """Creates ``directory`` and its parent below the cache base (mode 0700) and checks
    that both belong to this user and that nobody else may write them."""
    for level in (directory.parent, directory):
        try:
            os.mkdir(level, 0o700)
        except FileExistsError:
            pass
        except FileNotFoundError:
            try:
                os.makedirs(level, mode=0o700, exist_ok=True)
            except OSError:
                return False
        except OSError:
            return False
        try:
            st = os.lstat(level)
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            return False
        if stat.S_IMODE(st.st_mode) != 0o700:
            try:
                os.chmod(level, 0o700, follow_symlinks=False)
            except (OSError, NotImplementedError):
                return False
    return True


def _errno_name(err: OSError) -> str:
    return errno.errorcode.get(err.errno or 0, "EIO") if err.errno else type(err).__name__


# The process-wide caches: one only in memory (``verify_attachment``'s default),
# one persistent (the router's, unless it is given another or none).
PROCESS_DIGESTS = DigestCache(persistent=False)
_shared: DigestCache | None = None
_shared_lock = threading.Lock()


def shared_digest_cache() -> DigestCache:
    """The persistent cache every router of this process shares."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = DigestCache(persistent=True)
        return _shared


def clear_memory() -> None:
    """Forgets every digest held in memory by the process-wide caches."""
    PROCESS_DIGESTS.clear()
    with _shared_lock:
        if _shared is not None:
            _shared.clear()


__all__ = [
    "GRANULE_NS",
    "PROCESS_DIGESTS",
    "DigestCache",
    "FileIdentity",
    "clear_memory",
    "member_key",
    "parse_cache",
    "shared_digest_cache",
    "user_cache_directory",
]
