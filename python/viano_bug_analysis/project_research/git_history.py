"""The first-parent history of the pinned commit, as the "already fixed?" leads read it.

``first_parent_window`` asks the Rust core (``GitRepository.first_parent_log``,
``core::git::log``) for at most ``max_commits`` commits of the pinned commit's
first-parent line, newest first, each with its author, message and changed
files. The core caches each commit's entry in the opened repository, so a
triage run over hundreds of reports against one pinned history reads and
diffs each commit once; ``HistoryWindow.cached`` says how many it did not
read again.

``anchor_at`` estimates where a report's date falls on that line (the last
commit at or before it, by committer time); ``commit_url`` makes a commit's
web address from the repository URL the configuration gives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

MAX_MESSAGE_BYTES = 4096
"""A commit message is cut here: a subject and the lines a fix names itself in fit."""


LogRow = tuple[
    str,
    list[str],
    str,
    str,
    int,
    int,
    str,
    bool,
    int,
    list[tuple[str | bytes, str, str | None, str | None]],
]
"""One commit as ``GitRepository.first_parent_log`` gives it (``_native.pyi``)."""


class LogReader(Protocol):
    """What the window needs of a repository (``_native.GitRepository``)."""

    def first_parent_log(
        self,
        start: str,
        *,
        max_commits: int,
        max_files: int,
        max_message_bytes: int,
        timeout_s: float,
    ) -> tuple[list[LogRow], bool, int]: ...


@dataclass(frozen=True, slots=True)
class ChangedFile:
    path: str
    status: str  # added, deleted or modified


@dataclass(frozen=True, slots=True)
class HistoryCommit:
    commit: str
    parents: tuple[str, ...]
    author: str
    author_time: int  # seconds since the epoch
    committer_time: int
    message: str
    message_truncated: bool
    files_total: int
    files: tuple[ChangedFile, ...]

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def date(self) -> str:
        return utc_text(self.author_time)


@dataclass(frozen=True, slots=True)
class HistoryWindow:
    """The first-parent line from ``pinned``, newest first; ``more`` when it goes on
    beyond the last commit listed (the ``max_commits`` bound stopped the walk)."""

    pinned: str
    commits: tuple[HistoryCommit, ...]
    more: bool
    cached: int


def first_parent_window(
    repo: LogReader,
    pinned: str,
    *,
    max_commits: int,
    max_files: int,
    timeout_s: float,
) -> HistoryWindow:
    commits, more, cached = repo.first_parent_log(
        pinned,
        max_commits=max_commits,
        max_files=max_files,
        max_message_bytes=MAX_MESSAGE_BYTES,
        timeout_s=timeout_s,
    )
    return HistoryWindow(
        pinned=pinned,
        commits=tuple(_commit(c) for c in commits),
        more=more,
        cached=cached,
    )


def _commit(row: LogRow) -> HistoryCommit:
    oid, parents, author, _email, author_time, committer_time, message, cut, total, files = row
    return HistoryCommit(
        commit=oid,
        parents=tuple(parents),
        author=author,
        author_time=author_time,
        committer_time=committer_time,
        message=message,
        message_truncated=cut,
        files_total=total,
        files=tuple(
            # A path that is not UTF-8 is shown with replacement characters: it is
            # only ever compared with paths a report names, which are text.
            ChangedFile(p if isinstance(p, str) else p.decode("utf-8", "replace"), status)
            for p, status, _old, _new in files
        ),
    )


def parse_report_time(text: str | None) -> int | None:
    """Seconds since the epoch of an ISO 8601 time (``2024-03-01T10:00:00Z``), None
    when ``text`` is none; a time without an offset is read as UTC."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp())


def anchor_at(commits: Sequence[HistoryCommit], when: int) -> int | None:
    """The index (newest first) of the last commit at or before ``when`` by committer
    time, None when every listed commit is newer. An estimate: a server built from
    a branch or a fork need not have had that commit."""
    for index, commit in enumerate(commits):
        if commit.committer_time <= when:
            return index
    return None


def utc_text(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_SCP_LIKE = re.compile(r"^[\w.-]+@(?P<host>[\w.-]+):(?P<path>[^\s]+)$")


def commit_url(repository_url: str, commit: str, *, web_url: str | None = None) -> str | None:
    """A commit's web address: ``web_url`` (or the repository URL made a web address:
    ``git@host:o/r.git`` and ``https://host/o/r.git`` both give ``https://host/o/r``)
    followed by ``/commit/<id>``, GitLab's ``/-/commit/<id>`` on a gitlab host.
    None when the URL is no web or SSH address (a local path)."""
    base = (web_url or repository_url).strip().rstrip("/")
    scp = _SCP_LIKE.match(base)
    if scp:
        base = f"https://{scp['host']}/{scp['path']}"
    elif base.startswith("ssh://"):
        rest = base[len("ssh://") :].split("@", 1)[-1]
        host, _, path = rest.partition("/")
        base = f"https://{host.split(':', 1)[0]}/{path}"
    elif base.startswith("git://"):
        base = "https://" + base[len("git://") :]
    if not base.startswith(("https://", "http://")):
        return None
    base = base.removesuffix(".git")
    separator = "/-/commit/" if "gitlab" in base.split("/", 3)[2] else "/commit/"
    return f"{base}{separator}{commit}"


__all__ = [
    "MAX_MESSAGE_BYTES",
    "ChangedFile",
    "HistoryCommit",
    "HistoryWindow",
    "LogReader",
    "anchor_at",
    "commit_url",
    "first_parent_window",
    "parse_report_time",
    "utc_text",
]
