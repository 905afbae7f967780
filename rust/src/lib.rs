//! VianoBugAnalysis native core.
//!
//! `core` is pure Rust (no Python) and is tested with `cargo test`.
//! `python` is the thin PyO3 binding, compiled only with the `python` feature.

pub mod core;

#[cfg(feature = "python")]
mod python;
