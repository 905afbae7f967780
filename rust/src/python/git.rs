//! Git reading bindings: `GitRepository` -> `GitTree` (one commit) ->
//! `GitSelection` (the files one query covers).
//!
//! Only converts types, releases the GIL around object reads and searches,
//! and maps errors; every rule lives in `core::git_store`. Errors become the
//! ProjectResearch exceptions (`project_research.errors`), looked up by name
//! like every other exception of the package.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crate::core::git_paths::path_problem;
use crate::core::git_store::{
    parse_oid, CommitTree, Filter, GitError, GitStore, Selection, TreeEntry,
};
use crate::core::line_search::{Page, Query, SearchMode};
use crate::core::text::truncate_chars;
use crate::python::search::{resolve_threads, PySourceText};

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
/// configuration outside it, with a content cache of `cache_bytes`.
#[pyclass(name = "GitRepository", module = "viano_bug_analysis._native", frozen)]
pub struct PyGitRepository {
    store: Arc<GitStore>,
}

#[pymethods]
impl PyGitRepository {
    #[new]
    #[pyo3(signature = (path, *, cache_bytes))]
    fn new(py: Python<'_>, path: PathBuf, cache_bytes: u64) -> PyResult<Self> {
        let store = py
            .detach(|| GitStore::open(&path, cache_bytes))
            .map_err(to_pyerr)?;
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
        let deadline = deadline(timeout_s)?;
        let store = Arc::clone(&self.store);
        let tree = py
            .detach(|| store.tree(commit, max_entries, resolve_threads(0), deadline))
            .map_err(to_pyerr)?;
        Ok(PyGitTree {
            store: Arc::clone(&self.store),
            tree: Arc::new(tree),
        })
    }

    /// Lower-case hex SHA-256 of each blob's bytes.
    #[pyo3(signature = (blob_ids, *, timeout_s))]
    fn sha256(
        &self,
        py: Python<'_>,
        blob_ids: Vec<String>,
        timeout_s: f64,
    ) -> PyResult<Vec<String>> {
        let deadline = deadline(timeout_s)?;
        let oids = blob_ids
            .iter()
            .map(|id| parse_oid(id))
            .collect::<Result<Vec<_>, _>>()
            .map_err(to_pyerr)?;
        let store = Arc::clone(&self.store);
        let digests = py
            .detach(|| store.sha256(&oids, resolve_threads(0), deadline))
            .map_err(to_pyerr)?;
        Ok(digests.iter().map(hex).collect())
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
/// file, else `path_invalid`, `symlink` or `submodule`.
type PyEntry<'py> = (
    Bound<'py, PyAny>,
    &'static str,
    String,
    u64,
    Option<&'static str>,
);
/// `(path, blob_id, line, text, text_truncated)`
type PyHit<'py> = (Bound<'py, PyAny>, String, usize, Bound<'py, PyString>, bool);
/// `(path, reason)`
type PySkipped<'py> = (Bound<'py, PyAny>, &'static str);

#[pymethods]
impl PyGitTree {
    fn __len__(&self) -> usize {
        self.tree.entries().len()
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
        let filter = Filter {
            prefix: prefix.map(|p| p.as_bytes().to_vec()),
            sql_only: false,
            path_contains: Some(contains.as_bytes().to_vec()),
        };
        self.tree
            .entries()
            .iter()
            .filter(|entry| filter.accepts(&entry.path))
            .map(|entry| entry_tuple(py, entry))
            .collect()
    }

    /// The files a search covers: below `prefix`, `*.sql` only if `sql_only`;
    /// files over `max_file_bytes` are skipped as `too_large`.
    #[pyo3(signature = (*, prefix, sql_only, max_file_bytes))]
    fn select(&self, prefix: Option<&str>, sql_only: bool, max_file_bytes: u64) -> PyGitSelection {
        let filter = Filter {
            prefix: prefix.map(|p| p.as_bytes().to_vec()),
            sql_only,
            path_contains: None,
        };
        PyGitSelection {
            store: Arc::clone(&self.store),
            tree: Arc::clone(&self.tree),
            selection: self.tree.select(&filter, max_file_bytes),
        }
    }

    /// The decoded text of the regular file at `path`, or why it has none
    /// (`binary`, `not_utf8`, `too_large`). The path must name a file.
    #[pyo3(signature = (path, *, max_bytes, timeout_s))]
    fn text<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        max_bytes: u64,
        timeout_s: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let deadline = deadline(timeout_s)?;
        let Some(entry) = self
            .tree
            .find(path.as_bytes())
            .filter(|e| e.unusable.is_none())
        else {
            return Err(to_pyerr(GitError::InvalidArgument {
                what: "no regular file at this path",
            }));
        };
        let blob = [(entry.oid, entry.size)];
        let store = Arc::clone(&self.store);
        let mut contents = py
            .detach(|| store.contents(&blob, max_bytes, 1, deadline))
            .map_err(to_pyerr)?;
        match contents.pop() {
            Some(Ok(text)) => Ok(Bound::new(py, PySourceText { inner: text })?.into_any()),
            Some(Err(reason)) => Ok(PyString::new(py, reason.as_str()).into_any()),
            None => Err(to_pyerr(GitError::InvalidArgument {
                what: "no regular file at this path",
            })),
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
        let deadline = deadline(timeout_s)?;
        let query = SearchMode::parse(mode)
            .and_then(|mode| Query::new(mode, pattern))
            .map_err(|err| to_pyerr(err.into()))?;
        let outcome = py
            .detach(|| {
                self.store.search(
                    &self.tree,
                    &self.selection,
                    &query,
                    Page { offset, limit },
                    resolve_threads(0),
                    deadline,
                )
            })
            .map_err(to_pyerr)?;
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

fn deadline(timeout_s: f64) -> PyResult<Option<Instant>> {
    if timeout_s.is_nan() || timeout_s < 0.0 {
        return Err(to_pyerr(GitError::InvalidArgument {
            what: "timeout_s must be a non-negative number",
        }));
    }
    // Anything beyond a day is "no deadline" (and keeps Duration in range).
    if timeout_s > 86_400.0 {
        return Ok(None);
    }
    Ok(Some(Instant::now() + Duration::from_secs_f64(timeout_s)))
}

fn hex(digest: &[u8; 32]) -> String {
    use std::fmt::Write;
    digest.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// `GitError` -> `ResearchUnavailable` (outages: repository, timeout) or
/// `ResearchError` (a rejected request), from `project_research.errors`.
fn to_pyerr(err: GitError) -> PyErr {
    Python::attach(|py| build(py, &err).unwrap_or_else(|lookup_failure| lookup_failure))
}

fn build(py: Python<'_>, err: &GitError) -> PyResult<PyErr> {
    let module = py.import("viano_bug_analysis.project_research.errors")?;
    let details = PyDict::new(py);
    let instance = match err {
        GitError::RepositoryUnavailable { what } => {
            details.set_item("what", what)?;
            let args = ("git", "repository_unavailable", err.to_string(), details);
            module.getattr("ResearchUnavailable")?.call1(args)?
        }
        GitError::Timeout => {
            let args = ("git", "timeout", err.to_string(), details);
            module.getattr("ResearchUnavailable")?.call1(args)?
        }
        GitError::CommitMissing { found } => {
            details.set_item("found", found)?;
            research_error(&module, err, details)?
        }
        GitError::TooManyEntries { limit } => {
            details.set_item("what", "tree_entries")?;
            details.set_item("limit", limit)?;
            research_error(&module, err, details)?
        }
        GitError::InvalidArgument { what } => {
            details.set_item("what", what)?;
            research_error(&module, err, details)?
        }
    };
    Ok(PyErr::from_value(instance))
}

fn research_error<'py>(
    module: &Bound<'py, PyModule>,
    err: &GitError,
    details: Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    module
        .getattr("ResearchError")?
        .call1((err.code(), err.to_string(), details))
}
