//! The one place where core errors become Python exceptions.
//!
//! The exception classes live in Python (`viano_bug_analysis.errors`, the
//! one module that owns every class) so that Python code owns the
//! hierarchy. Each class is imported once per process and kept (an error
//! path must not pay an import and two attribute lookups every time).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use crate::core::error::DetailValue;
use crate::core::{CoreError, ErrorClass};

const ERRORS: &str = "viano_bug_analysis.errors";

/// The cached Python class of `class`.
fn exception_type<'py>(py: Python<'py>, class: ErrorClass) -> PyResult<&'py Bound<'py, PyType>> {
    static ARCHIVE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static INTEGRITY: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static LIMIT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static TEXT_DECODE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static ROW_SNAPSHOT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static INVALID_ARGUMENT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static READ: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static RESEARCH: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static RESEARCH_UNAVAILABLE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let (cell, module, name) = match class {
        ErrorClass::Archive => (&ARCHIVE, ERRORS, "ArchiveError"),
        ErrorClass::Integrity => (&INTEGRITY, ERRORS, "IntegrityError"),
        ErrorClass::Limit => (&LIMIT, ERRORS, "LimitError"),
        ErrorClass::TextDecode => (&TEXT_DECODE, ERRORS, "TextDecodeError"),
        ErrorClass::RowSnapshot => (&ROW_SNAPSHOT, ERRORS, "RowSnapshotError"),
        ErrorClass::InvalidArgument => (&INVALID_ARGUMENT, ERRORS, "InvalidArgumentError"),
        ErrorClass::Io => (&READ, ERRORS, "ReadError"),
        ErrorClass::Research => (&RESEARCH, ERRORS, "ResearchError"),
        ErrorClass::ResearchUnavailable { .. } => {
            (&RESEARCH_UNAVAILABLE, ERRORS, "ResearchUnavailable")
        }
    };
    cell.import(py, module, name)
}

impl From<CoreError> for PyErr {
    fn from(err: CoreError) -> PyErr {
        Python::attach(|py| build(py, &err).unwrap_or_else(|lookup_failure| lookup_failure))
    }
}

pub fn to_pyerr(err: CoreError) -> PyErr {
    PyErr::from(err)
}

fn build(py: Python<'_>, err: &CoreError) -> PyResult<PyErr> {
    let class = err.class();
    let details = PyDict::new(py);
    for (key, value) in err.details() {
        match value {
            DetailValue::Int(n) => details.set_item(key, n)?,
            DetailValue::Text(t) => details.set_item(key, t)?,
        }
    }
    let class_object = exception_type(py, class)?;
    let instance = match class {
        // An outage names its provider; the code is its `reason`.
        ErrorClass::ResearchUnavailable { provider } => {
            class_object.call1((provider, err.code(), err.to_string(), details))?
        }
        _ => class_object.call1((err.code(), err.to_string(), details))?,
    };
    Ok(PyErr::from_value(instance))
}

/// `?`-friendly conversion for binding code.
pub trait IntoPyResult<T> {
    fn into_py_result(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, CoreError> {
    fn into_py_result(self) -> PyResult<T> {
        self.map_err(PyErr::from)
    }
}
