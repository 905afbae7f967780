"""`vba case build --project-config` without the database password (an unset
`password_env`) stops with exit 3, names the variable and says to give the
password before running again; it asks no database. Found by the README
journey: the hint was only "run the same command again", which changes nothing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.case.builder.conftest import case_spec

VARIABLE = "VBA_JOURNEY_UNSET_DB_PASSWORD"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unset_password_variable_is_named_with_what_to_do(tmp_path: Path) -> None:
    spec = case_spec(tmp_path / "inputs")
    config = tmp_path / "project.toml"
    config.write_text(
        f"""[database]
host = "127.0.0.1"
port = {closed_port()}
user = "viano_reader"
password_env = "{VARIABLE}"
snapshot_id = "cata_world@fixture"
[database.allow]
cata_world = ["quest_template", "creature_template"]
"""
    )
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "viano_bug_analysis.cli",
            "case",
            "build",
            str(spec),
            str(tmp_path / "pkg"),
            "--project-config",
            str(config),
        ],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    error = json.loads(next(x for x in done.stderr.splitlines() if x.startswith("{")))
    assert error["error"] == "research_unavailable"
    assert error["details"]["reason"] == "credentials_missing"
    assert error["details"]["variable"] == VARIABLE
    assert VARIABLE in error["message"]
    assert "give the database password" in done.stderr
    assert not (tmp_path / "pkg" / "manifest.json").exists()
