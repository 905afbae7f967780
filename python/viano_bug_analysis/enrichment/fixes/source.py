"""The histories "already fixed?" reads: the configured source and its upstream.

Each repository is opened once per process (``_opened``) and kept: its
per-commit log cache (``core::git::log``) then serves every report a triage
run builds, each against its own ``ProjectResearch``.

The diff reads (``source.changes``) of the configured source are the research's
journaled queries (``phase``); research reads no other repository, so the
upstream's are asked of a ``GitSource`` of its own, opened once per process
(``_providers``) and bounded by the same ``[limits]``: the same provider, the
same answer, the same blob cache across reports.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viano_bug_analysis._native import GitRepository
from viano_bug_analysis.enrichment.fixes.sections import changed_headers
from viano_bug_analysis.project_research.config import Limits, ResearchConfig
from viano_bug_analysis.project_research.git_history import (
    HistoryCommit,
    HistoryWindow,
    commit_url,
    first_parent_window,
)
from viano_bug_analysis.project_research.service import SourceProvider, configured_git_source

_LOG_CACHE_BYTES = 1 << 20  # the log reads no blobs: the content cache stays small
_WINDOWS_KEPT = 4
_opened: dict[Path, GitRepository] = {}
# (repository, commit, commits, files) -> the window: every report of a triage run
# against one pinned commit reads the same window, converted to Python once.
_windows: dict[tuple[Path, str, int, int], HistoryWindow] = {}
_providers: dict[tuple[Path, str], SourceProvider] = {}
# (repository, commit, path) -> the headers of the sections the commit changed there
# (None: a side could not be read as text): a triage run reads each once.
_headers: dict[tuple[Path, str, str], tuple[str, ...] | None] = {}
_HEADERS_KEPT = 4096
_TREE_ENTRIES = 1_000_000
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class HistorySource:
    """One repository's first-parent line at one commit."""

    role: str  # "source" or "upstream"
    repository: Path
    url: str
    web_url: str | None
    commit: str
    limits: Limits

    @property
    def origin(self) -> dict[str, Any]:
        return {"kind": "git", "url": self.url, "commit": self.commit}

    def window(self) -> HistoryWindow:
        """The first-parent window; the same object for every report of this process
        (the commits are immutable: a commit ID names its content)."""
        key = (
            self.repository.resolve(),
            self.commit,
            self.limits.history_commits,
            self.limits.history_files,
        )
        with _lock:
            kept = _windows.get(key)
        if kept is not None:
            return kept
        window = first_parent_window(
            _repository(self.repository),
            self.commit,
            max_commits=self.limits.history_commits,
            max_files=self.limits.history_files,
            timeout_s=self.limits.git_seconds,
        )
        with _lock:
            if len(_windows) >= _WINDOWS_KEPT:
                _windows.pop(next(iter(_windows)))
            _windows[key] = window
        return window

    def link(self, commit: str) -> str | None:
        return commit_url(self.url, commit, web_url=self.web_url)

    def changed_headers(self, commit: HistoryCommit, path: str) -> tuple[str, ...] | None:
        """The headers of the sections ``commit`` changed in ``path`` against its first
        parent (``sections``); None when either side is no readable text."""
        key = (self.repository.resolve(), commit.commit, path)
        with _lock:
            if key in _headers:
                return _headers[key]
        repo = _repository(self.repository)
        old = _lines(repo, commit.parents[0], path, self.limits) if commit.parents else []
        new = _lines(repo, commit.commit, path, self.limits)
        found = None if old is None or new is None else changed_headers(old, new)
        with _lock:
            if len(_headers) >= _HEADERS_KEPT:
                _headers.pop(next(iter(_headers)))
            _headers[key] = found
        return found

    def changes(self, *, since: str, terms: list[str], offset: int, limit: int) -> dict[str, Any]:
        """One page of the provider's ``source.changes`` answer, read from this
        repository at its commit (``ResearchError``/``ResearchUnavailable`` pass)."""
        return _provider(self).changes(
            since=since, terms=terms, path_prefix=None, offset=offset, limit=limit
        )


def history_sources(config: object) -> tuple[HistorySource, ...]:
    """The source's history and, when configured, its upstream's; () without a
    research configuration (a stand-in research in tests) or without a source."""
    if not isinstance(config, ResearchConfig) or config.source is None:
        return ()
    source = config.source
    out = [
        HistorySource(
            "source", source.repository, source.url, source.web_url, source.commit, config.limits
        )
    ]
    if source.upstream is not None:
        up = source.upstream
        out.append(HistorySource("upstream", up.repository, up.url, None, up.commit, config.limits))
    return tuple(out)


def _lines(repo: GitRepository, commit: str, path: str, limits: Limits) -> list[str] | None:
    """The text lines of ``path`` at ``commit``; [] when the commit has no such file,
    None when it is no readable text (too large, binary, not UTF-8)."""
    tree = repo.tree(commit, max_entries=_TREE_ENTRIES, timeout_s=limits.git_seconds)
    if tree.entry(path) is None:
        return []
    text = tree.text(path, max_bytes=limits.file_bytes, timeout_s=limits.git_seconds)
    if isinstance(text, str):
        return None
    if text.line_count == 0:
        return []
    return [line for _n, line, _cut in text.lines(1, text.line_count, limits.line_chars)]


def _repository(path: Path) -> GitRepository:
    key = path.resolve()
    with _lock:
        repo = _opened.get(key)
        if repo is None:
            repo = _opened[key] = GitRepository(key, cache_bytes=_LOG_CACHE_BYTES)
        return repo


def _provider(source: HistorySource) -> SourceProvider:
    key = (source.repository.resolve(), source.commit)
    with _lock:
        provider = _providers.get(key)
        if provider is None:
            if len(_providers) >= _WINDOWS_KEPT:
                _providers.pop(next(iter(_providers)))
            # No disk cache: the configured source's is written by research's provider.
            provider = _providers[key] = configured_git_source(
                key[0], source.commit, url=source.url, limits=source.limits
            )
        return provider


__all__ = ["HistorySource", "history_sources"]
