"""The native ZIP member reader against Python's `zipfile` + `hashlib`.

Differential: archives written by `zipfile` (seekable, streamed with data
descriptors, forced ZIP64) and by `zipcraft` (ZIP64 in both headers and the
end record) must read back byte-identical, with the same sizes and CRCs.
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import tempfile
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.native import zipcraft
from viano_bug_analysis._native import ZipArchive

MODES = ["seekable", "seekable_zip64", "streamed", "streamed_zip64", "zipcraft_zip64"]


class _Unseekable(io.RawIOBase):
    """A write-only stream: `zipfile` then writes data descriptors."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        return self.buffer.write(b)


def write_with_zipfile(members: list[tuple[str, bytes, int]], mode: str) -> bytes:
    streamed = mode.startswith("streamed")
    force_zip64 = mode.endswith("zip64")
    target: io.RawIOBase | io.BytesIO = _Unseekable() if streamed else io.BytesIO()
    with zipfile.ZipFile(target, "w") as zf:
        for name, data, method in members:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 2, 3, 4, 6))
            info.compress_type = method
            with zf.open(info, "w", force_zip64=force_zip64) as dest:
                dest.write(data)
    raw = target.buffer if isinstance(target, _Unseekable) else target
    return raw.getvalue()


def write_archive(members: list[tuple[str, bytes, int]], mode: str) -> bytes:
    if mode == "zipcraft_zip64":
        entries = [zipcraft.Entry(name, data, method, zip64=True) for name, data, method in members]
        return zipcraft.build(entries, zip64_end=True)
    return write_with_zipfile(members, mode)


@contextmanager
def archive_file(data: bytes) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "archive.zip"
        path.write_bytes(data)
        yield path


def pattern(seed: int, size: int) -> bytes:
    """Large-ish compressible content (source-like lines)."""
    rng = random.Random(seed)
    words = [b"def", b"return", b"self", b"\n", b"    ", b"value", b"(", b")", b"#", b"\xc3\xa9"]
    out = bytearray()
    while len(out) < size:
        out += rng.choice(words)
    return bytes(out[:size])


def noise(seed: int, size: int) -> bytes:
    """Incompressible content."""
    return random.Random(seed).randbytes(size)


contents = st.one_of(
    st.just(b""),
    st.binary(max_size=3000),
    st.builds(pattern, st.integers(0, 2**32), st.integers(0, 400_000)),
    st.builds(noise, st.integers(0, 2**32), st.integers(0, 100_000)),
    st.builds(lambda b, n: bytes([b]) * n, st.integers(0, 255), st.integers(0, 300_000)),
)
members_strategy = st.lists(
    st.tuples(contents, st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])),
    min_size=1,
    max_size=4,
).map(lambda ms: [(f"dir/member_{i}.bin", data, method) for i, (data, method) in enumerate(ms)])


def reference(path: Path, name: str) -> tuple[bytes, str]:
    with zipfile.ZipFile(path) as zf:
        data = zf.read(name)
    return data, hashlib.sha256(data).hexdigest()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(members=members_strategy, mode=st.sampled_from(MODES))
def test_read_bytes_matches_zipfile(members: list[tuple[str, bytes, int]], mode: str) -> None:
    with archive_file(write_archive(members, mode)) as path:
        archive = ZipArchive(path)
        for name, data, _method in members:
            expected, sha256 = reference(path, name)
            assert expected == data
            got = archive.read_bytes(name, sha256=sha256, size=len(data), max_bytes=len(data))
            assert type(got) is bytes
            assert got == expected
            archive.verify(name, sha256=sha256, size=len(data), max_bytes=1 << 40)


@settings(max_examples=40, deadline=None)
@given(members=members_strategy, mode=st.sampled_from(MODES))
def test_entries_match_infolist(members: list[tuple[str, bytes, int]], mode: str) -> None:
    with archive_file(write_archive(members, mode)) as path:
        entries = ZipArchive(str(path)).entries()
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    assert len(entries) == len(infos)
    for entry, info in zip(entries, infos, strict=True):
        assert set(entry) == {
            "name",
            "kind",
            "method",
            "compressed_size",
            "size",
            "crc32",
            "encrypted",
            "zip64",
        }
        assert entry["name"] == info.filename
        assert entry["kind"] == "file"
        assert entry["method"] == info.compress_type
        assert entry["size"] == info.file_size
        assert entry["compressed_size"] == info.compress_size
        assert entry["crc32"] == info.CRC
        assert entry["encrypted"] is False
        # zipfile only puts ZIP64 fields in the central directory when needed.
        assert entry["zip64"] is (mode == "zipcraft_zip64")


def test_path_like_and_str_paths(tmp_path: Path) -> None:
    data = pattern(1, 10_000)
    path = tmp_path / "a.zip"
    path.write_bytes(write_archive([("a", data, zipfile.ZIP_DEFLATED)], "seekable"))
    sha256 = hashlib.sha256(data).hexdigest()
    for arg in (path, str(path), os.fspath(path)):
        got = ZipArchive(arg).read_bytes("a", sha256=sha256, size=len(data), max_bytes=len(data))
        assert got == data
    # Upper-case hex is accepted too.
    archive = ZipArchive(path)
    archive.verify("a", sha256=sha256.upper(), size=len(data), max_bytes=len(data))


def test_directory_and_symlink_entries_from_zipfile(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.mkdir("folder")
        link = zipfile.ZipInfo("folder/link")
        link.create_system = 3
        link.external_attr = 0o120777 << 16
        zf.writestr(link, "target")
        zf.writestr("folder/file.txt", "content")
    path = tmp_path / "kinds.zip"
    path.write_bytes(buf.getvalue())
    kinds = {e["name"]: e["kind"] for e in ZipArchive(path).entries()}
    assert kinds == {"folder/": "directory", "folder/link": "symlink", "folder/file.txt": "file"}


@pytest.mark.parametrize("size", [0, 1, 255 * 1024, 256 * 1024, 256 * 1024 + 1, 3 << 20])
@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_window_boundaries(tmp_path: Path, size: int, method: int) -> None:
    data = pattern(size, size)
    path = tmp_path / "w.zip"
    path.write_bytes(write_archive([("m", data, method)], "seekable"))
    sha256 = hashlib.sha256(data).hexdigest()
    archive = ZipArchive(path)
    assert archive.read_bytes("m", sha256=sha256, size=size, max_bytes=size) == data
    archive.verify("m", sha256=sha256, size=size, max_bytes=size)


def test_concurrent_reads_share_one_archive(tmp_path: Path) -> None:
    members = [(f"m{i}", pattern(i, 300_000 + i), zipfile.ZIP_DEFLATED) for i in range(4)]
    path = tmp_path / "c.zip"
    path.write_bytes(write_archive(members, "seekable"))
    archive = ZipArchive(path)

    def read_one(i: int) -> bytes:
        name, data, _ = members[i % len(members)]
        sha256 = hashlib.sha256(data).hexdigest()
        return archive.read_bytes(name, sha256=sha256, size=len(data), max_bytes=len(data))

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(read_one, range(16)))
    for i, got in enumerate(results):
        assert got == members[i % len(members)][1]
