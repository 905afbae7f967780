"""Every hot native call releases the GIL: Python threads keep running meanwhile."""

from __future__ import annotations

import hashlib
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from viano_bug_analysis._native import RowSnapshot
from viano_bug_analysis.snapshot import (
    LineQuery,
    MemberRef,
    SnapshotArchive,
    SourceText,
    search_lines,
)


def longest_stall_ratio(call: Callable[[], object], attempts: int = 3) -> float:
    """Longest pause of the main thread while `call` runs in a worker, as a
    fraction of how long `call` takes alone. A call that holds the GIL
    stalls the main thread for its whole duration (ratio near 1 or more)
    every time; one that releases it lets the main thread run on (ratio near
    0), unless the OS itself deschedules the main thread on a loaded machine.
    So the best of a few attempts is taken: load can only make one attempt
    look worse, never make a call that holds the GIL look better."""
    return min(_stall_ratio(call) for _ in range(attempts))


def _stall_ratio(call: Callable[[], object]) -> float:
    alone = min(_duration(call) for _ in range(2))
    done = threading.Event()

    def worker() -> None:
        try:
            call()
        finally:
            done.set()

    thread = threading.Thread(target=worker)
    last = time.perf_counter()
    longest = 0.0
    thread.start()
    while not done.is_set():
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    thread.join()
    return longest / alone


def _duration(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def test_the_probe_detects_a_call_that_holds_the_gil() -> None:
    data = list(range(2_000_000, 0, -1)) * 3
    assert longest_stall_ratio(lambda: sorted(data), attempts=1) > 0.5


@pytest.fixture(scope="module")
def big_text() -> bytes:
    line = b"    if (player->GetQuestStatus(QUEST_X) == QUEST_STATUS_INCOMPLETE) credit();\n"
    return line * 200_000  # ~16 MB


def test_search_releases_the_gil(big_text: bytes) -> None:
    text = SourceText.decode(big_text)
    queries = [LineQuery("literal_ignore_case", "status_incomplete"), LineQuery("symbol", "credit")]
    assert (
        longest_stall_ratio(lambda: [search_lines([text], queries, threads=1) for _ in range(5)])
        < 0.5
    )


def test_decode_and_zip_read_release_the_gil(big_text: bytes, tmp_path: Path) -> None:
    path = tmp_path / "big.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("big.cpp", big_text)
    ref = MemberRef("big.cpp", hashlib.sha256(big_text).hexdigest(), len(big_text))
    archive = SnapshotArchive(path)
    stall = longest_stall_ratio(
        lambda: [archive.read_texts([ref], max_bytes=1 << 26, threads=1) for _ in range(3)]
    )
    assert stall < 0.5


def test_row_parse_and_lookup_release_the_gil() -> None:
    rows = [
        {"id": i, "name": f"row {i}", "flag": i % 2 == 0, "score": i / 7} for i in range(200_000)
    ]
    data = orjson.dumps(rows)
    assert longest_stall_ratio(lambda: [RowSnapshot.parse(data) for _ in range(3)]) < 0.5
    snapshot = RowSnapshot.parse(data)
    stall = longest_stall_ratio(
        lambda: [
            snapshot.lookup([("name", "row 199999")], columns=None, offset=0, limit=10)
            for _ in range(20)
        ]
    )
    assert stall < 0.5
