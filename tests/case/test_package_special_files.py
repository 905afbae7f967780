"""load_package / verify_attachment when a package file is a FIFO: a typed error at once.

Every command that takes a package (`vba query`, `vba investigate`,
`vba status`, `vba case verify`) loads it first, so a FIFO in place of the
manifest, the case or an attachment must not block the open. Each case runs
in a child process with a timeout, so a regression fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.case import CASE_REL, build_sample

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

LOAD_IN_CHILD = """
import json, sys
from viano_bug_analysis.case import load_package, verify_package
from viano_bug_analysis.errors import CaseError
try:
    verify_package(load_package(sys.argv[1]))
except CaseError as err:
    print(json.dumps([err.code, err.details.get("reason")]))
else:
    print(json.dumps(None))
"""


def load_in_child(package: Path) -> object:
    done = subprocess.run(
        [sys.executable, "-c", LOAD_IN_CHILD, str(package)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def replace_with_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("manifest.json", "manifest_invalid"),
        (CASE_REL, "case_missing"),
        ("attachments/db.zip", "attachment_missing"),
    ],
)
def test_a_fifo_in_the_package_is_refused_without_blocking(
    tmp_path: Path, name: str, code: str
) -> None:
    build_sample(tmp_path)
    replace_with_fifo(tmp_path / "pkg" / name)
    found = load_in_child(tmp_path / "pkg")
    assert isinstance(found, list)
    assert found[0] == code
