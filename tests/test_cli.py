"""`vba`: exit codes, output channels and the absence of raw data on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.cli.helpers import SPEC, request_file, vba


@pytest.fixture
def package(tmp_path: Path) -> Path:
    out = tmp_path / "pkg"
    done = vba("case", "create", str(SPEC), str(out))
    assert done.returncode == 0, done.stderr
    assert "pkg-bug-20" in done.stdout
    return out


READ = {
    "request_id": "Q0001",
    "hypothesis_id": "H1",
    "action_id": "a-1",
    "operation": "source.read_context",
    "arguments": {"source_ref": "src-001", "start_line": 38, "end_line": 39},
}


def test_query_prints_the_result(package: Path, tmp_path: Path) -> None:
    done = vba("query", str(package), str(request_file(tmp_path, [READ])))
    assert done.returncode == 0 and done.stderr == ""
    result = json.loads(done.stdout)
    schema = json.loads(vba("schema", "result").stdout)
    jsonschema.validate(result, schema)
    assert [line["line"] for line in result["results"][0]["result"]["lines"]] == [38, 39]


def test_rejection_goes_to_stderr_with_exit_2(package: Path, tmp_path: Path) -> None:
    secret = "SELECT password FROM account -- ZZ_MARKER"
    bad = {
        **READ,
        "operation": "database.lookup",
        "arguments": {
            "source_ref": "db-001",
            "filters": {"ID": secret},
            "columns": ["Nope"],
            "offset": 0,
            "limit": 5,
        },
    }
    done = vba("query", str(package), str(request_file(tmp_path, [bad])))
    assert done.returncode == 2 and done.stdout == ""
    error = json.loads(done.stderr)
    assert error["error"] == "unknown_column"
    assert "ZZ_MARKER" not in done.stderr


def test_duplicate_keys_in_the_request_file_are_refused(package: Path, tmp_path: Path) -> None:
    raw = '{"format": "viano-investigation-request", "format": "x"}'
    done = vba("query", str(package), str(request_file(tmp_path, [], raw=raw)))
    assert done.returncode == 2 and json.loads(done.stderr)["error"] == "request_invalid"


def test_missing_package_is_a_typed_error(tmp_path: Path) -> None:
    done = vba("query", str(tmp_path / "nope"), str(request_file(tmp_path, [READ])))
    assert done.returncode == 2 and json.loads(done.stderr)["error"].startswith("manifest")


@pytest.mark.parametrize("which", ["request", "result"])
def test_schema_prints_a_valid_schema(which: str) -> None:
    done = vba("schema", which)
    assert done.returncode == 0
    jsonschema.Draft202012Validator.check_schema(json.loads(done.stdout))


def test_case_create_refuses_an_existing_directory(package: Path) -> None:
    done = vba("case", "create", str(SPEC), str(package))
    assert done.returncode == 2 and json.loads(done.stderr)["error"] == "package_exists"


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "vba"
    assert script.exists()
    assert subprocess.run([str(script), "schema", "request"], capture_output=True).returncode == 0


ROUTER_COMMANDS = {
    "query": ["query", "PKG", "REQ.json"],
    "interpret": ["interpret", "PKG", "--config", "C"],
    "investigate": ["investigate", "PKG", "--config", "C"],
    "mcp": ["mcp", "--package", "PKG"],
    "references": ["references", "--project-config", "C", "--type", "quest", "--id", "1"],
    "triage": ["triage", "ISSUES", "--out", "DIR"],
}


@pytest.mark.parametrize("command", sorted(ROUTER_COMMANDS))
def test_every_command_that_answers_snapshot_queries_takes_no_digest_cache(
    command: str,
) -> None:
    from viano_bug_analysis.cli import _parser
    from viano_bug_analysis.profiles import profile_from_args

    argv = ROUTER_COMMANDS[command]
    assert _parser().parse_args(argv).no_digest_cache is False
    args = _parser().parse_args([*argv, "--no-digest-cache"])
    assert args.no_digest_cache is True
    profile = profile_from_args(args)
    assert profile.digest_cache is False
    assert profile.router().digests is None
    assert profile_from_args(_parser().parse_args(argv)).router().digests is not None


def test_commands_without_a_router_have_no_digest_cache_flag() -> None:
    from viano_bug_analysis.cli import _parser

    with pytest.raises(SystemExit):
        _parser().parse_args(["case", "verify", "PKG", "--no-digest-cache"])
