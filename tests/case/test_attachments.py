"""verify_attachment and verify_package: hashes checked, unchanged files hashed once.

The process's digest cache trusts an entry only when the file's times are
older than its hashing by the granule (racy-git, case/digest_cache.py); these
tests set the granule to 0 so that a file written a moment ago counts as
settled. tests/case/test_digest_cache.py tests the granule itself.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.case import build_sample, edit_case
from viano_bug_analysis.case import digest_cache, load_package, verify_attachment, verify_package
from viano_bug_analysis.case import package as package_module
from viano_bug_analysis.case.package import CasePackage, clear_digest_cache
from viano_bug_analysis.errors import CaseError

WOWSRC = "attachments/wowsrc.zip"
DB = "attachments/db.zip"


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CasePackage:
    clear_digest_cache()
    monkeypatch.setattr(digest_cache, "GRANULE_NS", 0)
    return build_sample(tmp_path)


@pytest.fixture
def hash_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts how often verify_attachment starts hashing a file."""
    calls: list[int] = []

    class CountingHashlib:
        @staticmethod
        def sha256(*args: Any) -> Any:
            calls.append(1)
            return hashlib.sha256(*args)

    monkeypatch.setattr(package_module, "hashlib", CountingHashlib)
    return calls


def verify_error(package: CasePackage, rel: str) -> CaseError:
    with pytest.raises(CaseError) as info:
        verify_attachment(package, rel)
    return info.value


def test_sample_attachments_verify(package: CasePackage) -> None:
    for rel in package.attachments:
        verify_attachment(package, rel)
    verify_package(package)


def test_swapped_attachment_of_another_size(package: CasePackage) -> None:
    shutil.copyfile(package.path / DB, package.path / WOWSRC)
    err = verify_error(package, WOWSRC)
    assert err.code == "attachment_mismatch"
    assert err.details == {"attachment": WOWSRC, "reason": "size differs from the manifest"}


def test_swapped_attachment_of_the_same_size(package: CasePackage, tmp_path: Path) -> None:
    original = (package.path / WOWSRC).read_bytes()
    other = bytearray(original)
    other[-1] ^= 0xFF  # the ZIP comment length's high byte: same size, another file
    (package.path / WOWSRC).write_bytes(bytes(other))
    err = verify_error(package, WOWSRC)
    assert err.code == "attachment_mismatch"
    assert err.details["reason"] == "SHA-256 differs from the manifest"


def test_an_unchanged_file_is_hashed_once(package: CasePackage, hash_calls: list[int]) -> None:
    for _ in range(3):
        verify_attachment(package, WOWSRC)
        verify_attachment(load_package(package.path), WOWSRC)
    assert len(hash_calls) == 1
    verify_attachment(package, DB)
    assert len(hash_calls) == 2


def test_a_changed_file_is_hashed_again(package: CasePackage, hash_calls: list[int]) -> None:
    verify_attachment(package, WOWSRC)
    path = package.path / WOWSRC
    stat_before = path.stat()
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns))  # ctime still moves
    err = verify_error(package, WOWSRC)
    assert err.details["reason"] == "SHA-256 differs from the manifest"
    assert len(hash_calls) == 2


def test_a_replaced_file_is_hashed_again(package: CasePackage, hash_calls: list[int]) -> None:
    verify_attachment(package, WOWSRC)
    path = package.path / WOWSRC
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)  # same bytes, new inode
    verify_attachment(package, WOWSRC)
    assert len(hash_calls) == 2


def test_undeclared_attachment(package: CasePackage) -> None:
    for rel in ("attachments/other.zip", "case.json", "manifest.json", "../x.zip"):
        err = verify_error(package, rel)
        assert err.code == "attachment_not_declared"


def test_attachment_deleted_after_loading(package: CasePackage) -> None:
    (package.path / DB).unlink()
    assert verify_error(package, DB).code == "attachment_missing"


def test_attachment_replaced_by_a_symlink_after_loading(package: CasePackage) -> None:
    path = package.path / DB
    path.rename(package.path / "db-real.zip")
    path.symlink_to(package.path / "db-real.zip")
    assert verify_error(package, DB).code == "manifest_path_outside_package"


def test_verify_package_checks_every_declared_member(package: CasePackage) -> None:
    edit_case(package.path, lambda c: c["database_context"][1].__setitem__("sha256", "0" * 64))
    with pytest.raises(CaseError) as info:
        verify_package(load_package(package.path))
    assert info.value.code == "member_mismatch"
    assert info.value.details == {
        "attachment": DB,
        "source_ref": "db-002",
        "cause": "hash_mismatch",
    }


def test_verify_package_checks_attachments_first(package: CasePackage) -> None:
    data = bytearray((package.path / DB).read_bytes())
    data[-1] ^= 0xFF
    (package.path / DB).write_bytes(bytes(data))
    with pytest.raises(CaseError) as info:
        verify_package(package)
    assert info.value.code == "attachment_mismatch"
