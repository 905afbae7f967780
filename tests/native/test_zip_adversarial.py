"""Hostile and broken archives: every failure is a typed error with a stable
code, nothing crashes, a zip bomb stops at the limit, and no error message
or detail ever contains member content."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.native import zipcraft
from tests.native.zipcraft import DEFLATED, STORED, Descriptor, Entry, Local
from viano_bug_analysis._native import ZipArchive
from viano_bug_analysis.errors import (
    ArchiveError,
    IntegrityError,
    InvalidArgumentError,
    LimitError,
    ReadError,
    VbaError,
)

MARKER = b"SECRET-MEMBER-CONTENT-5f1c"
CONTENT = b"header line\n" + MARKER + b"\n" + b"body " * 2000
SHA = hashlib.sha256(CONTENT).hexdigest()
UNLIMITED = 1 << 40


def assert_no_leak(err: BaseException) -> None:
    marker = MARKER.decode()
    assert marker not in str(err)
    assert marker not in repr(err)
    if isinstance(err, VbaError):
        assert marker not in repr(err.details)
        for value in err.details.values():
            assert isinstance(value, int | str)


def expect_error(cls: type[VbaError], code: str, fn: Callable[[], Any]) -> VbaError:
    with pytest.raises(cls) as info:
        fn()
    err = info.value
    assert err.code == code, (err.code, str(err))
    assert_no_leak(err)
    return err


def write(tmp_path: Path, data: bytes, name: str = "archive.zip") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def open_zip(tmp_path: Path, entries: list[Entry], **build: Any) -> ZipArchive:
    return ZipArchive(write(tmp_path, zipcraft.build(entries, **build)))


def read(archive: ZipArchive, name: str, data: bytes = CONTENT, **overrides: Any) -> bytes:
    kwargs: dict[str, Any] = {
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "max_bytes": UNLIMITED,
    }
    kwargs.update(overrides)
    return archive.read_bytes(name, **kwargs)


def verify(archive: ZipArchive, name: str, data: bytes = CONTENT, **overrides: Any) -> None:
    kwargs: dict[str, Any] = {
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "max_bytes": UNLIMITED,
    }
    kwargs.update(overrides)
    archive.verify(name, **kwargs)


def both(archive: ZipArchive, name: str, data: bytes = CONTENT, **overrides: Any) -> Any:
    """Reading and verifying fail the same way; returns a callable for expect_error."""

    def run() -> None:
        try:
            verify(archive, name, data, **overrides)
        except VbaError as first:
            with pytest.raises(type(first)) as second:
                read(archive, name, data, **overrides)
            assert second.value.code == first.code
            assert second.value.details == first.details
            raise
        read(archive, name, data, **overrides)

    return run


# --- happy paths of the forged formats ------------------------------------------


@pytest.mark.parametrize("method", [STORED, DEFLATED])
@pytest.mark.parametrize("zip64", [False, True])
@pytest.mark.parametrize("descriptor", [None, Descriptor(), Descriptor(signature=False)])
def test_forged_formats_read_back(
    tmp_path: Path, method: int, zip64: bool, descriptor: Descriptor | None
) -> None:
    entries = [
        Entry("first.txt", b"small", method),
        Entry("m.txt", CONTENT, method, zip64=zip64, data_descriptor=descriptor),
    ]
    archive = open_zip(tmp_path, entries, zip64_end=zip64, comment=b"comment", prefix=b"")
    assert read(archive, "m.txt") == CONTENT
    assert read(archive, "first.txt", b"small") == b"small"
    entry = archive.entries()[1]
    assert entry["zip64"] is zip64
    assert entry["size"] == len(CONTENT)


# --- truncation and corruption ---------------------------------------------------


def sample_archive() -> tuple[bytes, list[tuple[str, bytes]]]:
    members = [
        ("a.txt", CONTENT),
        ("b.bin", bytes(range(256)) * 40),
        ("c.txt", MARKER * 3),
    ]
    entries = [
        Entry("a.txt", CONTENT, DEFLATED),
        Entry("b.bin", members[1][1], STORED, zip64=True),
        Entry("c.txt", members[2][1], DEFLATED, data_descriptor=Descriptor()),
    ]
    return zipcraft.build(entries, zip64_end=True, comment=b"end"), members


def exercise(path: Path, members: list[tuple[str, bytes]]) -> None:
    """Open and read everything; only typed archive/integrity/limit errors."""
    try:
        archive = ZipArchive(path)
        for name, data in members:
            try:
                assert read(archive, name, data, max_bytes=1 << 20) == data
            except (ArchiveError, IntegrityError, LimitError) as err:
                assert_no_leak(err)
    except (ArchiveError, IntegrityError) as err:
        assert_no_leak(err)


def test_truncated_archives_fail_typed(tmp_path: Path) -> None:
    data, members = sample_archive()
    cuts = sorted(set(range(0, len(data), 97)) | set(range(len(data) - 200, len(data))))
    for cut in cuts:
        path = write(tmp_path, data[:cut], f"cut{cut}.zip")
        with pytest.raises((ArchiveError, IntegrityError)) as info:
            exercise_strict(path, members)
        assert_no_leak(info.value)


def exercise_strict(path: Path, members: list[tuple[str, bytes]]) -> None:
    archive = ZipArchive(path)
    for name, data in members:
        read(archive, name, data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    edits=st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 255)), min_size=1, max_size=6)
)
def test_random_corruption_fails_typed(
    tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[int, int]]
) -> None:
    data, members = sample_archive()
    corrupted = bytearray(data)
    for at, value in edits:
        corrupted[at % len(corrupted)] = value
    exercise(write(tmp_path_factory.mktemp("corrupt"), bytes(corrupted)), members)


def test_not_a_zip_and_missing_file(tmp_path: Path) -> None:
    for junk in [b"", b"PK", b"not a zip at all" * 100, b"PK\x05\x06" + bytes(10)]:
        expect_error(ArchiveError, "zip_corrupt", lambda j=junk: ZipArchive(write(tmp_path, j)))
    expect_error(ReadError, "io_error", lambda: ZipArchive(tmp_path / "missing.zip"))
    # Refused before it is read (a FIFO would block): tests/native/test_zip_special_files.py.
    expect_error(ReadError, "not_a_regular_file", lambda: ZipArchive(tmp_path))


def test_trailing_garbage_and_multi_disk(tmp_path: Path) -> None:
    good = zipcraft.build([Entry("m.txt", CONTENT)])
    expect_error(ArchiveError, "zip_corrupt", lambda: ZipArchive(write(tmp_path, good + b"xx")))
    for zip64_end in (False, True):
        multi = zipcraft.build([Entry("m.txt", CONTENT)], zip64_end=zip64_end, disk_number=1)
        err = expect_error(
            ArchiveError, "zip_corrupt", lambda m=multi: ZipArchive(write(tmp_path, m))
        )
        assert err.details == {"what": "multi-disk archives are not supported"}


# --- integrity ----------------------------------------------------------------------


@pytest.mark.parametrize("method", [STORED, DEFLATED])
def test_crc_mismatch(tmp_path: Path, method: int) -> None:
    archive = open_zip(tmp_path, [Entry("m.txt", CONTENT, method, crc32=12345)])
    expect_error(IntegrityError, "crc_mismatch", both(archive, "m.txt"))


@pytest.mark.parametrize("method", [STORED, DEFLATED])
def test_expected_size_differs_from_archive(tmp_path: Path, method: int) -> None:
    archive = open_zip(tmp_path, [Entry("m.txt", CONTENT, method)])
    err = expect_error(
        IntegrityError, "size_mismatch", both(archive, "m.txt", size=len(CONTENT) - 1)
    )
    assert err.details == {"expected": len(CONTENT) - 1, "actual": len(CONTENT)}


def test_stream_shorter_than_declared(tmp_path: Path) -> None:
    payload = zipcraft.deflate(CONTENT[:-10])
    archive = open_zip(tmp_path, [Entry("m.txt", CONTENT, DEFLATED, payload=payload)])
    err = expect_error(IntegrityError, "size_mismatch", both(archive, "m.txt"))
    assert err.details == {"expected": len(CONTENT), "actual": len(CONTENT) - 10}


@pytest.mark.parametrize("method", [STORED, DEFLATED])
def test_wrong_expected_sha256(tmp_path: Path, method: int) -> None:
    archive = open_zip(tmp_path, [Entry("m.txt", CONTENT, method)])
    wrong = hashlib.sha256(b"something else").hexdigest()
    expect_error(IntegrityError, "hash_mismatch", both(archive, "m.txt", sha256=wrong))


def test_deflate_stream_damage(tmp_path: Path) -> None:
    full = zipcraft.deflate(CONTENT)
    cases = [
        (full[: len(full) // 2], "zip_truncated"),
        (b"", "zip_truncated"),
        (full + b"junk", "zip_corrupt"),
        (b"\xff" * 40, "zip_corrupt"),
    ]
    for payload, code in cases:
        archive = open_zip(tmp_path, [Entry("m.txt", CONTENT, DEFLATED, payload=payload)])
        expect_error(ArchiveError, code, both(archive, "m.txt"))


# --- limits and zip bombs ----------------------------------------------------------

BOMB_SIZE = 256 << 20

BOMB_SCRIPT = textwrap.dedent(
    """
    import json, resource, sys, time
    from viano_bug_analysis._native import ZipArchive
    from viano_bug_analysis.errors import VbaError

    path, sha256, size, max_bytes, method = sys.argv[1:6]
    archive = ZipArchive(path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        getattr(archive, method)("bomb", sha256=sha256, size=int(size), max_bytes=int(max_bytes))
        outcome = None
    except VbaError as err:
        outcome = [type(err).__name__, err.code, err.details]
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"outcome": outcome, "rss_growth_kib": after - before, "seconds": elapsed}))
    """
)


@pytest.fixture(scope="module")
def bomb_payload() -> bytes:
    return zipcraft.deflate_zeros(BOMB_SIZE)


def run_bomb(path: Path, sha256: str, size: int, max_bytes: int, method: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", BOMB_SCRIPT, str(path), sha256, str(size), str(max_bytes), method],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    result: dict[str, Any] = json.loads(proc.stdout)
    # Far below the 256 MiB the stream inflates to: the reader never holds more
    # than the limit. (How long a bomb takes is benches/bench_zip_bombs.py's;
    # the subprocess timeout above only bounds a hang.)
    assert result["rss_growth_kib"] < 16 * 1024, result
    return result


@pytest.mark.parametrize("method", ["verify", "read_bytes"])
def test_bomb_with_lying_sizes_stops_early(
    tmp_path: Path, bomb_payload: bytes, method: str
) -> None:
    claimed = b"x" * 100
    # Central directory and local header both claim 100 bytes.
    path = write(tmp_path, zipcraft.build([Entry("bomb", claimed, DEFLATED, payload=bomb_payload)]))
    sha256 = hashlib.sha256(claimed).hexdigest()
    result = run_bomb(path, sha256, 100, 1 << 30, method)
    assert result["outcome"] == [
        "IntegrityError",
        "size_mismatch",
        {"expected": 100, "actual": 101},
    ]
    result = run_bomb(path, sha256, 100, 100, method)
    assert result["outcome"] == ["LimitError", "byte_limit_exceeded", {"limit": 100}]


@pytest.mark.parametrize("method", ["verify", "read_bytes"])
def test_bomb_stops_at_max_bytes_while_inflating(
    tmp_path: Path, bomb_payload: bytes, method: str
) -> None:
    limit = 1 << 20
    claimed = bytes(limit)  # sizes say 1 MiB, the stream holds 256 MiB
    entry = Entry("bomb", claimed, DEFLATED, payload=bomb_payload)
    path = write(tmp_path, zipcraft.build([entry]))
    result = run_bomb(path, hashlib.sha256(claimed).hexdigest(), limit, limit, method)
    assert result["outcome"] == ["LimitError", "byte_limit_exceeded", {"limit": limit}]


@pytest.mark.parametrize("method", ["verify", "read_bytes"])
def test_honest_bomb_rejected_before_inflating(
    tmp_path: Path, bomb_payload: bytes, method: str
) -> None:
    entry = Entry("bomb", b"", DEFLATED, payload=bomb_payload, size=BOMB_SIZE, crc32=0)
    path = write(tmp_path, zipcraft.build([entry]))
    sha256 = "0" * 64
    result = run_bomb(path, sha256, BOMB_SIZE, 1 << 20, method)
    assert result["outcome"] == ["LimitError", "byte_limit_exceeded", {"limit": 1 << 20}]
    # Before inflating means the stream is never read: the same entry over bytes
    # that are no deflate stream at all is refused the same way (a reader that
    # inflated first would say zip_corrupt).
    garbage = Entry(
        "bomb", b"", DEFLATED, payload=b"\xff" * len(bomb_payload), size=BOMB_SIZE, crc32=0
    )
    path = write(tmp_path, zipcraft.build([garbage]))
    result = run_bomb(path, sha256, BOMB_SIZE, 1 << 20, method)
    assert result["outcome"] == ["LimitError", "byte_limit_exceeded", {"limit": 1 << 20}]


def test_limit_below_expected_size(tmp_path: Path) -> None:
    archive = open_zip(tmp_path, [Entry("m.txt", CONTENT, DEFLATED)])
    err = expect_error(LimitError, "byte_limit_exceeded", both(archive, "m.txt", max_bytes=100))
    assert err.details == {"limit": 100}
    assert read(archive, "m.txt", max_bytes=len(CONTENT)) == CONTENT


# --- unreadable members --------------------------------------------------------------


def test_encrypted_flag(tmp_path: Path) -> None:
    archive = open_zip(tmp_path, [Entry("m.txt", CONTENT, DEFLATED, flags=zipcraft.FLAG_ENCRYPTED)])
    assert archive.entries()[0]["encrypted"] is True
    expect_error(ArchiveError, "zip_encrypted", both(archive, "m.txt"))


@pytest.mark.parametrize("method", [1, 9, 12, 14, 93, 95, 99])
def test_unsupported_methods(tmp_path: Path, method: int) -> None:
    archive = open_zip(tmp_path, [Entry("m.txt", CONTENT, method, payload=b"opaque bytes")])
    err = expect_error(ArchiveError, "zip_unsupported_method", both(archive, "m.txt"))
    assert err.details == {"method": method}


def test_member_not_found(tmp_path: Path) -> None:
    archive = open_zip(tmp_path, [Entry("Dir/M.txt", CONTENT)])
    for name in ["dir/m.txt", "Dir/M.txt/", "Dir\\M.txt", "M.txt", ""]:
        expect_error(ArchiveError, "zip_member_not_found", both(archive, name))
    assert read(archive, "Dir/M.txt") == CONTENT


def test_duplicate_names_are_all_unreadable(tmp_path: Path) -> None:
    archive = open_zip(
        tmp_path,
        [Entry("same.txt", CONTENT), Entry("other", b"o"), Entry("same.txt", b"evil", DEFLATED)],
    )
    kinds = [e["kind"] for e in archive.entries()]
    assert kinds == ["duplicate", "file", "duplicate"]
    err = expect_error(ArchiveError, "zip_member_unsafe", both(archive, "same.txt"))
    assert err.details == {"reason": "duplicate"}
    expect_error(ArchiveError, "zip_member_unsafe", both(archive, "same.txt", b"evil"))
    assert read(archive, "other", b"o") == b"o"


@pytest.mark.parametrize(
    "name",
    ["../x", "a/../../x", "/etc/passwd", "C:\\x", "c:x", "a\\..\\..\\x", "\\\\server\\share", ".."],
)
def test_traversal_names(tmp_path: Path, name: str) -> None:
    archive = open_zip(tmp_path, [Entry(name, CONTENT)])
    assert archive.entries()[0]["kind"] == "unsafe_path"
    err = expect_error(ArchiveError, "zip_member_unsafe", both(archive, name))
    assert err.details == {"reason": "unsafe_path"}


def test_harmless_dots_are_files(tmp_path: Path) -> None:
    archive = open_zip(tmp_path, [Entry("a..b/.hidden/..c", CONTENT)])
    assert archive.entries()[0]["kind"] == "file"
    assert read(archive, "a..b/.hidden/..c") == CONTENT


def test_symlink_and_directory_entries(tmp_path: Path) -> None:
    archive = open_zip(
        tmp_path,
        [zipcraft.symlink("link", b"/etc/passwd"), Entry("folder/"), Entry("folder/f", CONTENT)],
    )
    assert [e["kind"] for e in archive.entries()] == ["symlink", "directory", "file"]
    err = expect_error(ArchiveError, "zip_member_unsafe", both(archive, "link", b"/etc/passwd"))
    assert err.details == {"reason": "symlink"}
    err = expect_error(ArchiveError, "zip_member_unsafe", both(archive, "folder/", b""))
    assert err.details == {"reason": "directory"}


def test_symlink_mode_from_non_unix_host_is_a_file(tmp_path: Path) -> None:
    entry = Entry("w", CONTENT, version_made_by=0x0014, external_attr=zipcraft.SYMLINK_ATTRS)
    archive = open_zip(tmp_path, [entry])
    assert archive.entries()[0]["kind"] == "file"


@pytest.mark.parametrize("raw_name", [b"caf\xe9.txt", b"\xff\xfe", b"a\x00b", b""])
def test_bad_names(tmp_path: Path, raw_name: bytes) -> None:
    archive = open_zip(tmp_path, [Entry(raw_name, CONTENT)])
    entry = archive.entries()[0]
    assert entry["kind"] == "bad_name"
    assert entry["name"] == raw_name.decode("utf-8", "replace")
    err = expect_error(ArchiveError, "zip_member_unsafe", both(archive, entry["name"]))
    assert err.details == {"reason": "bad_name"}


# --- structure -----------------------------------------------------------------------


def test_overlapping_entries(tmp_path: Path) -> None:
    payload = zipcraft.deflate(CONTENT)
    # Two central entries sharing one local header (the classic overlap bomb).
    same = [Entry("a", CONTENT, DEFLATED), Entry("b", CONTENT, DEFLATED, header_offset=0)]
    err = expect_error(ArchiveError, "zip_corrupt", lambda: open_zip(tmp_path, same))
    assert err.details == {"what": "member data overlaps another entry"}
    # Compressed data claiming to run over the next local header.
    longer = [
        Entry("a", CONTENT, DEFLATED, compressed_size=len(payload) + 40),
        Entry("b", b"x"),
    ]
    expect_error(ArchiveError, "zip_corrupt", lambda: open_zip(tmp_path, longer))
    # ... or over the central directory.
    into_cd = [Entry("a", CONTENT, DEFLATED, compressed_size=len(payload) + 40)]
    err = expect_error(ArchiveError, "zip_corrupt", lambda: open_zip(tmp_path, into_cd))
    assert err.details == {"what": "member data overlaps the central directory"}
    # An offset beyond the file.
    beyond = [Entry("a", CONTENT, zip64=True, header_offset=1 << 40)]
    expect_error(ArchiveError, "zip_corrupt", lambda: open_zip(tmp_path, beyond))


LOCAL_MISMATCHES = [
    (Local(signature=0x12345678), "signature"),
    (Local(name=b"M.txt"), "name"),
    (Local(flags=zipcraft.FLAG_ENCRYPTED), "encrypted"),
    (Local(flags=zipcraft.FLAG_DATA_DESCRIPTOR), "data_descriptor"),
    (Local(method=STORED), "method"),
    (Local(crc32=1), "crc32"),
    (Local(size=len(CONTENT) + 1), "size"),
    (Local(compressed_size=10), "compressed_size"),
]


@pytest.mark.parametrize(("local", "field"), LOCAL_MISMATCHES)
@pytest.mark.parametrize("zip64", [False, True])
def test_local_header_mismatch(tmp_path: Path, local: Local, field: str, zip64: bool) -> None:
    archive = open_zip(tmp_path, [Entry("m.txt", CONTENT, DEFLATED, zip64=zip64, local=local)])
    err = expect_error(ArchiveError, "zip_header_mismatch", both(archive, "m.txt"))
    assert err.details == {"field": field}


@pytest.mark.parametrize(
    ("descriptor", "field"),
    [
        (Descriptor(crc32=7), "descriptor_crc32"),
        (Descriptor(size=3), "descriptor_size"),
        (Descriptor(compressed_size=3), "descriptor_compressed_size"),
        (Descriptor(signature=False, size=3), "descriptor_size"),
    ],
)
@pytest.mark.parametrize("zip64", [False, True])
def test_data_descriptor_mismatch(
    tmp_path: Path, descriptor: Descriptor, field: str, zip64: bool
) -> None:
    entry = Entry("m.txt", CONTENT, DEFLATED, zip64=zip64, data_descriptor=descriptor)
    archive = open_zip(tmp_path, [entry])
    err = expect_error(ArchiveError, "zip_header_mismatch", both(archive, "m.txt"))
    assert err.details == {"field": field}


def test_data_descriptor_ignores_zeroed_local_fields(tmp_path: Path) -> None:
    entry = Entry("m.txt", CONTENT, DEFLATED, data_descriptor=Descriptor(), local=Local(crc32=99))
    assert read(open_zip(tmp_path, [entry]), "m.txt") == CONTENT


# --- arguments -------------------------------------------------------------------


BAD_SHA256 = [
    "",
    "abc",
    SHA[:-1],
    SHA + "0",
    "g" * 64,
    "é" + SHA[2:],
    " " + SHA[1:],
    SHA[:-1] + "\n",
]


@pytest.mark.parametrize("bad", BAD_SHA256)
def test_bad_sha256_argument(tmp_path: Path, bad: str) -> None:
    archive = open_zip(tmp_path, [Entry("m.txt", CONTENT)])
    err = expect_error(InvalidArgumentError, "invalid_argument", both(archive, "m.txt", sha256=bad))
    assert "sha256" in str(err)


@pytest.mark.parametrize(
    "overrides", [{"size": -1}, {"max_bytes": -5}, {"size": 1 << 64}, {"max_bytes": 1.5}]
)
def test_bad_size_arguments(tmp_path: Path, overrides: dict[str, Any]) -> None:
    archive = open_zip(tmp_path, [Entry("m.txt", CONTENT)])
    expect_error(InvalidArgumentError, "invalid_argument", both(archive, "m.txt", **overrides))


def test_errors_never_contain_content(tmp_path: Path) -> None:
    """Sweep of failure modes over an archive whose every member holds the marker."""
    archive = open_zip(
        tmp_path,
        [
            Entry("ok.txt", CONTENT, DEFLATED),
            Entry("crc.txt", CONTENT, DEFLATED, crc32=1),
            Entry("enc.txt", CONTENT, flags=zipcraft.FLAG_ENCRYPTED),
        ],
    )
    failures: list[Callable[[], Any]] = [
        both(archive, "ok.txt", sha256="1" * 64),
        both(archive, "ok.txt", size=5),
        both(archive, "ok.txt", max_bytes=5),
        both(archive, "crc.txt"),
        both(archive, "enc.txt"),
        both(archive, MARKER.decode()),
    ]
    for fn in failures:
        with pytest.raises(VbaError) as info:
            fn()
        assert_no_leak(info.value)
