"""Headless chromium for the report's browser test (Debian's ``chromium`` package).

``scripts/with_test_services.sh`` (and so ``make test``) installs it when it
is missing and passes its path in ``VBA_TEST_CHROMIUM``; otherwise it is
looked up on ``PATH``. Without it the test skips in a plain ``pytest`` run
and fails under ``CI=true``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# A stable place for the screenshot, git-ignored (/.artifacts/).
ARTIFACT = REPO / ".artifacts" / "report-screenshot.png"
# Screenshots kept in this run, printed in the terminal summary (conftest.py).
WRITTEN: list[Path] = []
HOW_TO_ENABLE = (
    "headless chromium not found: install Debian's chromium package "
    "(apt-get install chromium) or run the tests through scripts/with_test_services.sh "
    "(make test), which installs it"
)


def chromium() -> str:
    """The chromium executable, or a skip (a failure under CI=true) saying how to get one."""
    path = os.environ.get("VBA_TEST_CHROMIUM") or shutil.which("chromium")
    path = path or shutil.which("chromium-browser")
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(HOW_TO_ENABLE + " (CI=true: the browser test must run)")
    pytest.skip(HOW_TO_ENABLE)


def run_chromium(executable: str, profile: Path, *args: str) -> bytes:
    """One headless chromium run with its own profile; its stdout."""
    command = [
        executable,
        "--headless",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        *args,
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.insert(1, "--no-sandbox")  # chromium's sandbox refuses to run as root
    done = subprocess.run(command, capture_output=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return done.stdout
