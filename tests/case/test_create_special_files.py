"""create_package with inputs that are FIFOs: a typed refusal at once, nothing left behind.

A plain `open()` of a FIFO blocks until a writer appears, and the kill that
ends the wait leaves the `.OUT.tmp-*` directory behind. Each case runs in a
child process with a timeout, so a regression fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.case import SAMPLE_DIR, sample_spec

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

CREATE_IN_CHILD = """
import json, sys
from viano_bug_analysis.case import create_package
from viano_bug_analysis.errors import CaseError
spec = json.loads(sys.argv[1]) if sys.argv[1].startswith("{") else sys.argv[1]
try:
    create_package(spec, sys.argv[2], base_dir=sys.argv[3])
except CaseError as err:
    print(json.dumps([err.code, err.details]))
else:
    print(json.dumps(None))
"""


def create_in_child(spec: object, out: Path) -> object:
    argument = spec if isinstance(spec, str) else json.dumps(spec)
    done = subprocess.run(
        [sys.executable, "-c", CREATE_IN_CHILD, argument, str(out), str(SAMPLE_DIR)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def test_a_fifo_as_the_zip_attachment(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "db.zip")
    spec = sample_spec()
    spec["attachments"][0].pop("directory")
    spec["attachments"][0]["zip"] = str(tmp_path / "db.zip")
    code, details = create_in_child(spec, tmp_path / "out")  # type: ignore[misc]
    assert code == "spec_invalid"
    assert (details["reason"], details["pointer"]) == (
        "zip is not a regular file",
        "/attachments/0/zip",
    )
    # The temporary package directory was removed: only the FIFO is left.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.zip"]


def test_a_fifo_as_the_spec_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "spec.json")
    code, details = create_in_child(str(tmp_path / "spec.json"), tmp_path / "out")  # type: ignore[misc]
    assert (code, details["reason"]) == ("spec_invalid", "spec file is not a regular file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.json"]


def test_a_fifo_inside_a_directory_attachment(tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "a.txt").write_text("x\n")
    os.mkfifo(folder / "b.txt")
    spec = sample_spec()
    spec["attachments"][0]["directory"] = str(folder)
    code, details = create_in_child(spec, tmp_path / "out")  # type: ignore[misc]
    assert (code, details["reason"]) == ("spec_invalid", "directory contains a special file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


def test_a_file_replaced_by_a_fifo_after_the_walk(tmp_path: Path) -> None:
    # The walk saw a regular file; by the time it is opened it is a FIFO.
    folder = tmp_path / "src"
    folder.mkdir()
    fifo = folder / "later.txt"
    os.mkfifo(fifo)
    child = f"""
import json, sys
from pathlib import Path
from viano_bug_analysis.case import create_package, inputs
from viano_bug_analysis.errors import CaseError
inputs._directory_files = lambda source, a_index: [("later.txt", Path({str(fifo)!r}))]
spec = json.loads(sys.argv[1])
try:
    create_package(spec, sys.argv[2], base_dir=sys.argv[3])
except CaseError as err:
    print(json.dumps([err.code, err.details["reason"]]))
"""
    spec = sample_spec()
    spec["attachments"][0]["directory"] = str(folder)
    done = subprocess.run(
        [sys.executable, "-c", child, json.dumps(spec), str(tmp_path / "out"), str(SAMPLE_DIR)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == ["spec_invalid", "directory contains a special file"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
