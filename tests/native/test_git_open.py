"""Which paths open as a repository: the object database is found without
any configuration or environment outside the repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from viano_bug_analysis._native import GitRepository
from viano_bug_analysis.errors import ResearchUnavailable

ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "PATH": "/usr/bin:/bin",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def test_a_sha256_repository_is_refused(tmp_path: Path) -> None:
    try:
        git(tmp_path, "init", "-q", "--object-format=sha256", "repo")
    except subprocess.CalledProcessError:
        pytest.skip("this git cannot make SHA-256 repositories")
    with pytest.raises(ResearchUnavailable) as raised:
        GitRepository(tmp_path / "repo", cache_bytes=0)
    assert raised.value.details["what"] == "only SHA-1 repositories are supported"


def test_a_gitdir_file_is_followed_and_a_plain_directory_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("x\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "t")
    commit = git(repo, "rev-parse", "HEAD")
    pointer = tmp_path / "pointer"
    pointer.mkdir()
    (pointer / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    tree = GitRepository(pointer, cache_bytes=0).tree(commit, max_entries=10, timeout_s=10)
    assert len(tree) == 1
    for not_a_repository in (tmp_path / "missing", tmp_path / "pointer" / "..", repo / "a.txt"):
        with pytest.raises(ResearchUnavailable) as raised:
            GitRepository(not_a_repository, cache_bytes=0)
        assert raised.value.reason == "repository_unavailable"
