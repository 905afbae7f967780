"""scripts/dev_world_db.py against the running test server: status, idempotent
start, and the refusal to administer a port that belongs to another datadir."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.project_research.conftest import TestDatabase

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "dev_world_db.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False
    )


@pytest.fixture
def directory(mariadb: TestDatabase) -> Path:
    if mariadb.directory is None:
        pytest.skip("needs VBA_TEST_DB_DIR; run `make test`")
    return mariadb.directory


def test_status_of_the_test_server(mariadb: TestDatabase, directory: Path) -> None:
    result = run("status", "--directory", str(directory))
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["running"] is True and status["read_only"] is True
    assert status["port"] == status["server_port"] == mariadb.port
    assert status["bind"] == "127.0.0.1"
    assert Path(status["datadir"]).resolve() == (directory / "data").resolve()
    assert mariadb.password not in result.stdout


def test_start_is_idempotent(directory: Path) -> None:
    result = run("start", "--directory", str(directory))
    assert result.returncode == 0, result.stderr
    assert "already running" in result.stdout


def test_reader_password_file_is_private(directory: Path) -> None:
    assert (directory / "reader.local.txt").stat().st_mode & 0o077 == 0


def test_init_refuses_a_port_in_use(mariadb: TestDatabase, tmp_path: Path) -> None:
    target = tmp_path / "other"
    result = run("init", "--directory", str(target), "--port", str(mariadb.port))
    assert result.returncode == 1
    assert "already in use" in result.stderr
    assert not (target / "data" / "mysql").exists()


def test_start_refuses_a_port_of_another_datadir(mariadb: TestDatabase, tmp_path: Path) -> None:
    """A directory that claims the test server's port must not administer it."""
    foreign = tmp_path / "foreign"
    (foreign / "data" / "mysql").mkdir(parents=True)
    (foreign / "my.cnf").write_text("[mysqld]\n")
    (foreign / "instance.json").write_text(json.dumps({"port": mariadb.port}))
    result = run("start", "--directory", str(foreign))
    assert result.returncode == 1
    assert "refusing to administer" in result.stderr
    # stop only ever signals the pid of its own datadir
    result = run("stop", "--directory", str(foreign))
    assert result.returncode == 0 and "not running" in result.stdout
    assert json.loads(run("status", "--directory", str(mariadb.directory)).stdout)["running"]


def test_bind_is_loopback_only() -> None:
    result = run("status", "--bind", "0.0.0.0")
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_restore_needs_a_dump(directory: Path, tmp_path: Path) -> None:
    result = run("restore", "--directory", str(directory), "--dump", str(tmp_path / "missing.sql"))
    assert result.returncode == 1 and "dump not found" in result.stderr
    status = json.loads(run("status", "--directory", str(directory)).stdout)
    assert status["read_only"] is True  # switched back on after the refused restore
