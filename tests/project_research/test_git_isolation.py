"""GitSource reads git objects of the pinned commit and nothing else.

Work-tree edits, deletions, branch switches, new commits, repacking, replace
refs, local filters/hooks/textconv, hostile trees and git environment
variables change no answer and run nothing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.project_research.git_fixtures import (
    NEEDLE,
    URL,
    FixtureRepo,
    build_fixture_repo,
    build_hostile_repo,
    git,
)
from viano_bug_analysis.project_research.errors import ResearchError
from viano_bug_analysis.project_research.git_source import GitSource


def answers(source: GitSource) -> list[dict[str, Any]]:
    """A fixed set of queries of every kind."""
    return [
        source.search(text=NEEDLE, case_sensitive=True, path_prefix=None, offset=0, limit=100),
        source.search(text="spell", case_sensitive=False, path_prefix="src/", offset=0, limit=100),
        source.symbol(symbol=f"Handle{NEEDLE}", path_prefix=None, offset=0, limit=100),
        source.registration(symbol="RegisterSpellScript", path_prefix=None, offset=0, limit=10),
        source.schema(text="creature_template", case_sensitive=True, offset=0, limit=100),
        source.files(text="/", path_prefix=None, offset=0, limit=100),
        source.read(path="src/game/Spell.cpp", start_line=1, end_line=7),
        source.read(path="README.md", start_line=1, end_line=2),
        source.read(path="docs/crlf.txt", start_line=1, end_line=3),
    ]


@pytest.fixture
def repo(tmp_path: Path) -> FixtureRepo:
    return build_fixture_repo(tmp_path / "fixture")


def test_work_tree_branches_and_new_commits_change_nothing(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL)
    before = answers(source)
    # Edit and delete work-tree files, switch branches, commit on top, repack.
    (repo.path / "many").joinpath("file_001.txt").write_text(f"{NEEDLE} edited\n" * 3)
    (repo.path / "src/game/Spell.cpp").unlink()
    shutil.rmtree(repo.path / "sql")
    git(repo.path, "stash", "-q", "-u")
    git(repo.path, "checkout", "-q", "main")
    (repo.path / "src/game/Spell.cpp").write_text("// replaced entirely\n")
    git(repo.path, "commit", "-q", "-am", "on top")
    git(repo.path, "gc", "-q", "--prune=now")
    git(repo.path, "reset", "-q", "--hard", repo.feature)
    for child in repo.path.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    assert answers(source) == before
    assert answers(GitSource(repo.path, repo.first, url=URL)) == before


def test_repacking_under_an_open_source_is_seen(repo: FixtureRepo) -> None:
    expected = answers(GitSource(repo.path, repo.first, url=URL))
    source = GitSource(repo.path, repo.first, url=URL)
    source.check()  # repository open, listing cached, no blob read yet
    git(repo.path, "gc", "-q", "--prune=now")  # loose objects gone, one new pack
    assert answers(source) == expected
    uncached = GitSource(repo.path, repo.first, url=URL, cache_bytes=0)
    assert answers(uncached) == expected
    git(repo.path, "repack", "-q", "-a", "-d", "-f", "--depth=5")  # that pack replaced too
    assert answers(uncached) == expected


def test_the_later_commit_sees_its_own_content(repo: FixtureRepo) -> None:
    first = GitSource(repo.path, repo.first, url=URL)
    second = GitSource(repo.path, repo.second, url=URL)
    query = {"text": "v2 was added", "case_sensitive": True, "path_prefix": None}
    assert first.search(**query, offset=0, limit=10)["total"] == 0
    assert second.search(**query, offset=0, limit=10)["total"] == 1


def test_bare_clone_and_linked_worktree_answer_the_same(repo: FixtureRepo, tmp_path: Path) -> None:
    expected = answers(GitSource(repo.path, repo.first, url=URL))
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", "--no-local", str(repo.path), str(bare))
    assert answers(GitSource(bare, repo.first, url=URL)) == expected
    linked = tmp_path / "linked"
    git(repo.path, "worktree", "add", "-q", str(linked), repo.second)
    assert (linked / ".git").is_file()
    assert answers(GitSource(linked, repo.first, url=URL)) == expected
    assert answers(GitSource(repo.path / ".git", repo.first, url=URL)) == expected


def test_replace_refs_are_ignored(repo: FixtureRepo) -> None:
    original = repo.blob_id(repo.first, "src/game/Spell.cpp")
    other = repo.blob_id(repo.first, "src/game/Spell.h")
    git(repo.path, "replace", original, other)
    assert git(repo.path, "cat-file", "-p", original).startswith("void")  # git itself replaces
    read = GitSource(repo.path, repo.first, url=URL).read(
        path="src/game/Spell.cpp", start_line=1, end_line=1
    )
    assert read["blob"] == original and read["lines"][0]["text"] == "// Spell handling"


def test_filters_textconv_hooks_and_fsmonitor_never_run(repo: FixtureRepo, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    touch = f"touch {marker}"
    (repo.path / ".gitattributes").write_text("* filter=evil diff=evil\n")
    git(repo.path, "add", ".gitattributes")
    git(repo.path, "commit", "-q", "-m", "attributes")
    commit = git(repo.path, "rev-parse", "HEAD")
    for key, value in [
        ("filter.evil.clean", touch),
        ("filter.evil.smudge", touch),
        ("filter.evil.process", touch),
        ("filter.evil.required", "true"),
        ("diff.evil.textconv", touch),
        ("core.fsmonitor", touch),
        ("core.hooksPath", str(tmp_path / "hooks")),
        ("include.path", str(tmp_path / "missing-include")),
    ]:
        git(repo.path, "config", key, value)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-checkout", "pre-commit", "reference-transaction", "post-index-change"):
        (hooks / name).write_text(f"#!/bin/sh\n{touch}\n")
        (hooks / name).chmod(0o755)
    marker.unlink(missing_ok=True)
    source = GitSource(repo.path, commit, url=URL)
    found = source.search(text=NEEDLE, case_sensitive=True, path_prefix=None, offset=0, limit=100)
    assert found["total"] > 0
    assert source.read(path="src/game/Spell.cpp", start_line=1, end_line=1)["lines"]
    read = source.read(path=".gitattributes", start_line=1, end_line=1)
    assert read["lines"][0]["text"] == "* filter=evil diff=evil"
    assert not marker.exists()


def test_git_environment_variables_are_ignored(
    repo: FixtureRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = answers(GitSource(repo.path, repo.first, url=URL))
    other = build_fixture_repo(tmp_path / "other")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[core]\n\tuseReplaceRefs = true\n")
    for name, value in {
        "GIT_DIR": str(other.path / ".git"),
        "GIT_OBJECT_DIRECTORY": str(other.path / ".git" / "objects"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(other.path / ".git" / "objects"),
        "GIT_INDEX_FILE": str(tmp_path / "index"),
        "GIT_WORK_TREE": str(other.path),
        "GIT_NAMESPACE": "elsewhere",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_CONFIG_PARAMETERS": "'core.bare'='true'",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home),
    }.items():
        monkeypatch.setenv(name, value)
    assert answers(GitSource(repo.path, repo.first, url=URL)) == expected


def test_the_local_path_never_appears_in_errors(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, "1" * 40, url=URL)
    with pytest.raises(ResearchError) as err:
        source.check()
    assert str(repo.path) not in str(err.value) and str(repo.path) not in repr(err.value.details)


# --- hostile trees ------------------------------------------------------------------


@pytest.fixture
def hostile(tmp_path: Path) -> GitSource:
    path, commit = build_hostile_repo(tmp_path / "hostile.git")
    return GitSource(path, commit, url=URL)


def test_hostile_tree_entries_are_listed_as_skipped_never_read(hostile: GitSource) -> None:
    result = hostile.search(text=NEEDLE, case_sensitive=True, path_prefix=None, offset=0, limit=10)
    assert [m["path"] for m in result["matches"]] == ["ok.txt"]
    assert result["skipped"]["by_reason"] == {"path_invalid": 7}
    assert [p["path"] for p in result["skipped"]["paths"]] == [
        "../config",
        ".GIT/config",
        ".git/config",
        "back\\slash.txt",
        "caf\\xe9.txt",
        "dup.txt",
        "dup.txt",
    ]
    assert result["files_unsearched"] > 0
    assert hostile.cache_info()["blobs_read"] == 1


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("dup.txt", "path_not_readable"),
        ("../config", "path_invalid"),
        (".git/config", "path_invalid"),
        (".GIT/config", "path_invalid"),
        ("back\\slash.txt", "path_invalid"),
    ],
)
def test_hostile_paths_cannot_be_read(hostile: GitSource, path: str, code: str) -> None:
    with pytest.raises(ResearchError) as err:
        hostile.read(path=path, start_line=1, end_line=1)
    assert err.value.code == code
    assert hostile.cache_info()["blobs_read"] == 0


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/etc/passwd",
        "/",
        "../x",
        "a/../../x",
        "a/..",
        "..",
        ".",
        "./a",
        "a/./b",
        "a//b",
        "a/",
        ".git",
        ".git/config",
        "sub/.git/HEAD",
        ".GIT/config",
        "a\\b",
        "..\\x",
        "a\0b",
        "a\nb",
        "x" * 1025,
        "\udcff",
    ],
)
def test_query_paths_must_be_plain(hostile: GitSource, path: str) -> None:
    with pytest.raises(ResearchError) as err:
        hostile.read(path=path, start_line=1, end_line=1)
    assert err.value.code == "path_invalid"
    if path not in ("a/", "/"):
        with pytest.raises(ResearchError) as err:
            hostile.search(text="x", case_sensitive=True, path_prefix=path, offset=0, limit=1)
        assert err.value.code == "path_invalid"


def test_a_prefix_may_end_with_one_slash(hostile: GitSource) -> None:
    assert hostile.files(text="ok", path_prefix="ok", offset=0, limit=1)["total"] == 1
    for prefix in ("a/", "src/game/"):  # well formed, but no path of the commit is below them
        with pytest.raises(ResearchError) as err:
            hostile.files(text="ok", path_prefix=prefix, offset=0, limit=1)
        assert (err.value.code, err.value.details) == (
            "path_not_found",
            {"argument": "path_prefix"},
        )
    for prefix in ("/", "a//", "../"):
        with pytest.raises(ResearchError) as err:
            hostile.files(text="ok", path_prefix=prefix, offset=0, limit=1)
        assert err.value.code == "path_invalid"


def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    repo = build_fixture_repo(tmp_path / "r")
    (repo.path / "escape").symlink_to("/etc/passwd")
    (repo.path / "up").symlink_to("../../..")
    git(repo.path, "add", "escape", "up")
    git(repo.path, "commit", "-q", "-m", "links out")
    source = GitSource(repo.path, git(repo.path, "rev-parse", "HEAD"), url=URL)
    for path in ("escape", "up"):
        with pytest.raises(ResearchError) as err:
            source.read(path=path, start_line=1, end_line=1)
        assert err.value.details["reason"] == "symlink"
    result = source.search(
        text="root", case_sensitive=True, path_prefix="escape", offset=0, limit=5
    )
    assert result["total"] == 0 and result["skipped"]["by_reason"] == {"symlink": 1}
    assert os.path.exists("/etc/passwd")  # the target exists: it is just never read
