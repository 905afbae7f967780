"""case.digest_cache: verified digests trusted per file identity, in memory and on disk.

The identity-change tests run with a granule of 0 (an entry is trusted as soon
as the file's times are older than its hashing) so that the cache really is
consulted: a change must be caught by the identity, not by a racy entry.
"""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.case import build_sample
from viano_bug_analysis.case import digest_cache as dc
from viano_bug_analysis.case import package as package_module
from viano_bug_analysis.case.digest_cache import DigestCache, FileIdentity, member_key, parse_cache
from viano_bug_analysis.case.package import CasePackage, load_package, verify_attachment
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import CaseError

WOWSRC = "attachments/wowsrc.zip"
DB = "attachments/db.zip"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def package(tmp_path: Path) -> CasePackage:
    return build_sample(tmp_path)


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    return tmp_path / "user-cache" / "viano-bug-analysis" / "digests"


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts how often verify_attachment starts hashing a file."""
    calls: list[int] = []

    class CountingHashlib:
        @staticmethod
        def sha256(*args: Any) -> Any:
            calls.append(1)
            return hashlib.sha256(*args)

    monkeypatch.setattr(package_module, "hashlib", CountingHashlib)
    return calls


def cache(user_dir: Path, *, granule_ns: int = 0, persistent: bool = True) -> DigestCache:
    return DigestCache(persistent=persistent, user_dir=user_dir, granule_ns=granule_ns)


def stored(package: CasePackage) -> Path:
    return package.path / PackageLayout.DIGEST_CACHE


def verify_error(package: CasePackage, rel: str, digests: DigestCache) -> CaseError:
    with pytest.raises(CaseError) as info:
        verify_attachment(package, rel, digests=digests)
    return info.value


# -- the settled rule (racy-git) --------------------------------------------------------


def test_an_entry_is_settled_only_when_both_times_are_older_than_its_hashing() -> None:
    identity = FileIdentity(1, 2, 3, mtime_ns=1_000, ctime_ns=5_000)
    assert identity.settled_before(5_001, 0)
    assert not identity.settled_before(5_000, 0)  # same granule: not trusted
    assert not identity.settled_before(5_500, 1_000)
    assert identity.settled_before(6_001, 1_000)


def test_a_file_written_just_before_its_hashing_is_hashed_on_every_use(
    package: CasePackage, user_dir: Path, hashes: list[int]
) -> None:
    digests = cache(user_dir, granule_ns=dc.GRANULE_NS)  # the default 2 s
    os.utime(package.path / WOWSRC)  # its ctime: now
    for _ in range(3):
        assert verify_attachment(package, WOWSRC, digests=digests).hashed
    assert len(hashes) == 3
    assert not stored(package).exists()  # nothing settled, nothing written


def test_a_settled_unchanged_file_is_hashed_once(
    package: CasePackage, user_dir: Path, hashes: list[int]
) -> None:
    digests = cache(user_dir)
    first = verify_attachment(package, WOWSRC, digests=digests)
    again = [verify_attachment(load_package(package.path), WOWSRC, digests=digests)]
    again.append(verify_attachment(package, WOWSRC, digests=digests))
    assert first.hashed and not any(v.hashed for v in again)
    assert len(hashes) == 1
    assert {v.sha256 for v in [first, *again]} == {package.attachments[WOWSRC].sha256}


def test_a_racy_entry_becomes_trusted_once_a_later_hash_finds_it_settled(
    package: CasePackage, user_dir: Path, hashes: list[int]
) -> None:
    digests = cache(user_dir, granule_ns=1_500_000_000)
    os.utime(package.path / WOWSRC)  # its ctime: now
    assert verify_attachment(package, WOWSRC, digests=digests).hashed
    assert verify_attachment(package, WOWSRC, digests=digests).hashed  # still racy
    time.sleep(1.6)
    assert verify_attachment(package, WOWSRC, digests=digests).hashed  # now settled
    assert not verify_attachment(package, WOWSRC, digests=digests).hashed
    assert len(hashes) == 3


# -- a changed attachment is always detected ----------------------------------------------


def _warm(package: CasePackage, digests: DigestCache) -> None:
    verify_attachment(package, WOWSRC, digests=digests)
    assert not verify_attachment(package, WOWSRC, digests=digests).hashed


def _other_bytes(path: Path) -> bytes:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # the ZIP comment length's high byte: same size, another file
    return bytes(data)


def test_rewritten_in_place_with_the_same_size_and_mtime(
    package: CasePackage, user_dir: Path
) -> None:
    digests = cache(user_dir)
    _warm(package, digests)
    path = package.path / WOWSRC
    before = path.stat()
    with open(path, "r+b") as handle:  # in place: same inode
        handle.write(_other_bytes(path))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    err = verify_error(package, WOWSRC, digests)
    assert err.details["reason"] == "SHA-256 differs from the manifest"


def test_rewritten_in_place_with_the_original_bytes_and_mtime_verifies(
    package: CasePackage, user_dir: Path, hashes: list[int]
) -> None:
    digests = cache(user_dir)
    _warm(package, digests)
    path = package.path / WOWSRC
    before = path.stat()
    path.write_bytes(path.read_bytes())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert verify_attachment(package, WOWSRC, digests=digests).hashed  # ctime moved
    assert len(hashes) == 2


def test_replaced_by_rename(package: CasePackage, user_dir: Path) -> None:
    digests = cache(user_dir)
    _warm(package, digests)
    path = package.path / WOWSRC
    before = path.stat()
    replacement = path.with_name("new.zip")
    replacement.write_bytes(_other_bytes(path))
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.rename(replacement, path)
    err = verify_error(package, WOWSRC, digests)
    assert err.details["reason"] == "SHA-256 differs from the manifest"


def test_truncated(package: CasePackage, user_dir: Path) -> None:
    digests = cache(user_dir)
    _warm(package, digests)
    path = package.path / WOWSRC
    original = path.read_bytes()
    before = path.stat()
    os.truncate(path, before.st_size // 2)
    assert verify_error(package, WOWSRC, digests).details["reason"] == (
        "size differs from the manifest"
    )
    # Truncated and written back to its size with other bytes, mtime restored.
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.write(original[:-1] + bytes([original[-1] ^ 0xFF]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    err = verify_error(package, WOWSRC, digests)
    assert err.details["reason"] == "SHA-256 differs from the manifest"


def test_a_change_is_detected_by_a_second_process_too(package: CasePackage, user_dir: Path) -> None:
    first = cache(user_dir)
    _warm(package, first)
    first.flush(package.path)
    assert stored(package).exists()
    path = package.path / WOWSRC
    before = path.stat()
    with open(path, "r+b") as handle:
        handle.write(_other_bytes(path))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = cache(user_dir)  # reads the stored entries, as a new process would
    err = verify_error(package, WOWSRC, second)
    assert err.details["reason"] == "SHA-256 differs from the manifest"


# -- across processes ---------------------------------------------------------------------


def test_a_second_cache_trusts_the_stored_entries(
    package: CasePackage, user_dir: Path, hashes: list[int]
) -> None:
    first = cache(user_dir)
    verify_attachment(package, WOWSRC, digests=first)
    first.remember_members(package.path, package.attachments[WOWSRC].sha256, ["a" * 32])
    first.flush(package.path)
    assert first.location(package.path) == "package"
    second = cache(user_dir)
    assert not verify_attachment(package, WOWSRC, digests=second).hashed
    assert second.verified_members(package.path, package.attachments[WOWSRC].sha256) == {"a" * 32}
    assert len(hashes) == 1
    assert not user_dir.exists()  # a writable package keeps its cache itself


def test_the_stored_file_names_no_path_or_member(package: CasePackage, user_dir: Path) -> None:
    digests = cache(user_dir)
    verify_attachment(package, WOWSRC, digests=digests)
    name = next(iter(package.context_entries.values()))
    digests.remember_members(
        package.path,
        package.attachments[WOWSRC].sha256,
        [member_key(name.member, name.sha256, name.size)],
    )
    digests.flush(package.path)
    data = stored(package).read_bytes()
    assert b"wowsrc" not in data and name.member.encode() not in data
    assert isinstance(parse_cache(data), dc._Parsed)


def test_a_real_second_process_uses_the_stored_digest(package: CasePackage, user_dir: Path) -> None:
    script = f"""
import hashlib, sys
sys.path.insert(0, {str(REPO)!r})
from viano_bug_analysis.case import digest_cache, package as pm
from viano_bug_analysis.case.package import load_package, verify_attachment
digests = digest_cache.DigestCache(persistent=True, granule_ns=0, user_dir={str(user_dir)!r})
package = load_package(sys.argv[1])
result = verify_attachment(package, {WOWSRC!r}, digests=digests)
digests.flush(package.path)
print("hashed" if result.hashed else "trusted")
"""
    run = [sys.executable, "-c", script, str(package.path)]
    outputs = [subprocess.run(run, capture_output=True, text=True, check=True) for _ in range(2)]
    assert [o.stdout.strip() for o in outputs] == ["hashed", "trusted"]


# -- where it is kept ----------------------------------------------------------------------


def _tree(root: Path) -> dict[str, tuple[bytes, int, int]]:
    return {
        p.relative_to(root).as_posix(): (
            p.read_bytes() if p.is_file() else b"",
            p.lstat().st_mtime_ns,
            p.lstat().st_mode,
        )
        for p in sorted(root.rglob("*"))
    }


def _read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(stat.S_IMODE(path.lstat().st_mode) & ~0o222)


def _writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(stat.S_IMODE(path.lstat().st_mode) | 0o200)


def test_a_read_only_package_stays_unchanged_and_the_user_directory_is_used(
    package: CasePackage, user_dir: Path, hashes: list[int]
) -> None:
    _read_only(package.path)
    try:
        before = _tree(package.path)
        first = cache(user_dir)
        verify_attachment(package, WOWSRC, digests=first)
        first.flush(package.path)
        assert first.location(package.path) == "user"
        assert _tree(package.path) == before
        files = list(user_dir.iterdir())
        assert len(files) == 1
        assert stat.S_IMODE(user_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE(user_dir.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
        assert not verify_attachment(package, WOWSRC, digests=cache(user_dir)).hashed
        assert len(hashes) == 1
        assert _tree(package.path) == before
    finally:
        _writable(package.path)


def test_a_user_directory_others_own_is_not_used(
    package: CasePackage, user_dir: Path, hashes: list[int]
) -> None:
    if os.geteuid() != 0:
        pytest.skip("changing a directory's owner needs root")
    user_dir.mkdir(parents=True, mode=0o700)
    os.chown(user_dir, 4242, 4242)
    _read_only(package.path)
    try:
        digests = cache(user_dir)
        verify_attachment(package, WOWSRC, digests=digests)
        digests.flush(package.path)
        assert digests.location(package.path) is None  # memory only
        assert list(user_dir.iterdir()) == []
    finally:
        _writable(package.path)


def test_a_stored_file_others_may_write_is_ignored(package: CasePackage, user_dir: Path) -> None:
    _read_only(package.path)
    try:
        first = cache(user_dir)
        verify_attachment(package, WOWSRC, digests=first)
        first.flush(package.path)
        (stored_file,) = user_dir.iterdir()
        stored_file.chmod(0o666)
        second = cache(user_dir)
        assert verify_attachment(package, WOWSRC, digests=second).hashed
        assert second.ignored(package.path) == "owned by another user or writable by others"
    finally:
        _writable(package.path)


def test_a_memory_only_cache_writes_nothing(package: CasePackage, user_dir: Path) -> None:
    before = _tree(package.path)
    digests = cache(user_dir, persistent=False)
    verify_attachment(package, WOWSRC, digests=digests)
    digests.flush(package.path)
    assert _tree(package.path) == before and not user_dir.exists()
    assert digests.location(package.path) is None


# -- strict reads: a damaged file is ignored and rebuilt ----------------------------------


DAMAGED = {
    "garbage": b"\x00\xffnot json",
    "torn": b'{"files":[{"ctime_ns":1',
    "not canonical": b'{ "format": "viano-digest-cache" }',
    "array": b"[]",
}


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_file_is_ignored_and_rebuilt(
    package: CasePackage, user_dir: Path, hashes: list[int], name: str
) -> None:
    path = stored(package)
    path.parent.mkdir(parents=True)
    path.write_bytes(DAMAGED[name])
    digests = cache(user_dir)
    assert verify_attachment(package, WOWSRC, digests=digests).hashed
    assert digests.ignored(package.path) is not None
    digests.flush(package.path)
    assert isinstance(parse_cache(path.read_bytes()), dc._Parsed)
    assert not verify_attachment(package, WOWSRC, digests=cache(user_dir)).hashed


def _valid_document(package: CasePackage, user_dir: Path) -> bytes:
    digests = cache(user_dir)
    verify_attachment(package, WOWSRC, digests=digests)
    digests.flush(package.path)
    return stored(package).read_bytes()


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        (b'"written_by":"', b'"written_by":"0.0.0-other', "written by another version"),
        (b'"format_version":1', b'"format_version":2', "another format"),
        (b'"sha256":"', b'"sha256":"X', "bad file entry"),
        (b'"inode":', b'"inode":-', "bad file entry"),
    ],
)
def test_a_foreign_or_edited_file_is_ignored(
    package: CasePackage, user_dir: Path, old: bytes, new: bytes, reason: str
) -> None:
    data = _valid_document(package, user_dir)
    assert old in data
    stored(package).write_bytes(data.replace(old, new, 1))
    digests = cache(user_dir)
    assert verify_attachment(package, WOWSRC, digests=digests).hashed
    assert digests.ignored(package.path) == reason


def test_a_file_larger_than_the_limit_is_ignored(
    package: CasePackage, user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _valid_document(package, user_dir)
    monkeypatch.setattr(dc, "MAX_CACHE_BYTES", len(data) - 1)
    digests = cache(user_dir)
    assert verify_attachment(package, WOWSRC, digests=digests).hashed
    assert digests.ignored(package.path) == "larger than the limit"


def test_a_linked_cache_file_is_not_followed(package: CasePackage, user_dir: Path) -> None:
    data = _valid_document(package, user_dir)
    elsewhere = package.path.parent / "elsewhere.json"
    elsewhere.write_bytes(data)
    stored(package).unlink()
    stored(package).symlink_to(elsewhere)
    digests = cache(user_dir)
    assert verify_attachment(package, WOWSRC, digests=digests).hashed
    assert digests.ignored(package.path) is not None
    digests.flush(package.path)  # cannot replace through the link either: no traceback
    assert elsewhere.read_bytes() == data


# -- kill -9 during a write --------------------------------------------------------------


WRITER = """
import os, sys, time
sys.path.insert(0, {repo!r})
from viano_bug_analysis.case.digest_cache import DigestCache, FileIdentity
root, user_dir, stop_in = sys.argv[1], sys.argv[2], sys.argv[3]
digests = DigestCache(persistent=True, granule_ns=0, user_dir=user_dir)
keys = ["%032x" % k for k in range(20000)]


def rounds(count):
    for round in range(1, count + 1):
        for n in range(300):
            identity = FileIdentity(1, round * 1000 + n, 10, 1, 1)
            digests.remember(root, identity, "ab" * 32, 10**18)
        digests.remember_members(root, "ab" * 32, keys[: round * 5000])
        digests.flush(root)


rounds(1)  # one complete write
real_write, real_fsync = os.write, os.fsync


def stall():
    print("stalled", flush=True)
    time.sleep(600)


def half_write(fd, data):
    if len(data) > 4096:
        real_write(fd, bytes(data[: len(data) // 2]))
        stall()
    return real_write(fd, data)


def no_fsync(fd):
    stall()


if stop_in == "write":
    os.write = half_write
else:
    os.fsync = no_fsync
rounds(2)
"""


@pytest.mark.parametrize("stop_in", ["write", "fsync"])
def test_a_kill_during_a_write_leaves_a_readable_store(
    tmp_path: Path, user_dir: Path, stop_in: str
) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    path = root / PackageLayout.DIGEST_CACHE
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER.format(repo=str(REPO)), str(root), str(user_dir), stop_in],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "stalled"  # inside the second write
        before = path.read_bytes()
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
        if child.stdout is not None:
            child.stdout.close()
    leftovers = [p.name for p in path.parent.iterdir() if p.name != path.name]
    assert len(leftovers) == 1 and leftovers[0].endswith(".tmp")  # killed mid-write
    assert path.read_bytes() == before  # the first write, whole
    parsed = parse_cache(before)
    assert isinstance(parsed, dc._Parsed)
    assert len(parsed.files) == 300 and len(parsed.members["ab" * 32]) == 5000
    digests = DigestCache(persistent=True, granule_ns=0, user_dir=user_dir)
    assert digests.ignored(root) is None
    assert digests.trusted(root, FileIdentity(1, 1000, 10, 1, 1)) == "ab" * 32
    digests.remember(root, FileIdentity(1, 5, 10, 1, 1), "cd" * 32, 10**18)
    digests.flush(root)  # the next write succeeds beside the leftover
    assert digests.write_failure(root) is None
    assert isinstance(parse_cache(path.read_bytes()), dc._Parsed)
