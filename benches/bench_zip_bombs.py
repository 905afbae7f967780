"""Zip bombs: how soon a verified read stops, beside inflating the same stream in zlib.

A member whose deflate stream inflates to 256 MiB of zeros, stored three
ways (tests/native/test_zip_adversarial.py checks the outcomes and memory;
the times are here, not asserted in tests):

* ``lying-sizes``: the directory and local header claim 100 bytes; the read
  stops at byte 101 (``size_mismatch``);
* ``stops-at-max-bytes``: the sizes claim 1 MiB and so does the limit; the
  read stops when the stream passes it (``byte_limit_exceeded``);
* ``honest-sizes``: the sizes say 256 MiB, over a 1 MiB limit; refused
  before the stream is read.

The reference row, ``baseline-zlib-1mib``, is Python's zlib inflating the
first 1 MiB of the same stream: the least work any reader that checks the
limit while inflating must do.
"""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.native import zipcraft
from tests.native.zipcraft import DEFLATED, Entry
from viano_bug_analysis._native import ZipArchive
from viano_bug_analysis.errors import VbaError

GROUP = "zip bombs: a verified read of a 256 MiB deflate bomb, by what its sizes claim"
BOMB = 256 << 20
LIMIT = 1 << 20


@pytest.fixture(scope="module")
def stream() -> bytes:
    return zipcraft.deflate_zeros(BOMB)


def _archive(tmp: Path, name: str, entry: Entry) -> ZipArchive:
    path = tmp / f"{name}.zip"
    path.write_bytes(zipcraft.build([entry]))
    return ZipArchive(str(path))


def _refused(call: Any, code: str) -> None:
    try:
        call()
    except VbaError as err:
        assert err.code == code, err.code
    else:
        raise AssertionError("the bomb was read")


def test_baseline_zlib_1mib(benchmark: Any, stream: bytes) -> None:
    benchmark.group = GROUP
    benchmark.name = "baseline-zlib-1mib"

    def inflate() -> None:
        assert len(zlib.decompressobj(-15).decompress(stream, LIMIT)) == LIMIT

    benchmark(inflate)


def test_lying_sizes(benchmark: Any, stream: bytes, tmp_path: Path) -> None:
    benchmark.group = GROUP
    benchmark.name = "lying-sizes"
    claimed = b"x" * 100
    archive = _archive(tmp_path, "lying", Entry("bomb", claimed, DEFLATED, payload=stream))
    sha = hashlib.sha256(claimed).hexdigest()
    benchmark(
        lambda: _refused(
            lambda: archive.verify("bomb", sha256=sha, size=100, max_bytes=1 << 30), "size_mismatch"
        )
    )


def test_stops_at_max_bytes(benchmark: Any, stream: bytes, tmp_path: Path) -> None:
    benchmark.group = GROUP
    benchmark.name = "stops-at-max-bytes"
    claimed = bytes(LIMIT)
    archive = _archive(tmp_path, "limit", Entry("bomb", claimed, DEFLATED, payload=stream))
    sha = hashlib.sha256(claimed).hexdigest()

    def read() -> None:
        _refused(
            lambda: archive.verify("bomb", sha256=sha, size=LIMIT, max_bytes=LIMIT),
            "byte_limit_exceeded",
        )

    benchmark(read)


def test_honest_sizes(benchmark: Any, stream: bytes, tmp_path: Path) -> None:
    benchmark.group = GROUP
    benchmark.name = "honest-sizes"
    entry = Entry("bomb", b"", DEFLATED, payload=stream, size=BOMB, crc32=0)
    archive = _archive(tmp_path, "honest", entry)

    def read() -> None:
        _refused(
            lambda: archive.verify("bomb", sha256="0" * 64, size=BOMB, max_bytes=LIMIT),
            "byte_limit_exceeded",
        )

    benchmark(read)
