//! The persistent content cache on a real repository: reuse across stores
//! (as across processes), corruption and truncation, eviction, concurrency.

use std::path::{Path, PathBuf};

use super::tests::{git, repo};
use super::*;
use crate::core::line_search::Page;

const PAGE: Page = Page {
    offset: 0,
    limit: 100,
};

fn cache_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vba-disk-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn store(repo: &Path, cache: &Path, max_bytes: u64) -> GitStore {
    let config = DiskCacheConfig {
        dir: cache,
        max_bytes,
    };
    GitStore::open(repo, 1 << 20, Some(config)).unwrap()
}

/// `(total, skipped, hits as (entry, line, text))` of a search for "foo".
type Answer = (usize, Vec<(usize, SkipReason)>, Vec<(usize, u32, String)>);

fn search(store: &GitStore, commit: &str) -> Answer {
    let tree = store.tree(commit, 100, 2, None).unwrap();
    let selection = tree.select(&Filter::default(), 1 << 20);
    let found = store
        .search(&tree, &selection, "literal", "foo", PAGE, 2, None)
        .unwrap();
    // The segment is written in the background: wait for it.
    store.flush_disk();
    let hits = found
        .hits
        .iter()
        .map(|(i, l, t)| (*i, *l, t.line_by_index(*l as usize).to_owned()))
        .collect();
    (found.total, found.skipped, hits)
}

fn segments(cache: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "vbc"))
        .collect();
    out.sort();
    out
}

#[test]
fn a_second_store_reads_no_blob_and_answers_the_same() {
    let (dir, commit) = repo("disk-reuse");
    let cache = cache_dir("reuse");
    let plain = GitStore::open(&dir, 1 << 20, None).unwrap();
    let expected = search(&plain, &commit);
    let first = store(&dir, &cache, 1 << 20);
    assert_eq!(search(&first, &commit), expected);
    assert_eq!(first.blobs_read(), 4);
    assert_eq!(segments(&cache).len(), 1);
    let second = store(&dir, &cache, 1 << 20);
    assert_eq!(search(&second, &commit), expected);
    assert_eq!(
        second.blobs_read(),
        0,
        "every text came from the cache file"
    );
    let stats = second.disk_stats().unwrap();
    assert_eq!((stats.hits, stats.rejected), (4, 0));
    // The verdict of the binary blob is cached too; the text keeps its facts.
    let tree = second.tree(&commit, 100, 1, None).unwrap();
    let crlf = second
        .text(&tree, b"a.txt", 1 << 20, None)
        .unwrap()
        .unwrap();
    let fresh = plain.text(&tree, b"a.txt", 1 << 20, None).unwrap().unwrap();
    assert_eq!(crlf.as_bytes(), fresh.as_bytes());
    assert_eq!(crlf.facts(), fresh.facts());
    assert_eq!(second.blobs_read(), 0);
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
}

/// Every way a segment file can be damaged is detected: the blobs are read
/// from git again, stored in a new segment, and the bad file is deleted.
#[test]
fn damaged_segments_are_never_trusted_and_are_rebuilt() {
    let (dir, commit) = repo("disk-damage");
    let expected = search(&GitStore::open(&dir, 1 << 20, None).unwrap(), &commit);
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage); 6] = [
        ("flip a text byte", |b| {
            // The first entry's text starts at the offset its table row names.
            let start = u64::from_le_bytes(b[64 + 32..64 + 40].try_into().unwrap());
            b[start as usize] ^= 0x20;
        }),
        ("truncate", |b| b.truncate(b.len() - 1)),
        ("truncate to the header", |b| b.truncate(40)),
        ("extend", |b| b.extend_from_slice(b"x")),
        ("flip a table byte", |b| b[64 + 30] ^= 1),
        ("empty", |b| b.clear()),
    ];
    for (what, damage) in damages {
        let cache = cache_dir("damage");
        search(&store(&dir, &cache, 1 << 20), &commit);
        let [segment] = segments(&cache).try_into().unwrap();
        let mut bytes = std::fs::read(&segment).unwrap();
        damage(&mut bytes);
        std::fs::write(&segment, &bytes).unwrap();
        let next = store(&dir, &cache, 1 << 20);
        assert_eq!(search(&next, &commit), expected, "{what}");
        assert!(next.disk_stats().unwrap().rejected >= 1, "{what}");
        assert!(next.blobs_read() >= 1, "{what}: read from git again");
        let rebuilt = segments(&cache);
        assert_eq!(rebuilt.len(), 1, "{what}");
        assert_ne!(rebuilt[0], segment, "{what}: the bad file is gone");
        let third = store(&dir, &cache, 1 << 20);
        assert_eq!(search(&third, &commit), expected, "{what}");
        assert_eq!(third.blobs_read(), 0, "{what}: the rebuilt file serves");
        std::fs::remove_dir_all(cache).unwrap();
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_foreign_file_and_a_crashed_writers_leftover_are_removed() {
    let (dir, commit) = repo("disk-foreign");
    let cache = cache_dir("foreign");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(cache.join("seg-foreign.vbc"), b"not a segment").unwrap();
    std::fs::write(cache.join("tmp-crashed"), b"half a segment").unwrap();
    let first = store(&dir, &cache, 1 << 20);
    search(&first, &commit);
    assert_eq!(first.disk_stats().unwrap().rejected, 1);
    let names: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n == "seg-foreign.vbc" || n == "tmp-crashed"),
        "{names:?}"
    );
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
}

#[test]
fn the_least_recently_used_segment_is_evicted_to_stay_in_the_bound() {
    let (dir, commit) = repo("disk-evict");
    let cache = cache_dir("evict");
    let files = |prefix: &[u8]| {
        let s = store(&dir, &cache, 1 << 20);
        let tree = s.tree(&commit, 100, 1, None).unwrap();
        let selection = tree.select_files(Some(prefix), false, 1 << 20);
        s.search(&tree, &selection, "literal", "foo", PAGE, 1, None)
            .unwrap();
    };
    files(b"z.txt");
    let [only_z] = segments(&cache).try_into().unwrap();
    let z_len = std::fs::metadata(&only_z).unwrap().len();
    let listing_len = std::fs::metadata(cache.join(format!("tree-{commit}.vbt")))
        .unwrap()
        .len();
    std::fs::remove_dir_all(&cache).unwrap();
    // Room for the commit's listing (used by every store, so never the
    // least recently used) and about two one-file segments: the third
    // segment evicts the oldest.
    let bound = listing_len + 2 * z_len + z_len / 2;
    let make = |prefix: &[u8]| {
        let s = store(&dir, &cache, bound);
        let tree = s.tree(&commit, 100, 1, None).unwrap();
        let selection = tree.select_files(Some(prefix), false, 1 << 20);
        s.search(&tree, &selection, "literal", "foo", PAGE, 1, None)
            .unwrap();
        s
    };
    make(b"z.txt");
    std::thread::sleep(std::time::Duration::from_millis(20));
    make(b"a.txt");
    std::thread::sleep(std::time::Duration::from_millis(20));
    // Using the z segment again makes the a segment the least recently used.
    let reuse = make(b"z.txt");
    assert_eq!(reuse.blobs_read(), 0);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let third = make(b"a/");
    assert_eq!(third.disk_stats().unwrap().segments_evicted, 1);
    let total: u64 = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(total <= bound, "{total} > {bound}");
    assert_eq!(make(b"z.txt").blobs_read(), 0, "z was used last: kept");
    assert_eq!(make(b"a.txt").blobs_read(), 1, "a was evicted");
    // A segment larger than the whole bound is not written.
    let tiny = cache_dir("evict-tiny");
    let s = store(&dir, &tiny, 10);
    search(&s, &commit);
    assert_eq!(s.disk_stats().unwrap().segments_written, 0);
    assert!(segments(&tiny).is_empty());
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
    std::fs::remove_dir_all(tiny).unwrap();
}

#[test]
fn concurrent_stores_share_one_directory() {
    let (dir, commit) = repo("disk-concurrent");
    let cache = cache_dir("concurrent");
    let expected = search(&GitStore::open(&dir, 1 << 20, None).unwrap(), &commit);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..6)
            .map(|_| {
                scope.spawn(|| {
                    (0..5)
                        .map(|_| search(&store(&dir, &cache, 1 << 20), &commit))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for worker in workers {
            for answer in worker.join().unwrap() {
                assert_eq!(answer, expected);
            }
        }
    });
    // Every file left is a complete, valid segment; no temp file remains.
    for entry in std::fs::read_dir(&cache).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            name == "lock" || name.ends_with(".vbc") || name == format!("tree-{commit}.vbt"),
            "{name}"
        );
    }
    let last = store(&dir, &cache, 1 << 20);
    assert_eq!(search(&last, &commit), expected);
    assert_eq!(last.blobs_read(), 0);
    assert_eq!(last.disk_stats().unwrap().rejected, 0);
    assert!(!git(&dir, &["rev-parse", "HEAD"]).is_empty());
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
}

#[test]
fn an_unusable_directory_is_an_error_at_open() {
    let (dir, _) = repo("disk-unusable");
    let file = dir.join("z.txt");
    let config = DiskCacheConfig {
        dir: &file,
        max_bytes: 1 << 20,
    };
    let err = GitStore::open(&dir, 0, Some(config)).err().unwrap();
    assert_eq!(err.code(), "repository_unavailable");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_listing_is_stored_checked_and_still_needs_the_commit() {
    let (dir, commit) = repo("disk-listing");
    let cache = cache_dir("listing");
    let plain = GitStore::open(&dir, 0, None).unwrap();
    let expected = plain.tree(&commit, 100, 1, None).unwrap();
    let first = store(&dir, &cache, 1 << 20);
    assert_eq!(
        first.tree(&commit, 100, 1, None).unwrap().entries(),
        expected.entries()
    );
    let listing = cache.join(format!("tree-{commit}.vbt"));
    assert!(listing.is_file());
    let second = store(&dir, &cache, 1 << 20);
    assert_eq!(
        second.tree(&commit, 100, 1, None).unwrap().entries(),
        expected.entries()
    );
    assert_eq!(second.disk_stats().unwrap().rejected, 0);
    assert_eq!(
        second.tree(&commit, 4, 1, None).unwrap_err().code(),
        "selection_too_large"
    );
    // A damaged listing is not used (and is rebuilt).
    let mut bytes = std::fs::read(&listing).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&listing, &bytes).unwrap();
    let third = store(&dir, &cache, 1 << 20);
    assert_eq!(
        third.tree(&commit, 100, 1, None).unwrap().entries(),
        expected.entries()
    );
    assert_eq!(third.disk_stats().unwrap().rejected, 1);
    // A listing copied under another commit's name is refused too.
    let other = "1".repeat(40);
    std::fs::copy(&listing, cache.join(format!("tree-{other}.vbt"))).unwrap();
    let err = store(&dir, &cache, 1 << 20)
        .tree(&other, 100, 1, None)
        .unwrap_err();
    assert_eq!(
        err.code(),
        "commit_missing",
        "the repository has no such commit"
    );
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
}

#[test]
fn a_read_stores_nothing_and_the_file_count_is_bounded() {
    let (dir, commit) = repo("disk-read");
    let cache = cache_dir("read");
    let reader = store(&dir, &cache, 1 << 20);
    let tree = reader.tree(&commit, 100, 1, None).unwrap();
    reader
        .text(&tree, b"z.txt", 1 << 20, None)
        .unwrap()
        .unwrap();
    assert!(
        segments(&cache).is_empty(),
        "a single read writes no segment"
    );
    search(&store(&dir, &cache, 1 << 20), &commit);
    let served = store(&dir, &cache, 1 << 20);
    let tree = served.tree(&commit, 100, 1, None).unwrap();
    served
        .text(&tree, b"z.txt", 1 << 20, None)
        .unwrap()
        .unwrap();
    assert_eq!(served.blobs_read(), 0, "but a read uses the cache");

    let many = cache_dir("many");
    let disk = disk_cache::DiskCache::open(&many, 1 << 30).unwrap();
    for n in 0..(disk_cache::MAX_FILES as u32 + 20) {
        let mut id = [0u8; 20];
        id[..4].copy_from_slice(&n.to_le_bytes());
        let oid = gix_hash::ObjectId::from_bytes_or_panic(&id);
        disk.store_now(&[(oid, Err(SkipReason::Binary), disk_cache::RawDigest::Unknown)]);
    }
    assert_eq!(segments(&many).len(), disk_cache::MAX_FILES);
    assert_eq!(disk.stats().segments_evicted, 20);
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
    std::fs::remove_dir_all(many).unwrap();
}

/// The first table row's field at `offset`, as a file position.
fn row_field(bytes: &[u8], row: usize, offset: usize) -> usize {
    let at = 64 + row * 96 + offset;
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize
}

/// Damage to one entry, found by the worker that was about to search it,
/// costs that entry only: the others are served, the answer is the one
/// without any cache, and the new segment holds all of them again.
#[test]
fn one_damaged_entry_found_mid_search_is_read_from_git_alone() {
    let (dir, commit) = repo("disk-mid");
    let expected = search(&GitStore::open(&dir, 1 << 20, None).unwrap(), &commit);
    for row in 0..4 {
        let cache = cache_dir("mid");
        search(&store(&dir, &cache, 1 << 20), &commit);
        let [segment] = segments(&cache).try_into().unwrap();
        let mut bytes = std::fs::read(&segment).unwrap();
        let text_len = row_field(&bytes, row, 40);
        if text_len == 0 {
            // The binary's verdict has no text: damage its stored checksum.
            bytes[64 + row * 96 + 28] ^= 1;
            // (the table checksum then fails: the whole file is rejected)
        } else {
            let start = row_field(&bytes, row, 32);
            bytes[start + text_len - 1] ^= 0x01;
        }
        std::fs::write(&segment, &bytes).unwrap();
        let next = store(&dir, &cache, 1 << 20);
        assert_eq!(search(&next, &commit), expected, "row {row}");
        let stats = next.disk_stats().unwrap();
        assert!(stats.rejected >= 1, "row {row}");
        if text_len > 0 {
            assert_eq!(next.blobs_read(), 1, "row {row}: only the damaged entry");
            assert_eq!(stats.hits, 3, "row {row}: the others were served");
        }
        let third = store(&dir, &cache, 1 << 20);
        assert_eq!(search(&third, &commit), expected, "row {row}");
        assert_eq!(third.blobs_read(), 0, "row {row}");
        std::fs::remove_dir_all(cache).unwrap();
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// A served search needs the SHA-256 of its hit blobs: the entries carry
/// them (checked with the entry), for a text stored as read (z.txt) and
/// one whose line ends decoding changed (a.txt, CRLF).
#[test]
fn stored_digests_serve_sha256_and_are_checked() {
    let (dir, commit) = repo("disk-sha");
    let cache = cache_dir("sha");
    let plain = GitStore::open(&dir, 1 << 20, None).unwrap();
    let tree = plain.tree(&commit, 100, 1, None).unwrap();
    let ids: Vec<String> = [&b"z.txt"[..], b"a.txt", b"a/b/c.sql", b"bin.dat"]
        .iter()
        .map(|p| tree.readable_file(p).unwrap().oid.to_string())
        .collect();
    let expected = plain.sha256_hex(&ids, 1, None).unwrap();
    search(&store(&dir, &cache, 1 << 20), &commit);
    let second = store(&dir, &cache, 1 << 20);
    assert_eq!(second.sha256_hex(&ids, 2, None).unwrap(), expected);
    // Three texts carry a digest; the binary's is read from git.
    assert_eq!(second.disk_stats().unwrap().digests, 3);
    // A damaged digest fails the entry's checksum: read from git instead.
    let [segment] = segments(&cache).try_into().unwrap();
    let mut bytes = std::fs::read(&segment).unwrap();
    for row in 0..4 {
        bytes[64 + row * 96 + 64] ^= 0x80;
    }
    // Keep the table checksum right so that only the entry checks see it.
    let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let table = crc32fast::hash(&bytes[64..64 + count * 96]);
    bytes[24..28].copy_from_slice(&table.to_le_bytes());
    let header = crc32fast::hash(&bytes[..28]);
    bytes[28..32].copy_from_slice(&header.to_le_bytes());
    std::fs::write(&segment, &bytes).unwrap();
    let third = store(&dir, &cache, 1 << 20);
    assert_eq!(third.sha256_hex(&ids, 2, None).unwrap(), expected);
    let stats = third.disk_stats().unwrap();
    assert_eq!(stats.digests, 0);
    assert!(stats.rejected >= 1);
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
}

/// What a writer killed mid-write leaves (a `tmp-*` file, complete or not)
/// is never read and is deleted by the next writer.
#[test]
fn a_killed_writers_temp_file_is_ignored_and_cleaned() {
    let (dir, commit) = repo("disk-killed");
    let cache = cache_dir("killed");
    let expected = search(&GitStore::open(&dir, 1 << 20, None).unwrap(), &commit);
    search(&store(&dir, &cache, 1 << 20), &commit);
    let [segment] = segments(&cache).try_into().unwrap();
    // A complete segment under a temp name, and a torn one.
    let bytes = std::fs::read(&segment).unwrap();
    std::fs::write(cache.join("tmp-complete"), &bytes).unwrap();
    std::fs::write(cache.join("tmp-torn"), &bytes[..bytes.len() / 2]).unwrap();
    std::fs::remove_file(&segment).unwrap();
    let next = store(&dir, &cache, 1 << 20);
    assert_eq!(search(&next, &commit), expected);
    assert_eq!(next.blobs_read(), 4, "a temp file is never read");
    let names: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with("tmp-")), "{names:?}");
    assert_eq!(segments(&cache).len(), 1);
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
}

/// A segment of several write windows (texts that cross the window
/// boundaries, as most do in a real tree) is served whole by a second store,
/// and the file is byte for byte what one write per entry would give
/// (checked by every entry's checksum on the way).
#[test]
fn a_segment_of_several_write_windows_is_served_whole() {
    let dir = std::env::temp_dir().join(format!("vba-git-disk-windows-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for n in 0..9 {
        // About 0.9 MiB each (under the 1 MiB file limit of `search`), lines
        // of different lengths, one hit per file.
        let mut text = String::new();
        for line in 0..70_000 {
            text.push_str(&"ab".repeat(1 + (line + n) % 11));
            text.push('\n');
        }
        text.push_str("foo\n");
        std::fs::write(dir.join(format!("f{n}.txt")), text).unwrap();
    }
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "t"]);
    let commit = git(&dir, &["rev-parse", "HEAD"]);
    let cache = cache_dir("windows");
    let expected = search(&GitStore::open(&dir, 1 << 30, None).unwrap(), &commit);
    assert_eq!(expected.0, 9);
    search(&store(&dir, &cache, 1 << 30), &commit);
    let [segment] = segments(&cache).try_into().unwrap();
    assert!(std::fs::metadata(&segment).unwrap().len() > 3 * (2 << 20));
    let second = store(&dir, &cache, 1 << 30);
    assert_eq!(search(&second, &commit), expected);
    assert_eq!(second.blobs_read(), 0);
    assert_eq!(second.disk_stats().unwrap().hits, 9);
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
}

/// The same blob under several paths is read (or served) once and answered
/// under every path, in path order, with and without the caches; the
/// answer of each path is moved or cloned from the one loaded blob.
#[test]
fn one_blob_under_several_paths_is_answered_under_each() {
    let dir = std::env::temp_dir().join(format!("vba-git-disk-dups-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("d")).unwrap();
    for name in ["a.txt", "d/b.txt", "m.txt", "z.txt"] {
        std::fs::write(dir.join(name), "x\nfoo\n").unwrap();
    }
    std::fs::write(dir.join("c.txt"), "foo alone\n").unwrap();
    std::fs::write(dir.join("n.bin"), b"foo\0").unwrap();
    std::fs::write(dir.join("o.bin"), b"foo\0").unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "t"]);
    let commit = git(&dir, &["rev-parse", "HEAD"]);
    let plain = GitStore::open(&dir, 1 << 20, None).unwrap();
    let expected = search(&plain, &commit);
    assert_eq!(expected.0, 5);
    let hit_paths: Vec<usize> = expected.2.iter().map(|(i, _, _)| *i).collect();
    assert_eq!(hit_paths.len(), 5);
    assert!(hit_paths.windows(2).all(|w| w[0] < w[1]), "{hit_paths:?}");
    assert_eq!(
        expected.1.len(),
        2,
        "both binaries skipped: {:?}",
        expected.1
    );
    assert_eq!(plain.blobs_read(), 3, "three distinct blobs");
    assert_eq!(search(&plain, &commit), expected, "warm");
    let cache = cache_dir("dups");
    let first = store(&dir, &cache, 1 << 20);
    assert_eq!(search(&first, &commit), expected);
    let second = store(&dir, &cache, 1 << 20);
    assert_eq!(search(&second, &commit), expected, "served");
    assert_eq!(second.blobs_read(), 0);
    assert_eq!(second.disk_stats().unwrap().hits, 3);
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
}

#[test]
fn a_blob_absent_when_listed_is_searched_once_a_later_store_finds_it() {
    let (dir, commit) = repo("disk-absent");
    let cache = cache_dir("absent");
    let oid = git(&dir, &["rev-parse", "HEAD:z.txt"]);
    super::tests::drop_object(&dir, &oid);
    let (total, skipped, _) = search(&store(&dir, &cache, 1 << 20), &commit);
    assert_eq!(total, 2);
    assert!(skipped.contains(&(4, SkipReason::Missing)));
    // A second store reuses the stored listing and still finds it absent.
    let (total, skipped, _) = search(&store(&dir, &cache, 1 << 20), &commit);
    assert_eq!(total, 2);
    assert!(skipped.contains(&(4, SkipReason::Missing)));
    // A fetch brings the blob: the next store sees it, from the same listing.
    git(&dir, &["hash-object", "-w", "z.txt"]);
    let later = store(&dir, &cache, 1 << 20);
    let (total, skipped, _) = search(&later, &commit);
    assert_eq!(total, 4, "z.txt is searched now");
    assert!(!skipped.iter().any(|&(_, r)| r == SkipReason::Missing));
    assert_eq!(later.disk_stats().unwrap().rejected, 0);
    assert_eq!(
        later
            .tree(&commit, 100, 1, None)
            .unwrap()
            .find(b"z.txt")
            .unwrap()
            .size,
        22
    );
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache).unwrap();
}
