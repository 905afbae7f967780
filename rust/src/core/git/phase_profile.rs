//! Where the time of one cold `source.search` goes, phase by phase.
//!
//! Not a test of behaviour: an ignored test that prints medians, run by hand
//! on the commit that `benches/bench_git.py` builds (see docs/benchmarks.md):
//!
//! ```text
//! VBA_PHASE_GIT=/path/checkout VBA_PHASE_COMMIT=<40 hex> \
//!   cargo test --release --lib git::phase_profile -- --ignored --nocapture
//! ```
//!
//! Each phase is timed alone, on every core unless it says otherwise, in the
//! order a cold search runs them; the last line is the whole cold search
//! (a fresh store each round) for comparison with the sum.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gix_object::Exists;

use super::objects::{header_size, read_blob};
use super::store::GitStore;
use super::tree::list_entries;
use crate::core::line_search::{self, CompiledQueries, Page, Query, SearchMode};
use crate::core::parallel::{parallel_map, try_map_with};
use crate::core::text::SourceText;

const LITERAL: &str = "PyErr_SetString";
const ROUNDS: usize = 7;

fn median(mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn row(phase: &str, time: Duration) {
    println!("{phase:<58} {:>8.2} ms", time.as_secs_f64() * 1e3);
}

#[test]
#[ignore = "prints a timing breakdown; needs VBA_PHASE_GIT and VBA_PHASE_COMMIT"]
fn phase_profile() {
    let path = std::path::PathBuf::from(std::env::var("VBA_PHASE_GIT").expect("VBA_PHASE_GIT"));
    let commit = std::env::var("VBA_PHASE_COMMIT").expect("VBA_PHASE_COMMIT");
    let max = 8 << 20;
    let open = || GitStore::open(&path, 1 << 30, None).unwrap();
    row("open the object database", median(|| drop(open())));

    let store = open();
    let oid = super::parse_oid(&commit).unwrap();
    row(
        "tree walk with object headers (sizes), one thread",
        median(|| {
            drop(list_entries(|| store.handle_for_profile(), &oid, 1_000_000, 1, None).unwrap())
        }),
    );
    row(
        "tree walk with object headers (sizes), all cores",
        median(|| {
            drop(list_entries(|| store.handle_for_profile(), &oid, 1_000_000, 0, None).unwrap())
        }),
    );
    let tree = store.tree(&commit, 1_000_000, 0, None).unwrap();
    // In ID order: as far from path order as a walk could leave it.
    let mut walked: Vec<_> = tree.entries().to_vec();
    walked.sort_by_key(|e| e.oid);
    row(
        "  a copy of the listing (subtract from the next row)",
        median(|| drop(walked.clone())),
    );
    row(
        "  sort and mark the listing, one thread (plus the copy)",
        median(|| {
            let mut entries = walked.clone();
            super::tree::sort_and_mark(&mut entries);
        }),
    );
    let oids: Vec<_> = tree.entries().iter().map(|e| e.oid).collect();
    row(
        "object headers (sizes; pack index lookup + entry header)",
        median(|| {
            try_map_with(
                &oids,
                0,
                || store.handle_for_profile(),
                |r, o| header_size(r, o),
            )
            .unwrap();
        }),
    );
    let selection = tree.select_files(None, false, max);
    row(
        "inflate floor (lookup + inflate, reused buffer, discarded)",
        median(|| {
            store.inflate_floor(&tree, &selection, 0, None).unwrap();
        }),
    );
    let sel_oids: Vec<_> = selection
        .files
        .iter()
        .map(|&i| tree.entries()[i].oid)
        .collect();
    row(
        "inflate into one fresh buffer per blob",
        median(|| {
            try_map_with(
                &sel_oids,
                0,
                || store.handle_for_profile(),
                |r, o| read_blob(r, o),
            )
            .unwrap();
        }),
    );
    row(
        "inflate floor on one thread",
        median(|| {
            store.inflate_floor(&tree, &selection, 1, None).unwrap();
        }),
    );
    let repo1 = store.handle_for_profile();
    row(
        "object lookup only (find the pack entry, no inflate)",
        median(|| {
            for o in &sel_oids {
                let _ = repo1.exists(o);
            }
        }),
    );
    let raw: Vec<Vec<u8>> = try_map_with(
        &sel_oids,
        0,
        || store.handle_for_profile(),
        |r, o| read_blob(r, o),
    )
    .unwrap();
    row(
        "decode: UTF-8/NUL check, CR, ASCII, newline count (copy)",
        median(|| {
            parallel_map(&raw, 0, |data| SourceText::decode(data.clone()).unwrap());
        }),
    );
    row(
        "  of which the copy of the bytes alone",
        median(|| {
            parallel_map(&raw, 0, |data| data.clone());
        }),
    );
    let texts: Vec<Arc<SourceText>> = parallel_map(&raw, 0, |data| {
        Arc::new(SourceText::decode(data.clone()).unwrap())
    });
    row(
        "line index (newline count per 4 KiB block)",
        median(|| {
            parallel_map(&texts, 0, |t| {
                let fresh = SourceText::decode(t.as_bytes().to_vec()).unwrap();
                let _ = fresh.haystack();
            });
        }),
    );
    let query = Query::new(SearchMode::Literal, LITERAL).unwrap();
    let compiled = CompiledQueries::new(std::slice::from_ref(&query)).unwrap();
    for t in &texts {
        let _ = t.haystack();
    }
    let refs: Vec<&SourceText> = texts.iter().map(Arc::as_ref).collect();
    let page = Page {
        offset: 0,
        limit: 100,
    };
    row(
        "search (texts decoded and indexed)",
        median(|| drop(line_search::search(&refs, &compiled, &[page], 0).unwrap())),
    );
    row(
        "whole cold search (fresh store: walk, headers, read, search)",
        median(|| {
            let store = open();
            let tree = store.tree(&commit, 1_000_000, 0, None).unwrap();
            let selection = tree.select_files(None, false, max);
            store
                .search(&tree, &selection, "literal", LITERAL, page, 0, None)
                .unwrap();
        }),
    );
    row(
        "cold, unfused: read all, then search all (fresh store)",
        median(|| {
            let store = open();
            let tree = store.tree(&commit, 1_000_000, 0, None).unwrap();
            let selection = tree.select_files(None, false, max);
            let blobs: Vec<_> = selection
                .files
                .iter()
                .map(|&i| (tree.entries()[i].oid, tree.entries()[i].size))
                .collect();
            let contents = store.contents(&blobs, max, 0, None).unwrap();
            let texts: Vec<&SourceText> = contents
                .iter()
                .filter_map(|c| c.as_ref().ok().map(|t| t.as_ref()))
                .collect();
            line_search::search(&texts, &compiled, &[page], 0).unwrap();
        }),
    );
    let disk = std::env::temp_dir().join(format!("vba-phase-disk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&disk);
    let with_disk = || {
        let config = super::DiskCacheConfig {
            dir: &disk,
            max_bytes: 1 << 32,
        };
        GitStore::open(&path, 1 << 30, Some(config)).unwrap()
    };
    {
        let store = with_disk();
        let tree = store.tree(&commit, 1_000_000, 0, None).unwrap();
        let selection = tree.select_files(None, false, max);
        store
            .search(&tree, &selection, "literal", LITERAL, page, 0, None)
            .unwrap();
    }
    row(
        "second process: open + list the commit",
        median(|| {
            let store = with_disk();
            store.tree(&commit, 1_000_000, 0, None).unwrap();
        }),
    );
    row(
        "second process: search served by the persistent cache",
        median(|| {
            let store = with_disk();
            let selection = tree.select_files(None, false, max);
            store
                .search(&tree, &selection, "literal", LITERAL, page, 0, None)
                .unwrap();
            assert_eq!(store.blobs_read(), 0);
        }),
    );
    let total: Vec<u8> = texts
        .iter()
        .flat_map(|t| t.as_bytes().iter().copied())
        .collect();
    let blobs: Vec<_> = selection
        .files
        .iter()
        .map(|&i| (tree.entries()[i].oid, tree.entries()[i].size))
        .collect();
    let mut unique: Vec<_> = blobs.iter().map(|&(oid, _)| oid).collect();
    unique.sort_unstable();
    unique.dedup();
    row(
        "  find: list the directory, map, check the tables",
        median(|| {
            let cache = super::disk_cache::DiskCache::open(&disk, 1 << 32).unwrap();
            drop(cache.find(&unique));
        }),
    );
    {
        let cache = super::disk_cache::DiskCache::open(&disk, 1 << 32).unwrap();
        let found: Vec<_> = cache.find(&unique).into_iter().flatten().collect();
        let started = Instant::now();
        for f in &found {
            drop(cache.load(f));
        }
        row(
            "  first load of every entry, one thread (faults)",
            started.elapsed(),
        );
        let started = Instant::now();
        for f in &found {
            drop(cache.load(f));
        }
        row("  again, same mapping, one thread", started.elapsed());
    }
    row(
        "  load every entry (checks, line index; no search)",
        median(|| {
            let store = with_disk();
            drop(store.contents(&blobs, max, 0, None).unwrap());
        }),
    );
    row(
        "  CRC-32 of every text, one thread",
        median(|| {
            crc32fast::hash(&total);
        }),
    );
    let _ = std::fs::remove_dir_all(&disk);
    row(
        "warm search (same store, cached texts)",
        median(|| {
            store
                .search(&tree, &selection, "literal", LITERAL, page, 0, None)
                .unwrap();
        }),
    );
}
