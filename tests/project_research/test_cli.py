"""`python -m viano_bug_analysis.project_research` and `vba research`: output and exit codes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.project_research.research_fakes import (
    COMMIT,
    CONFIG_TOML,
    PASSWORD_MARKER,
    FakeDatabase,
    FakeGit,
    unavailable,
    write_config,
)
from viano_bug_analysis import cli
from viano_bug_analysis.project_research import ResearchError
from viano_bug_analysis.project_research import __main__ as research_cli
from viano_bug_analysis.schemas import schema_validator

QUERY = {
    "kind": "database.rows",
    "table": "creature_template",
    "columns": ["entry", "name"],
    "filters": [{"column": "name", "operator": "contains", "value": "Wolpertinger"}],
    "offset": 0,
    "limit": 10,
}
SEARCH = {"kind": "source.search", "text": "x", "case_sensitive": True, "offset": 0, "limit": 5}


def tree(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config and query in tmp_path, cwd inside it, a marker password in the env."""
    write_config(tmp_path)
    (tmp_path / "query.json").write_text(json.dumps(QUERY))
    (tmp_path / "search.json").write_text(json.dumps(SEARCH))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VBA_FAKE_DB_PASSWORD", PASSWORD_MARKER)
    return tmp_path


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The CLI builds its providers from the config: swap the classes for fakes."""
    import types

    import viano_bug_analysis.project_research.mariadb_source as mariadb_source

    state: dict[str, Any] = {"db_fail": None, "git_fail": None}

    def database(**settings: Any) -> FakeDatabase:
        return FakeDatabase(fail=state["db_fail"], **settings)

    def git(repository: Path, commit: str, **settings: Any) -> FakeGit:
        return FakeGit(fail=state["git_fail"])

    module = types.ModuleType("viano_bug_analysis.project_research.git_source")
    module.GitSource = git  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "viano_bug_analysis.project_research.git_source", module)
    monkeypatch.setattr(mariadb_source, "MariaDbSource", database)
    return state


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = research_cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def error_line(err: str) -> dict[str, Any]:
    lines = err.splitlines()
    assert len(lines) == 1, err
    line: dict[str, Any] = json.loads(lines[0])
    assert set(line) == {"error", "message", "details"}
    assert PASSWORD_MARKER not in err and "127.0.0.1" not in err and "viano_reader" not in err
    return line


def test_prints_the_result(
    workspace: Path, fakes: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree(workspace)
    code, out, err = run_main(capsys, "--project-config", "project.toml", "--query", "query.json")
    assert (code, err) == (0, "")
    result = json.loads(out)
    schema_validator("project-result-v2").validate(result)
    assert result["query"] == QUERY
    assert result["origin"]["database"] == "cata_world"
    assert [row["entry"] for row in result["result"]["rows"]] == [1, 2]
    assert PASSWORD_MARKER not in out
    assert tree(workspace) == before  # nothing written


def test_pretty_and_source_queries(
    workspace: Path, fakes: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_main(
        capsys, "--config", "project.toml", "--query", "search.json", "--pretty"
    )
    assert code == 0 and out.startswith("{\n  ")
    assert json.loads(out)["origin"]["kind"] == "git"


def test_query_from_stdin(
    workspace: Path,
    fakes: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    stdin = io.TextIOWrapper(io.BytesIO(json.dumps(SEARCH).encode()))
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, _ = run_main(capsys, "--project-config", "project.toml", "--query", "-")
    assert code == 0 and json.loads(out)["query"] == SEARCH


REFUSED: list[tuple[str, str | None, str]] = [
    # (id, query file content or None for a missing file, error code)
    ("missing query file", None, "input_unreadable"),
    ("not json", "{", "query_invalid"),
    ("duplicate key", '{"kind": "database.count", "kind": "database.count"}', "query_invalid"),
    ("array", "[]", "query_invalid"),
    (
        "NaN",
        json.dumps({**QUERY, "filters": [{"column": "a", "operator": "eq", "value": 0}]}).replace(
            ": 0}", ": NaN}"
        ),
        "query_invalid",
    ),
    ("unknown field", json.dumps({**QUERY, "sql": "SELECT 1"}), "unknown_field"),
    (
        "unknown operator",
        json.dumps({**QUERY, "filters": [{"column": "a", "operator": "like", "value": "x"}]}),
        "operator_unknown",
    ),
    ("unknown kind", json.dumps({"kind": "database.sql"}), "kind_unknown"),
    ("limit", json.dumps({**QUERY, "limit": 101}), "limit_exceeded"),
]


@pytest.mark.parametrize(("content", "code"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_query_exits_2(
    workspace: Path,
    fakes: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    content: str | None,
    code: str,
) -> None:
    path = workspace / "bad.json"
    if content is not None:
        path.write_text(content)
    exit_code, out, err = run_main(
        capsys, "--project-config", "project.toml", "--query", "bad.json"
    )
    assert (exit_code, out) == (2, "")
    assert error_line(err)["error"] == code


def test_operator_hint_on_stderr(
    workspace: Path, fakes: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    bad = {**QUERY, "filters": [{"column": "a", "operator": "like", "value": "x"}]}
    (workspace / "bad.json").write_text(json.dumps(bad))
    _, _, err = run_main(capsys, "--project-config", "project.toml", "--query", "bad.json")
    details = error_line(err)["details"]
    assert details["path"] == "/filters/0/operator"
    assert details["hint"] == "allowed: eq, ne, lt, le, gt, ge, contains, in"


def test_bad_config_exits_2(
    workspace: Path, fakes: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "bad.toml").write_text(CONFIG_TOML.replace("port = 33079", 'port = "x"'))
    code, _, err = run_main(capsys, "--project-config", "bad.toml", "--query", "query.json")
    assert code == 2
    assert error_line(err) == {
        "error": "config_invalid",
        "message": "configuration key 'database.port': "
        "value at /database/port must be integer, not string",
        "details": {"key": "database.port"},
    }
    code, _, err = run_main(capsys, "--project-config", "missing.toml", "--query", "query.json")
    assert code == 2 and error_line(err)["error"] == "config_unreadable"


def test_provider_rejection_exits_2(
    workspace: Path, fakes: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    fakes["db_fail"] = ResearchError("unknown_column", "the table has no such column", {"index": 0})
    code, _, err = run_main(capsys, "--project-config", "project.toml", "--query", "query.json")
    assert code == 2 and error_line(err)["error"] == "unknown_column"


def test_provider_not_configured_exits_2(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(workspace, CONFIG_TOML[: CONFIG_TOML.index("[database]")])
    code, _, err = run_main(capsys, "--project-config", "project.toml", "--query", "query.json")
    assert code == 2 and error_line(err)["details"] == {"provider": "database"}


@pytest.mark.parametrize("provider", ["database", "git"])
def test_unavailable_exits_3(
    workspace: Path, fakes: dict[str, Any], capsys: pytest.CaptureFixture[str], provider: str
) -> None:
    fakes["db_fail"] = unavailable("database", "timeout")
    fakes["git_fail"] = unavailable("git", "repository_unavailable")
    query = "query.json" if provider == "database" else "search.json"
    code, out, err = run_main(capsys, "--project-config", "project.toml", "--query", query)
    assert (code, out) == (3, "")
    line = error_line(err)
    assert line["error"] == "research_unavailable"
    assert line["details"]["provider"] == provider


def test_missing_credentials_exit_3(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VBA_FAKE_DB_PASSWORD")
    code, _, err = run_main(capsys, "--project-config", "project.toml", "--query", "query.json")
    assert code == 3
    assert error_line(err)["details"] == {
        "key": "database.password_env",
        "variable": "VBA_FAKE_DB_PASSWORD",
        "provider": "database",
        "reason": "credentials_missing",
    }


def test_vba_research_is_the_same_command(
    workspace: Path, fakes: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["research", "--project-config", "project.toml", "--query", "query.json"]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out)["query"] == QUERY
    fakes["db_fail"] = unavailable()
    assert cli.main(["research", "--project-config", "project.toml", "--query", "query.json"]) == 3
    (workspace / "bad.json").write_text("{}")
    assert cli.main(["research", "--project-config", "project.toml", "--query", "bad.json"]) == 2


# --- real processes ------------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # closed again: nothing listens there


def subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env


@pytest.mark.parametrize(
    "command",
    [
        ["-m", "viano_bug_analysis.project_research"],
        ["-m", "viano_bug_analysis.cli", "research"],
    ],
    ids=["module", "vba"],
)
def test_closed_port_exits_3(tmp_path: Path, command: list[str]) -> None:
    write_config(tmp_path, CONFIG_TOML.replace("port = 33079", f"port = {closed_port()}"))
    (tmp_path / "query.json").write_text(json.dumps(QUERY))
    before = tree(tmp_path)
    done = subprocess.run(
        [sys.executable, *command, "--project-config", "project.toml", "--query", "query.json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=subprocess_env(VBA_FAKE_DB_PASSWORD=PASSWORD_MARKER),
        timeout=60,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout == ""
    line = error_line(done.stderr)
    assert line["error"] == "research_unavailable"
    assert line["details"]["reason"] == "connection_refused"
    assert tree(tmp_path) == before


def test_subprocess_refusal_exits_2(tmp_path: Path) -> None:
    write_config(tmp_path)
    (tmp_path / "query.json").write_text(json.dumps({**QUERY, "where": "1=1"}))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "viano_bug_analysis.project_research",
            "--project-config",
            "project.toml",
            "--query",
            "query.json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    line = error_line(done.stderr)
    assert line["error"] == "unknown_field"
    assert line["message"].startswith("unknown property 'where' at /;")
    assert line["details"]["path"] == "/where"
    assert line["details"]["rule"] == "additionalProperties"
    assert (line["details"]["field"], line["details"]["property"]) == ("where", "where")


def test_missing_repository_is_a_config_error_at_once(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A repository path that names nothing is the config's mistake (exit 2, the key
    # named), not an outage to wait out (it was exit 3, "run again later").
    write_config(workspace, CONFIG_TOML[: CONFIG_TOML.index("[database]")])
    code, out, err = run_main(capsys, "--project-config", "project.toml", "--query", "search.json")
    assert (code, out) == (2, "")
    line = error_line(err)
    assert line["error"] == "repository_unreadable"
    assert line["details"] == {"key": "source.repository", "reason": "not_found"}
    assert str(workspace) not in err


def test_the_old_spelling_config_still_works_with_a_hint(
    workspace: Path, fakes: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_main(capsys, "--config", "project.toml", "--query", "query.json")
    assert code == 0 and json.loads(out)["result"]
    assert err.startswith("hint: --config is the old spelling") and "--project-config" in err


def test_an_investigation_file_given_as_the_project_file_names_its_flag(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "investigate.toml").write_text('[llm]\nbase_url = "http://127.0.0.1:1/v1"\n')
    code, _, err = run_main(capsys, "--project-config", "investigate.toml", "--query", "query.json")
    line = error_line(err)
    assert code == 2 and line["error"] == "config_invalid"
    assert line["details"]["belongs_to"] == "--config"
    assert "give it with --config" in line["message"]


def test_path_traversal_exits_2(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.project_research.git_fixtures import build_fixture_repo

    repo = build_fixture_repo(workspace / "vcore")
    source = CONFIG_TOML[: CONFIG_TOML.index("[database]")].replace(
        'repository = "vcore.git"', 'repository = "vcore"'
    )
    write_config(workspace, source.replace(COMMIT, repo.first))
    for path in ("../etc/passwd", "/etc/passwd", ".git/config", "src/../../x"):
        query = {"kind": "source.read", "path": path, "start_line": 1, "end_line": 1}
        (workspace / "read.json").write_text(json.dumps(query))
        code, _, err = run_main(capsys, "--project-config", "project.toml", "--query", "read.json")
        assert code == 2, path
        assert error_line(err)["error"] == "path_invalid"
