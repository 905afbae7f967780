"""Every JSON file the command line reads is parsed strictly (issue 11 point 21, the
command-line part): NaN/Infinity, duplicate keys, non-ASCII digits, lone surrogates
and too deep nesting are refused at parse time with a stable code and a location,
before anything runs, and the message quotes nothing of the file."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import error_of, request_file, sample_package, vba
from tests.project_research.research_fakes import CONFIG_TOML, PASSWORD_MARKER, write_config

GOOD = (
    '{"format": "viano-investigation-request", "format_version": 1, "case_id": "BUG-20",\n'
    ' "package_id": "pkg-bug-20", "analysis_revision": 1, "requests": [{"request_id": "Q0001",\n'
    ' "hypothesis_id": "H1", "action_id": "a-1", "operation": "database.lookup",\n'
    ' "arguments": {"source_ref": "db-001", "filters": {"ID": 90001}, "offset": 0, "limit": 5}}]}'
)

# name: (raw request text, reason, the text the error must point at). Each is one
# edit of GOOD; the location is where that text begins.
HOSTILE = {
    "nan": (GOOD.replace('"limit": 5', '"limit": NaN'), "non_finite_number", "NaN"),
    "infinity": (GOOD.replace("90001", "Infinity"), "non_finite_number", "Infinity"),
    "minus_infinity": (GOOD.replace("90001", "-Infinity"), "non_finite_number", "-Infinity"),
    "overflow": (GOOD.replace("90001", "1e400"), "non_finite_number", "1e400"),
    # A duplicate key is reported at the object that holds it.
    "duplicate_nested": (
        GOOD.replace('"offset": 0,', '"offset": 0, "offset": 1,'),
        "duplicate_key",
        '{"source_ref"',
    ),
    "arabic_digits": (GOOD.replace("90001", "9\u0660001"), "syntax_error", "\u0660"),
    "fullwidth_digit": (GOOD.replace('"limit": 5', '"limit": \uff15'), "syntax_error", "\uff15"),
    "devanagari_exponent": (GOOD.replace("90001", "1e\u0967"), "syntax_error", "e\u0967"),
    # A string with a lone surrogate is reported at its opening quote.
    "lone_surrogate": (
        GOOD.replace('"action_id": "a-1"', '"action_id": "a-\\ud83d"'),
        "invalid_string",
        '"a-',
    ),
    # jsonio.MAX_DEPTH is 64 and the request object, requests array, request,
    # arguments and filters take 5 levels: the 60th bracket is one too deep.
    "too_deep": (GOOD.replace("90001", "[" * 80 + "]" * 80), "too_deep", "[" * 21 + "]"),
}


def location(raw: str, marker: str) -> tuple[int, int]:
    """1-based line and column (in characters) where ``marker`` begins in ``raw``."""
    index = raw.index(marker)
    before = raw[:index].split("\n")
    return len(before), len(before[-1]) + 1


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_query_refuses_a_hostile_request_file_with_its_location(tmp_path: Path, name: str) -> None:
    raw, reason, marker = HOSTILE[name]
    line, column = location(raw, marker)
    package = sample_package(tmp_path)
    done = vba("query", package, request_file(tmp_path, [], raw=raw))
    assert done.returncode == 2 and done.stdout == ""
    error = error_of(done)
    assert error["error"] == "request_invalid"
    assert error["details"]["reason"] == reason
    assert (error["details"]["line"], error["details"]["column"]) == (line, column), error
    assert f"line {line}, column {column}" in error["message"]
    for fragment in ("NaN", "Infinity", "90001", "a-", "e400", "\\u"):
        assert fragment not in done.stderr


def test_the_unedited_request_is_accepted(tmp_path: Path) -> None:
    package = sample_package(tmp_path)
    done = vba("query", package, request_file(tmp_path, [], raw=GOOD))
    assert done.returncode == 0, done.stderr


def test_invalid_utf8_is_located_in_bytes(tmp_path: Path) -> None:
    package = sample_package(tmp_path)
    path = tmp_path / "request.json"
    raw = GOOD.replace('"a-1"', '"a-\xff"')
    path.write_bytes(raw.encode("latin-1"))  # one byte per character: columns count bytes
    done = vba("query", package, path)
    error = error_of(done)
    assert done.returncode == 2 and error["details"]["reason"] == "not_utf8"
    assert (error["details"]["line"], error["details"]["column"]) == location(raw, "\xff")


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('{"kind": "database.rows", "limit": NaN}', "non_finite_number"),
        ('{"kind": "database.rows", "limit": 1e999}', "non_finite_number"),
        ('{"kind": "a", "kind": "b"}', "duplicate_key"),
        ('{"limit": \u0661}', "syntax_error"),
    ],
)
def test_research_refuses_a_hostile_query_from_stdin_before_connecting(
    tmp_path: Path, raw: str, reason: str
) -> None:
    # The database port is closed: reaching it would exit 3, not 2.
    write_config(tmp_path, CONFIG_TOML.replace("port = 33079", f"port = {closed_port()}"))
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "research", "--project-config",
         "project.toml", "--query", "-"],
        input=raw,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**__import__("os").environ, "VBA_FAKE_DB_PASSWORD": PASSWORD_MARKER},
        timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    error = json.loads(done.stderr)
    assert (error["error"], error["details"]["reason"]) == ("query_invalid", reason)
    assert error["details"]["line"] == 1 and error["details"]["column"] >= 1
