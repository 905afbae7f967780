"""A repository with a history to relate reported revisions to, built with the git CLI.

    main:  c0 - c1 - c2 - c3 - c4 - M        (M merges side)
                 \\             /
    side:         s1 ---- s2 --
    old:   o1 (an orphan branch: no common commit)

Every commit has its own committer date (a minute apart, in creation order),
and the fixed environment of ``git_fixtures`` otherwise, so the IDs are the
same on every machine. Two extra root commits share the abbreviation
``19fe8b2`` (chosen by hashing candidates), for the ambiguous case.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.project_research.git_fixtures import GIT_ENV, git

AMBIGUOUS_PREFIX = "19fe8b2"
_AMBIGUOUS_ROOTS = (530, 12625)


@dataclass(frozen=True)
class HistoryRepo:
    path: Path
    commits: dict[str, str]  # name -> full commit ID
    ambiguous: tuple[str, str]  # the two commits that share AMBIGUOUS_PREFIX


def _commit(repo: Path, name: str, minute: int, *merge: str) -> str:
    date = f"2024-01-01T00:{minute:02d}:00+00:00"
    env = {**GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    if not merge:
        (repo / f"{name}.txt").write_text(f"{name}\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True, capture_output=True)
    args = ["merge", "-q", "--no-ff", "-m", name, *merge] if merge else ["commit", "-q", "-m", name]
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return git(repo, "rev-parse", "HEAD")


def _root_commit(repo: Path, n: int) -> str:
    body = (
        "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
        "author t <t@example.invalid> 1000000000 +0000\n"
        f"committer t <t@example.invalid> 1000000000 +0000\n\nroot {n}\n"
    )
    return git(repo, "hash-object", "-w", "-t", "commit", "--stdin", input=body.encode())


def build_history_repo(path: Path) -> HistoryRepo:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    commits: dict[str, str] = {}
    minute = 0
    for name in ("c0", "c1"):
        commits[name] = _commit(path, name, minute := minute + 1)
    git(path, "checkout", "-q", "-b", "side")
    commits["s1"] = _commit(path, "s1", minute := minute + 1)
    git(path, "checkout", "-q", "main")
    for name in ("c2", "c3"):
        commits[name] = _commit(path, name, minute := minute + 1)
    git(path, "checkout", "-q", "side")
    commits["s2"] = _commit(path, "s2", minute := minute + 1)
    git(path, "checkout", "-q", "main")
    commits["c4"] = _commit(path, "c4", minute := minute + 1)
    commits["M"] = _commit(path, "M", minute := minute + 1, "side")
    git(path, "checkout", "-q", "--orphan", "old")
    git(path, "rm", "-q", "-rf", ".")
    commits["o1"] = _commit(path, "o1", minute := minute + 1)
    git(path, "checkout", "-q", "main")
    git(path, "hash-object", "-w", "-t", "tree", "--stdin", input=b"")
    first, second = (_root_commit(path, n) for n in _AMBIGUOUS_ROOTS)
    assert first[:7] == second[:7] == AMBIGUOUS_PREFIX
    return HistoryRepo(path, commits, (first, second))


def rev_list_count(repo: HistoryRepo, exclude: str, include: str) -> int:
    """git's own count of the commits reachable from ``include`` and not from ``exclude``."""
    return int(git(repo.path, "rev-list", "--count", f"{exclude}..{include}"))


def merge_bases(repo: HistoryRepo, a: str, b: str) -> list[str]:
    return sorted(git(repo.path, "merge-base", "--all", a, b).split())


__all__ = [
    "AMBIGUOUS_PREFIX",
    "HistoryRepo",
    "build_history_repo",
    "merge_bases",
    "rev_list_count",
]
