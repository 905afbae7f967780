"""The first-parent log (``GitRepository.first_parent_log``, ``core::git::log``) against
git's own answer on generated histories, and the helpers of ``git_history``."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.project_research.changes_fixtures import _commit
from tests.project_research.git_fixtures import git
from viano_bug_analysis._native import GitRepository
from viano_bug_analysis.project_research.git_history import (
    anchor_at,
    commit_url,
    first_parent_window,
    parse_report_time,
)

# "lib" is a file in one commit and a directory in another; "lib.h" sorts between
# the file "lib" and the tree "lib/" in git's entry order.
PATHS = ("a.txt", "src/b.cpp", "src/game/c.h", "é/ü.txt", "lib", "lib/z.h", "lib.h")
# One step: per path None (leave), "" (delete) or new content; a message; whether
# the step happens on a side branch merged at the next main step.
_step = st.tuples(
    st.lists(
        st.sampled_from([None, "", "x\n", "y\n", "x\r\ny\n"]),
        min_size=len(PATHS),
        max_size=len(PATHS),
    ),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30),
    st.booleans(),
)


def _build(repo: Path, steps: list[tuple[list[str | None], str, bool]]) -> str:
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("root\n")
    _commit(repo, 0, "root")
    for minute, (contents, message, on_side) in enumerate(steps, start=1):
        if on_side:
            git(repo, "checkout", "-q", "-B", "side")
        for path, content in zip(PATHS, contents, strict=True):
            target = repo / path
            if content == "" and target.is_file():
                target.unlink()
            elif content:
                if target.is_dir():
                    shutil.rmtree(target)
                if target.parent.is_file():
                    target.parent.unlink()
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content)
        _commit(repo, minute * 2, message)
        if on_side:
            git(repo, "checkout", "-q", "main")
            _commit(repo, minute * 2 + 1, "merge side", "side")
    return git(repo, "rev-parse", "HEAD")


def _reference(repo: Path, head: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """git's first-parent log: (commit, subject, [(status, path)]) newest first."""
    out = []
    for line in git(repo, "log", "--first-parent", "--format=%H %P", head).splitlines():
        oid, *parents = line.split()
        args = ["diff-tree", "-r", "--no-renames", "--name-status", "-z"]
        args += [parents[0], oid] if parents else ["--root", "--no-commit-id", oid]
        fields = git(repo, *args).split("\0")
        files = sorted(
            (path, {"A": "added", "D": "deleted", "M": "modified"}[status])
            for status, path in zip(fields[0::2], fields[1::2], strict=False)
            if status
        )
        subject = git(repo, "log", "-1", "--format=%B", oid).split("\n", 1)[0].strip()
        out.append((oid, subject, files))
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_step, min_size=1, max_size=6))
def test_the_first_parent_log_is_gits(steps: list[tuple[list[str | None], str, bool]]) -> None:
    directory = Path(tempfile.mkdtemp(prefix="vba-history-"))
    try:
        head = _build(directory, steps)
        window = first_parent_window(
            GitRepository(directory, cache_bytes=1 << 20),
            head,
            max_commits=100,
            max_files=100,
            timeout_s=30,
        )
        ours = [
            (c.commit, c.subject, sorted((f.path, f.status) for f in c.files))
            for c in window.commits
        ]
        theirs = _reference(directory, head)
        assert ours == theirs
        assert not window.more
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_a_second_window_is_read_from_the_cache(tmp_path: Path) -> None:
    head = _build(tmp_path, [([None, "x\n", *[None] * (len(PATHS) - 2)], "one", False)] * 3)
    repo = GitRepository(tmp_path, cache_bytes=1 << 20)
    first = first_parent_window(repo, head, max_commits=10, max_files=10, timeout_s=30)
    second = first_parent_window(repo, head, max_commits=10, max_files=10, timeout_s=30)
    assert first.cached == 0 and second.cached == len(second.commits) == 4
    assert first.commits == second.commits
    bounded = first_parent_window(repo, head, max_commits=2, max_files=10, timeout_s=30)
    assert len(bounded.commits) == 2 and bounded.more


def test_the_report_date_anchors_on_the_last_commit_at_or_before_it(tmp_path: Path) -> None:
    steps = [([None, f"{n}\n", *[None] * (len(PATHS) - 2)], f"c{n}", False) for n in range(4)]
    head = _build(tmp_path, steps)
    window = first_parent_window(
        GitRepository(tmp_path, cache_bytes=1 << 20),
        head,
        max_commits=10,
        max_files=10,
        timeout_s=30,
    )
    # Commits at 00:00 (the root), 00:02, 00:04, 00:06, 00:08; newest first.
    assert anchor_at(window.commits, parse_report_time("2024-01-01T00:05:00Z") or 0) == 2
    assert anchor_at(window.commits, parse_report_time("2024-01-01T00:04:00+00:00") or 0) == 2
    assert anchor_at(window.commits, parse_report_time("2023-12-31T00:00:00Z") or 0) is None
    assert anchor_at(window.commits, parse_report_time("2030-01-01T00:00:00Z") or 0) == 0


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/vcore/vcore.git", "https://github.com/vcore/vcore/commit/abc"),
        ("git@github.com:vcore/vcore.git", "https://github.com/vcore/vcore/commit/abc"),
        ("ssh://git@gitlab.com:22/g/p.git", "https://gitlab.com/g/p/-/commit/abc"),
        ("https://gitlab.example.org/g/p", "https://gitlab.example.org/g/p/-/commit/abc"),
        ("/srv/git/vcore", None),
    ],
)
def test_commit_links(url: str, expected: str | None) -> None:
    assert commit_url(url, "abc") == expected


def test_a_web_url_wins_over_the_repository_url() -> None:
    assert commit_url("/srv/vcore", "abc", web_url="https://code.example/v/") == (
        "https://code.example/v/commit/abc"
    )


def test_report_times() -> None:
    assert parse_report_time("2024-03-01T10:00:00Z") == 1709287200
    assert parse_report_time("2024-03-01T10:00:00") == 1709287200
    assert parse_report_time("yesterday") is None
    assert parse_report_time(None) is None
