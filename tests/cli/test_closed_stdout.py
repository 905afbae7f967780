"""A reader that stops reading (`vba status PKG | head -2`) ends the command
quietly: no traceback on stderr, exit 141 (128 + SIGPIPE) as a shell reports
for a pipe writer. Found on the README journey: `vba status | head -2` printed
a BrokenPipeError traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import REPO, sample_package


def run_into_closed_pipe(*args: str) -> subprocess.CompletedProcess[bytes]:
    """Runs vba with stdout a pipe whose reading end is already closed."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "viano_bug_analysis.cli", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            cwd=REPO,
            check=False,
            timeout=120,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("command", ["status", "report", "schema"])
def test_a_closed_stdout_ends_the_command_without_a_traceback(tmp_path: Path, command: str) -> None:
    package = sample_package(tmp_path)
    args = {"status": ["status", str(package)], "report": ["report", str(package)]}
    done = run_into_closed_pipe(*args.get(command, ["schema", "case-spec-v1"]))
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    assert done.stderr == b""
    assert done.returncode == 141
