//! Pure core: no Python types, no I/O besides reading the archive a caller
//! names, and no global state besides the bounded list of spare text
//! buffers in [`recycle`].

pub mod dbc;
pub mod error;
pub mod fs;
pub mod git;
pub mod line_search;
pub mod parallel;
#[cfg(test)]
mod phase_profile;
pub mod recycle;
pub mod rows;
pub mod text;
pub mod zip_stream;

pub use error::{CoreError, ErrorClass};
