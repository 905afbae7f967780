"""The git source provider of ProjectResearch v1: lexical queries over one commit.

Everything is read from the git objects of one full commit ID (its recursive
tree and the blobs it names), never from a work tree, the index or a branch
name: a checkout, an edit, a new commit or a pull cannot change an answer.
Objects are read in-process by the native extension (gix, opened isolated
from system, global and user configuration, replace refs off, no hooks,
filters or textconv); no model-supplied string ever reaches git or a shell.
Why in-process and not ``git cat-file --batch``: ``rust/src/core/git/mod.rs``
and ``docs/benchmarks.md`` (group "git source.search ~10k files").

Text follows the shared line model and search semantics
(``docs/text-and-search.md``): UTF-8 with an optional BOM, lines end at
``\\n``, ``\\r\\n`` or a lone ``\\r``. A blob with a NUL byte is ``binary``,
one with invalid UTF-8 ``not_utf8``; neither is ever decoded into a result.
Symlinks (mode 120000) and submodules (160000) are never readable files.
Paths follow ``git_paths``.

Answers are deterministic for a commit: files in byte order of their paths,
hits in file order then line order, pages cut by ``offset``/``limit``. Every
hit carries the blob ID, the SHA-256 of the blob's bytes and the 1-based line
number. A search counts in ``files_unsearched`` the selected files left out
for a reason that could hide a hit (``git_coverage.COVERAGE_GAPS``:
``too_large``, ``not_utf8``, ``path_invalid``, ``missing``; a ``binary`` blob
holds no text lines by definition, symlinks and submodules are no files of
this repository). Whether an answer is ``complete`` (every answer to the
query is in it: also the first and only page) is the service's coverage
alone; no provider field carries that name (project-result-v2).

A partial clone (``git clone --filter=blob:...``) names blobs in its trees
that its object database does not hold: each such file is skipped as
``missing`` (searches answer from the other files and count it as unsearched; a
``read`` of it is refused with ``path_not_readable``, reason ``missing``).
Only a missing or corrupt tree, commit or present-but-unreadable object makes
the repository unavailable. Only a complete search (coverage ``complete``)
with zero hits is an absence proof, and only for that commit and predicate. A
hit is lexical: it proves no definition, registration or executed call.

Decoded blobs are cached by blob ID (immutable, so never stale) in an LRU of
``cache_bytes`` on the native side; the commit's listing is kept as well, so
a repeated search reads no git object at all. With ``disk_cache`` (a
directory) the decoded texts and verdicts also go to a persistent cache that
every later process reuses, memory-mapped and checked by checksum before
use, bounded to ``disk_cache_bytes`` (``rust/src/core/git/disk_cache.rs``,
docs/project-research-v1.md). Answers never depend on either cache.
"""

from __future__ import annotations

import atexit
import os
import re
import threading
import time
import weakref
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from viano_bug_analysis._native import GitRepository, GitTree
from viano_bug_analysis.project_research.errors import ResearchError, ResearchUnavailable
from viano_bug_analysis.project_research.git_coverage import COVERAGE_GAPS
from viano_bug_analysis.project_research.git_paths import check_query_path
from viano_bug_analysis.snapshot.text_search import SearchMode, is_identifier, is_word, read_lines

READ_LINE_LIMIT = 200
"""Most lines one ``read`` returns."""
SKIPPED_PATH_LIMIT = 100
"""Most skipped paths named in one answer (all of them are counted)."""
TREE_ENTRY_LIMIT = 1_000_000
"""A commit with more files than this is not listed at all (a memory bound)."""
MAX_TEXT_CHARS = 1024
MAX_SYMBOL_CHARS = 256
MAX_OFFSET = 2**31 - 1
REVISION_CANDIDATES_LISTED = 10
"""Most commits an ambiguous abbreviated ID names in its answer (all are counted)."""
CHANGES_PAGE_LIMIT = 50
"""Most commits one ``changes`` page lists."""
CHANGES_PER_COMMIT = 20
"""Most changed lines listed per commit (all are counted)."""
SUMMARY_CHARS = 200
"""Longest commit summary shown (the first line of the message)."""


REGISTRATION_NOTE = (
    "lexical occurrences of the symbol: a starting point for checking how it is "
    "registered; a hit proves no registration, definition or executed call"
)

_COMMIT = re.compile(r"[0-9a-fA-F]{40}")
_TERM = re.compile(r"[A-Za-z0-9_]{1,256}")
MAX_TERMS = 32
_REVISION = re.compile(r"[0-9a-f]{7,40}")

# Sources with a persistent cache: the native side writes a search's texts
# on a background thread, which must finish before the process exits (a
# process that dies mid-write leaves only a temporary file, deleted later).
_WITH_DISK_CACHE: weakref.WeakSet[GitSource] = weakref.WeakSet()


def _flush_disk_caches() -> None:
    for source in list(_WITH_DISK_CACHE):
        source.flush()


atexit.register(_flush_disk_caches)


class GitSource:
    """Read-only lexical queries over one commit of a local git repository.

    ``repository`` is a local clone (with a work tree or bare); only its
    object database is read. ``url`` is recorded in every answer's origin;
    the local path never is. The commit's form is checked here, its
    existence on first use (``check()`` does that eagerly). Thread-safe.
    """

    def __init__(
        self,
        repository: str | os.PathLike[str],
        commit: str,
        *,
        url: str,
        max_files: int = 20000,
        max_file_bytes: int = 8 << 20,
        max_total_bytes: int = 256 << 20,
        max_line_chars: int = 4096,
        max_page: int = 100,
        timeout_s: float = 30.0,
        cache_bytes: int = 512 << 20,
        disk_cache: str | os.PathLike[str] | None = None,
        disk_cache_bytes: int = 2 << 30,
        max_walk_commits: int = 200_000,
        max_change_commits: int = 5_000,
        max_change_blobs: int = 20_000,
    ) -> None:
        if not isinstance(commit, str) or _COMMIT.fullmatch(commit) is None:
            raise ResearchError(
                "commit_invalid", "the commit must be a full commit ID of 40 hexadecimal digits"
            )
        if not isinstance(url, str) or not url:
            raise _config_error("url")
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float):
            raise _config_error("timeout_s")
        if not 0 < timeout_s <= 86_400:
            raise _config_error("timeout_s")
        for name, value in (("cache_bytes", cache_bytes), ("disk_cache_bytes", disk_cache_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise _config_error(name)
        self._path = Path(repository)
        self.commit = commit.lower()
        self.url = url
        self.max_files = _positive(max_files, "max_files")
        self.max_file_bytes = _positive(max_file_bytes, "max_file_bytes")
        self.max_total_bytes = _positive(max_total_bytes, "max_total_bytes")
        self.max_line_chars = _positive(max_line_chars, "max_line_chars")
        self.max_page = _positive(max_page, "max_page")
        self.max_walk_commits = _positive(max_walk_commits, "max_walk_commits")
        self.max_change_commits = _positive(max_change_commits, "max_change_commits")
        self.max_change_blobs = _positive(max_change_blobs, "max_change_blobs")
        self.timeout_s = float(timeout_s)
        self.cache_bytes = cache_bytes
        self.disk_cache = None if disk_cache is None else Path(disk_cache)
        self.disk_cache_bytes = disk_cache_bytes
        self._lock = threading.Lock()
        self._repo: GitRepository | None = None
        self._tree: GitTree | None = None
        self._sha256: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"GitSource(url={self.url!r}, commit={self.commit!r})"

    @property
    def origin(self) -> dict[str, Any]:
        """Where every answer comes from: URL and commit, never the local path."""
        return {"kind": "git", "url": self.url, "commit": self.commit}

    def check(self) -> int:
        """Opens the repository and lists the commit now; returns its number of files."""
        return len(self._listing(self._deadline()))

    def flush(self) -> None:
        """Waits until the persistent cache has every text the searches so
        far stored (done at process exit and by ``close``)."""
        repo = self._repo
        if repo is not None:
            repo.flush()

    def close(self) -> None:
        """Drops the repository handle, the listing and the content cache (the
        next query opens the repository again)."""
        self.flush()
        with self._lock:
            self._repo = None
            self._tree = None
            self._sha256 = {}

    def cache_info(self) -> dict[str, int]:
        """The content cache: entries, estimated bytes, blobs read from git so far."""
        if self._repo is None:
            return {"entries": 0, "bytes": 0, "blobs_read": 0}
        entries, size, blobs_read = self._repo.cache_info()
        return {"entries": entries, "bytes": size, "blobs_read": blobs_read}

    def disk_cache_info(self) -> dict[str, int] | None:
        """The persistent cache's counters in this process: entries served
        (``hits``), entries or files that failed a check (``rejected``),
        segment files ``written`` and ``evicted``; None without one."""
        counters = None if self._repo is None else self._repo.disk_cache_info()
        if self.disk_cache is None:
            return None
        keys = ("hits", "rejected", "written", "evicted")
        return dict(zip(keys, counters or (0, 0, 0, 0), strict=True))

    # --- queries ----------------------------------------------------------

    def files(
        self, *, text: str, path_prefix: str | None, offset: int, limit: int
    ) -> dict[str, Any]:
        """Regular files whose path contains ``text`` (case-sensitive), with blob ID and size.

        Files over the size limit are listed too (they are only never read),
        and so is a file whose blob a partial clone does not hold (size null,
        ``absent: "missing"``); symlinks, submodules and unusable paths that
        match are reported as skipped.
        """
        text = _text(text, "text")
        prefix = self._prefix(path_prefix)
        offset, limit = self._page(offset, limit)
        found: list[dict[str, Any]] = []
        skipped: list[tuple[str, str]] = []
        listing = self._listing(self._deadline())
        for path, _, blob, size, unusable in listing.find_paths(contains=text, prefix=prefix):
            if unusable is None:
                found.append({"path": path, "blob": blob, "size": size})
            elif unusable == "missing":
                # A file of the commit all the same: its path and blob are known,
                # only its bytes (and so its size) are not in this clone.
                found.append({"path": path, "blob": blob, "size": None, "absent": unusable})
            else:
                skipped.append((_display(path), unusable))
        unmatched = prefix is not None and not found and not skipped
        if unmatched and not listing.find_paths(contains="", prefix=prefix):
            raise _prefix_unmatched()
        page = found[offset : offset + limit]
        return {
            **self._paging(len(found), offset, limit, len(page)),
            "skipped": _skipped_summary(skipped),
            "files": page,
        }

    def search(
        self,
        *,
        text: str,
        case_sensitive: bool,
        path_prefix: str | None,
        offset: int,
        limit: int,
        whole_word: bool = False,
    ) -> dict[str, Any]:
        """Lines that contain ``text`` literally, below an optional path prefix;
        ``whole_word``: only where it stands as a whole word (token boundaries,
        the ``symbol`` rule, for any run of letters, digits and ``_``)."""
        if whole_word is True:
            mode = _word_mode(case_sensitive)
            return self._search(mode, _word(text), self._prefix(path_prefix), offset, limit)
        if whole_word is not False:
            raise _request_error("whole_word", "not_a_boolean")
        mode = _literal_mode(case_sensitive)
        return self._search(mode, _text(text, "text"), self._prefix(path_prefix), offset, limit)

    def symbol(
        self, *, symbol: str, path_prefix: str | None, offset: int, limit: int
    ) -> dict[str, Any]:
        """Lines where ``symbol`` stands as a whole identifier word."""
        return self._search("symbol", _symbol(symbol), self._prefix(path_prefix), offset, limit)

    def registration(
        self, *, symbol: str, path_prefix: str | None, offset: int, limit: int
    ) -> dict[str, Any]:
        """The same search as ``symbol``, labelled as the start of a registration check."""
        result = self.symbol(symbol=symbol, path_prefix=path_prefix, offset=offset, limit=limit)
        return {**result, "purpose": "registration_check_start", "note": REGISTRATION_NOTE}

    def schema(self, *, text: str, case_sensitive: bool, offset: int, limit: int) -> dict[str, Any]:
        """Literal search in the commit's SQL files (``*.sql``, any case of the suffix) only."""
        mode = _literal_mode(case_sensitive)
        return self._search(mode, _text(text, "text"), None, offset, limit, sql_only=True)

    def read(self, *, path: str, start_line: int, end_line: int) -> dict[str, Any]:
        """Lines ``start_line..end_line`` (1-based, inclusive) of one regular file."""
        path = check_query_path(path, "path")
        start_line = _int(start_line, "start_line", minimum=1)
        end_line = _int(end_line, "end_line", minimum=1)
        if end_line < start_line:
            raise _request_error("end_line", "before_start_line")
        if end_line - start_line + 1 > READ_LINE_LIMIT:
            raise ResearchError(
                "limit_exceeded",
                f"a read returns at most {READ_LINE_LIMIT} lines",
                {"argument": "end_line", "limit": READ_LINE_LIMIT, "maximum": READ_LINE_LIMIT},
            )
        deadline = self._deadline()
        tree = self._listing(deadline)
        entry = tree.entry(path)
        if entry is None:
            raise ResearchError(
                "path_not_found", "the commit has no file at this path", {"argument": "path"}
            )
        _, kind, blob, size, unusable = entry
        if unusable is not None:
            raise _not_readable(unusable)
        if size > self.max_file_bytes:
            raise _not_readable("too_large", limit=self.max_file_bytes)
        content = tree.text(path, max_bytes=self.max_file_bytes, timeout_s=_left(deadline))
        if isinstance(content, str):
            raise _not_readable(content)
        if end_line > content.line_count:
            raise ResearchError(
                "line_out_of_range",
                "the line range reaches beyond the end of the file",
                {"argument": "end_line", "line_count": content.line_count},
            )
        lines = read_lines(content, start_line, end_line, max_chars=self.max_line_chars)
        return {
            "origin": self.origin,
            "path": path,
            "blob": blob,
            "sha256": self._sha256_of([blob], deadline)[blob],
            "size": size,
            "executable": kind == "executable",
            "line_count": content.line_count,
            "start_line": start_line,
            "end_line": end_line,
            "lines": [
                {"line": h.line_number, "text": h.text, "text_truncated": h.text_truncated}
                for h in lines
            ],
        }

    def revision(self, *, revision: str) -> dict[str, Any]:
        """The commit an abbreviated ID names in this repository, and how it
        relates to the pinned commit (``docs/project-research-v1.md``).

        ``relation``: ``same``; ``ancestor`` (the pinned commit reaches it:
        ``pinned_only`` commits lie between); ``descendant`` (it reaches the
        pinned commit: ``reported_only``); ``diverged`` (``merge_bases`` and
        both counts); ``unrelated`` (no common commit); ``ambiguous`` (several
        commits match: ``candidate_count``, the first ``candidates``);
        ``not_in_repository``; ``undetermined`` when the walk stopped first
        (``walk_finished`` false, ``walk_stopped_by``: ``walk_limit`` or
        ``history_missing``).
        """
        if not isinstance(revision, str) or _REVISION.fullmatch(revision) is None:
            raise _request_error("revision", "not_an_abbreviated_commit_id")
        deadline = self._deadline()
        self._listing(deadline)  # opens the repository; the pinned commit must be there
        assert self._repo is not None
        commits, count, other_objects = self._repo.resolve_revision(
            revision, max_listed=REVISION_CANDIDATES_LISTED
        )
        answer: dict[str, Any] = {
            "origin": self.origin,
            "revision": revision,
            "pinned_commit": self.commit,
            "resolution": "resolved",
            "commit": None,
            "candidate_count": count,
            "candidates": commits if count > 1 else [],
            "other_objects": other_objects,
            "relation": None,
            "pinned_only": None,
            "reported_only": None,
            "merge_bases": [],
            "commits_visited": 0,
            "walk_limit": self.max_walk_commits,
            "walk_finished": True,
            "walk_stopped_by": None,
        }
        if count == 0:
            resolution = "not_a_commit" if other_objects else "not_found"
            return {**answer, "resolution": resolution, "relation": "not_in_repository"}
        if count > 1:
            return {**answer, "resolution": "ambiguous", "relation": "ambiguous"}
        relation, pinned_only, reported_only, bases, visited, incomplete = self._repo.relate(
            commits[0],
            self.commit,
            max_commits=self.max_walk_commits,
            timeout_s=_left(deadline),
        )
        return {
            **answer,
            "commit": commits[0],
            "relation": relation,
            "pinned_only": pinned_only,
            "reported_only": reported_only,
            "merge_bases": bases,
            "commits_visited": visited,
            "walk_finished": incomplete is None,
            "walk_stopped_by": incomplete,
        }

    def changes(
        self,
        *,
        since: str,
        terms: Sequence[str],
        path_prefix: str | None,
        offset: int,
        limit: int,
    ) -> dict[str, Any]:
        """The commits of ``since..pinned`` whose change adds or removes a line
        naming a term (``docs/project-research-v1.md``, "Changed since a commit").

        ``since`` must be an ancestor of the pinned commit (or the commit
        itself, which has no range); anything else is refused with
        ``since_not_ancestor``. Bounded by ``max_walk_commits`` (the walk that
        finds the range), ``max_change_commits`` (commits examined, newest
        first) and ``max_change_blobs`` (distinct blobs compared); a bound
        reached makes ``examined_in_full`` false and ``examination_gaps``
        says which.
        """
        if not isinstance(since, str) or _COMMIT.fullmatch(since) is None:
            raise _request_error("since", "not_a_full_commit_id")
        since = since.lower()
        terms = _terms(terms)
        prefix = self._prefix(path_prefix)
        offset, limit = self._page(offset, limit)
        if limit > CHANGES_PAGE_LIMIT:
            raise ResearchError(
                "limit_exceeded",
                f"a changes page lists at most {CHANGES_PAGE_LIMIT} commits",
                {"argument": "limit", "limit": CHANGES_PAGE_LIMIT, "maximum": CHANGES_PAGE_LIMIT},
            )
        deadline = self._deadline()
        self._listing(deadline)  # opens the repository; the pinned commit must be there
        assert self._repo is not None
        _, count, _ = self._repo.resolve_revision(since, max_listed=1)
        if count == 0:
            raise _not_ancestor("not_in_repository")
        relation, incomplete, visited, range_commits, examined, stop, blobs, commits, skipped = (
            self._repo.changes(
                since,
                self.commit,
                list(terms),
                prefix=prefix,
                max_walk_commits=self.max_walk_commits,
                max_commits=self.max_change_commits,
                max_blobs=self.max_change_blobs,
                max_file_bytes=self.max_file_bytes,
                max_changes=CHANGES_PER_COMMIT,
                max_chars=self.max_line_chars,
                timeout_s=_left(deadline),
            )
        )
        if relation not in ("ancestor", "same", "undetermined"):
            raise _not_ancestor(relation)
        reasons = [(_display(path), reason) for path, reason in skipped]
        why = [incomplete] if incomplete else []
        if stop:
            why.append(stop)
        if any(reason in COVERAGE_GAPS for _, reason in reasons):
            why.append("files_skipped")
        page = commits[offset : offset + limit]
        return {
            **self._paging(len(commits), offset, limit, len(page)),
            "since": since,
            "pinned_commit": self.commit,
            "terms": list(terms),
            "path_prefix": prefix,
            "relation": relation,
            "range_commits": range_commits if relation != "undetermined" else None,
            "commits_examined": examined,
            "commits_visited": visited,
            "blobs_compared": blobs,
            "limits": {
                "walk_commits": self.max_walk_commits,
                "commits": self.max_change_commits,
                "blobs": self.max_change_blobs,
                "changes_per_commit": CHANGES_PER_COMMIT,
            },
            "examined_in_full": not why,
            "examination_gaps": why,
            "skipped": _skipped_summary(reasons),
            "commits": [_changed_commit(commit, terms) for commit in page],
        }

    # --- the shared search ----------------------------------------------

    def _search(
        self,
        mode: SearchMode,
        pattern: str,
        prefix: str | None,
        offset: int,
        limit: int,
        *,
        sql_only: bool = False,
    ) -> dict[str, Any]:
        offset, limit = self._page(offset, limit)
        deadline = self._deadline()
        selection = self._listing(deadline).select(
            prefix=prefix, sql_only=sql_only, max_file_bytes=self.max_file_bytes
        )
        self._check_selection(selection.file_count, selection.total_bytes, sql_only=sql_only)
        total, files_searched, skipped, hits = selection.search(
            mode,
            pattern,
            offset=offset,
            limit=limit,
            max_chars=self.max_line_chars,
            timeout_s=_left(deadline),
        )
        if prefix is not None and files_searched == 0 and not skipped:
            raise _prefix_unmatched()
        digests = self._sha256_of([hit[1] for hit in hits], deadline)
        reasons = [(_display(path), reason) for path, reason in skipped]
        return {
            **self._paging(total, offset, limit, len(hits)),
            "files_searched": files_searched,
            "files_unsearched": sum(1 for _, reason in reasons if reason in COVERAGE_GAPS),
            "skipped": _skipped_summary(reasons),
            "matches": [
                {
                    "path": path,
                    "blob": blob,
                    "sha256": digests[blob],
                    "line": line,
                    "text": text,
                    "text_truncated": truncated,
                }
                for path, blob, line, text, truncated in hits
            ],
        }

    def _paging(self, total: int, offset: int, limit: int, returned: int) -> dict[str, Any]:
        truncated = offset + returned < total
        return {
            "origin": self.origin,
            "total": total,
            "offset": offset,
            "limit": limit,
            "returned": returned,
            "truncated": truncated,
            "next_offset": offset + returned if truncated else None,
        }

    def _check_selection(self, files: int, total_bytes: int, *, sql_only: bool) -> None:
        hint = "no narrower selection exists" if sql_only else "narrow it with a path_prefix"
        if files > self.max_files:
            raise ResearchError(
                "selection_too_large",
                f"the search would read {files} files, more than the limit of {self.max_files};"
                f" {hint}",
                {
                    "what": "files",
                    "selected": files,
                    "limit": self.max_files,
                    "maximum": self.max_files,
                    "hint": hint,
                },
            )
        if total_bytes > self.max_total_bytes:
            raise ResearchError(
                "selection_too_large",
                f"the search would read {total_bytes} bytes, more than the limit of"
                f" {self.max_total_bytes}; {hint}",
                {
                    "what": "bytes",
                    "selected": total_bytes,
                    "limit": self.max_total_bytes,
                    "maximum": self.max_total_bytes,
                    "hint": hint,
                },
            )

    def _prefix(self, value: Any) -> str | None:
        return None if value is None else check_query_path(value, "path_prefix", prefix=True)

    def _page(self, offset: Any, limit: Any) -> tuple[int, int]:
        offset = _int(offset, "offset", minimum=0)
        limit = _int(limit, "limit", minimum=1)
        if limit > self.max_page:
            raise ResearchError(
                "limit_exceeded",
                f"limit is larger than the page size limit {self.max_page}",
                {"argument": "limit", "limit": self.max_page, "maximum": self.max_page},
            )
        return offset, limit

    # --- git access -----------------------------------------------------------

    def _deadline(self) -> float:
        return time.monotonic() + self.timeout_s

    def _listing(self, deadline: float) -> GitTree:
        with self._lock:
            if self._tree is None:
                if self._repo is None:
                    self._repo = GitRepository(
                        self._path,
                        cache_bytes=self.cache_bytes,
                        disk_cache=self.disk_cache,
                        disk_cache_bytes=self.disk_cache_bytes,
                    )
                    if self.disk_cache is not None:
                        _WITH_DISK_CACHE.add(self)
                self._tree = self._repo.tree(
                    self.commit, max_entries=TREE_ENTRY_LIMIT, timeout_s=_left(deadline)
                )
            elif self._tree.absent:
                # A partial clone: a blob fetched since the listing was made is
                # readable now (only the absent entries are looked up again).
                self._tree = self._tree.refreshed()
            return self._tree

    def _sha256_of(self, blobs: Sequence[str], deadline: float) -> dict[str, str]:
        """SHA-256 of each blob's bytes, computed once per blob ID."""
        known = self._sha256
        unknown = sorted({b for b in blobs if b not in known})
        if unknown:
            assert self._repo is not None
            digests = self._repo.sha256(unknown, timeout_s=_left(deadline))
            with self._lock:
                if len(known) > 100_000:  # a bound, not a policy: recomputing is cheap
                    known.clear()
                known.update(zip(unknown, digests, strict=True))
        return {b: known[b] for b in blobs}


def _left(deadline: float) -> float:
    """Seconds until ``deadline``; raises the timeout outage when none are left."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise ResearchUnavailable("git", "timeout")
    return left


def _display(path: str | bytes) -> str:
    # Only unusable (never plain) paths can be bytes; shown escaped, never decoded lossily.
    return path if isinstance(path, str) else path.decode("utf-8", "backslashreplace")


def _skipped_summary(skipped: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Counts per reason and the first paths by name (in path order)."""
    return {
        "total": len(skipped),
        "by_reason": dict(sorted(Counter(reason for _, reason in skipped).items())),
        "paths": [{"path": p, "reason": r} for p, r in skipped[:SKIPPED_PATH_LIMIT]],
        "paths_truncated": len(skipped) > SKIPPED_PATH_LIMIT,
    }


def _changed_commit(commit: tuple[Any, ...], terms: Sequence[str]) -> dict[str, Any]:
    oid, author_time, summary, total, changes = commit
    shown = None if summary is None else summary[:SUMMARY_CHARS]
    return {
        "commit": oid,
        "summary": shown,
        "summary_truncated": summary is not None and len(summary) > SUMMARY_CHARS,
        "author_time": _utc(author_time),
        "changes_total": total,
        "changes_truncated": total > len(changes),
        "changes": [
            {
                "path": _display(path),
                "side": side,
                "line": line,
                "text": text,
                "text_truncated": truncated,
                "blob": blob,
                "term": terms[term],
            }
            for path, side, line, text, truncated, blob, term in changes
        ],
    }


def _utc(seconds: int) -> str | None:
    """ISO-8601 UTC; None for a time no calendar date holds (a crafted commit)."""
    try:
        return datetime.fromtimestamp(seconds, tz=UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def _terms(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not 1 <= len(value) <= MAX_TERMS:
        raise _request_error("terms", "not_1_to_32_words")
    for term in value:
        if not isinstance(term, str) or _TERM.fullmatch(term) is None:
            raise _request_error("terms", "not_a_word")
    return tuple(value)


def _not_ancestor(relation: str) -> ResearchError:
    # An empty answer for a commit off the pinned history would read as
    # "nothing changed since", which the range cannot say.
    return ResearchError(
        "since_not_ancestor",
        f"since is no ancestor of the pinned commit ({relation})",
        {"argument": "since", "relation": relation},
    )


def _prefix_unmatched() -> ResearchError:
    # An empty answer below a prefix that names nothing (a typo, a directory of
    # another branch) would read as proof that the text is absent.
    return ResearchError(
        "path_not_found",
        "no path of the commit starts with path_prefix",
        {"argument": "path_prefix"},
    )


def _not_readable(reason: str, **details: Any) -> ResearchError:
    return ResearchError(
        "path_not_readable",
        f"the path is not a readable text file ({reason})",
        {"argument": "path", "reason": reason, **details},
    )


def _request_error(argument: str, what: str) -> ResearchError:
    return ResearchError(
        "request_invalid",
        f"invalid request: {argument} ({what})",
        {"argument": argument, "what": what},
    )


def _config_error(key: str) -> ResearchError:
    return ResearchError("config_invalid", f"invalid configuration: {key}", {"key": key})


def _int(value: Any, argument: str, *, minimum: int, maximum: int = MAX_OFFSET) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _request_error(argument, "not_an_integer")
    if not minimum <= value <= maximum:
        raise _request_error(argument, "out_of_range")
    return value


def _text(value: Any, argument: str) -> str:
    if not isinstance(value, str):
        raise _request_error(argument, "not_a_string")
    if not value:
        raise _request_error(argument, "empty")
    if len(value) > MAX_TEXT_CHARS:
        raise _request_error(argument, "too_long")
    if "\r" in value or "\n" in value or "\0" in value:
        raise _request_error(argument, "line_break_or_nul")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _request_error(argument, "not_utf8") from None
    return value


def _symbol(value: Any) -> str:
    if not isinstance(value, str) or len(value) > MAX_SYMBOL_CHARS or not is_identifier(value):
        raise _request_error("symbol", "not_an_identifier")
    return value


def _word(value: Any) -> str:
    if not isinstance(value, str) or not is_word(value) or len(value) > MAX_SYMBOL_CHARS:
        raise _request_error("text", "not_a_whole_word")
    return value


def _word_mode(case_sensitive: Any) -> SearchMode:
    if not isinstance(case_sensitive, bool):
        raise _request_error("case_sensitive", "not_a_boolean")
    return "word" if case_sensitive else "word_ignore_case"


def _literal_mode(case_sensitive: Any) -> SearchMode:
    if not isinstance(case_sensitive, bool):
        raise _request_error("case_sensitive", "not_a_boolean")
    return "literal" if case_sensitive else "literal_ignore_case"


def _positive(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _config_error(name)
    return value
