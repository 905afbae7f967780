"""Shared pieces of the command-line tests: run `vba` as a real process, build the
sample package, write request files and investigation configurations."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "samples" / "bug-20" / "case-spec.json"


def vba(
    *args: str | Path, module: str = "viano_bug_analysis.cli"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *map(str, args)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def error_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The one JSON error line on stderr (after any progress lines), and no traceback."""
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith('{"error"')]
    assert len(lines) == 1, done.stderr
    error: dict[str, Any] = json.loads(lines[0])
    return error


def sample_package(tmp_path: Path) -> Path:
    out = tmp_path / "pkg"
    done = vba("case", "create", SPEC, out)
    assert done.returncode == 0, done.stderr
    return out


def request_file(tmp_path: Path, requests: list[dict[str, Any]], raw: str | None = None) -> Path:
    path = tmp_path / "request.json"
    document = {
        "format": "viano-investigation-request",
        "format_version": 1,
        "case_id": "BUG-20",
        "package_id": "pkg-bug-20",
        "analysis_revision": 1,
        "requests": requests,
    }
    path.write_text(raw if raw is not None else json.dumps(document))
    return path


DESCRIBE = {
    "request_id": "Q0001",
    "hypothesis_id": "H1",
    "action_id": "a-1",
    "operation": "database.describe",
    "arguments": {"source_ref": "db-002"},
}


def answer(hypothesis: str, next_step: dict[str, Any], assessment: str = "undetermined") -> str:
    """One investigation-response-v1 answer of the scripted model."""
    return orjson.dumps(
        {
            "hypothesis_id": hypothesis,
            "assessment": assessment,
            "confidence": 0.5,
            "evidence": [],
            "next": next_step,
        }
    ).decode()


CONCLUDE = {"kind": "conclusion", "summary": "Nothing here explains the report."}


def investigate_config(tmp_path: Path, base_url: str, **settings: int) -> Path:
    lines = [
        "[llm]",
        f'base_urls = ["{base_url}"]',
        'model = "scripted"',
        "max_retries = 0",
        "connect_timeout = 5.0",
        "read_timeout = 10.0",
        "[investigation]",
        *(f"{key} = {value}" for key, value in settings.items()),
    ]
    path = tmp_path / "investigate.toml"
    path.write_text("\n".join(lines) + "\n")
    return path
