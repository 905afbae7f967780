"""The router's digest cache: a warm batch hashes nothing while the attachment's
identity is unchanged, and a changed attachment is refused all the same.

The caches here use a granule of 0 (an entry is trusted once the file's times
are older than its hashing) so that a package built a moment ago is trusted
and the identity check is what stands between a change and a stale answer.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.cli.helpers import vba
from tests.tools.package_factory import BuiltPackage, build_package, tree_fingerprint
from viano_bug_analysis.case import package as package_module
from viano_bug_analysis.case.digest_cache import DigestCache
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.snapshot import SnapshotArchive
from viano_bug_analysis.tools import InvestigationToolRouter, ToolError
from viano_bug_analysis.tools.database_query import DatabaseQueryTool

ROWS = orjson.dumps(
    {
        "format": "viano-database-snapshot",
        "format_version": 1,
        "table": "creature_template",
        "columns": [{"name": "entry", "type": "integer"}, {"name": "faction", "type": "integer"}],
        "rows": [{"entry": i, "faction": i % 7} for i in range(500)],
        "coverage": "complete_snapshot",
    }
)
SOURCE = b"void Spell() { KilledMonsterCredit(1); }\n" * 10


@pytest.fixture
def package(tmp_path: Path) -> BuiltPackage:
    return build_package(
        tmp_path, sources={"src/a.cpp": SOURCE}, database={"creature_template.json": ROWS}
    )


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    return tmp_path / "user" / "viano-bug-analysis" / "digests"


def digests(user_dir: Path) -> DigestCache:
    return DigestCache(persistent=True, user_dir=user_dir, granule_ns=0)


def router(cache: DigestCache | bool) -> InvestigationToolRouter:
    return InvestigationToolRouter(database_tool=DatabaseQueryTool(), digest_cache=cache)


def lookup(package: BuiltPackage, faction: int = 3) -> dict[str, Any]:
    return package.request(
        {
            "operation": "database.lookup",
            "arguments": {
                "source_ref": package.refs["creature_template.json"],
                "filters": {"faction": faction},
                "offset": 0,
                "limit": 5,
            },
        }
    )


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Counts attachment hashes, archive openings and member verifications/reads."""
    seen: dict[str, list[Any]] = {"hash": [], "open": [], "verify": [], "read": []}

    class CountingHashlib:
        @staticmethod
        def sha256(*args: Any) -> Any:
            seen["hash"].append(1)
            return hashlib.sha256(*args)

    monkeypatch.setattr(package_module, "hashlib", CountingHashlib)
    original_init = SnapshotArchive.__init__
    original_verify = SnapshotArchive.verify
    original_read = SnapshotArchive.read_bytes

    def init(self: SnapshotArchive, path: Any) -> None:
        seen["open"].append(1)
        original_init(self, path)

    def verify(self: SnapshotArchive, member: Any, **kw: Any) -> None:
        seen["verify"].append(member.name)
        original_verify(self, member, **kw)

    def read_bytes(self: SnapshotArchive, member: Any, **kw: Any) -> bytes:
        seen["read"].append(member.name)
        return original_read(self, member, **kw)

    monkeypatch.setattr(SnapshotArchive, "__init__", init)
    monkeypatch.setattr(SnapshotArchive, "verify", verify)
    monkeypatch.setattr(SnapshotArchive, "read_bytes", read_bytes)
    return seen


def counts(seen: dict[str, list[Any]]) -> dict[str, int]:
    result = {kind: len(items) for kind, items in seen.items()}
    for items in seen.values():
        items.clear()
    return result


NOTHING = {"hash": 0, "open": 0, "verify": 0, "read": 0}


def test_a_warm_lookup_hashes_and_inflates_nothing(
    package: BuiltPackage, user_dir: Path, work: dict[str, list[Any]]
) -> None:
    expected = router(False).query(package.path, lookup(package))
    counts(work)
    warm = router(digests(user_dir))
    assert warm.query(package.path, lookup(package)) == expected
    assert counts(work) == {"hash": 1, "open": 1, "verify": 0, "read": 1}
    for faction in (3, 4, 5):
        warm.query(package.path, lookup(package, faction))
        assert counts(work) == NOTHING


def test_without_the_digest_cache_every_batch_hashes_and_verifies(
    package: BuiltPackage, user_dir: Path, work: dict[str, list[Any]]
) -> None:
    before = tree_fingerprint(package.path)
    strict = router(False)
    strict.query(package.path, lookup(package))
    assert counts(work) == {"hash": 1, "open": 1, "verify": 0, "read": 1}
    for _ in range(2):
        strict.query(package.path, lookup(package))
        assert counts(work) == {"hash": 1, "open": 1, "verify": 1, "read": 0}
    assert tree_fingerprint(package.path) == before  # writes nothing
    assert strict.digests is None


def test_a_second_process_trusts_the_stored_digests(
    package: BuiltPackage, user_dir: Path, work: dict[str, list[Any]]
) -> None:
    first = digests(user_dir)
    router(first).query(package.path, lookup(package))
    assert (package.path / PackageLayout.DIGEST_CACHE).is_file()
    counts(work)
    # A new cache and a new table cache: what a new process starts with.
    second = router(digests(user_dir))
    second.query(package.path, lookup(package))
    # The rows must still be parsed, so the member is read (and verified while
    # it is read); the attachment is not hashed.
    assert counts(work) == {"hash": 0, "open": 1, "verify": 0, "read": 1}
    second.query(package.path, lookup(package))
    assert counts(work) == NOTHING


def _rewrite_same_size_and_mtime(path: Path) -> None:
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # the ZIP comment length's high byte: same size, another file
    path.chmod(0o644)
    with open(path, "r+b") as handle:
        handle.write(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _replace_by_rename(path: Path) -> None:
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    other = path.with_name("other.zip")
    other.write_bytes(bytes(data))
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.rename(other, path)


def _truncate(path: Path) -> None:
    path.chmod(0o644)
    os.truncate(path, path.stat().st_size - 1)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (_rewrite_same_size_and_mtime, "SHA-256 differs from the manifest"),
        (_replace_by_rename, "SHA-256 differs from the manifest"),
        (_truncate, "size differs from the manifest"),
    ],
)
def test_a_changed_attachment_is_refused_by_a_warm_router(
    package: BuiltPackage, user_dir: Path, change: Any, reason: str
) -> None:
    cache = digests(user_dir)
    warm = router(cache)
    warm.query(package.path, lookup(package))
    warm.query(package.path, lookup(package))
    change(package.path / "attachments" / "db.zip")
    for candidate in (warm, router(digests(user_dir))):  # this process and the next
        with pytest.raises(ToolError) as caught:
            candidate.query(package.path, lookup(package))
        assert caught.value.code == "attachment_mismatch"
        assert caught.value.details["reason"] == reason


def test_a_member_declared_otherwise_is_verified_again(
    package: BuiltPackage, user_dir: Path
) -> None:
    from tests.case import edit_case

    warm = router(digests(user_dir))
    warm.query(package.path, lookup(package))
    # A new revision of the case declaring another size for the same member:
    # the member's key differs, so the cache vouches for nothing.
    edit_case(package.path, lambda c: c["database_context"][0].__setitem__("size", len(ROWS) - 1))
    with pytest.raises(ToolError) as caught:
        warm.query(package.path, lookup(package))
    assert caught.value.code == "source_integrity_mismatch"


def _read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(stat.S_IMODE(path.lstat().st_mode) & ~0o222)


def _writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(stat.S_IMODE(path.lstat().st_mode) | 0o200)


def test_a_read_only_package_stays_byte_for_byte_unchanged(
    package: BuiltPackage, user_dir: Path, work: dict[str, list[Any]]
) -> None:
    _read_only(package.path)
    try:
        before = tree_fingerprint(package.path)
        for _ in range(3):
            router(digests(user_dir)).query(package.path, lookup(package))
        assert tree_fingerprint(package.path) == before
        assert len(list(user_dir.iterdir())) == 1
        assert counts(work)["hash"] == 1  # the later routers used the user's cache
    finally:
        _writable(package.path)


# -- the command line ------------------------------------------------------------------


def _request_file(package: BuiltPackage, tmp_path: Path) -> Path:
    path = tmp_path / "request.json"
    path.write_bytes(orjson.dumps(lookup(package)))
    return path


def test_vba_query_ignores_a_damaged_cache_file(package: BuiltPackage, tmp_path: Path) -> None:
    path = package.path / PackageLayout.DIGEST_CACHE
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"files": [truncated')
    request = _request_file(package, tmp_path)
    expected = router(False).query(package.path, lookup(package))
    done = vba("query", package.path, request)
    assert done.returncode == 0 and done.stderr == ""
    assert orjson.loads(done.stdout) == expected


def test_vba_query_no_digest_cache_writes_nothing(package: BuiltPackage, tmp_path: Path) -> None:
    request = _request_file(package, tmp_path)
    _read_only(package.path)
    try:
        before = tree_fingerprint(package.path)
        cache_home = Path(os.environ["XDG_CACHE_HOME"])
        home_before = sorted(cache_home.rglob("*"))
        done = vba("query", "--no-digest-cache", package.path, request)
        assert done.returncode == 0 and done.stderr == ""
        assert tree_fingerprint(package.path) == before
        assert sorted(cache_home.rglob("*")) == home_before
    finally:
        _writable(package.path)
