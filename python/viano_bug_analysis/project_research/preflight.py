"""The project config checked against what it names, once, before a command works.

A pinned commit the repository does not hold, a repository path that is not
a readable git repository, or a database the reader cannot see would
otherwise surface late and quietly: a build that writes a revision with one
coverage fact and no leads, a triage of "built" cases with nothing in them,
460 lines of "missing" from ``vba profile check``. ``preflight`` turns each
into a typed error at once (exit 2), naming the config key and what is there
instead (the refs nearest the commit, the databases the reader can see that
look like the name). ``vba profile check``, ``vba case build``, ``vba
triage``, ``vba research`` and ``vba mcp`` call it; it only reads.

An unreachable database or a refused password stays what it is
(``research_unavailable``, ``research_auth_failed``): preflight only makes
it happen first.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from viano_bug_analysis.errors import ResearchError, ResearchUnavailable

if TYPE_CHECKING:
    from viano_bug_analysis.project_research.service import ProjectResearch

# How many refs or database names an error lists: enough to spot the right one.
SHOWN = 5
# A repository with more refs than this is not read further for suggestions.
MAX_REFS_READ = 10_000


def preflight(research: ProjectResearch, *, source: bool = True, database: bool = True) -> None:
    """Checks the providers ``research``'s config names (``source``, ``database``: which
    of them the command will use); raises at the first problem."""
    config = research.config
    if source and config.source is not None:
        _check_source(research, config.source.repository, config.source.commit)
    if database and config.database is not None:
        _check_databases(research, config.database.allow, config.database.name)


def _check_source(research: ProjectResearch, repository: Path, commit: str) -> None:
    provider = research.source_provider()
    check = getattr(provider, "check", None)
    if not callable(check):  # a stand-in provider (tests): nothing to open
        return
    git_dir = _git_dir(repository)
    if git_dir is None:
        reason = "not_found" if not repository.exists() else "not_a_git_repository"
        raise ResearchError(
            "repository_unreadable",
            f"configuration key 'source.repository' does not name a readable git repository "
            f"({reason.replace('_', ' ')}); give the path of a clone (its work tree or its "
            ".git directory, or a bare repository)",
            {"key": "source.repository", "reason": reason},
        )
    try:
        check()
    except ResearchUnavailable as err:
        if err.reason != "repository_unavailable":
            raise
        raise ResearchError(
            "repository_unreadable",
            "configuration key 'source.repository': the git repository cannot be read "
            f"({err.details.get('what', 'unreadable')})",
            {"key": "source.repository", "reason": str(err.details.get("what", "unreadable"))},
        ) from None
    except ResearchError as err:
        if err.code != "commit_missing":
            raise
        refs = nearest_refs(git_dir, commit)
        shown = ", ".join(f"{name} ({sha[:12]})" for name, sha in refs) or "none found"
        raise ResearchError(
            "commit_missing",
            f"configuration key 'source.commit' names a commit the repository does not hold "
            f"(found there: {err.details.get('found', 'nothing')}); a report from another "
            f"fork, or a clone that was not fetched? nearest refs: {shown}",
            {
                "key": "source.commit",
                "found": str(err.details.get("found", "nothing")),
                "refs": [f"{name} {sha}" for name, sha in refs],
            },
        ) from None


def _git_dir(repository: Path) -> Path | None:
    """The repository's git directory (a work tree's .git, a worktree's gitdir file, or
    a bare repository itself); None when ``repository`` is none of them."""
    dot_git = repository / ".git"
    if dot_git.is_file():
        try:
            line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None
        if line.startswith("gitdir:"):
            target = Path(line.removeprefix("gitdir:").strip())
            dot_git = target if target.is_absolute() else repository / target
    for candidate in (dot_git, repository):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def nearest_refs(git_dir: Path, commit: str) -> list[tuple[str, str]]:
    """Up to ``SHOWN`` refs (name, commit ID): those whose ID shares the longest
    prefix with ``commit`` first (a mistyped ID), then HEAD and the branches."""
    refs = _refs(git_dir)

    def rank(item: tuple[str, str]) -> tuple[int, int, str]:
        name, sha = item
        pairs = enumerate(zip(sha, commit, strict=False))
        shared = next((i for i, (a, b) in pairs if a != b), len(sha))
        return (-shared, 0 if name == "HEAD" else 1 if name.startswith("refs/heads/") else 2, name)

    return sorted(refs.items(), key=rank)[:SHOWN]


def _refs(git_dir: Path) -> dict[str, str]:
    """Loose and packed refs with their commit IDs (peeled tags where packed-refs says)."""
    found: dict[str, str] = {}
    packed = git_dir / "packed-refs"
    try:
        lines = packed.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    last = None
    for line in lines[:MAX_REFS_READ]:
        if line.startswith("^") and last is not None:
            found[last] = line[1:41]  # the commit an annotated tag points to
        elif len(line) > 41 and line[40] == " ":
            last = line[41:]
            found[last] = line[:40]
    refs_dir = git_dir / "refs"
    for path in sorted(refs_dir.rglob("*"))[:MAX_REFS_READ] if refs_dir.is_dir() else []:
        sha = _read_sha(path)
        if sha is not None:
            found[path.relative_to(git_dir).as_posix()] = sha
    head = _read_sha(git_dir / "HEAD")
    if head is None:  # a symbolic HEAD: "ref: refs/heads/main"
        try:
            target = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            target = ""
        head = found.get(target.removeprefix("ref: ").strip())
    if head is not None:
        found["HEAD"] = head
    return found


def _read_sha(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="ascii").strip() if path.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return None
    return (
        text.lower()
        if len(text) == 40 and all(c in "0123456789abcdefABCDEF" for c in text)
        else None
    )


def _check_databases(research: ProjectResearch, allow: Any, name: str | None) -> None:
    provider = research.database_provider()
    listing = getattr(provider, "databases", None)
    if not callable(listing):  # a stand-in provider (tests)
        return
    visible: list[str] = list(listing())
    for database in ([name] if name is not None else []) + sorted(allow):
        if database in visible:
            continue
        key = "database.name" if database == name else f"database.allow.{database}"
        similar = similar_names(database, visible)
        shown = ", ".join(similar) if similar else "none that look similar"
        raise ResearchError(
            "database_not_found",
            f"configuration key {key!r} names a database the reader cannot see (it does not "
            f"exist, or the account has no grant on it); databases it can see: {shown}",
            {"key": key, "database": database, "similar": similar},
        )


def similar_names(name: str, visible: list[str]) -> list[str]:
    """The visible names closest to ``name`` (a different case first), at most ``SHOWN``."""
    same_case = [v for v in visible if v.lower() == name.lower()]
    close = difflib.get_close_matches(name.lower(), [v.lower() for v in visible], SHOWN, 0.5)
    by_lower = {v.lower(): v for v in visible}
    found = same_case + [by_lower[c] for c in close if by_lower[c] not in same_case]
    if not found:
        found = sorted(visible)
    return found[:SHOWN]


__all__ = ["nearest_refs", "preflight", "similar_names"]
