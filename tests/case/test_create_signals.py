"""`vba case create` stopped by a signal: nothing of its temporary directory outlives it.

SIGTERM becomes a normal exit (143) that runs the cleanup; SIGKILL cannot be
caught, so the next `case create` of the same OUT removes the `.OUT.tmp-*`
directory a dead process left, and never one a live process is building in.
The child pauses inside the build (a patched `_build`) so that the signal
arrives while the temporary directory exists.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.case import SAMPLE_SPEC
from viano_bug_analysis.case import create_package

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signals")

PAUSED_CREATE = """
import sys, time
from pathlib import Path
from viano_bug_analysis.case import create as create_module
from viano_bug_analysis.cli import main
build = create_module._build
def paused(spec, base, temp):
    build(spec, base, temp)
    Path(sys.argv[3]).write_text("building")
    time.sleep(120)
create_module._build = paused
sys.exit(main(["case", "create", sys.argv[1], sys.argv[2]]))
"""


def start_paused(out: Path, ready: Path) -> subprocess.Popen[bytes]:
    log = ready.with_suffix(".stderr")
    with log.open("wb") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-c", PAUSED_CREATE, str(SAMPLE_SPEC), str(out), str(ready)],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert child.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "the child never reached the build"
        time.sleep(0.05)
    return child


def temp_dirs(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".out.tmp-"))


def test_sigterm_exits_normally_and_removes_the_temporary_directory(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    child = start_paused(work / "out", tmp_path / "ready")
    assert len(temp_dirs(work)) == 1
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=30) == 128 + signal.SIGTERM
    assert sorted(p.name for p in work.iterdir()) == []


def test_the_next_create_removes_what_a_sigkill_left(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    child = start_paused(work / "out", tmp_path / "ready")
    child.kill()
    child.wait(timeout=30)
    assert len(temp_dirs(work)) == 1
    (work / ".out.tmp-not-ours").mkdir()  # not the pattern create_package makes
    (work / ".other.tmp-1-0123456789abcdef").mkdir()  # another OUT's
    create_package(SAMPLE_SPEC, work / "out")
    assert sorted(p.name for p in work.iterdir()) == [
        ".other.tmp-1-0123456789abcdef",
        ".out.tmp-not-ours",
        "out",
    ]


def test_a_live_builders_temporary_directory_is_left_alone(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    child = start_paused(work / "out", tmp_path / "ready")
    try:
        (held,) = temp_dirs(work)
        create_package(SAMPLE_SPEC, work / "other")
        create_package(SAMPLE_SPEC, work / "out")
        assert (work / held).is_dir()
    finally:
        child.kill()
        child.wait(timeout=30)
    assert os.path.isdir(work / "out")
