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

fn listing_name(commit: &ObjectId) -> String {
    format!("{LISTING_PREFIX}{commit}{LISTING_SUFFIX}")
}

fn kind_code(kind: EntryKind) -> u8 {
    match kind {
        EntryKind::Blob => 0,
        EntryKind::Executable => 1,
        EntryKind::Symlink => 2,
        EntryKind::Submodule => 3,
    }
}

/// One record per entry: blob ID, kind, absent flag, size, path length, then
/// the path.
fn listing_body(entries: &[TreeEntry]) -> Vec<u8> {
    let paths: usize = entries.iter().map(|e| e.path.len()).sum();
    let mut body = Vec::with_capacity(entries.len() * LISTING_RECORD_LEN + paths);
    for e in entries {
        body.extend_from_slice(e.oid.as_bytes());
        body.extend_from_slice(&[kind_code(e.kind), u8::from(e.absent), 0, 0]);
        body.extend_from_slice(&e.size.to_le_bytes());
        body.extend_from_slice(&(e.path.len() as u32).to_le_bytes());
        body.extend_from_slice(&e.path);
    }
    body
}

fn parse_listing(all: &[u8], commit: &ObjectId) -> Option<Vec<TreeEntry>> {
    if all.len() < LISTING_HEADER_LEN
        || &all[..8] != LISTING_MAGIC
        || read_u32(all, 8) != LISTING_VERSION
        || crc32fast::hash(&all[..48]) != read_u32(all, 48)
        || read_u64(all, 16) != all.len() as u64
        || &all[24..44] != commit.as_bytes()
    {
        return None;
    }
    let body = &all[LISTING_HEADER_LEN..];
    if crc32fast::hash(body) != read_u32(all, 44) {
        return None;
    }
    let count = read_u32(all, 12) as usize;
    let mut entries = Vec::with_capacity(count.min(body.len() / LISTING_RECORD_LEN));
    let mut at = 0;
    for _ in 0..count {
        let record = body.get(at..at + LISTING_RECORD_LEN)?;
        let kind = match record[20] {
            0 => EntryKind::Blob,
            1 => EntryKind::Executable,
            2 => EntryKind::Symlink,
            3 => EntryKind::Submodule,
            _ => return None,
        };
        let len = read_u32(record, 32) as usize;
        let path = body.get(at + LISTING_RECORD_LEN..at + LISTING_RECORD_LEN + len)?;
        entries.push(TreeEntry {
            path: path.to_vec(),
            kind,
            oid: ObjectId::try_from(&record[..20]).ok()?,
            size: read_u64(record, 24),
            absent: match record[21] {
                0 => false,
                1 => true,
                _ => return None,
            },
            unusable: None,
        });
        at += LISTING_RECORD_LEN + len;
    }
    (at == body.len()).then_some(entries)
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

impl Segment {
    /// Maps and checks a segment file: header, length, table checksum,
    /// every entry inside the file and the table sorted by blob ID.
    fn open(path: &Path) -> Option<Segment> {
        // Only regular files the cache wrote: no symbolic link is followed.
        if !fs::symlink_metadata(path).ok()?.file_type().is_file() {
            return None;
        }
        let file = File::open(path).ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let bytes = map_file(&file).ok()?;
        let entries = parse_table((*bytes).as_ref())?;
        let lanes = (0..LANES)
            .map(|_| Arc::new(Lane(Arc::clone(&bytes))) as SharedBytes)
            .collect();
        Some(Segment {
            path: path.to_path_buf(),
            bytes,
            lanes,
            entries,
            touched: AtomicBool::new(false),
            rejected: AtomicBool::new(false),
        })
    }

    /// Checks an entry in one pass over its text: the checksum of text,
    /// line index and digest, and for a text flagged ASCII that it is (an
    /// ASCII flag on other text would fold wrongly). Each piece of the text
    /// is read from memory once for both.
    fn check(&self, e: &Entry) -> bool {
        let all = (*self.bytes).as_ref();
        let text = &all[e.text_start..e.text_start + e.text_len];
        let index = &all[e.index_start..e.index_start + 4 * e.blocks];
        let ascii = e.flags & FLAG_ASCII != 0;
        let mut crc = crc32fast::Hasher::new();
        let mut ok = true;
        for piece in text.chunks(CHECK_CHUNK) {
            crc.update(piece);
            ok &= !ascii || piece.is_ascii();
        }
        crc.update(index);
        crc.update(&e.sha256);
        ok && crc.finalize() == e.crc
    }

    /// The entry's content once it passes [`Self::check`]; run by the
    /// worker that searches the text right after, so the checks of all
    /// entries run in parallel and the text is then read from the CPU cache.
    fn content(&self, i: usize) -> Option<Content> {
        let e = self.entries.get(i)?;
        if !self.check(e) {
            return None;
        }
        let all = (*self.bytes).as_ref();
        let text = &all[e.text_start..e.text_start + e.text_len];
        let index = &all[e.index_start..e.index_start + 4 * e.blocks];
        match e.verdict {
            VERDICT_BINARY => Some(Err(SkipReason::Binary)),
            VERDICT_NOT_UTF8 => Some(Err(SkipReason::NotUtf8)),
            VERDICT_TEXT => {
                let blocks: Vec<u32> = index
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                let facts = TextFacts {
                    had_bom: e.flags & FLAG_BOM != 0,
                    is_ascii: e.flags & FLAG_ASCII != 0,
                    line_count: e.line_count as usize,
                };
                debug_assert!(!facts.is_ascii || text.is_ascii());
                let text = SourceText::from_parts(
                    Arc::clone(&self.lanes[lane()]),
                    e.text_start,
                    e.text_start + e.text_len,
                    facts,
                    blocks,
                )
                .ok()?;
                Some(Ok(Arc::new(text)))
            }
            _ => None,
        }
    }
}

/// How many handles a segment hands out (see [`Segment::lanes`]).
const LANES: usize = 8;

/// A handle on a segment's bytes with a counter of its own.
struct Lane(SharedBytes);

impl AsRef<[u8]> for Lane {
    fn as_ref(&self) -> &[u8] {
        (*self.0).as_ref()
    }
}

/// This thread's lane: threads numbered in the order they first ask, so
/// the workers of one search, started together, get different lanes.
fn lane() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static LANE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % LANES;
    }
    LANE.with(|lane| *lane)
}

fn parse_table(all: &[u8]) -> Option<Vec<Entry>> {
    if all.len() < HEADER_LEN || &all[..8] != MAGIC || read_u32(all, 8) != VERSION {
        return None;
    }
    if crc32fast::hash(&all[..28]) != read_u32(all, 28) {
        return None;
    }
    let count = read_u32(all, 12) as usize;
    if read_u64(all, 16) != all.len() as u64 {
        return None; // truncated or extended
    }
    let table_end = HEADER_LEN.checked_add(count.checked_mul(ENTRY_LEN)?)?;
    if table_end > all.len() || crc32fast::hash(&all[HEADER_LEN..table_end]) != read_u32(all, 24) {
        return None;
    }
    let mut entries = Vec::with_capacity(count);
    for k in 0..count {
        let r = &all[HEADER_LEN + k * ENTRY_LEN..HEADER_LEN + (k + 1) * ENTRY_LEN];
        let oid = ObjectId::try_from(&r[..20]).ok()?;
        let text_start = usize::try_from(read_u64(r, 32)).ok()?;
        let text_len = usize::try_from(read_u64(r, 40)).ok()?;
        let index_start = usize::try_from(read_u64(r, 48)).ok()?;
        let blocks = read_u32(r, 56) as usize;
        let text_end = text_start.checked_add(text_len)?;
        let index_end = index_start.checked_add(blocks.checked_mul(4)?)?;
        if text_start < table_end || text_end > all.len() || index_end > all.len() {
            return None;
        }
        let entry = Entry {
            oid,
            verdict: r[20],
            flags: r[21],
            line_count: read_u32(r, 24),
            crc: read_u32(r, 28),
            text_start,
            text_len,
            index_start,
            blocks,
            sha256: r[64..96].try_into().ok()?,
        };
        if entries.last().is_some_and(|p: &Entry| p.oid >= entry.oid) {
            return None;
        }
        entries.push(entry);
    }
    Some(entries)
}

/// Where every entry goes in a new segment.
struct Layout {
    /// Per item (in ID order): text start, index start.
    places: Vec<(u64, u64)>,
    order: Vec<usize>,
    file_len: u64,
}

fn parts(content: &Content) -> (&[u8], &[u32]) {
    match content {
        Ok(text) => (text.as_bytes(), text.index_blocks()),
        Err(_) => (&[], &[]),
    }
}

fn pad8(n: u64) -> u64 {
    n.div_ceil(8) * 8
}

impl Layout {
    fn of(items: &[&Fresh]) -> Layout {
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by_key(|&i| items[i].0);
        order.dedup_by_key(|i| items[*i].0);
        let mut at = (HEADER_LEN + order.len() * ENTRY_LEN) as u64;
        let mut places = Vec::with_capacity(order.len());
        for &i in &order {
            let (text, index) = parts(&items[i].1);
            let text_at = at;
            let index_at = pad8(text_at + text.len() as u64);
            at = pad8(index_at + 4 * index.len() as u64);
            places.push((text_at, index_at));
        }
        Layout {
            places,
            order,
            file_len: at,
        }
    }
}

/// Writes a segment in [`WRITE_WINDOW`] windows at offsets that are
/// multiples of it, each assembled in a reused buffer and written with one
/// `pwrite`: the windows without the table by one thread while the pool
/// computes each entry's checksum and, where the writer computes it,
/// SHA-256 (its table row), then the windows holding header and table; a
/// file torn before that fails every check. One large aligned write per window lets
/// the page cache keep the file in folios of that size, which a reader's
/// mapping then maps a whole window per page-table entry (see
/// [`WRITE_WINDOW`]).
fn write_segment(path: &Path, items: &[&Fresh], layout: &Layout) -> std::io::Result<()> {
    let file = OpenOptions::new().write(true).create_new(true).open(path)?;
    file.set_len(layout.file_len)?;
    let slots: Vec<(usize, (u64, u64))> = layout
        .order
        .iter()
        .copied()
        .zip(layout.places.iter().copied())
        .collect();
    // Only the windows of the header and table need the checksums: one
    // thread writes the others while the pool hashes (writes to one file
    // take its lock in turn, so a second writing thread only waited,
    // spinning on it).
    let front_len = (HEADER_LEN + layout.order.len() * ENTRY_LEN) as u64;
    let (front_windows, other_windows) = window_split(layout.file_len, front_len);
    let no_front = placed_parts(items, layout, &[]);
    let write = |bytes: &[u8], at: u64| file.write_all_at(bytes, at);
    let (rows, rest) = std::thread::scope(|scope| {
        let rest = scope.spawn(|| write_windows(layout.file_len, &no_front, other_windows, write));
        let rows = parallel_map(&slots, 0, |&(i, place)| entry_row(items[i], place));
        let rest = rest
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (rows, rest)
    });
    rest?;
    let table: Vec<u8> = rows.concat();
    let mut header = [0u8; HEADER_LEN];
    header[..8].copy_from_slice(MAGIC);
    header[8..12].copy_from_slice(&VERSION.to_le_bytes());
    header[12..16].copy_from_slice(&(layout.order.len() as u32).to_le_bytes());
    header[16..24].copy_from_slice(&layout.file_len.to_le_bytes());
    header[24..28].copy_from_slice(&crc32fast::hash(&table).to_le_bytes());
    let header_crc = crc32fast::hash(&header[..28]);
    header[28..32].copy_from_slice(&header_crc.to_le_bytes());
    let front = table_front(&header, &table);
    let placed = placed_parts(items, layout, &front);
    write_windows(layout.file_len, &placed, front_windows, write)
}

/// The windows (by number) that hold the first `front_len` bytes of a
/// file of `file_len` bytes, and the others.
fn window_split(file_len: u64, front_len: u64) -> (Range<u64>, Range<u64>) {
    let window = WRITE_WINDOW as u64;
    let all = file_len.div_ceil(window);
    let front = front_len.div_ceil(window).max(1).min(all);
    (0..front, front..all)
}

/// One run of bytes of a new segment at its offset: the front (header and
/// table), a text, or a line index (stored little-endian).
#[derive(Clone, Copy)]
struct Placed<'a> {
    at: u64,
    part: Part<'a>,
}

#[derive(Clone, Copy)]
enum Part<'a> {
    Bytes(&'a [u8]),
    Words(&'a [u32]),
}

impl Part<'_> {
    fn len(&self) -> u64 {
        match self {
            Part::Bytes(bytes) => bytes.len() as u64,
            Part::Words(words) => 4 * words.len() as u64,
        }
    }

    /// Copies the part's bytes from byte `from` on into all of `out`.
    fn copy_to(&self, from: usize, out: &mut [u8]) {
        match self {
            Part::Bytes(bytes) => out.copy_from_slice(&bytes[from..from + out.len()]),
            // Line indexes are about 0.1 % of a segment: byte by byte is fine.
            Part::Words(words) => {
                for (k, byte) in out.iter_mut().enumerate() {
                    let at = from + k;
                    *byte = words[at / 4].to_le_bytes()[at % 4];
                }
            }
        }
    }
}

/// Every run of bytes of a new segment, in file order (the gaps between
/// them are padding: zeros).
fn placed_parts<'a>(items: &[&'a Fresh], layout: &Layout, front: &'a [u8]) -> Vec<Placed<'a>> {
    let mut placed = Vec::with_capacity(1 + 2 * layout.order.len());
    placed.push(Placed {
        at: 0,
        part: Part::Bytes(front),
    });
    for (&i, &(text_at, index_at)) in layout.order.iter().zip(&layout.places) {
        let (text, index) = parts(&items[i].1);
        placed.push(Placed {
            at: text_at,
            part: Part::Bytes(text),
        });
        placed.push(Placed {
            at: index_at,
            part: Part::Words(index),
        });
    }
    placed
}

/// Writes the [`WRITE_WINDOW`] windows numbered `windows` of a file of
/// `file_len` bytes made of `placed` (zeros between), one `write(bytes,
/// offset)` each, in order.
fn write_windows(
    file_len: u64,
    placed: &[Placed<'_>],
    windows: Range<u64>,
    write: impl Fn(&[u8], u64) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let window = WRITE_WINDOW as u64;
    let mut buf = Vec::new();
    for w in windows {
        let bytes = fill_window(&mut buf, w * window, file_len.min((w + 1) * window), placed);
        write(bytes, w * window)?;
    }
    Ok(())
}

/// The bytes of the file from `start` to `end`, assembled in `buf`.
fn fill_window<'b>(buf: &'b mut Vec<u8>, start: u64, end: u64, placed: &[Placed<'_>]) -> &'b [u8] {
    let len = (end - start) as usize;
    if buf.len() < len {
        buf.resize(len, 0);
    }
    let out = &mut buf[..len];
    let mut filled = 0;
    let first = placed.partition_point(|p| p.at + p.part.len() <= start);
    for p in placed[first..].iter().take_while(|p| p.at < end) {
        let from = p.at.max(start);
        let to = (p.at + p.part.len()).min(end);
        let (s, e) = ((from - start) as usize, (to - start) as usize);
        if s >= e {
            continue;
        }
        out[filled..s].fill(0);
        p.part.copy_to((from - p.at) as usize, &mut out[s..e]);
        filled = e;
    }
    out[filled..].fill(0);
    out
}

/// The table row of one entry: the checksum of its text, line index and
/// digest, taking the SHA-256 of the text on the way where the writer
/// computes it (each piece read from memory once for both).
fn entry_row((oid, content, digest): &Fresh, (text_at, index_at): (u64, u64)) -> [u8; ENTRY_LEN] {
    let (text, index) = parts(content);
    let mut crc = crc32fast::Hasher::new();
    let mut sha = (content.is_ok() && *digest == RawDigest::TextIsRaw).then(Sha256::new);
    for piece in text.chunks(HASH_CHUNK) {
        crc.update(piece);
        if let Some(sha) = sha.as_mut() {
            sha.update(piece);
        }
    }
    for block in index {
        crc.update(&block.to_le_bytes());
    }
    let sha256: Option<[u8; 32]> = match (content, digest) {
        (Ok(_), RawDigest::Known(known)) => Some(*known),
        (Ok(_), RawDigest::TextIsRaw) => sha.map(|sha| sha.finalize().into()),
        _ => None,
    };
    let (verdict, mut flags, lines) = match content {
        Ok(t) => {
            let f = t.facts();
            let flags =
                if f.had_bom { FLAG_BOM } else { 0 } | if f.is_ascii { FLAG_ASCII } else { 0 };
            (VERDICT_TEXT, flags, f.line_count as u32)
        }
        Err(SkipReason::Binary) => (VERDICT_BINARY, 0, 0),
        Err(_) => (VERDICT_NOT_UTF8, 0, 0),
    };
    if sha256.is_some() {
        flags |= FLAG_SHA256;
    }
    let sha256 = sha256.unwrap_or([0; 32]);
    crc.update(&sha256);
    let mut row = [0u8; ENTRY_LEN];
    row[..20].copy_from_slice(oid.as_bytes());
    row[20] = verdict;
    row[21] = flags;
    row[24..28].copy_from_slice(&lines.to_le_bytes());
    row[28..32].copy_from_slice(&crc.finalize().to_le_bytes());
    row[32..40].copy_from_slice(&text_at.to_le_bytes());
    row[40..48].copy_from_slice(&(text.len() as u64).to_le_bytes());
    row[48..56].copy_from_slice(&index_at.to_le_bytes());
    row[56..60].copy_from_slice(&(index.len() as u32).to_le_bytes());
    row[64..96].copy_from_slice(&sha256);
    row
}

fn table_front(header: &[u8; HEADER_LEN], table: &[u8]) -> Vec<u8> {
    let mut front = Vec::with_capacity(HEADER_LEN + table.len());
    front.extend_from_slice(header);
    front.extend_from_slice(table);
    front
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// The file as the naive layout gives it: each part at its offset,
    /// zeros elsewhere.
    fn naive(file_len: u64, placed: &[Placed<'_>]) -> Vec<u8> {
        let mut out = vec![0u8; file_len as usize];
        for p in placed {
            let at = p.at as usize;
            let len = p.part.len() as usize;
            p.part.copy_to(0, &mut out[at..at + len]);
        }
        out
    }

    /// What [`write_segment`] does with the windows: the others first,
    /// without the front, then the front's windows with it. Returns the
    /// file and the writes as (offset, length), in order.
    fn write_like_a_segment(
        file_len: u64,
        front: &[u8],
        rest: &[Placed<'_>],
    ) -> (Vec<u8>, Vec<(u64, u64)>) {
        let image = Mutex::new(vec![0xAAu8; file_len as usize]);
        let calls = Mutex::new(Vec::new());
        let write = |bytes: &[u8], at: u64| {
            calls.lock().unwrap().push((at, bytes.len() as u64));
            image.lock().unwrap()[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
            Ok(())
        };
        let (front_windows, others) = window_split(file_len, front.len() as u64);
        let at_front = |bytes| Placed {
            at: 0,
            part: Part::Bytes(bytes),
        };
        let without: Vec<Placed<'_>> = std::iter::once(at_front(&[]))
            .chain(rest.iter().copied())
            .collect();
        write_windows(file_len, &without, others, write).unwrap();
        let with: Vec<Placed<'_>> = std::iter::once(at_front(front))
            .chain(rest.iter().copied())
            .collect();
        write_windows(file_len, &with, front_windows, write).unwrap();
        let expected = naive(file_len, &with);
        assert_eq!(image.into_inner().unwrap(), expected);
        (expected, calls.into_inner().unwrap())
    }

    /// Before issue 16's change each text was written at its place; the
    /// page cache then kept small folios and a new process paid a page
    /// fault per 4 KiB. Now every write is a whole aligned window (the last
    /// one ends the file), the windows of the front are written last, and
    /// the bytes are those of the layout, also for parts that cross a
    /// window.
    #[test]
    fn segments_are_written_as_whole_aligned_windows_front_last() {
        let w = WRITE_WINDOW as u64;
        let front = vec![7u8; 1000];
        let big = vec![b'x'; 2 * WRITE_WINDOW + 123];
        let words: Vec<u32> = (0..3000u32).map(|n| n.wrapping_mul(0x0101_0101)).collect();
        let small = b"abc".to_vec();
        // A text across two window boundaries, an index across one at an
        // offset that is not a multiple of 4, an empty part, zero gaps.
        let rest = vec![
            Placed {
                at: 1008,
                part: Part::Bytes(&big),
            },
            Placed {
                at: 3 * w - 6,
                part: Part::Words(&words),
            },
            Placed {
                at: 3 * w + 20_000,
                part: Part::Bytes(&[]),
            },
            Placed {
                at: 3 * w + 20_000,
                part: Part::Bytes(&small),
            },
        ];
        let file_len = 3 * w + 20_008;
        let (_, calls) = write_like_a_segment(file_len, &front, &rest);
        assert_eq!(calls.last(), Some(&(0, w)), "the front window goes last");
        let mut sorted = calls.clone();
        sorted.sort_unstable();
        let expected: Vec<(u64, u64)> = vec![(0, w), (w, w), (2 * w, w), (3 * w, 20_008)];
        assert_eq!(sorted, expected);
    }

    /// A table of more than 2 MiB (over 21,000 entries) spans several
    /// windows: all of them are written with it, after the checksums.
    #[test]
    fn a_front_of_several_windows_is_written_whole() {
        let w = WRITE_WINDOW as u64;
        let front: Vec<u8> = (0..(2 * WRITE_WINDOW + 500))
            .map(|n| (n % 251) as u8)
            .collect();
        let text = vec![b't'; 10_000];
        let rest = vec![Placed {
            at: 2 * w + 504,
            part: Part::Bytes(&text),
        }];
        let file_len = 2 * w + 10_504;
        let (image, calls) = write_like_a_segment(file_len, &front, &rest);
        assert_eq!(&image[..front.len()], &front[..]);
        assert_eq!(calls, vec![(0, w), (w, w), (2 * w, 10_504)]);
        assert_eq!(window_split(file_len, front.len() as u64), (0..3, 3..3));
        assert_eq!(window_split(10, 64), (0..1, 1..1));
        assert_eq!(window_split(3 * w, 64), (0..1, 1..3));
    }

    /// A new process maps the segments while it lists the commit, before
    /// its first search asks for them.
    #[test]
    fn segments_are_mapped_at_open_without_a_search() {
        let dir = std::env::temp_dir().join(format!("vba-disk-prescan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let text = Arc::new(SourceText::decode(b"one\ntwo\n".to_vec()).unwrap());
        let oid = ObjectId::from_bytes_or_panic(&[3; 20]);
        let first = DiskCache::open(&dir, 1 << 20).unwrap();
        first.store_now(&[(oid, Ok(text), RawDigest::Unknown)]);
        let second = DiskCache::open(&dir, 1 << 20).unwrap();
        second.flush(); // the scan thread is done
        let state = second.state.lock().unwrap();
        assert_eq!(state.segments.len(), 1);
        assert!(state.by_oid.contains_key(&oid));
        drop(state);
        assert!(second.find(&[oid])[0].is_some());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failed_window_write_fails_the_segment() {
        let front = vec![1u8; 10];
        let placed = vec![Placed {
            at: 0,
            part: Part::Bytes(&front),
        }];
        let len = 2 * WRITE_WINDOW as u64;
        let got = write_windows(len, &placed, 0..2, |_, at| {
            if at == 0 {
                Ok(())
            } else {
                Err(std::io::Error::other("disk full"))
            }
        });
        assert!(got.is_err());
    }
}
