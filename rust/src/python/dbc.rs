//! Bindings for the client data reader (`core::dbc`).

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

use super::errors::IntoPyResult;
use crate::core::dbc::{ClientTable, Value};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyClientTable>()?;
    Ok(())
}

/// An opened DBC/DB2 file held on the Rust side.
#[pyclass(name = "ClientTable", module = "viano_bug_analysis._native", frozen)]
pub struct PyClientTable {
    inner: ClientTable,
}

fn to_py(py: Python<'_>, value: Value) -> PyResult<Py<PyAny>> {
    match value {
        Value::UInt(n) => n.into_py_any(py),
        Value::Long(n) => n.into_py_any(py),
        Value::Float(x) => f64::from(x).into_py_any(py),
        Value::Str(s) => s.into_py_any(py),
    }
}

#[pymethods]
impl PyClientTable {
    /// Reads `path` with the engine format string `format` (refused above `max_bytes`).
    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf, format: &str, max_bytes: u64) -> PyResult<Self> {
        let format = format.to_owned();
        py.detach(|| ClientTable::open(&path, &format, max_bytes))
            .into_py_result()
            .map(|inner| PyClientTable { inner })
    }

    /// Parses `data` (the bytes of a DBC/DB2 file) with `format`.
    #[staticmethod]
    fn parse(py: Python<'_>, data: Vec<u8>, format: &str) -> PyResult<Self> {
        let format = format.to_owned();
        py.detach(|| ClientTable::parse(data, &format))
            .into_py_result()
            .map(|inner| PyClientTable { inner })
    }

    #[getter]
    fn container(&self) -> &'static str {
        self.inner.container().name()
    }
    #[getter]
    fn record_count(&self) -> u32 {
        self.inner.record_count()
    }
    #[getter]
    fn record_size(&self) -> u32 {
        self.inner.record_size()
    }
    #[getter]
    fn string_size(&self) -> u32 {
        self.inner.string_size()
    }
    #[getter]
    fn field_count(&self) -> usize {
        self.inner.field_count()
    }
    #[getter]
    fn id_column(&self) -> Option<usize> {
        self.inner.id_column()
    }
    #[getter]
    fn sha256(&self) -> String {
        self.inner
            .sha256()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
    /// WDB2 header fields: table_hash, build, timestamp, min_id, max_id, locale, copy_table_size (zeros for WDBC).
    #[getter]
    fn db2_header(&self) -> (u32, u32, u32, u32, u32, u32, u32) {
        let h = self.inner.db2_header();
        (
            h.table_hash,
            h.build,
            h.timestamp,
            h.min_id,
            h.max_id,
            h.locale,
            h.copy_table_size,
        )
    }

    /// The record index of each ID (None: absent); the ID index is built on first use.
    fn find_ids(&self, py: Python<'_>, ids: Vec<u32>) -> PyResult<Vec<Option<u32>>> {
        py.detach(|| self.inner.find_ids(&ids)).into_py_result()
    }

    /// Records whose integer column holds one of `values` (file order, at most `limit`).
    fn find_uint(
        &self,
        py: Python<'_>,
        column: usize,
        values: Vec<u32>,
        limit: usize,
    ) -> PyResult<Vec<u32>> {
        py.detach(|| self.inner.find_uint(column, &values, limit))
            .into_py_result()
    }

    /// Records whose string column equals `name` ignoring case (file order, at most `limit`).
    fn find_string(
        &self,
        py: Python<'_>,
        column: usize,
        name: &str,
        limit: usize,
    ) -> PyResult<Vec<u32>> {
        py.detach(|| self.inner.find_string(column, name, limit))
            .into_py_result()
    }

    /// The listed columns of one record (ints, floats, strings).
    fn values(&self, py: Python<'_>, record: u32, columns: Vec<usize>) -> PyResult<Vec<Py<PyAny>>> {
        columns
            .into_iter()
            .map(|column| to_py(py, self.inner.value(record, column).into_py_result()?))
            .collect()
    }

    /// Every column of one record.
    fn record(&self, py: Python<'_>, record: u32) -> PyResult<Vec<Py<PyAny>>> {
        let values = self.inner.record(record).into_py_result()?;
        values.into_iter().map(|v| to_py(py, v)).collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "ClientTable(container={:?}, record_count={})",
            self.inner.container().name(),
            self.inner.record_count()
        )
    }
}
