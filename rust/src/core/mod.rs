//! Pure core: no Python types, no global state, no I/O besides reading the
//! archive a caller names.

pub mod error;
pub mod fs;
pub mod git;
pub mod line_search;
pub mod parallel;
#[cfg(test)]
mod phase_profile;
pub mod rows;
pub mod text;
pub mod zip_stream;

pub use error::{CoreError, ErrorClass};
