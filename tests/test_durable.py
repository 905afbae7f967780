"""PackageFiles, the one durable writer and strict reader of a case package:
containment (no write or read through a symbolic link), typed write failures
with package-relative paths (read-only, full disk at every write), strict
reading of torn and garbled files, and the writability probe."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis import durable
from viano_bug_analysis.durable import PackageFiles, compact_json
from viano_bug_analysis.errors import CaseError, PackageFileError

REL = "analysis/evidence/records/000001.json"
DATA = compact_json({"format": "x", "n": 1})


def error_of(action: Callable[[], Any]) -> PackageFileError:
    with pytest.raises(PackageFileError) as info:
        action()
    return info.value


def files_below(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*"))


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "package"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return elsewhere


# -- writing and reading ------------------------------------------------------------


def test_write_once_is_new_once_then_idempotent_then_a_conflict(package: Path) -> None:
    files = PackageFiles(package)
    assert files.write_once(REL, DATA) is True
    assert files.write_once(REL, DATA) is False
    err = error_of(lambda: files.write_once(REL, b"{}"))
    assert (err.code, err.details) == ("record_conflict", {"path": REL})
    assert (package / REL).read_bytes() == DATA
    assert files_below(package / "analysis/evidence/records") == ["000001.json"]  # no temp left


def test_write_new_never_reads_or_replaces_an_existing_entry(package: Path) -> None:
    files = PackageFiles(package)
    assert files.write_new("log/1.json", b"first") is True
    assert files.write_new("log/1.json", b"second") is False
    assert (package / "log/1.json").read_bytes() == b"first"


def test_replace_swaps_the_whole_file(package: Path) -> None:
    files = PackageFiles(package)
    files.replace("manifest.json", b"one")
    files.replace("manifest.json", b"two")
    assert files.read("manifest.json") == b"two"
    assert files_below(package) == ["manifest.json"]


def test_missing_files_and_directories_read_as_none(package: Path) -> None:
    files = PackageFiles(package)
    assert files.read(REL) is None
    assert files.read_document(REL) is None
    assert files.list("analysis/evidence") is None
    assert files.is_dir("analysis") is False
    assert files_below(package) == []  # reading creates nothing


def test_a_missing_package_is_typed(tmp_path: Path) -> None:
    err = error_of(lambda: PackageFiles(tmp_path / "nope").write_once(REL, DATA))
    assert err.code == "package_missing" and isinstance(err, CaseError)
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize(
    "rel", ["", "/etc/passwd", "../x.json", "a/../../x.json", "a//b.json", "./a.json", "a\\b"]
)
def test_only_plain_relative_paths_are_taken(package: Path, rel: str) -> None:
    err = error_of(lambda: PackageFiles(package).write_once(rel, DATA))
    assert err.code == "package_path_outside"
    assert files_below(package.parent) == ["package"]


# -- strict reading -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[: len(data) // 2], "not JSON"),  # torn
        (lambda data: b"", "not JSON"),  # created, never filled
        (lambda data: data.replace(b"{", b"\xff", 1), "not JSON"),  # garbled, not UTF-8
        (lambda data: b"[1,2]", "not a JSON object"),
        (lambda data: data + b"\n", "not in its stored byte form"),
        (lambda data: b'{"n":1,"format":"x"}', "not in its stored byte form"),  # keys unsorted
        (lambda data: b'{"format":"x","n":NaN}', "not JSON"),
    ],
)
def test_a_damaged_file_is_package_corrupt_naming_it(
    package: Path, damage: Callable[[bytes], bytes], reason: str
) -> None:
    files = PackageFiles(package)
    files.write_once(REL, DATA)
    (package / REL).write_bytes(damage(DATA))
    err = error_of(lambda: files.read_document(REL))
    assert (err.code, err.details) == ("package_corrupt", {"path": REL, "reason": reason})
    assert str(package) not in repr(err) + str(err.details)


def test_a_directory_in_place_of_a_file_is_corrupt(package: Path) -> None:
    (package / REL).mkdir(parents=True)
    err = error_of(lambda: PackageFiles(package).read(REL))
    assert err.code == "package_corrupt" and err.details["path"] == REL


def test_a_file_in_place_of_a_directory_is_corrupt(package: Path) -> None:
    (package / "analysis").write_bytes(b"")
    for action in (
        lambda: PackageFiles(package).write_once(REL, DATA),
        lambda: PackageFiles(package).read(REL),
    ):
        err = error_of(action)
        assert (err.code, err.details["path"]) == ("package_corrupt", "analysis")


def test_a_read_limit_is_enforced(package: Path) -> None:
    PackageFiles(package).write_once("big.json", b"x" * 100)
    err = error_of(lambda: PackageFiles(package).read("big.json", limit=99))
    assert err.details == {"path": "big.json", "reason": "larger than the limit"}


# -- containment -------------------------------------------------------------------------

ACTIONS: dict[str, Callable[[PackageFiles], Any]] = {
    "write_once": lambda files: files.write_once(REL, DATA),
    "write_new": lambda files: files.write_new(REL, DATA),
    "replace": lambda files: files.replace(REL, DATA),
    "make_dirs": lambda files: files.make_dirs("analysis/evidence/records/x"),
    "read": lambda files: files.read(REL),
    "read_document": lambda files: files.read_document(REL),
    "list": lambda files: files.list("analysis/evidence/records"),
    "check_writable": lambda files: files.check_writable(["analysis/evidence/records"]),
}


@pytest.mark.parametrize("linked", ["analysis", "analysis/evidence", "analysis/evidence/records"])
@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_a_symlinked_directory_is_refused_and_nothing_lands_outside(
    package: Path, outside: Path, linked: str, action: str
) -> None:
    (package / linked).parent.mkdir(parents=True, exist_ok=True)
    (outside / "records").mkdir()
    (package / linked).symlink_to(outside / "records" if linked.endswith("records") else outside)
    err = error_of(lambda: ACTIONS[action](PackageFiles(package)))
    assert (err.code, err.details["path"]) == ("package_path_outside", linked)
    assert files_below(outside) == ["records"]


@pytest.mark.parametrize("action", ["write_once", "read", "read_document"])
def test_a_symlinked_file_is_refused_and_its_target_untouched(
    package: Path, outside: Path, action: str
) -> None:
    target = outside / "target.json"
    target.write_bytes(DATA)
    (package / REL).parent.mkdir(parents=True)
    (package / REL).symlink_to(target)
    err = error_of(lambda: ACTIONS[action](PackageFiles(package)))
    assert (err.code, err.details["path"]) == ("package_path_outside", REL)
    assert target.read_bytes() == DATA and files_below(outside) == ["target.json"]


def test_write_new_never_follows_a_symlinked_entry(package: Path, outside: Path) -> None:
    target = outside / "target.json"
    (package / "log").mkdir()
    (package / "log/1.json").symlink_to(target)  # dangling: a write through it would create it
    assert PackageFiles(package).write_new("log/1.json", DATA) is False
    assert not target.exists()


def test_replace_swaps_a_symlinked_file_itself_not_its_target(package: Path, outside: Path) -> None:
    target = outside / "manifest.json"
    target.write_bytes(b"outside")
    (package / "manifest.json").symlink_to(target)
    PackageFiles(package).replace("manifest.json", b"inside")
    assert target.read_bytes() == b"outside"
    assert not (package / "manifest.json").is_symlink()
    assert (package / "manifest.json").read_bytes() == b"inside"


def test_the_package_root_itself_may_be_a_link(package: Path, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(package)
    assert PackageFiles(tmp_path / "alias").write_once(REL, DATA) is True
    assert (package / REL).read_bytes() == DATA


# -- write failures: full disk, read-only -----------------------------------------------


class FullDisk:
    """``os.write`` that fails with ENOSPC from its ``after``-th call on, like a disk
    that fills up: every later write fails too."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, after: int) -> None:
        self.calls = 0
        self._after = after
        self._write = os.write
        monkeypatch.setattr(os, "write", self)

    def __call__(self, fd: int, data: Any) -> int:
        self.calls += 1
        if self.calls > self._after:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self._write(fd, data)


@pytest.mark.parametrize("action", ["write_once", "write_new", "replace"])
def test_a_full_disk_is_package_write_failed_with_the_relative_path(
    package: Path, monkeypatch: pytest.MonkeyPatch, action: str
) -> None:
    FullDisk(monkeypatch, after=0)
    err = error_of(lambda: ACTIONS[action](PackageFiles(package)))
    assert isinstance(err, CaseError)
    assert (err.code, err.details) == ("package_write_failed", {"path": REL, "errno": "ENOSPC"})
    assert str(package) not in repr(err) + str(err.details)
    monkeypatch.undo()
    # Nothing half-written is left: no final file, no temporary file.
    assert files_below(package / "analysis/evidence/records") == []


def fail_on(monkeypatch: pytest.MonkeyPatch, name: str, number: int) -> None:
    original = getattr(os, name)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        if name != "open" or args[1] & os.O_CREAT:
            raise OSError(number, os.strerror(number))
        return original(*args, **kwargs)

    monkeypatch.setattr(os, name, refuse)


@pytest.mark.parametrize("call", ["open", "mkdir", "link", "fsync", "replace"])
@pytest.mark.parametrize("number", [errno.EROFS, errno.EACCES, errno.EIO])
def test_every_refused_os_call_is_package_write_failed(
    package: Path, monkeypatch: pytest.MonkeyPatch, call: str, number: int
) -> None:
    # Runs as root in CI, where chmod does not stop writes: the refusal is injected.
    action = "replace" if call == "replace" else "write_once"
    if call == "mkdir":
        rel = "analysis"
    else:
        (package / REL).parent.mkdir(parents=True)
        rel = REL
    fail_on(monkeypatch, call, number)
    err = error_of(lambda: ACTIONS[action](PackageFiles(package)))
    monkeypatch.undo()
    assert err.code == "package_write_failed"
    assert err.details == {"path": rel, "errno": errno.errorcode[number]}


def test_a_read_only_directory_is_package_write_failed() -> None:
    # Root writes into read-only directories, and CI runs as root: the write is
    # then made by a child that has dropped to an unprivileged user, so the
    # refusal comes from the kernel, not from an injected fault. pytest's own
    # temporary folders are private to root, hence a folder of its own.
    with tempfile.TemporaryDirectory() as folder:
        shared = Path(folder)
        shared.chmod(0o755)
        _read_only_write_in(shared / "package")


def _read_only_write_in(root: Path) -> None:
    shared = root.parent
    (root / REL).parent.mkdir(parents=True)
    unprivileged = 65534  # nobody
    if os.geteuid() == 0:
        for path in [root, *(root / REL).parents]:
            if path == shared:
                break
            os.chown(path, unprivileged, unprivileged)
    (root / REL).parent.chmod(0o555)
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.close(read_end)
        outcome = b"no error"
        try:
            if os.geteuid() == 0:
                os.setgid(unprivileged)
                os.setuid(unprivileged)
            PackageFiles(root).write_once(REL, DATA)
        except PackageFileError as error:
            outcome = f"{error.code} {error.details['path']} {error.details['errno']}".encode()
        except BaseException as error:
            outcome = type(error).__name__.encode()
        os.write(write_end, outcome)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        outcome = pipe.read().decode()
    os.waitpid(child, 0)
    (root / REL).parent.chmod(0o755)
    assert outcome == f"package_write_failed {REL} EACCES"
    assert not (root / REL).exists()


# -- the writability probe ----------------------------------------------------------


def test_check_writable_creates_the_directories_and_leaves_no_probe(package: Path) -> None:
    PackageFiles(package).check_writable(["analysis/a", "analysis/b/c"])
    assert files_below(package) == ["analysis", "analysis/a", "analysis/b", "analysis/b/c"]


def test_check_writable_fails_on_a_full_disk(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    FullDisk(monkeypatch, after=0)
    err = error_of(lambda: PackageFiles(package).check_writable(["analysis/a"]))
    assert err.details == {"path": "analysis/a", "errno": "ENOSPC"}


def test_check_writable_fails_when_less_than_the_reserve_is_free(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.statvfs(package)

    class AlmostFull:
        f_frsize = real.f_frsize
        f_bavail = 1

    monkeypatch.setattr(os, "fstatvfs", lambda _fd: AlmostFull())
    err = error_of(lambda: PackageFiles(package).check_writable(["analysis"]))
    assert err.details == {"path": "analysis", "errno": "ENOSPC"}
    monkeypatch.undo()
    PackageFiles(package).check_writable(["analysis"], reserve_bytes=durable.DEFAULT_RESERVE_BYTES)


def test_check_writable_fails_on_a_read_only_file_system(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (package / "analysis").mkdir()
    fail_on(monkeypatch, "open", errno.EROFS)
    err = error_of(lambda: PackageFiles(package).check_writable(["analysis"]))
    assert err.details == {"path": "analysis", "errno": "EROFS"}


@pytest.fixture
def descriptors() -> Iterator[Callable[[], int]]:
    def count() -> int:
        return len(os.listdir("/proc/self/fd"))

    yield count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_no_descriptor_leaks_on_success_or_failure(
    package: Path, outside: Path, descriptors: Callable[[], int]
) -> None:
    before = descriptors()
    files = PackageFiles(package)
    files.write_once(REL, DATA)
    files.read_document(REL)
    (package / "analysis/link").symlink_to(outside)
    with pytest.raises(PackageFileError):
        files.write_once("analysis/link/x.json", DATA)
    with pytest.raises(PackageFileError):
        files.write_once(REL, b"other")
    assert descriptors() == before
