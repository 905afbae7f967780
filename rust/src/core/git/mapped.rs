//! The one place the crate maps a file into memory (the content cache's
//! segment files), and so the one module allowed `unsafe`.
//!
//! # Why this is sound here
//! A mapping stays valid while the file is unlinked or renamed; it only
//! breaks (SIGBUS) if the file is truncated, or changes under the map, while
//! mapped. The cache never does either: a segment is written in full to a
//! temporary name and renamed into place, never opened for writing again,
//! and removed only by unlinking. A process that rewrote a segment in place
//! behind the cache's back could break the mapping, exactly as it could
//! break the pack files that `gix-pack` maps the same way; the cache
//! directory belongs to the operator like the repository does. The bytes of
//! a mapping are never trusted: every read checks the segment's checksums.

#![allow(unsafe_code)]

use std::fs::File;
use std::sync::Arc;

use memmap2::Mmap;

use crate::core::text::SharedBytes;

/// A read-only private mapping of the whole file, shared by every text
/// that points into it.
pub fn map_file(file: &File) -> std::io::Result<SharedBytes> {
    // SAFETY: see the module documentation: segment files are immutable
    // once named, and only ever unlinked.
    let map = unsafe { Mmap::map(file)? };
    // Where the page cache must read the file again (evicted, or after a
    // reboot), fault-driven readahead then fills it in 2 MiB folios, which
    // this and every later mapping maps whole (measured after dropping a
    // 103 MB segment from the page cache: 100 % of it PMD-mapped with the
    // advice, 59 % without). Only advice: a kernel without huge pages for
    // files maps it as before, and an error changes nothing.
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    Ok(Arc::new(map))
}
