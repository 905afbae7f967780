//! `ZipArchive`: parse an archive once, then read verified members.
//!
//! Only converts types, releases the GIL around parsing and inflating, and
//! maps errors; every rule lives in `core::zip_stream`.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList};

use crate::core::error::CoreError;
use crate::core::zip_stream::{parse_sha256_hex, Expected, ZipArchive};
use crate::python::errors::{to_pyerr, IntoPyResult};
use crate::python::search::PySourceText;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyZipArchive>()
}

/// A ZIP archive opened read-only; members are read only when their
/// SHA-256 and size are known in advance.
#[pyclass(name = "ZipArchive", module = "viano_bug_analysis._native", frozen)]
pub struct PyZipArchive {
    /// Shared so that other bindings (e.g. a text reader) can call
    /// `read_member_into` with the GIL released.
    pub(crate) archive: Arc<ZipArchive<File>>,
}

#[pymethods]
impl PyZipArchive {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let archive = py
            .detach(|| ZipArchive::open_path(&path))
            .into_py_result()?;
        Ok(PyZipArchive {
            archive: Arc::new(archive),
        })
    }

    /// One dict per central-directory entry, in directory order.
    fn entries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for entry in self.archive.entries() {
            let dict = PyDict::new(py);
            dict.set_item("name", &entry.name)?;
            dict.set_item("kind", entry.kind.as_str())?;
            dict.set_item("method", entry.method)?;
            dict.set_item("compressed_size", entry.compressed_size)?;
            dict.set_item("size", entry.size)?;
            dict.set_item("crc32", entry.crc32)?;
            dict.set_item("encrypted", entry.encrypted)?;
            dict.set_item("zip64", entry.zip64)?;
            list.append(dict)?;
        }
        Ok(list)
    }

    /// Inflate and verify a member without keeping its bytes.
    #[pyo3(signature = (name, *, sha256, size, max_bytes))]
    fn verify(
        &self,
        py: Python<'_>,
        name: &str,
        sha256: &str,
        size: &Bound<'_, PyAny>,
        max_bytes: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (expected, max_bytes) = expected_args(sha256, size, max_bytes)?;
        let archive = &*self.archive;
        py.detach(|| archive.verify_member(name, &expected, max_bytes))
            .into_py_result()
    }

    /// The member's bytes, returned only once size, CRC-32 and SHA-256 match.
    #[pyo3(signature = (name, *, sha256, size, max_bytes))]
    fn read_bytes<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        sha256: &str,
        size: &Bound<'_, PyAny>,
        max_bytes: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (expected, max_bytes) = expected_args(sha256, size, max_bytes)?;
        let archive = &*self.archive;
        // Check before allocating: the bytes object is sized from `size`.
        py.detach(|| archive.check_member(name, &expected, max_bytes))
            .into_py_result()?;
        let len = usize::try_from(expected.size)
            .map_err(|_| CoreError::ByteLimitExceeded { limit: max_bytes })
            .into_py_result()?;
        // Inflate straight into the new (not yet shared) bytes object.
        PyBytes::new_with(py, len, |buf| {
            py.detach(|| archive.read_member_to_slice(name, &expected, max_bytes, buf))
                .into_py_result()
        })
    }

    /// Verify and decode one text member (UTF-8, optional BOM, no NUL).
    #[pyo3(signature = (name, *, sha256, size, max_bytes))]
    fn read_text(
        &self,
        py: Python<'_>,
        name: &str,
        sha256: &str,
        size: &Bound<'_, PyAny>,
        max_bytes: &Bound<'_, PyAny>,
    ) -> PyResult<PySourceText> {
        let (expected, max_bytes) = expected_args(sha256, size, max_bytes)?;
        let archive = &*self.archive;
        py.detach(|| archive.read_text(name, &expected, max_bytes))
            .into_py_result()
            .map(PySourceText::from)
    }

    /// Verify and decode several text members on up to `threads` cores
    /// (`0` = all). Members are `(name, sha256, size)`; the result keeps their
    /// order. On failure the error of the first failing member (in the given
    /// order) is raised, with `details["member_index"]` naming it.
    #[pyo3(signature = (members, *, max_bytes, threads = 0))]
    fn read_texts(
        &self,
        py: Python<'_>,
        members: Vec<(String, String, Bound<'_, PyAny>)>,
        max_bytes: &Bound<'_, PyAny>,
        threads: usize,
    ) -> PyResult<Vec<PySourceText>> {
        let max_bytes = non_negative(max_bytes, "max_bytes must be an integer in 0..2**64")?;
        let mut requests = Vec::with_capacity(members.len());
        for (index, (name, sha256, size)) in members.iter().enumerate() {
            let (expected, _) =
                expected_args(sha256, size, &max_bytes.into_pyobject(py)?.into_any())
                    .map_err(|err| with_member_index(py, err, index))?;
            requests.push((name.as_str(), expected));
        }
        let archive = &*self.archive;
        let results = py.detach(|| archive.read_texts(&requests, max_bytes, threads));
        results
            .into_iter()
            .enumerate()
            .map(|(index, result)| {
                result
                    .map(PySourceText::from)
                    .map_err(|err| with_member_index(py, to_pyerr(err), index))
            })
            .collect()
    }
}

fn with_member_index(py: Python<'_>, err: PyErr, index: usize) -> PyErr {
    if let Ok(details) = err.value(py).getattr("details") {
        // Best effort: a foreign exception without `details` stays as it is.
        let _ = details.set_item("member_index", index);
    }
    err
}

fn expected_args(
    sha256: &str,
    size: &Bound<'_, PyAny>,
    max_bytes: &Bound<'_, PyAny>,
) -> PyResult<(Expected, u64)> {
    let sha256 = parse_sha256_hex(sha256).into_py_result()?;
    let size = non_negative(size, "size must be an integer in 0..2**64")?;
    let max_bytes = non_negative(max_bytes, "max_bytes must be an integer in 0..2**64")?;
    Ok((Expected { sha256, size }, max_bytes))
}

fn non_negative(value: &Bound<'_, PyAny>, what: &'static str) -> PyResult<u64> {
    if value.is_instance_of::<PyBool>() {
        // `True` is an int in Python; as a size it is always a mistake.
        return Err(CoreError::InvalidArgument { what }).into_py_result();
    }
    value
        .extract::<u64>()
        .map_err(|_| CoreError::InvalidArgument { what })
        .into_py_result()
}
