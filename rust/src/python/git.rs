//! Git reading bindings: `GitRepository` -> `GitTree` (one commit) ->
//! `GitSelection` (the files one query covers).
//!
//! Only converts types and releases the GIL around one core call per method;
//! every rule (filters, readable paths, deadlines, threads) lives in
//! `core::git`. Errors go through the one mapper of `errors.rs` (the git
//! errors become the ProjectResearch exceptions).

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::core::git::{
    deadline_after, path_problem, ChangesQuery, CommitTree, DiskCacheConfig, GitStore, LogQuery,
    Selection, TreeEntry,
};
use crate::core::line_search::Page;
use crate::core::text::truncate_chars;
use crate::python::search::PySourceText;

/// Every git read runs on every core.
const ALL_CORES: usize = 0;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGitRepository>()?;
    m.add_class::<PyGitTree>()?;
    m.add_class::<PyGitSelection>()?;
    m.add_function(wrap_pyfunction!(git_path_problem, m)?)?;
    Ok(())
}

/// The first path rule `path` breaks (a fixed phrase), or None when it is plain.
#[pyfunction]
#[pyo3(signature = (path, *, allow_trailing_slash = false))]
fn git_path_problem(path: &str, allow_trailing_slash: bool) -> Option<&'static str> {
    path_problem(path.as_bytes(), allow_trailing_slash)
}

/// A local git repository opened read-only and isolated from every
/// configuration outside it, with a content cache of `cache_bytes` and,
/// when `disk_cache` names a directory, a persistent content cache of at
/// most `disk_cache_bytes` there.
#[pyclass(name = "GitRepository", module = "viano_bug_analysis._native", frozen)]
pub struct PyGitRepository {
    store: Arc<GitStore>,
}

#[pymethods]
impl PyGitRepository {
    #[new]
    #[pyo3(signature = (path, *, cache_bytes, disk_cache = None, disk_cache_bytes = 0))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        cache_bytes: u64,
        disk_cache: Option<PathBuf>,
        disk_cache_bytes: u64,
    ) -> PyResult<Self> {
        let store = py.detach(|| {
            let disk = disk_cache.as_deref().map(|dir| DiskCacheConfig {
                dir,
                max_bytes: disk_cache_bytes,
            });
            GitStore::open(&path, cache_bytes, disk)
        })?;
        Ok(PyGitRepository {
            store: Arc::new(store),
        })
    }

    /// The recursive listing of a commit (a full 40-hex commit ID).
    #[pyo3(signature = (commit, *, max_entries, timeout_s))]
    fn tree(
        &self,
        py: Python<'_>,
        commit: &str,
        max_entries: usize,
        timeout_s: f64,
    ) -> PyResult<PyGitTree> {
        let deadline = deadline_after(timeout_s)?;
        let store = Arc::clone(&self.store);
        let tree = py.detach(|| store.tree(commit, max_entries, ALL_CORES, deadline))?;
        Ok(PyGitTree {
            store: Arc::clone(&self.store),
            tree: Arc::new(tree),
        })
    }

    /// The commits an abbreviated ID (7 to 40 hex digits) names:
    /// `(commits, commit_count, other_objects)`, at most `max_listed` commits
    /// named, in ID order.
    #[pyo3(signature = (revision, *, max_listed))]
    fn resolve_revision(
        &self,
        py: Python<'_>,
        revision: &str,
        max_listed: usize,
    ) -> PyResult<(Vec<String>, usize, usize)> {
        let store = Arc::clone(&self.store);
        let found = py.detach(|| store.resolve_revision(revision, max_listed))?;
        let commits = found.commits.iter().map(ToString::to_string).collect();
        Ok((commits, found.commit_count, found.other_objects))
    }

    /// How the commit `reported` relates to `pinned` (full IDs): `(relation,
    /// pinned_only, reported_only, merge_bases, commits_visited, incomplete)`.
    #[pyo3(signature = (reported, pinned, *, max_commits, timeout_s))]
    fn relate(
        &self,
        py: Python<'_>,
        reported: &str,
        pinned: &str,
        max_commits: u64,
        timeout_s: f64,
    ) -> PyResult<PyRelation> {
        let deadline = deadline_after(timeout_s)?;
        let store = Arc::clone(&self.store);
        let relation = py.detach(|| store.relate(reported, pinned, max_commits, deadline))?;
        Ok((
            relation.kind.as_str(),
            relation.pinned_only,
            relation.reported_only,
            relation
                .merge_bases
                .iter()
                .map(ToString::to_string)
                .collect(),
            relation.commits_visited,
            relation.incomplete.map(|why| why.as_str()),
        ))
    }

    /// The commits of `since..pinned` whose change against the first parent
    /// adds or removes a line naming a term (`core::git::store_changes`):
    /// `(relation, incomplete, commits_visited, range_commits, examined,
    /// stop, blobs, commits, skipped)`; each commit `(oid, author_time,
    /// summary, changes_total, changes)`, each change `(path, side, line,
    /// text, text_truncated, blob, term index)`; skipped `(path, reason)`.
    #[pyo3(signature = (since, pinned, terms, *, prefix, max_walk_commits, max_commits,
                        max_blobs, max_file_bytes, max_changes, max_chars, timeout_s))]
    #[allow(clippy::too_many_arguments)]
    fn changes<'py>(
        &self,
        py: Python<'py>,
        since: &str,
        pinned: &str,
        terms: Vec<String>,
        prefix: Option<&str>,
        max_walk_commits: u64,
        max_commits: usize,
        max_blobs: usize,
        max_file_bytes: u64,
        max_changes: usize,
        max_chars: usize,
        timeout_s: f64,
    ) -> PyResult<PyChanges<'py>> {
        let deadline = deadline_after(timeout_s)?;
        let store = Arc::clone(&self.store);
        let query = ChangesQuery {
            since,
            pinned,
            terms: &terms,
            prefix: prefix.map(str::as_bytes),
            max_walk_commits,
            max_commits,
            max_blobs,
            max_file_bytes,
            max_changes,
        };
        let outcome = py.detach(|| store.changes(&query, ALL_CORES, deadline))?;
        let commits = outcome
            .commits
            .iter()
            .map(|commit| {
                let changes = commit
                    .changes
                    .iter()
                    .map(|change| {
                        let (shown, truncated) = truncate_chars(&change.text, max_chars);
                        (
                            path_object(py, &change.path),
                            change.side.as_str(),
                            change.line,
                            PyString::new(py, shown),
                            truncated,
                            change.blob.to_string(),
                            change.term,
                        )
                    })
                    .collect();
                (
                    commit.oid.to_string(),
                    commit.meta.author_time,
                    commit.meta.summary.clone(),
                    commit.changes_total,
                    changes,
                )
            })
            .collect();
        let skipped = outcome
            .skipped
            .iter()
            .map(|(path, reason)| (path_object(py, path), reason.as_str()))
            .collect();
        Ok((
            outcome.relation.kind.as_str(),
            outcome.relation.incomplete.map(|why| why.as_str()),
            outcome.relation.commits_visited,
            outcome.range_commits,
            outcome.examined,
            outcome.stop.map(|stop| stop.as_str()),
            outcome.blobs,
            commits,
            skipped,
        ))
    }

    /// The first-parent line from `start` (a full commit ID), newest first,
    /// each commit with the files it changes against its first parent
    /// (`core::git::log`, cached per commit): `(commits, more, cached)`;
    /// each commit `(oid, parents, author_name, author_email, author_time,
    /// committer_time, message, message_truncated, files_total, files)`, each
    /// file `(path, status, old_blob, new_blob)`.
    #[pyo3(signature = (start, *, max_commits, max_files, max_message_bytes, timeout_s))]
    fn first_parent_log<'py>(
        &self,
        py: Python<'py>,
        start: &str,
        max_commits: usize,
        max_files: usize,
        max_message_bytes: usize,
        timeout_s: f64,
    ) -> PyResult<PyLog<'py>> {
        let deadline = deadline_after(timeout_s)?;
        let store = Arc::clone(&self.store);
        let query = LogQuery {
            max_commits,
            max_files,
            max_message_bytes,
        };
        let outcome = py.detach(|| store.first_parent_log(start, &query, ALL_CORES, deadline))?;
        let commits = outcome
            .commits
            .iter()
            .map(|c| {
                let files = c
                    .files
                    .iter()
                    .map(|f| {
                        (
                            path_object(py, &f.path),
                            f.status.as_str(),
                            f.old.map(|oid| oid.to_string()),
                            f.new.map(|oid| oid.to_string()),
                        )
                    })
                    .collect();
                (
                    c.oid.to_string(),
                    c.parents.iter().map(ToString::to_string).collect(),
                    c.author_name.clone(),
                    c.author_email.clone(),
                    c.author_time,
                    c.committer_time,
                    c.message.clone(),
                    c.message_truncated,
                    c.files_total,
                    files,
                )
            })
            .collect();
        Ok((commits, outcome.more, outcome.cached))
    }

    /// Lower-case hex SHA-256 of each blob's bytes.
    #[pyo3(signature = (blob_ids, *, timeout_s))]
    fn sha256(
        &self,
        py: Python<'_>,
        blob_ids: Vec<String>,
        timeout_s: f64,
    ) -> PyResult<Vec<String>> {
        let deadline = deadline_after(timeout_s)?;
        let store = Arc::clone(&self.store);
        Ok(py.detach(|| store.sha256_hex(&blob_ids, ALL_CORES, deadline))?)
    }

    /// Waits until the persistent cache's background writer has put the
    /// last search's texts in place (call before the process exits).
    fn flush(&self, py: Python<'_>) {
        let store = Arc::clone(&self.store);
        py.detach(|| store.flush_disk());
    }

    /// `(hits, rejected, segments written, segments evicted)` of the
    /// persistent cache, or None without one.
    fn disk_cache_info(&self) -> Option<(u64, u64, u64, u64)> {
        self.store
            .disk_stats()
            .map(|s| (s.hits, s.rejected, s.segments_written, s.segments_evicted))
    }

    /// `(entries, estimated bytes, blobs read so far)` of the content cache.
    fn cache_info(&self) -> (usize, u64, u64) {
        let (entries, bytes) = self.store.cache_stats();
        (entries, bytes, self.store.blobs_read())
    }
}

/// One commit's listing: immutable, sorted by path bytes.
#[pyclass(name = "GitTree", module = "viano_bug_analysis._native", frozen)]
pub struct PyGitTree {
    store: Arc<GitStore>,
    tree: Arc<CommitTree>,
}

/// `(path, kind, blob_id, size, unusable)`; unusable is None for a readable
/// file, else `path_invalid`, `symlink`, `submodule` or `missing`.
type PyEntry<'py> = (
    Bound<'py, PyAny>,
    &'static str,
    String,
    u64,
    Option<&'static str>,
);
/// `(relation, pinned_only, reported_only, merge_bases, commits_visited, incomplete)`
type PyRelation = (
    &'static str,
    Option<u64>,
    Option<u64>,
    Vec<String>,
    u64,
    Option<&'static str>,
);
/// `(path, side, line, text, text_truncated, blob_id, term)`
type PyLineChange<'py> = (
    Bound<'py, PyAny>,
    &'static str,
    u32,
    Bound<'py, PyString>,
    bool,
    String,
    u16,
);
/// `(oid, author_time, summary, changes_total, changes)`
type PyCommitChanges<'py> = (String, i64, Option<String>, usize, Vec<PyLineChange<'py>>);
/// See `PyGitRepository::changes`.
type PyChanges<'py> = (
    &'static str,
    Option<&'static str>,
    u64,
    usize,
    usize,
    Option<&'static str>,
    usize,
    Vec<PyCommitChanges<'py>>,
    Vec<PySkipped<'py>>,
);
/// `(path, status, old_blob, new_blob)`
type PyLogFile<'py> = (
    Bound<'py, PyAny>,
    &'static str,
    Option<String>,
    Option<String>,
);
/// One first-parent commit (see `first_parent_log`).
type PyLogCommit<'py> = (
    String,
    Vec<String>,
    String,
    String,
    i64,
    i64,
    String,
    bool,
    usize,
    Vec<PyLogFile<'py>>,
);
/// `(commits, more, cached)`
type PyLog<'py> = (Vec<PyLogCommit<'py>>, bool, usize);
/// `(path, blob_id, line, text, text_truncated)`
type PyHit<'py> = (Bound<'py, PyAny>, String, usize, Bound<'py, PyString>, bool);
/// `(path, reason)`
type PySkipped<'py> = (Bound<'py, PyAny>, &'static str);

#[pymethods]
impl PyGitTree {
    fn __len__(&self) -> usize {
        self.tree.entries().len()
    }

    /// Entries whose blob the object database did not hold when listed.
    #[getter]
    fn absent(&self) -> usize {
        self.tree.entries().iter().filter(|e| e.absent).count()
    }

    /// This listing with its absent blobs looked up again: a new listing
    /// when some arrived (a fetch into a partial clone), else this one.
    fn refreshed(slf: Bound<'_, Self>, py: Python<'_>) -> PyResult<Py<Self>> {
        let this = slf.get();
        let store = Arc::clone(&this.store);
        let tree = Arc::clone(&this.tree);
        match py.detach(|| store.refresh_absent(&tree))? {
            None => Ok(slf.unbind()),
            Some(fresh) => Py::new(
                py,
                PyGitTree {
                    store: Arc::clone(&this.store),
                    tree: Arc::new(fresh),
                },
            ),
        }
    }

    /// The entry at exactly `path`, or None.
    fn entry<'py>(&self, py: Python<'py>, path: &str) -> Option<PyEntry<'py>> {
        self.tree
            .find(path.as_bytes())
            .map(|entry| entry_tuple(py, entry))
    }

    /// Every entry whose path contains `contains` (and starts with `prefix`).
    #[pyo3(signature = (*, contains, prefix))]
    fn find_paths<'py>(
        &self,
        py: Python<'py>,
        contains: &str,
        prefix: Option<&str>,
    ) -> Vec<PyEntry<'py>> {
        self.tree
            .find_paths(contains.as_bytes(), prefix.map(str::as_bytes))
            .map(|entry| entry_tuple(py, entry))
            .collect()
    }

    /// The files a search covers: below `prefix`, `*.sql` only if `sql_only`;
    /// files over `max_file_bytes` are skipped as `too_large`.
    #[pyo3(signature = (*, prefix, sql_only, max_file_bytes))]
    fn select(&self, prefix: Option<&str>, sql_only: bool, max_file_bytes: u64) -> PyGitSelection {
        PyGitSelection {
            store: Arc::clone(&self.store),
            tree: Arc::clone(&self.tree),
            selection: self
                .tree
                .select_files(prefix.map(str::as_bytes), sql_only, max_file_bytes),
        }
    }

    /// The decoded text of the regular file at `path`, or why it has none
    /// (`binary`, `not_utf8`, `too_large`, `missing`). The path must name a file.
    #[pyo3(signature = (path, *, max_bytes, timeout_s))]
    fn text<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        max_bytes: u64,
        timeout_s: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let deadline = deadline_after(timeout_s)?;
        let content = py.detach(|| {
            self.store
                .text(&self.tree, path.as_bytes(), max_bytes, deadline)
        })?;
        match content {
            Ok(text) => Ok(Bound::new(py, PySourceText { inner: text })?.into_any()),
            Err(reason) => Ok(PyString::new(py, reason.as_str()).into_any()),
        }
    }
}

/// The files one query covers, fixed when the selection is made.
#[pyclass(name = "GitSelection", module = "viano_bug_analysis._native", frozen)]
pub struct PyGitSelection {
    store: Arc<GitStore>,
    tree: Arc<CommitTree>,
    selection: Selection,
}

#[pymethods]
impl PyGitSelection {
    /// Files a search would read.
    #[getter]
    fn file_count(&self) -> usize {
        self.selection.files.len()
    }

    /// Bytes a search would read (sum of the files' blob sizes).
    #[getter]
    fn total_bytes(&self) -> u64 {
        self.selection.total_bytes
    }

    /// The floor of a cold search (for benchmarks): inflates every blob
    /// the selection would read, on every core, discarding the bytes (no
    /// cache, no decode, no search); returns the bytes inflated.
    #[pyo3(signature = (*, timeout_s))]
    fn inflate_floor(&self, py: Python<'_>, timeout_s: f64) -> PyResult<u64> {
        let deadline = deadline_after(timeout_s)?;
        Ok(py.detach(|| {
            self.store
                .inflate_floor(&self.tree, &self.selection, ALL_CORES, deadline)
        })?)
    }

    /// Reads the files (cache first) and searches them: `(total,
    /// files_searched, skipped, hits)` with skipped `(path, reason)` in path
    /// order and hits `(path, blob_id, line, text, text_truncated)` of the
    /// page only. `mode` is `literal`, `literal_ignore_case` or `symbol`.
    #[pyo3(signature = (mode, pattern, *, offset, limit, max_chars, timeout_s))]
    #[allow(clippy::too_many_arguments)]
    fn search<'py>(
        &self,
        py: Python<'py>,
        mode: &str,
        pattern: &str,
        offset: usize,
        limit: usize,
        max_chars: usize,
        timeout_s: f64,
    ) -> PyResult<(usize, usize, Vec<PySkipped<'py>>, Vec<PyHit<'py>>)> {
        let deadline = deadline_after(timeout_s)?;
        let outcome = py.detach(|| {
            self.store.search(
                &self.tree,
                &self.selection,
                mode,
                pattern,
                Page { offset, limit },
                ALL_CORES,
                deadline,
            )
        })?;
        let entries = self.tree.entries();
        let skipped = outcome
            .skipped
            .iter()
            .map(|&(i, reason)| (path_object(py, &entries[i].path), reason.as_str()))
            .collect();
        let hits = outcome
            .hits
            .iter()
            .map(|(i, line, text)| {
                let entry = &entries[*i];
                let (shown, truncated) =
                    truncate_chars(text.line_by_index(*line as usize), max_chars);
                (
                    path_object(py, &entry.path),
                    entry.oid.to_string(),
                    *line as usize + 1,
                    PyString::new(py, shown),
                    truncated,
                )
            })
            .collect();
        Ok((outcome.total, outcome.files_searched, skipped, hits))
    }
}

fn entry_tuple<'py>(py: Python<'py>, entry: &TreeEntry) -> PyEntry<'py> {
    (
        path_object(py, &entry.path),
        entry.kind.as_str(),
        entry.oid.to_string(),
        entry.size,
        entry.unusable.map(|r| r.as_str()),
    )
}

/// `str` for a UTF-8 path, `bytes` otherwise (such a path is never plain).
fn path_object<'py>(py: Python<'py>, path: &[u8]) -> Bound<'py, PyAny> {
    match std::str::from_utf8(path) {
        Ok(text) => PyString::new(py, text).into_any(),
        Err(_) => PyBytes::new(py, path).into_any(),
    }
}
