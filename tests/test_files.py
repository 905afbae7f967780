"""Operator-supplied files: a FIFO (or a directory) is refused at once, never waited on.

Each entry point runs in a child process with a timeout, so a regression
fails instead of hanging the suite. The error codes are the ones each input
already documents (docs/errors.md); only the wait is gone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis.files import read_regular_file

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

PRELUDE = """
import json, sys
from pathlib import Path
from viano_bug_analysis.errors import VbaError
fifo = sys.argv[1]
try:
    run(fifo)
except VbaError as err:
    print(json.dumps([err.code, err.details]))
else:
    print(json.dumps(None))
"""


def in_child(body: str, path: Path) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", body + PRELUDE, str(path)],
        capture_output=True,
        text=True,
        timeout=15,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "input.toml"
    os.mkfifo(path)
    return path


NOT_REGULAR = {"reason": "not_a_regular_file"}
PROFILE_REFUSAL = ("profile_unreadable", {"key": "", **NOT_REGULAR})

# entry point: (the code of run(path), the expected code and details)
ENTRY_POINTS: dict[str, tuple[str, tuple[str, dict[str, Any]]]] = {
    "request file": (
        "from viano_bug_analysis.cli import read_json_input\n"
        "def run(path): read_json_input(path, kind='request', max_bytes=1024)",
        ("input_unreadable", NOT_REGULAR),
    ),
    "api key file": (
        "from viano_bug_analysis.investigation.llm.config import LlmConfig, resolve_api_key\n"
        "def run(path): resolve_api_key("
        "LlmConfig(base_urls=('http://127.0.0.1:9/v1',), model='m', api_key_file=path))",
        ("llm_key_missing", {"source": "file", "kind": "not_a_regular_file"}),
    ),
    "profile file": (
        "from viano_bug_analysis.profiles import load_profile\ndef run(path): load_profile(path)",
        PROFILE_REFUSAL,
    ),
    "enrichment profile file": (
        "from viano_bug_analysis.enrichment.profile import load_profile\n"
        "def run(path): load_profile(path)",
        PROFILE_REFUSAL,
    ),
    "research config": (
        "from viano_bug_analysis.project_research.config import load_config\n"
        "def run(path): load_config(path)",
        ("config_unreadable", NOT_REGULAR),
    ),
    "investigation config": (
        "from viano_bug_analysis.investigation.config import load_investigation_config\n"
        "def run(path): load_investigation_config(path)",
        ("investigation_config_invalid", {"key": "", **NOT_REGULAR}),
    ),
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_a_fifo_is_refused_at_once(fifo: Path, entry: str) -> None:
    body, expected = ENTRY_POINTS[entry]
    assert tuple(in_child(body + "\n", fifo)) == expected


def test_vba_query_with_a_fifo_request_exits_2(fifo: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "query", str(tmp_path), str(fifo)],
        capture_output=True,
        text=True,
        timeout=15,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "input_unreadable" in done.stderr


def test_the_enrichment_file_a_profile_names(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "rules.toml")
    profile = tmp_path / "profile.toml"
    profile.write_text(
        'format = "viano-profile"\nformat_version = 1\nname = "x"\nenrichment = "rules.toml"\n'
    )
    assert tuple(in_child(ENTRY_POINTS["profile file"][0] + "\n", profile)) == PROFILE_REFUSAL


def test_the_limits_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "limits.json")
    body = """
from viano_bug_analysis.tools.limits import load_limits
def run(path): load_limits(path)
"""
    code, details = in_child(body, tmp_path / "limits.json")
    assert (code, details) == ("limits_invalid", {"reason": "not_a_regular_file"})


def test_the_database_password_file(fifo: Path) -> None:
    body = """
from types import MappingProxyType
from viano_bug_analysis.project_research.config import DatabaseConfig
def run(path):
    DatabaseConfig(host="127.0.0.1", port=3306, user="u", snapshot_id="s",
                   allow=MappingProxyType({}), password_file=Path(path)).read_password()
"""
    code, details = in_child(body, fifo)
    assert code == "research_unavailable"
    assert (details["reason"], details["key"]) == ("credentials_missing", "database.password_file")


class Refused(Exception):
    def __init__(self, reason: str, message: str, details: dict[str, Any]) -> None:
        super().__init__(message)
        self.reason, self.details = reason, details


def test_read_regular_file_reports_the_reason_and_never_the_path(tmp_path: Path) -> None:
    big = tmp_path / "secret-name.txt"
    big.write_bytes(b"x" * 11)
    cases = {big: "too_large", tmp_path: "not_a_regular_file", tmp_path / "absent": "unreadable"}
    for path, reason in cases.items():
        with pytest.raises(Refused) as caught:
            read_regular_file(path, max_bytes=10, what="the test file", refuse=Refused)
        assert caught.value.reason == reason == caught.value.details["reason"]
        assert "secret-name" not in str(caught.value) + repr(caught.value.details)
        assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert caught.value.details == {"reason": "unreadable", "kind": "FileNotFoundError"}
    assert str(caught.value) == "the test file does not exist"
    assert read_regular_file(big, max_bytes=11, what="the test file", refuse=Refused) == b"x" * 11
