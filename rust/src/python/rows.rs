//! `RowSnapshot`: typed row snapshots (see `core::rows`).
//!
//! Parsing and scanning run without the GIL; Python objects are built only
//! for the rows of the returned page.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use super::errors::IntoPyResult;
use crate::core::rows::{self, CellValue, JsonTree, Page, Scalar};
use crate::core::CoreError;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RowSnapshot>()
}

/// An immutable, parsed row snapshot (shareable across threads).
#[pyclass(frozen, name = "RowSnapshot", module = "viano_bug_analysis._native")]
pub struct RowSnapshot {
    inner: Arc<rows::RowSnapshot>,
}

#[pymethods]
impl RowSnapshot {
    /// The snapshot keeps a reference to `data` (no copy).
    #[staticmethod]
    fn parse(py: Python<'_>, data: Bound<'_, PyBytes>) -> PyResult<Self> {
        let member = PyBackedBytes::from(data);
        let inner = py
            .detach(|| rows::RowSnapshot::parse(member))
            .into_py_result()?;
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind().as_str()
    }

    #[getter]
    fn row_count(&self) -> usize {
        self.inner.row_count()
    }

    #[getter]
    fn has_rows(&self) -> bool {
        self.inner.has_rows()
    }

    #[getter]
    fn header_json<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.inner
            .header_json()
            .map(|text| PyBytes::new(py, text.as_bytes()))
    }

    fn columns(&self) -> Vec<&str> {
        self.inner.columns().collect()
    }

    fn has_column(&self, name: &str) -> bool {
        self.inner.has_column(name)
    }

    #[pyo3(signature = (filters, *, columns, offset, limit))]
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        filters: &Bound<'py, PyAny>,
        columns: Option<&Bound<'py, PyAny>>,
        offset: &Bound<'py, PyAny>,
        limit: &Bound<'py, PyAny>,
    ) -> PyResult<(usize, Bound<'py, PyList>)> {
        let pairs: Vec<(String, Bound<'py, PyAny>)> = filters
            .extract()
            .or_else(|_| invalid("filters must be a list of (column, value) pairs"))?;
        let mut typed = Vec::with_capacity(pairs.len());
        for (column, value) in &pairs {
            typed.push((column.as_str(), to_scalar(value)?));
        }
        let (columns, offset, limit) = page_args(columns, offset, limit)?;
        let projection = columns
            .as_ref()
            .map(|names| names.iter().map(String::as_str).collect::<Vec<_>>());
        let page = py
            .detach(|| {
                self.inner
                    .lookup(&typed, projection.as_deref(), offset, limit)
            })
            .into_py_result()?;
        page_to_py(py, page, false)
    }

    #[pyo3(signature = (value, search_columns, *, columns, offset, limit))]
    fn find_references<'py>(
        &self,
        py: Python<'py>,
        value: &Bound<'py, PyAny>,
        search_columns: &Bound<'py, PyAny>,
        columns: Option<&Bound<'py, PyAny>>,
        offset: &Bound<'py, PyAny>,
        limit: &Bound<'py, PyAny>,
    ) -> PyResult<(usize, Bound<'py, PyList>)> {
        let value = to_scalar(value)?;
        let search: Vec<String> = search_columns
            .extract()
            .or_else(|_| invalid("search_columns must be a list of str"))?;
        let search: Vec<&str> = search.iter().map(String::as_str).collect();
        let (columns, offset, limit) = page_args(columns, offset, limit)?;
        let projection = columns
            .as_ref()
            .map(|names| names.iter().map(String::as_str).collect::<Vec<_>>());
        let page = py
            .detach(|| {
                self.inner
                    .find_references(&value, &search, projection.as_deref(), offset, limit)
            })
            .into_py_result()?;
        page_to_py(py, page, true)
    }

    fn __repr__(&self) -> String {
        format!(
            "<RowSnapshot kind={} rows={}>",
            self.inner.kind().as_str(),
            self.inner.row_count()
        )
    }
}

fn invalid<T>(what: &'static str) -> PyResult<T> {
    Err(CoreError::InvalidArgument { what }).into_py_result()
}

/// A Python value to look for. `bool` is tested before `int` (it is a
/// subclass); an `int` outside i64 goes through its decimal text.
fn to_scalar(value: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    if value.is_none() {
        Ok(Scalar::Null)
    } else if let Ok(flag) = value.cast::<PyBool>() {
        Ok(Scalar::Bool(flag.is_true()))
    } else if value.is_instance_of::<PyInt>() {
        if let Ok(small) = value.extract::<i64>() {
            return Ok(Scalar::Int(small));
        }
        // int() first so that an int subclass prints as plain digits.
        let digits = value.py().get_type::<PyInt>().call1((value,))?.str();
        match digits {
            Ok(digits) => Scalar::integer(digits.to_str()?).into_py_result(),
            // Over Python's int-to-str digit limit: no JSON row holds it either.
            Err(_) => invalid("integer value has too many digits"),
        }
    } else if let Ok(float) = value.cast::<PyFloat>() {
        Ok(Scalar::Float(float.value()))
    } else if let Ok(text) = value.cast::<PyString>() {
        match text.to_str() {
            Ok(text) => Ok(Scalar::Str(text.into())),
            Err(_) => invalid("string value is not valid Unicode (lone surrogate)"),
        }
    } else {
        invalid("value must be None, bool, int, float or str")
    }
}

fn column_list(columns: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<String>>> {
    match columns {
        None => Ok(None),
        Some(list) => list
            .extract()
            .map(Some)
            .or_else(|_| invalid("columns must be None or a list of str")),
    }
}

/// A non-negative int offset or limit (`what` is the error phrase); a value
/// beyond the address space clamps, which pages the same way.
fn count(value: &Bound<'_, PyAny>, what: &'static str) -> PyResult<usize> {
    if value.is_instance_of::<PyBool>() || !value.is_instance_of::<PyInt>() {
        return invalid(what);
    }
    match value.extract::<u64>() {
        Ok(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        Err(_) if value.lt(0)? => invalid(what),
        Err(_) => Ok(usize::MAX),
    }
}

fn page_to_py<'py>(
    py: Python<'py>,
    page: Page<'_>,
    with_matched: bool,
) -> PyResult<(usize, Bound<'py, PyList>)> {
    let items = PyList::empty(py);
    for row in page.rows {
        let fields = PyDict::new(py);
        for (name, value) in row.fields {
            fields.set_item(name, cell_to_py(py, value)?)?;
        }
        let index = row.index.into_pyobject(py)?.into_any();
        let item = if with_matched {
            PyTuple::new(
                py,
                [
                    index,
                    PyList::new(py, row.matched)?.into_any(),
                    fields.into_any(),
                ],
            )?
        } else {
            PyTuple::new(py, [index, fields.into_any()])?
        };
        items.append(item)?;
    }
    Ok((page.total, items))
}

fn cell_to_py<'py>(py: Python<'py>, value: CellValue<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        CellValue::Null => py.None().into_bound(py),
        CellValue::Bool(flag) => PyBool::new(py, flag).to_owned().into_any(),
        CellValue::Int(n) => n.into_pyobject(py)?.into_any(),
        CellValue::BigInt(digits) => py.get_type::<PyInt>().call1((digits,))?,
        CellValue::Float(f) => PyFloat::new(py, f).into_any(),
        CellValue::Str(text) => PyString::new(py, text).into_any(),
        CellValue::Nested(raw) => tree_to_py(py, rows::decode_nested(raw).into_py_result()?)?,
    })
}

fn tree_to_py(py: Python<'_>, tree: JsonTree) -> PyResult<Bound<'_, PyAny>> {
    Ok(match tree {
        JsonTree::Null => py.None().into_bound(py),
        JsonTree::Bool(flag) => PyBool::new(py, flag).to_owned().into_any(),
        JsonTree::Int(n) => n.into_pyobject(py)?.into_any(),
        JsonTree::BigInt(digits) => py.get_type::<PyInt>().call1((digits,))?,
        JsonTree::Float(f) => PyFloat::new(py, f).into_any(),
        JsonTree::Str(text) => PyString::new(py, &text).into_any(),
        JsonTree::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(tree_to_py(py, item)?)?;
            }
            list.into_any()
        }
        JsonTree::Object(members) => {
            let dict = PyDict::new(py);
            for (key, item) in members {
                dict.set_item(key, tree_to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// Projection, offset and limit, as every paged query takes them.
fn page_args(
    columns: Option<&Bound<'_, PyAny>>,
    offset: &Bound<'_, PyAny>,
    limit: &Bound<'_, PyAny>,
) -> PyResult<(Option<Vec<String>>, usize, usize)> {
    Ok((
        column_list(columns)?,
        count(offset, "offset must be a non-negative int")?,
        count(limit, "limit must be a non-negative int")?,
    ))
}
