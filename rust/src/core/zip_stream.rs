//! placeholder

cpufeatures::new!(cpuid_sha, "sha", "sse2", "ssse3", "sse4.1");

/// The sha2 crate picks SHA-NI at run time through the same detection.
pub fn sha256_implementation() -> &'static str {
    if cpuid_sha::get() {
        "sha-ni"
    } else {
        "software"
    }
}
