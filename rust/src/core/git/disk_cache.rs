//! The persistent content cache of the git reader: decoded texts (or the
//! verdict that a blob has none) by blob ID, in files that outlive the
//! process, so that a second process at the same commit reads no git object.
//!
//! # Layout
//! One directory holds immutable *segment* files `seg-*.vbc` (the blobs one
//! search read from git, written together), one *listing* file
//! `tree-<commit>.vbt` per commit listed (paths, kinds, blob IDs and sizes;
//! a commit ID names its tree as immutably as a blob ID its bytes; only
//! which blobs the repository holds can change, so an entry whose blob was
//! absent is marked and looked up again on every reuse), the
//! file `lock`, and for a moment a writer's `tmp-*` file. A blob ID is the hash of the blob's
//! bytes, so an entry is never stale: nothing is ever invalidated, only
//! evicted.
//!
//! # Readers and the one writer
//! Readers take no lock: a segment appears under its name only complete
//! (written to `tmp-*`, then renamed), is never written again, and is
//! removed only by unlinking, which leaves every existing mapping intact.
//! A writer holds an exclusive lock on `lock` (`flock`) while it writes a
//! segment, removes leftovers of crashed writers and evicts; a process that
//! finds the lock taken does not wait and skips writing (the other writer
//! is storing the same kind of work). In a process, a search's segment is
//! written by one background thread after the answer is made (joined
//! before the next segment, by `flush` and on drop); a process killed
//! while it writes leaves a `tmp-*` file that no reader opens and the next
//! writer deletes. The writer writes the file in 2 MiB windows at 2 MiB
//! offsets, one `pwrite` each, from one thread, while the other cores take
//! each entry's checksum (and, for a text that decoding left byte for byte
//! as the blob, its SHA-256); the windows with the table go last. So the
//! page cache holds the file in huge folios that a reader's fresh mapping
//! maps without a page fault per 4 KiB ([`WRITE_WINDOW`]).
//!
//! # Never trusted
//! A segment's header and entry table carry CRC-32 checksums and the file's
//! length, and every entry the checksum of its text, line index and the
//! SHA-256 of the raw blob (the provenance a search hit carries, so that a
//! served search reads no blob from git), checked each time the entry is
//! loaded into a process: by the worker that searches the text, in the
//! same pass as the ASCII check, right before the search reads it again
//! from the CPU cache. A truncated, corrupted or
//! foreign file is never used: its blobs are read from git again and stored
//! in a new segment, and the next writer deletes the bad file. No fsync: a
//! file torn by a crash fails these checks and is rebuilt the same way.
//!
//! # Bound
//! The directory holds at most `max_bytes` of segments and listings, and at
//! most [`MAX_FILES`] files. Before writing, the writer deletes the least
//! recently used files (by modification time; a process refreshes it on a
//! file's first use) until the new one fits. A file that alone exceeds the
//! bound is not written. Only searches store texts; a single `read` of a
//! file not cached yet reads it from git and stores nothing.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::ops::{Deref, Range};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use gix_hash::ObjectId;
use sha2::{Digest, Sha256};

use super::cache::Content;
use super::mapped::map_file;
use super::tree::{sort_and_mark, EntryKind, SkipReason, TreeEntry};
use crate::core::error::{CoreError, CoreResult};
use crate::core::parallel::parallel_map;
use crate::core::text::{SharedBytes, SourceText, TextFacts};

mod listing;
mod segment;
mod write;

use listing::*;
use write::*;

const MAGIC: &[u8; 8] = b"VBAGITC\x01";
/// 3: a blob with a NUL after its first invalid UTF-8 byte is `binary`; a
/// version 2 segment holds `not_utf8` for it, which would keep every search
/// of a commit with a PNG partial.
const VERSION: u32 = 3;
/// 2: a record's byte 21 says whether the blob was absent when listed
/// (version 1 listings were never made with an absent blob, but a process
/// of that version would read the flag as a present empty blob).
const LISTING_VERSION: u32 = 2;
const HEADER_LEN: usize = 64;
const ENTRY_LEN: usize = 96;
/// The checks of an entry run over its text in pieces of this size, so
/// that the checksum and the ASCII check read each piece from memory once.
const CHECK_CHUNK: usize = 16 << 10;
/// The writer hashes a text in pieces of this size (CRC-32 and SHA-256 of
/// each piece while it is in the CPU cache).
const HASH_CHUNK: usize = 256 << 10;
/// The writer writes a segment in windows of this size at offsets that are
/// multiples of it: the huge-page size of x86-64 (and of arm64 with 4 KiB
/// pages). A file system with large folios (ext4, XFS) then keeps each
/// window in one folio, and a fresh read-only mapping maps it with one
/// page-table entry on first touch instead of 512 small ones: on this
/// project's machine that took a new process's first pass over a 103 MB
/// segment from about 10 ms of page faults to none measurable (see
/// docs/benchmarks.md, issue 16). Elsewhere nothing is lost: the folios are
/// small and the mapping faults as before.
const WRITE_WINDOW: usize = 2 << 20;
const SEGMENT_PREFIX: &str = "seg-";
const SEGMENT_SUFFIX: &str = ".vbc";
const TEMP_PREFIX: &str = "tmp-";
/// Most segment and listing files kept: each search that read something
/// new adds one, and a process maps every segment it uses.
pub const MAX_FILES: usize = 512;
const LISTING_PREFIX: &str = "tree-";
const LISTING_SUFFIX: &str = ".vbt";
const LISTING_MAGIC: &[u8; 8] = b"VBAGITL\x01";
const LISTING_HEADER_LEN: usize = 56;
const LISTING_RECORD_LEN: usize = 36;

const VERDICT_TEXT: u8 = 0;
const VERDICT_BINARY: u8 = 1;
const VERDICT_NOT_UTF8: u8 = 2;
const FLAG_BOM: u8 = 1;
const FLAG_ASCII: u8 = 2;
const FLAG_SHA256: u8 = 4;

/// What the writer knows of the SHA-256 of a blob's raw bytes (what a
/// search hit carries as provenance).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawDigest {
    /// Computed from the raw bytes already.
    Known([u8; 32]),
    /// The decoded text is byte for byte the raw blob: the writer hashes it.
    TextIsRaw,
    /// Not known (the entry is stored without one).
    Unknown,
}

/// One blob to store: its ID, its content and what is known of its digest.
pub type Fresh = (ObjectId, Content, RawDigest);

/// One entry of a segment's table, checked against the file's bounds.
#[derive(Debug, Clone, Copy)]
struct Entry {
    oid: ObjectId,
    verdict: u8,
    flags: u8,
    line_count: u32,
    crc: u32,
    text_start: usize,
    text_len: usize,
    index_start: usize,
    blocks: usize,
    sha256: [u8; 32],
}

/// One segment file, mapped, with its entry table parsed.
pub struct Segment {
    path: PathBuf,
    bytes: SharedBytes,
    /// Handles on `bytes` for the texts made from it, one per worker lane:
    /// each text holds one, and 10,000 texts made from one handle by two
    /// workers at once moved its counter's cache line between the cores
    /// for every text (about 1 ms of a served search).
    lanes: Vec<SharedBytes>,
    entries: Vec<Entry>,
    touched: AtomicBool,
    /// An entry failed its checksum: the whole file goes.
    rejected: AtomicBool,
}

/// Where a blob's entry is: a segment and an index into its table.
#[derive(Clone)]
pub struct Found {
    segment: Arc<Segment>,
    entry: usize,
}

impl Found {
    /// True once any entry of this segment failed a check: the segment is
    /// deleted by the next writer, so what was loaded from it must be
    /// stored again.
    pub fn segment_rejected(&self) -> bool {
        self.segment.rejected.load(Ordering::Relaxed)
    }

    /// The stored SHA-256 of the raw blob, unchecked: for passing on to the
    /// next segment with a content that passed its checks.
    pub fn raw_digest(&self) -> RawDigest {
        match self.segment.entries.get(self.entry) {
            Some(e) if e.flags & FLAG_SHA256 != 0 => RawDigest::Known(e.sha256),
            _ => RawDigest::Unknown,
        }
    }
}

#[derive(Default)]
struct State {
    segments: Vec<Arc<Segment>>,
    /// File names already looked at (usable or not).
    seen: HashSet<OsString>,
    /// Keyed by the ID's leading bytes, as the memory cache is.
    by_oid: gix_hashtable::HashMap<ObjectId, (usize, usize)>,
    /// Segments that failed a check: the next writer deletes them.
    bad: HashSet<PathBuf>,
}

/// Counters for tests and diagnostics.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DiskStats {
    pub hits: u64,
    pub rejected: u64,
    pub segments_written: u64,
    pub segments_evicted: u64,
    /// SHA-256 digests served from entries instead of read from git.
    pub digests: u64,
}

/// The persistent cache of one store: what readers use, plus the one
/// background thread that writes the segment of the last search (so that
/// writing never delays the answer). The thread is joined before the next
/// segment is written, by [`DiskCache::flush`], and when the cache is
/// dropped; a process killed while it writes leaves only a `tmp-*` file,
/// which no reader looks at and the next writer deletes.
pub struct DiskCache {
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl Deref for DiskCache {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.shared
    }
}

impl Drop for DiskCache {
    fn drop(&mut self) {
        self.flush();
    }
}

impl DiskCache {
    /// Opens (creating it if needed) the cache directory, bounded to
    /// `max_bytes` of segment files.
    pub fn open(dir: &Path, max_bytes: u64) -> CoreResult<Self> {
        let shared = Arc::new(Shared::open(dir, max_bytes)?);
        // The segments are mapped and their tables read on a thread of
        // their own, while the caller lists the commit (a new process
        // does both first; about 0.7 ms each on the benchmark's commit).
        // The first `find` waits for the lock this holds; the writer slot
        // has it joined like a writer, before any segment is written.
        let for_thread = Arc::clone(&shared);
        let scan = std::thread::Builder::new()
            .name("vba-cache-scan".into())
            .spawn(move || {
                let mut state = for_thread
                    .state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                for_thread.scan(&mut state);
            })
            .ok();
        Ok(DiskCache {
            shared,
            writer: Mutex::new(scan),
        })
    }

    /// Waits until the segment being written (if any) is in place.
    pub fn flush(&self) {
        let pending = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = pending {
            let _ = handle.join();
        }
    }

    /// The counters, once the pending segment is written.
    pub fn stats(&self) -> DiskStats {
        self.flush();
        self.shared.stats()
    }

    /// Stores the texts and verdicts of blobs just read from git in one new
    /// segment, on a background thread (after the previous one is done).
    /// Best effort, as [`Shared::store_now`].
    pub fn store(&self, items: Vec<Fresh>) {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(handle) = writer.take() {
            let _ = handle.join();
        }
        let shared = Arc::clone(&self.shared);
        let items = Arc::new(items);
        let for_thread = Arc::clone(&items);
        match std::thread::Builder::new()
            .name("vba-cache-writer".into())
            .spawn(move || shared.store_now(&for_thread))
        {
            Ok(handle) => *writer = Some(handle),
            // No thread to be had: write now rather than not at all.
            Err(_) => self.shared.store_now(&items),
        }
    }
}

pub struct Shared {
    dir: PathBuf,
    max_bytes: u64,
    state: Mutex<State>,
    hits: AtomicU64,
    rejected: AtomicU64,
    written: AtomicU64,
    evicted: AtomicU64,
    digests: AtomicU64,
}

fn unusable_dir() -> CoreError {
    CoreError::GitRepositoryUnavailable {
        what: "cannot use the content cache directory",
    }
}

impl Shared {
    fn open(dir: &Path, max_bytes: u64) -> CoreResult<Self> {
        fs::create_dir_all(dir).map_err(|_| unusable_dir())?;
        if !fs::metadata(dir).map_err(|_| unusable_dir())?.is_dir() {
            return Err(unusable_dir());
        }
        // The lock file must be creatable: a cache that cannot be written
        // is a configuration mistake, not something to ignore silently.
        lock_file(dir).map_err(|_| unusable_dir())?;
        Ok(Shared {
            dir: dir.to_path_buf(),
            max_bytes,
            state: Mutex::new(State::default()),
            hits: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            written: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            digests: AtomicU64::new(0),
        })
    }

    fn stats(&self) -> DiskStats {
        DiskStats {
            hits: self.hits.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
            segments_written: self.written.load(Ordering::Relaxed),
            segments_evicted: self.evicted.load(Ordering::Relaxed),
            digests: self.digests.load(Ordering::Relaxed),
        }
    }

    /// Where each blob's entry is, among the segments in the directory now
    /// (new segment files are picked up on every call).
    pub fn find(&self, oids: &[ObjectId]) -> Vec<Option<Found>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.scan(&mut state);
        oids.iter()
            .map(|oid| {
                state.by_oid.get(oid).map(|&(s, e)| Found {
                    segment: Arc::clone(&state.segments[s]),
                    entry: e,
                })
            })
            .collect()
    }

    /// The content of a found entry after its checksum, or `None` when the
    /// entry fails a check (the segment is then never used again). Called
    /// by every worker for every entry: it writes nothing shared unless a
    /// check fails or the segment is used for the first time (a counter or
    /// flag written per entry from two cores cost a cache-line transfer per
    /// entry); the caller adds the hits up with [`Self::count_hits`].
    pub fn load(&self, found: &Found) -> Option<Content> {
        let segment = &found.segment;
        match segment.content(found.entry) {
            Some(content) => {
                if !segment.touched.load(Ordering::Relaxed)
                    && !segment.touched.swap(true, Ordering::Relaxed)
                {
                    // Least recently used is by modification time; a failure
                    // only makes eviction pick this segment a little early.
                    if let Ok(file) = File::options().write(true).open(&segment.path) {
                        let _ = file.set_modified(SystemTime::now());
                    }
                }
                Some(content)
            }
            None => {
                self.rejected.fetch_add(1, Ordering::Relaxed);
                self.forget(segment);
                None
            }
        }
    }

    /// Adds `n` entries served by [`Self::load`] to the counters.
    pub fn count_hits(&self, n: u64) {
        self.hits.fetch_add(n, Ordering::Relaxed);
    }

    /// The stored SHA-256 of the raw blob of a found entry, once the whole
    /// entry passes its checks (`None`: not stored, or the entry failed).
    pub fn sha256(&self, found: &Found) -> Option<[u8; 32]> {
        let e = found.segment.entries.get(found.entry)?;
        if e.flags & FLAG_SHA256 == 0 || e.verdict != VERDICT_TEXT {
            return None;
        }
        if !found.segment.check(e) {
            self.rejected.fetch_add(1, Ordering::Relaxed);
            self.forget(&found.segment);
            return None;
        }
        self.digests.fetch_add(1, Ordering::Relaxed);
        Some(e.sha256)
    }

    /// Drops a segment that failed a check from this process's view and
    /// leaves it to the next writer to delete.
    fn forget(&self, segment: &Arc<Segment>) {
        segment.rejected.store(true, Ordering::Relaxed);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.bad.insert(segment.path.clone());
        if let Some(at) = state.segments.iter().position(|s| Arc::ptr_eq(s, segment)) {
            state.by_oid.retain(|_, (s, _)| *s != at);
        }
    }

    /// Stores the texts and verdicts of blobs just read from git in one new
    /// segment. Best effort: when another process holds the writer lock, or
    /// anything fails, nothing is stored and the search is not affected.
    pub fn store_now(&self, items: &[Fresh]) {
        let items: Vec<&Fresh> = items
            .iter()
            .filter(|(_, content, _)| !matches!(content, Err(SkipReason::TooLarge)))
            .collect();
        if items.is_empty() {
            return;
        }
        let layout = Layout::of(&items);
        let name = format!("{SEGMENT_PREFIX}{}{SEGMENT_SUFFIX}", unique_suffix());
        let written = self.write(&name, layout.file_len, |path| {
            write_segment(path, &items, &layout)
        });
        if written {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            self.scan(&mut state);
        }
    }

    /// The listing of `commit` stored by an earlier process, after its
    /// checks, with the path rules applied afresh (`None`: not stored, or
    /// the file failed a check and is deleted by the next writer).
    pub fn load_listing(&self, commit: &ObjectId) -> Option<Vec<TreeEntry>> {
        let path = self.dir.join(listing_name(commit));
        let bytes = fs::read(&path).ok()?;
        match parse_listing(&bytes, commit) {
            Some(mut entries) => {
                if let Ok(file) = File::options().write(true).open(&path) {
                    let _ = file.set_modified(SystemTime::now());
                }
                sort_and_mark(&mut entries);
                Some(entries)
            }
            None => {
                self.rejected.fetch_add(1, Ordering::Relaxed);
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                state.bad.insert(path);
                None
            }
        }
    }

    /// Stores a commit's listing (best effort, as [`Self::store`]).
    pub fn store_listing(&self, commit: &ObjectId, entries: &[TreeEntry]) {
        let body = listing_body(entries);
        let file_len = (LISTING_HEADER_LEN + body.len()) as u64;
        self.write(&listing_name(commit), file_len, |path| {
            let mut header = [0u8; LISTING_HEADER_LEN];
            header[..8].copy_from_slice(LISTING_MAGIC);
            header[8..12].copy_from_slice(&LISTING_VERSION.to_le_bytes());
            header[12..16].copy_from_slice(&(entries.len() as u32).to_le_bytes());
            header[16..24].copy_from_slice(&file_len.to_le_bytes());
            header[24..44].copy_from_slice(commit.as_bytes());
            header[44..48].copy_from_slice(&crc32fast::hash(&body).to_le_bytes());
            let crc = crc32fast::hash(&header[..48]);
            header[48..52].copy_from_slice(&crc.to_le_bytes());
            let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
            file.write_all(&header)?;
            file.write_all(&body)
        });
    }

    /// Writes one new file named `name` of `file_len` bytes under the writer
    /// lock: removes leftovers and bad files, evicts for room, writes to a
    /// temporary name with `fill`, renames. False when nothing was written.
    fn write(
        &self,
        name: &str,
        file_len: u64,
        fill: impl FnOnce(&Path) -> std::io::Result<()>,
    ) -> bool {
        if file_len > self.max_bytes {
            return false;
        }
        let Ok(lock) = lock_file(&self.dir) else {
            return false;
        };
        if lock.try_lock().is_err() {
            return false; // another writer is at work: do not wait
        }
        let written = self.write_locked(name, file_len, fill);
        let _ = lock.unlock();
        if written {
            self.written.fetch_add(1, Ordering::Relaxed);
        }
        written
    }

    fn write_locked(
        &self,
        name: &str,
        file_len: u64,
        fill: impl FnOnce(&Path) -> std::io::Result<()>,
    ) -> bool {
        let bad: Vec<PathBuf> = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.bad.drain().collect()
        };
        for path in bad {
            let _ = fs::remove_file(path);
        }
        let Ok(listing) = fs::read_dir(&self.dir) else {
            return false;
        };
        let mut files = Vec::new();
        for entry in listing.flatten() {
            let file_name = entry.file_name();
            let Some(file_name) = file_name.to_str() else {
                continue;
            };
            let Ok(meta) = entry.metadata() else { continue };
            if file_name.starts_with(TEMP_PREFIX) {
                // Only a writer holding the lock has a temp file: this one
                // is what a crashed writer left.
                let _ = fs::remove_file(entry.path());
            } else if (is_segment_name(file_name) || is_listing_name(file_name)) && meta.is_file() {
                let used = meta.modified().unwrap_or(UNIX_EPOCH);
                files.push((used, meta.len(), entry.path()));
            }
        }
        files.sort();
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        let mut count = files.len();
        for (_, len, path) in &files {
            if total + file_len <= self.max_bytes && count < MAX_FILES {
                break;
            }
            if fs::remove_file(path).is_ok() {
                self.evicted.fetch_add(1, Ordering::Relaxed);
            }
            total -= len;
            count -= 1;
        }
        let temp = self.dir.join(format!("{TEMP_PREFIX}{}", unique_suffix()));
        let done = fill(&temp).and_then(|()| fs::rename(&temp, self.dir.join(name)));
        if done.is_err() {
            let _ = fs::remove_file(&temp);
            return false;
        }
        true
    }

    /// Maps the segment files not looked at yet and indexes their entries.
    fn scan(&self, state: &mut State) {
        let Ok(listing) = fs::read_dir(&self.dir) else {
            return;
        };
        for entry in listing.flatten() {
            let name = entry.file_name();
            if state.seen.contains(&name) {
                continue;
            }
            let is_segment = name.to_str().is_some_and(is_segment_name);
            if !is_segment {
                continue;
            }
            state.seen.insert(name);
            let path = entry.path();
            match Segment::open(&path) {
                Some(segment) => {
                    let at = state.segments.len();
                    for (i, e) in segment.entries.iter().enumerate() {
                        state.by_oid.entry(e.oid).or_insert((at, i));
                    }
                    state.segments.push(Arc::new(segment));
                }
                // Evicted by another process between listing and opening:
                // nothing to reject.
                None if !path.exists() => {}
                None => {
                    self.rejected.fetch_add(1, Ordering::Relaxed);
                    state.bad.insert(path);
                }
            }
        }
    }
}

fn is_segment_name(name: &str) -> bool {
    name.starts_with(SEGMENT_PREFIX) && name.ends_with(SEGMENT_SUFFIX)
}

fn is_listing_name(name: &str) -> bool {
    name.starts_with(LISTING_PREFIX) && name.ends_with(LISTING_SUFFIX)
}

fn lock_file(dir: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join("lock"))
}

/// A name no other writer picks: time, process and a counter.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{nanos:016x}-{:08x}-{n:04x}", std::process::id())
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}
