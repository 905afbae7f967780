"""A RESEARCH_UNAVAILABLE block keeps provider and reason; status and investigate say the fix."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import (
    ROWS,
    answer,
    built_package,
    run_vba,
    write_config,
)
from tests.investigation.research_down import SERVER_TEXT, blocked_by
from viano_bug_analysis.errors import ResearchUnavailable
from viano_bug_analysis.investigation.checkpoints import CheckpointStore
from viano_bug_analysis.investigation.commands import run_status, status_document
from viano_bug_analysis.investigation.research_block import (
    blocked_cause,
    cause_fields,
    fix_text,
    research_of,
)


def test_the_block_stores_provider_and_reason_and_status_says_what_to_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = ResearchUnavailable("database", "connection_refused", SERVER_TEXT, {"errno": 2003})
    root = blocked_by(tmp_path, error)
    current = CheckpointStore(root).current()
    assert current is not None
    payload = current.payload_dict()
    assert (payload["provider"], payload["reason"]) == ("database", "connection_refused")
    assert "LEAK-CANARY" not in repr(payload)
    blocked = status_document(root)["blocked"]
    assert blocked["research"]["provider"] == "database"
    assert blocked["research"]["reason"] == "connection_refused"
    assert "database.host and database.port" in blocked["research"]["fix"]
    assert run_status(argparse.Namespace(package=root, json=False)) == 0
    printed = capsys.readouterr().out
    assert "research provider database unavailable (connection_refused)" in printed
    assert "LEAK-CANARY" not in printed


def test_a_missing_password_variable_is_named(tmp_path: Path) -> None:
    error = ResearchUnavailable(
        "database", "credentials_missing", SERVER_TEXT, {"variable": "VBA_DB_PASSWORD"}
    )
    root = blocked_by(tmp_path, error)
    fix = status_document(root)["blocked"]["research"]["fix"]
    assert "set the environment variable VBA_DB_PASSWORD (database.password_env)" in fix


def test_an_old_block_without_the_fields_stays_readable() -> None:
    old = {"cause": "research_unavailable", "reservation": "H1:1:1:dispatch", "step": 1}
    assert blocked_cause(old) is None
    assert fix_text(None).startswith("a research provider was unavailable")


@pytest.mark.parametrize(
    "payload",
    [
        {"provider": "ftp", "reason": "timeout"},
        {"provider": "database", "reason": "Access denied for user x"},
        {"provider": "database", "reason": 3},
    ],
)
def test_fields_that_are_not_the_typed_names_are_not_shown(payload: dict[str, Any]) -> None:
    assert blocked_cause(payload) is None


def test_only_a_research_block_gets_a_research_part() -> None:
    payload = {"provider": "git", "reason": "timeout"}
    assert research_of("RESEARCH_UNAVAILABLE", payload) == {
        **payload,
        "fix": fix_text({"provider": "git", "reason": "timeout"}),
    }
    assert research_of("RESEARCH_UNAVAILABLE", {})["fix"] == fix_text(None)  # type: ignore[index]
    assert research_of("BUDGET_EXHAUSTED", payload) is None


def test_a_variable_that_is_not_a_name_is_not_kept() -> None:
    error = ResearchUnavailable("database", "credentials_missing", None, {"variable": "a b"})
    assert cause_fields(error) == {"provider": "database", "reason": "credentials_missing"}


def test_vba_investigate_prints_what_to_fix(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    (tmp_path / "project.toml").write_text(
        '[database]\nhost = "127.0.0.1"\nport = 9\nuser = "reader"\n'
        'password_env = "VBA_RESEARCH_BLOCK_UNSET"\nsnapshot_id = "world@2026-11-01"\n'
        '[database.allow]\nworld = ["creature_template"]\n'
    )
    with ScriptedLlmServer([answer(ROWS)]) as server:
        config = write_config(tmp_path, server)
        config.write_text(config.read_text() + '[research]\nconfig = "project.toml"\n')
        done = run_vba("investigate", "--config", str(config), str(root))
    assert done.returncode == 4, done.stderr
    assert "blocked: RESEARCH_UNAVAILABLE" in done.stdout
    assert (
        "research provider database unavailable (credentials_missing): the database password "
        "is not available: set the environment variable VBA_RESEARCH_BLOCK_UNSET" in done.stdout
    )
    status = run_vba("status", str(root))
    assert status.returncode == 0, status.stderr
    assert "set the environment variable VBA_RESEARCH_BLOCK_UNSET" in status.stdout
