//! The `viano_bug_analysis._native` extension module: a list of exports.
//! Every binding only converts types, releases the GIL around the core call
//! and maps errors (see `errors.rs`).

use pyo3::prelude::*;

mod dbc;
mod errors;
mod git;
mod rows;
mod search;
mod zip;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(search::sha256_implementation, m)?)?;
    zip::register(m)?;
    search::register(m)?;
    rows::register(m)?;
    git::register(m)?;
    dbc::register(m)?;
    Ok(())
}
