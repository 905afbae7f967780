"""One exit-code table for every command (issue 11 point 22): defined once in
exit_codes.py, printed by --help, repeated in docs/errors.md (a drift test), and
each code reached by a real process. An LLM outage exits 3 like a research
outage, not 2 like a rejected input."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import (
    CONCLUDE,
    DESCRIBE,
    REPO,
    SPEC,
    answer,
    error_of,
    investigate_config,
    request_file,
    sample_package,
    vba,
)
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer, refused_url
from tests.project_research.research_fakes import CONFIG_TOML, PASSWORD_MARKER, write_config
from viano_bug_analysis.case.lock import BUILD_LOCK, package_lock
from viano_bug_analysis.errors import VbaError
from viano_bug_analysis.exit_codes import (
    BY_CODE,
    BY_SUFFIX,
    COMMAND_CODES,
    INTERRUPTED,
    LLM_SERVICE_CODES,
    MEANINGS,
    ExitCode,
    exit_code_for,
    help_epilog,
)
from viano_bug_analysis.investigation.llm import errors as llm_errors

DOCS = REPO / "docs" / "errors.md"


def _section(title: str) -> str:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_documented_table_is_the_table_in_the_code() -> None:
    section = _section("Exit codes of the command line")
    rows = re.findall(r"^\| (\d) \| `([A-Z_]+)` \| (.+?) \|$", section, re.MULTILINE)
    assert [(int(n), name, meaning) for n, name, meaning in rows] == [
        (int(code), code.name, MEANINGS[code]) for code in ExitCode
    ]


def test_the_documented_error_mapping_is_the_mapping_in_the_code() -> None:
    section = _section("Exit codes of the command line")
    named: dict[str, int] = {}
    suffixes: dict[str, int] = {}
    for exit_code, cell in re.findall(r"^\| (\d) \| ([^|]+) \|$", section, re.MULTILINE):
        for suffix in re.findall(r"every code ending in `([a-z_]+)`", cell):
            suffixes[suffix] = int(exit_code)
        cell = re.sub(r"every code ending in `[a-z_]+`", "", cell)
        for code in re.findall(r"`([a-z_]+)`", cell):
            named[code] = int(exit_code)
    assert named == {code: int(exit) for code, exit in BY_CODE.items()}
    assert suffixes == {suffix: int(exit) for suffix, exit in BY_SUFFIX.items()}


def test_every_llm_error_but_configuration_is_a_service_failure() -> None:
    configuration = {llm_errors.CONFIG_INVALID, llm_errors.MESSAGES_INVALID}
    assert llm_errors.ERROR_CODES - configuration == LLM_SERVICE_CODES
    assert exit_code_for(VbaError(llm_errors.UNAVAILABLE, "x")) == ExitCode.UNAVAILABLE
    assert exit_code_for(VbaError(llm_errors.CONFIG_INVALID, "x")) == ExitCode.REJECTED


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("checkpoint_log_corrupt", ExitCode.DAMAGED),  # built from the log's prefix
        ("budget_journal_corrupt", ExitCode.DAMAGED),
        ("evidence_corrupt", ExitCode.DAMAGED),
        ("package_write_failed", ExitCode.IO_FAILED),
        ("call_record_write_failed", ExitCode.IO_FAILED),
        ("package_read_failed", ExitCode.IO_FAILED),
        ("package_path_outside", ExitCode.DAMAGED),
        ("package_missing", ExitCode.REJECTED),
        ("checkpoint_log_conflict", ExitCode.BUSY),
        ("unknown_column", ExitCode.REJECTED),
        ("corrupt_but_not_a_suffix", ExitCode.REJECTED),
    ],
)
def test_codes_map_by_name_then_by_suffix(code: str, expected: ExitCode) -> None:
    assert exit_code_for(VbaError(code, "x")) == expected


def test_vba_help_prints_the_whole_table_once() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    assert help_epilog() in done.stdout and done.stdout.count("exit codes:") == 1


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["-m", "viano_bug_analysis.cli", "query", "--help"], "query"),
        (["-m", "viano_bug_analysis.cli", "investigate", "--help"], "investigate"),
        (["-m", "viano_bug_analysis.cli", "case", "verify", "--help"], "case verify"),
        (["-m", "viano_bug_analysis.cli", "case", "build", "--help"], "case build"),
        (["-m", "viano_bug_analysis.cli", "research", "--help"], "research"),
        (["-m", "viano_bug_analysis.cli", "profile", "check", "--help"], "profile check"),
        (["-m", "viano_bug_analysis.case", "create", "--help"], "case create"),
        (["-m", "viano_bug_analysis.project_research", "--help"], "research"),
    ],
)
def test_a_subcommand_help_shows_examples_and_only_its_codes(command: list[str], name: str) -> None:
    # Issue 34: every subcommand repeated the 10-line table and showed no example.
    done = subprocess.run([sys.executable, *command], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert help_epilog() not in done.stdout
    epilog = done.stdout[done.stdout.index("exit codes (all of them: vba --help):") :]
    listed = [int(line.split()[0]) for line in epilog.splitlines()[1:] if line.strip()]
    assert listed == [*sorted({int(c) for c in COMMAND_CODES[name]}), INTERRUPTED]
    if "project_research" not in command[1]:
        assert "examples:\n  vba " in done.stdout


def test_every_subcommand_has_examples_and_codes() -> None:
    from viano_bug_analysis.cli import EXAMPLES, _parser

    assert set(EXAMPLES) == set(COMMAND_CODES)
    commands = _parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    leaves = set()
    for name, sub in commands.items():
        nested = sub._subparsers
        if nested is None:
            leaves.add(name)
        else:
            leaves |= {f"{name} {n}" for n in nested._group_actions[0].choices}
    assert leaves == set(COMMAND_CODES)


# --- every code from a real process ---------------------------------------------------------


def test_0_done(tmp_path: Path) -> None:
    done = vba("query", sample_package(tmp_path), request_file(tmp_path, [DESCRIBE]))
    assert done.returncode == ExitCode.OK and done.stderr == ""


def test_1_only_for_a_bug() -> None:
    program = (
        "import viano_bug_analysis.cli as cli\n"
        "def broken(args): raise RuntimeError('a bug')\n"
        "cli._cmd_schema = broken\n"
        "raise SystemExit(cli.main(['schema']))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == ExitCode.BUG
    assert "Traceback" in done.stderr and "RuntimeError" in done.stderr


def test_2_rejected_input(tmp_path: Path) -> None:
    bad = {**DESCRIBE, "arguments": {"source_ref": "db-002", "extra": 1}}
    done = vba("query", sample_package(tmp_path), request_file(tmp_path, [bad]))
    assert done.returncode == ExitCode.REJECTED and done.stdout == ""
    assert error_of(done)["details"]["request_index"] == 0
    usage = vba("query")
    assert usage.returncode == ExitCode.REJECTED and "usage:" in usage.stderr


def test_3_an_llm_outage_is_a_service_unavailable_and_the_rerun_continues(
    tmp_path: Path,
) -> None:
    package = sample_package(tmp_path)
    done = vba("investigate", package, "--config", investigate_config(tmp_path, refused_url()))
    assert done.returncode == ExitCode.UNAVAILABLE, done.stderr
    error = error_of(done)
    assert (error["error"], error["details"]["last_reason"]) == (
        "llm_unavailable",
        "connection_refused",
    )
    # Not blocked: the same command continues once the service is back.
    with ScriptedLlmServer([answer("H1", CONCLUDE), answer("H2", CONCLUDE)]) as server:
        again = vba(
            "investigate", package, "--config", investigate_config(tmp_path, server.base_url)
        )
        assert again.returncode == ExitCode.OK, again.stderr
        assert len(server.requests) == 2


def test_3_a_research_outage(tmp_path: Path) -> None:
    with __import__("socket").socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    write_config(tmp_path, CONFIG_TOML.replace("port = 33079", f"port = {port}"))
    (tmp_path / "query.json").write_text(
        '{"kind": "database.rows", "table": "creature_template", "columns": ["entry"],'
        ' "filters": [], "offset": 0, "limit": 1}'
    )
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "research", "--project-config",
         "project.toml", "--query", "query.json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**__import__("os").environ, "VBA_FAKE_DB_PASSWORD": PASSWORD_MARKER},
        timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == ExitCode.UNAVAILABLE, done.stderr
    assert error_of(done)["error"] == "research_unavailable"


def test_4_blocked(tmp_path: Path) -> None:
    package = sample_package(tmp_path)
    with ScriptedLlmServer(["this is not JSON"]) as server:
        config = investigate_config(tmp_path, server.base_url, invalid_response_limit=1)
        done = vba("investigate", package, "--config", config)
    assert done.returncode == ExitCode.BLOCKED, done.stderr
    assert "blocked: INVALID_LLM_RESPONSES" in done.stdout


def test_5_damaged(tmp_path: Path) -> None:
    package = sample_package(tmp_path)
    attachment = next((package / "attachments").rglob("*.zip"))
    data = bytearray(attachment.read_bytes())
    data[-30] ^= 0xFF  # same size, other bytes
    attachment.write_bytes(bytes(data))
    done = vba("case", "verify", package)
    assert done.returncode == ExitCode.DAMAGED
    assert error_of(done)["error"] == "attachment_mismatch"


def test_6_write_failed(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    done = vba("case", "create", SPEC, tmp_path / "file" / "pkg")
    assert done.returncode == ExitCode.IO_FAILED
    assert error_of(done)["error"] == "package_write_failed"


def test_7_busy(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    assert vba("case", "build", SPEC, package).returncode == 0
    with package_lock(package, BUILD_LOCK, "build"):
        done = vba("case", "build", SPEC, package)
    assert done.returncode == ExitCode.BUSY
    assert error_of(done)["error"] == "package_busy"


def test_130_ctrl_c_is_one_line_without_a_traceback() -> None:
    program = (
        "import viano_bug_analysis.cli as cli\n"
        "def interrupted(args): raise KeyboardInterrupt\n"
        "cli._cmd_schema = interrupted\n"
        "raise SystemExit(cli.main(['schema']))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == INTERRUPTED == 130
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "interrupted: what was written so far is kept; run the same command again to go on"
    ]


def test_130_from_a_real_sigint(tmp_path: Path) -> None:
    import os
    import signal
    import time

    write_config(tmp_path)
    # `--query -` waits on stdin: the interrupt finds the command mid-run.
    process = subprocess.Popen(
        [sys.executable, "-m", "viano_bug_analysis.cli", "research", "--project-config",
         "project.toml", "--query", "-"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=tmp_path,
        # A shell's background job ignores SIGINT, and a child inherits that.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    time.sleep(2.0)
    os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err
