"""Opening an archive path that is not a regular file: refused at once, never blocking.

`open()` of a FIFO for reading waits for a writer, possibly forever. Each
case runs in a child process with a timeout, so a regression fails the test
instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from viano_bug_analysis.errors import ReadError
from viano_bug_analysis.snapshot import SnapshotArchive

OPEN_IN_CHILD = """
import json, sys
from viano_bug_analysis.errors import VbaError
from viano_bug_analysis.snapshot import SnapshotArchive
try:
    SnapshotArchive(sys.argv[1])
except VbaError as err:
    print(json.dumps([type(err).__name__, err.code, err.details]))
else:
    print(json.dumps(None))
"""


def open_in_child(path: Path) -> object:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_IN_CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "attachment.zip"
    os.mkfifo(fifo)
    assert open_in_child(fifo) == ["ReadError", "not_a_regular_file", {"kind": "fifo"}]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_symlink_to_a_fifo_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link.zip").symlink_to(tmp_path / "pipe")
    assert open_in_child(tmp_path / "link.zip") == [
        "ReadError",
        "not_a_regular_file",
        {"kind": "fifo"},
    ]


def test_directories_and_devices_are_refused(tmp_path: Path) -> None:
    for path, kind in [(tmp_path, "directory"), (Path("/dev/null"), "character_device")]:
        with pytest.raises(ReadError) as caught:
            SnapshotArchive(path)
        assert (caught.value.code, caught.value.details) == ("not_a_regular_file", {"kind": kind})
        assert str(path) not in str(caught.value)
