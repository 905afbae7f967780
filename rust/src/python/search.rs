//! Bindings for decoded texts and line search.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::errors::IntoPyResult;
use crate::core::line_search::{self, Page};
use crate::core::text::{truncate_chars, SourceText};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySourceText>()?;
    m.add_function(wrap_pyfunction!(search_lines, m)?)?;
    m.add_function(wrap_pyfunction!(is_identifier, m)?)?;
    Ok(())
}

/// Which SHA-256 implementation runs on this CPU ("sha-ni" or "software").
#[pyfunction]
pub fn sha256_implementation() -> &'static str {
    crate::core::zip_stream::sha256_implementation()
}

#[pyfunction]
fn is_identifier(name: &str) -> bool {
    line_search::is_identifier(name)
}

/// A verified, decoded text member held on the Rust side.
#[pyclass(name = "SourceText", module = "viano_bug_analysis._native", frozen)]
pub struct PySourceText {
    pub(crate) inner: Arc<SourceText>,
}

impl From<SourceText> for PySourceText {
    fn from(text: SourceText) -> Self {
        PySourceText {
            inner: Arc::new(text),
        }
    }
}

#[pymethods]
impl PySourceText {
    /// Decodes UTF-8 bytes (optional BOM; NUL or invalid UTF-8 raise TextDecodeError).
    #[staticmethod]
    fn decode(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let owned = data.to_vec();
        py.detach(|| SourceText::decode(owned))
            .into_py_result()
            .map(Self::from)
    }

    #[getter]
    fn line_count(&self) -> usize {
        self.inner.line_count()
    }

    #[getter]
    fn had_bom(&self) -> bool {
        self.inner.had_bom()
    }

    #[getter]
    fn is_ascii(&self) -> bool {
        self.inner.is_ascii()
    }

    /// Lines `first..=last` (1-based, inclusive) as (line number, text, text_truncated).
    fn lines(
        &self,
        first: usize,
        last: usize,
        max_chars: usize,
    ) -> PyResult<Vec<(usize, &str, bool)>> {
        let lines = self.inner.lines(first, last).into_py_result()?;
        Ok(lines
            .into_iter()
            .zip(first..)
            .map(|(line, number)| {
                let (text, truncated) = truncate_chars(line, max_chars);
                (number, text, truncated)
            })
            .collect())
    }

    fn __repr__(&self) -> String {
        format!("SourceText(line_count={})", self.inner.line_count())
    }
}

type PyHit<'py> = (usize, usize, Bound<'py, PyString>, bool);
/// `(total, per_text_totals, hits)` of one query.
type PyPage<'py> = (usize, Vec<usize>, Vec<PyHit<'py>>);

/// Runs several line queries over several texts in one pass per text.
///
/// `queries` are `(mode, pattern, offset, limit)` with mode `literal`,
/// `literal_ignore_case` or `symbol`. Returns, per query, `(total,
/// per_text_totals, hits)` where hits are `(text_index, line_number, text,
/// text_truncated)` of the requested page only. `threads=0` uses every core.
#[pyfunction]
#[pyo3(signature = (texts, queries, *, max_chars, threads = 0))]
fn search_lines<'py>(
    py: Python<'py>,
    texts: Vec<PyRef<'py, PySourceText>>,
    queries: Vec<(String, String, usize, usize)>,
    max_chars: usize,
    threads: usize,
) -> PyResult<Vec<PyPage<'py>>> {
    let batch: Vec<(&str, &str, Page)> = queries
        .iter()
        .map(|(mode, pattern, offset, limit)| {
            let page = Page {
                offset: *offset,
                limit: *limit,
            };
            (mode.as_str(), pattern.as_str(), page)
        })
        .collect();
    let shared: Vec<Arc<SourceText>> = texts.iter().map(|t| Arc::clone(&t.inner)).collect();
    let results = py
        .detach(|| {
            let refs: Vec<&SourceText> = shared.iter().map(Arc::as_ref).collect();
            line_search::search_batch(&refs, &batch, threads)
        })
        .into_py_result()?;
    Ok(results
        .into_iter()
        .map(|page| {
            let hits = page
                .hits
                .iter()
                .map(|&(text_index, line_index)| {
                    let line = texts[text_index].inner.line_by_index(line_index as usize);
                    let (text, truncated) = truncate_chars(line, max_chars);
                    (
                        text_index,
                        line_index as usize + 1,
                        PyString::new(py, text),
                        truncated,
                    )
                })
                .collect();
            (page.total, page.per_text_totals, hits)
        })
        .collect())
}
