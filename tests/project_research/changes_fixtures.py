"""Histories for ``source.changes``, built with the git CLI, and git's own answer.

``build_history`` commits a list of steps (each a mapping of path to new
content, ``None`` deleting the path), one committer minute apart, with an
optional side branch merged at a given step. ``reference`` reads
``git log -p --no-renames --diff-merges=first-parent since..pinned`` and keeps,
per commit and path, the net count of each changed line that names a term as a
whole word (a Python regex, independent of the native matcher): the multiset
difference the provider reports.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.project_research.git_fixtures import GIT_ENV, git, git_bytes

Step = Mapping[str, bytes | str | None]


@dataclass(frozen=True)
class History:
    path: Path
    commits: list[str]  # in commit order; the merge (if any) among them
    side: list[str]


def _apply(repo: Path, step: Step) -> None:
    for name, content in step.items():
        target = repo / name
        if content is None:
            if target.is_symlink() or target.exists():
                target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str) and content.startswith("->"):
            if target.exists() or target.is_symlink():
                target.unlink()
            target.symlink_to(content[2:])
            continue
        target.write_bytes(content.encode() if isinstance(content, str) else content)


def _commit(repo: Path, minute: int, message: str, *merge: str) -> str:
    date = f"2024-01-01T{minute // 60:02d}:{minute % 60:02d}:00+00:00"
    env = {**GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    if merge:
        args = ["merge", "-q", "--no-ff", "-m", message, *merge]
    else:
        subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True, capture_output=True)
        args = ["commit", "-q", "--allow-empty", "-m", message]
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return git(repo, "rev-parse", "HEAD")


def build_history(
    path: Path,
    steps: Sequence[Step],
    *,
    side: Sequence[Step] = (),
    branch_at: int = 0,
    merge_at: int | None = None,
) -> History:
    """Commits ``steps`` on main; ``side`` branches off after step ``branch_at``
    and is merged (``--no-ff``) as step ``merge_at``'s commit, after its changes."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    commits: list[str] = []
    side_commits: list[str] = []
    minute = 0
    for index, step in enumerate(steps):
        if merge_at == index and side:
            commits.append(_commit(path, minute := minute + 1, f"merge side {index}", "side"))
        _apply(path, step)
        commits.append(_commit(path, minute := minute + 1, f"step {index}\n\nbody line"))
        if index == branch_at and side:
            git(path, "checkout", "-q", "-b", "side")
            for n, change in enumerate(side):
                _apply(path, change)
                side_commits.append(_commit(path, minute := minute + 1, f"side {n}"))
            git(path, "checkout", "-q", "main")
    return History(path, commits, side_commits)


def word_of(terms: Sequence[str], line: str) -> str | None:
    """The first term (in list order) that stands in ``line`` as a whole word."""
    for term in terms:
        if re.search(rf"(?<![A-Za-z0-9_]){re.escape(term)}(?![A-Za-z0-9_])", line):
            return term
    return None


Net = dict[str, dict[str, Counter[str]]]  # commit -> path -> text -> added minus removed


def reference(repo: Path, since: str, pinned: str, terms: Sequence[str], skip: set[str]) -> Net:
    """git's changed term lines per commit and path, as net counts (paths in
    ``skip`` left out: symlinks and files the provider cannot decode)."""
    out = git(
        repo,
        "log",
        "-p",
        "--no-renames",
        "--no-color",
        "--diff-merges=first-parent",
        "--format=COMMIT %H",
        f"{since}..{pinned}",
    )
    net: Net = {}
    commit = path = None
    old_path = None
    for line in out.split("\n"):
        if line.startswith("COMMIT "):
            commit, path = line[7:], None
            net[commit] = {}
            continue
        if line.startswith("diff --git "):
            path = old_path = None
            continue
        if line.startswith("--- "):
            old_path = None if line == "--- /dev/null" else line[6:]
            continue
        if line.startswith("+++ "):
            path = old_path if line == "+++ /dev/null" else line[6:]
            continue
        if commit is None or path is None or path in skip or line[:1] not in "+-":
            continue
        text = line[1:]
        if word_of(terms, text) is None:
            continue
        counts = net[commit].setdefault(path, Counter())
        counts[text] += 1 if line[0] == "+" else -1
    return {
        c: {p: Counter({t: n for t, n in counts.items() if n}) for p, counts in paths.items()}
        for c, paths in net.items()
    }


def provider_net(result: Mapping[str, object]) -> Net:
    """The provider's answer in the same form."""
    net: Net = {}
    for commit in result["commits"]:  # type: ignore[attr-defined]
        paths = net.setdefault(commit["commit"], {})
        for change in commit["changes"]:
            counts = paths.setdefault(change["path"], Counter())
            counts[change["text"]] += 1 if change["side"] == "added" else -1
    return net


def nonempty(net: Net) -> Net:
    kept = {c: {p: n for p, n in paths.items() if n} for c, paths in net.items()}
    return {c: paths for c, paths in kept.items() if paths}


def blob_lines(repo: Path, blob: str) -> list[str]:
    return git_bytes(repo, "cat-file", "-p", blob).decode().split("\n")


__all__ = [
    "History",
    "Net",
    "blob_lines",
    "build_history",
    "nonempty",
    "provider_net",
    "reference",
    "word_of",
]
