use pyo3::prelude::*;

pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}

/// Which SHA-256 implementation runs on this CPU ("sha-ni" or "software").
#[pyfunction]
pub fn sha256_implementation() -> &'static str {
    crate::core::zip_stream::sha256_implementation()
}
