//! The one place where core errors become Python exceptions.
//!
//! The exception classes live in Python (`viano_bug_analysis.errors`) so that
//! Python code owns the hierarchy; we look the class up by name.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::core::error::DetailValue;
use crate::core::{CoreError, ErrorClass};

fn class_name(class: ErrorClass) -> &'static str {
    match class {
        ErrorClass::Archive => "ArchiveError",
        ErrorClass::Integrity => "IntegrityError",
        ErrorClass::Limit => "LimitError",
        ErrorClass::TextDecode => "TextDecodeError",
        ErrorClass::RowSnapshot => "RowSnapshotError",
        ErrorClass::InvalidArgument => "InvalidArgumentError",
        ErrorClass::Io => "ReadError",
    }
}

pub fn to_pyerr(err: CoreError) -> PyErr {
    Python::attach(|py| match build(py, &err) {
        Ok(pyerr) => pyerr,
        Err(lookup_failure) => lookup_failure,
    })
}

fn build(py: Python<'_>, err: &CoreError) -> PyResult<PyErr> {
    let module = py.import("viano_bug_analysis.errors")?;
    let class = module.getattr(class_name(err.class()))?;
    let details = PyDict::new(py);
    for (key, value) in err.details() {
        match value {
            DetailValue::Int(n) => details.set_item(key, n)?,
            DetailValue::Text(t) => details.set_item(key, t)?,
        }
    }
    let instance = class.call1((err.code(), err.to_string(), details))?;
    Ok(PyErr::from_value(instance))
}

/// `?`-friendly conversion for binding code.
pub trait IntoPyResult<T> {
    fn into_py_result(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, CoreError> {
    fn into_py_result(self) -> PyResult<T> {
        self.map_err(to_pyerr)
    }
}
