"""The config preflight (issue 34 point 1): a pinned commit the repository does not
hold, a repository path that is not one, a database the reader cannot see: a typed
error at once (exit 2) naming the key and what is there instead, in every command
that reads the project (profile check, case build, triage, research, references, mcp)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.project_research.conftest import mariadb
from tests.project_research.git_fixtures import build_fixture_repo, git
from tests.project_research.research_fakes import URL
from viano_bug_analysis.errors import ResearchError
from viano_bug_analysis.project_research import ProjectResearch, load_config
from viano_bug_analysis.project_research.preflight import nearest_refs, preflight, similar_names

SPEC = {
    "case_id": "BUG-1",
    "report": {"title": "A wolf", "text": "The wolf does not attack."},
}


def source_config(directory: Path, repository: str, commit: str) -> Path:
    path = directory / "project.toml"
    path.write_text(
        f'[source]\nrepository = "{repository}"\nurl = "{URL}"\ncommit = "{commit}"\n',
        encoding="utf-8",
    )
    return path


def checked(config: Path) -> None:
    with ProjectResearch(load_config(config)) as research:
        preflight(research)


def test_a_commit_of_the_repository_passes(tmp_path: Path) -> None:
    repo = build_fixture_repo(tmp_path / "vcore")
    checked(source_config(tmp_path, "vcore", repo.second))


def test_a_commit_not_in_the_repository_names_the_key_and_the_nearest_refs(
    tmp_path: Path,
) -> None:
    repo = build_fixture_repo(tmp_path / "vcore")
    # One digit off the feature branch's tip: the ref sharing the longest prefix comes first.
    typo = repo.feature[:30] + ("0" if repo.feature[30] != "0" else "1") + "f" * 9
    with pytest.raises(ResearchError) as caught:
        checked(source_config(tmp_path, "vcore", typo))
    err = caught.value
    assert err.code == "commit_missing" and err.details["key"] == "source.commit"
    assert err.details["refs"][0] in (f"refs/heads/feature {repo.feature}", f"HEAD {repo.feature}")
    assert "source.commit" in err.message and "nearest refs" in err.message


def test_packed_refs_are_read_too(tmp_path: Path) -> None:
    repo = build_fixture_repo(tmp_path / "vcore")
    git(repo.path, "pack-refs", "--all")
    refs = dict(nearest_refs(repo.path / ".git", repo.second))
    assert refs["refs/heads/main"] == repo.second


@pytest.mark.parametrize(
    ("make", "reason"),
    [(lambda root: None, "not_found"), (lambda root: root.mkdir(), "not_a_git_repository")],
)
def test_a_path_that_is_no_repository_is_a_config_error(
    tmp_path: Path, make: Any, reason: str
) -> None:
    make(tmp_path / "vcore")
    with pytest.raises(ResearchError) as caught:
        checked(source_config(tmp_path, "vcore", "a" * 40))
    assert caught.value.code == "repository_unreadable"
    assert caught.value.details == {"key": "source.repository", "reason": reason}
    assert str(tmp_path) not in caught.value.message


def test_similar_database_names_come_first() -> None:
    visible = ["auth", "characters", "Cata_World", "cata_world_old", "world"]
    assert similar_names("cata_world", visible)[:2] == ["Cata_World", "cata_world_old"]
    assert similar_names("zzz", visible) == sorted(visible)[:5]


def _vba(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_case_build_with_a_wrong_commit_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    # It was exit 0, "revision 1 built", leads: none, one commit_missing coverage fact.
    build_fixture_repo(tmp_path / "vcore")
    source_config(tmp_path, "vcore", "b" * 40)
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    done = _vba(
        "case", "build", "spec.json", "pkg", "--project-config", "project.toml", cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    error = json.loads(done.stderr.splitlines()[-1])
    assert (error["error"], error["details"]["key"]) == ("commit_missing", "source.commit")
    assert not (tmp_path / "pkg").exists()


def test_profile_check_checks_the_git_half(tmp_path: Path) -> None:
    # A config with only a wrong repository passed profile check before.
    source_config(tmp_path, "nowhere", "c" * 40)
    done = _vba("profile", "check", "--project-config", "project.toml", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stderr)["error"] == "repository_unreadable"


def test_triage_stops_before_any_report(tmp_path: Path) -> None:
    build_fixture_repo(tmp_path / "vcore")
    source_config(tmp_path, "vcore", "d" * 40)
    (tmp_path / "issue.json").write_text(json.dumps({"number": 1, "title": "x", "body": "y"}))
    done = _vba(
        "triage", "issue.json", "--out", "out", "--project-config", "project.toml", cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stderr)["error"] == "commit_missing"
    assert not (tmp_path / "out").exists()


# -- the database half (needs the test MariaDB: scripts/with_test_services.sh) -----------


@pytest.fixture
def db_config(tmp_path: Path, mariadb: Any) -> Any:
    from tests.case.builder.conftest import build_source_repo, write_config

    repo, commit = build_source_repo(tmp_path / "repo")
    (tmp_path / "cfg").mkdir()

    def make(**overrides: Any) -> Path:
        return write_config(tmp_path / "cfg", mariadb, repo, commit, **overrides)

    return make


def test_a_database_that_is_not_there_names_the_key_and_similar_ones(db_config: Any) -> None:
    # It was 460 lines of "missing" from vba profile check, never saying why.
    config = db_config(database="cata_wrld")
    done = _vba("profile", "check", "--project-config", str(config), cwd=config.parent)
    assert done.returncode == 2, done.stderr
    error = json.loads(done.stderr)
    assert error["error"] == "database_not_found"
    assert error["details"]["key"] == "database.allow.cata_wrld"
    assert error["details"]["similar"][0] == "cata_world"


def test_a_wrong_password_is_a_credentials_error_not_retry_later(db_config: Any) -> None:
    config = db_config()
    (config.parent / "reader.local.txt").write_text("not-the-password\n")
    done = _vba("profile", "check", "--project-config", str(config), cwd=config.parent)
    assert done.returncode == 9, done.stderr  # it was 3, "run again later"
    error = json.loads(done.stderr)
    assert (error["error"], error["details"]["reason"]) == ("research_auth_failed", "auth_failed")
    assert "not-the-password" not in done.stderr


def test_mariadb_lists_the_databases_the_reader_sees(mariadb: Any) -> None:
    with mariadb.source() as source:
        seen = source.databases()
    assert "cata_world" in seen and "mysql" not in seen and "information_schema" not in seen


__all__ = ["mariadb"]
