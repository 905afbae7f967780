"""Every hot native call releases the GIL: Python threads keep running meanwhile.

The check is direct, not a ratio of times: a worker thread runs the call
under a profile hook that marks the moment the native function is entered
(``c_call``) and left (``c_return``); the main thread waits for the entry
and then looks at the worker's stack. Seeing it outside the hook and not yet
returned means the main thread is running Python while the worker is inside
the native function, which only a call that released the GIL allows. A
call that holds the GIL runs to its return before the main thread gets to
look, so the probe says no (``test_the_probe_detects_a_call_that_holds_the_gil``).
Load on the machine can delay the main thread but cannot make a holding
call look released; the calls are long enough (tens of milliseconds) that a
releasing one is seen inside on the first try, and three tries are allowed.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def seen_inside(call: Callable[[], object], native: str, attempts: int = 3) -> bool:
    """Whether the main thread ran Python while a worker was inside ``native``
    (a C function's ``__qualname__``) during ``call``."""
    return any(_seen_inside_once(call, native) for _ in range(attempts))


def _seen_inside_once(call: Callable[[], object], native: str) -> bool:
    entered, left = threading.Event(), threading.Event()

    def hook(_frame: Any, event: str, arg: Any) -> None:
        if getattr(arg, "__qualname__", None) != native:
            return
        if event == "c_call":
            entered.set()
        elif event in ("c_return", "c_exception"):
            left.set()

    def worker() -> None:
        sys.setprofile(hook)
        try:
            call()
        finally:
            sys.setprofile(None)
            entered.set()
            left.set()

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait()
    seen = False
    while not left.is_set():
        frame = sys._current_frames().get(thread.ident or -1)
        codes = []
        while frame is not None:
            codes.append(frame.f_code)
            frame = frame.f_back
        # Inside the hook (or the Event it sets) the worker is not in the call yet.
        if codes and hook.__code__ not in codes and not left.is_set():
            seen = True
            break
    thread.join()
    return seen


def test_the_probe_detects_a_call_that_holds_the_gil() -> None:
    data = list(range(2_000_000, 0, -1))
    assert not seen_inside(lambda: sorted(data), "sorted")


@pytest.fixture(scope="module")
def big_text() -> bytes:
    line = b"    if (player->GetQuestStatus(QUEST_X) == QUEST_STATUS_INCOMPLETE) credit();\n"
    return line * 200_000  # ~16 MB


def test_search_releases_the_gil(big_text: bytes) -> None:
    text = SourceText.decode(big_text)
    queries = [LineQuery("literal_ignore_case", "status_incomplete"), LineQuery("symbol", "credit")]
    assert seen_inside(lambda: search_lines([text], queries, threads=1), "search_lines")


def test_decode_and_zip_read_release_the_gil(big_text: bytes, tmp_path: Path) -> None:
    assert seen_inside(lambda: SourceText.decode(big_text), "SourceText.decode")
    path = tmp_path / "big.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("big.cpp", big_text)
    ref = MemberRef("big.cpp", hashlib.sha256(big_text).hexdigest(), len(big_text))
    archive = SnapshotArchive(path)
    assert seen_inside(
        lambda: archive.read_texts([ref], max_bytes=1 << 26, threads=1), "ZipArchive.read_texts"
    )


def test_row_parse_and_lookup_release_the_gil() -> None:
    rows = [
        {"id": i, "name": f"row {i}", "flag": i % 2 == 0, "score": i / 7} for i in range(200_000)
    ]
    data = orjson.dumps(rows)
    assert seen_inside(lambda: RowSnapshot.parse(data), "RowSnapshot.parse")
    snapshot = RowSnapshot.parse(data)
    assert seen_inside(
        lambda: snapshot.lookup([("name", "row 199999")], columns=None, offset=0, limit=10),
        "RowSnapshot.lookup",
    )
