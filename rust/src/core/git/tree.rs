//! One commit's listing: entry kinds, why an entry is skipped, the filters
//! a query applies, and the walk over the commit's trees.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use gix_hash::ObjectId;
use gix_object::tree::EntryKind as GixEntryKind;
use gix_object::{Find, FindExt};

use super::objects::{check_deadline, header_size, kind_name, unreadable, Objects};
use super::paths::path_problem;
use crate::core::error::{CoreError, CoreResult};
use crate::core::parallel::resolve_threads;

/// The kind of a tree entry that is not a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file (mode 100644).
    Blob,
    /// A regular file with the executable bit (mode 100755).
    Executable,
    /// Mode 120000: the blob holds the link target, never followed.
    Symlink,
    /// Mode 160000: a gitlink; the ID names a commit of another repository.
    Submodule,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Blob => "blob",
            EntryKind::Executable => "executable",
            EntryKind::Symlink => "symlink",
            EntryKind::Submodule => "submodule",
        }
    }
}

/// Why a listed entry is not searched or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    Symlink,
    Submodule,
    /// The listed path breaks a rule of [`path_problem`] (or is listed twice).
    PathInvalid,
    /// The blob has a NUL byte.
    Binary,
    /// The blob is not valid UTF-8.
    NotUtf8,
    /// The blob is larger than the per-file limit (it is never read).
    TooLarge,
    /// The object database does not hold the blob (a partial clone, until a
    /// fetch brings it): its text is unknown, so it may hide a hit.
    Missing,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Symlink => "symlink",
            SkipReason::Submodule => "submodule",
            SkipReason::PathInvalid => "path_invalid",
            SkipReason::Binary => "binary",
            SkipReason::NotUtf8 => "not_utf8",
            SkipReason::TooLarge => "too_large",
            SkipReason::Missing => "missing",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// Full path as stored in the trees, `/`-separated; raw bytes.
    pub path: Vec<u8>,
    pub kind: EntryKind,
    pub oid: ObjectId,
    /// Blob size in bytes from the object header; 0 for submodules and for
    /// a blob the object database does not hold.
    pub size: u64,
    /// The object database did not hold the blob when it was listed. Not a
    /// property of the commit: a fetch can bring the blob at any time, so a
    /// stored listing looks such entries up again ([`recheck_absent`]).
    pub absent: bool,
    /// Why this entry is no readable file, or `None` for a regular file
    /// with a plain path.
    pub unusable: Option<SkipReason>,
}

/// One commit's files, sorted by path bytes (the order of `git ls-tree -r`).
#[derive(Debug)]
pub struct CommitTree {
    pub(super) entries: Vec<TreeEntry>,
}

/// Which entries a query covers.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// Only paths starting with these bytes.
    pub prefix: Option<Vec<u8>>,
    /// Only paths ending in `.sql` (ASCII case-insensitive).
    pub sql_only: bool,
    /// Only paths containing these bytes.
    pub path_contains: Option<Vec<u8>>,
}

impl Filter {
    pub fn new(prefix: Option<&[u8]>, sql_only: bool, path_contains: Option<&[u8]>) -> Self {
        Filter {
            prefix: prefix.map(<[u8]>::to_vec),
            sql_only,
            path_contains: path_contains.map(<[u8]>::to_vec),
        }
    }

    pub fn accepts(&self, path: &[u8]) -> bool {
        self.prefix.as_ref().is_none_or(|p| path.starts_with(p))
            && (!self.sql_only
                || path.len() >= 4 && path[path.len() - 4..].eq_ignore_ascii_case(b".sql"))
            && self
                .path_contains
                .as_ref()
                .is_none_or(|needle| memchr::memmem::find(path, needle).is_some())
    }
}

/// The entries a query covers, split into files to read and entries skipped
/// without reading (all as indexes into the tree, in path order).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub files: Vec<usize>,
    pub skipped: Vec<(usize, SkipReason)>,
    /// Sum of the sizes of `files`: what a search would read.
    pub total_bytes: u64,
    /// The per-file limit the selection was made with.
    pub max_file_bytes: u64,
}

impl CommitTree {
    pub fn entries(&self) -> &[TreeEntry] {
        &self.entries
    }

    /// This listing with its absent blobs looked up again, or `None` when
    /// none arrived (or it had none): a long-lived process (`vba mcp`) sees
    /// a blob fetched into a partial clone meanwhile without listing again.
    pub(super) fn with_arrived(&self, repo: &Objects) -> CoreResult<Option<CommitTree>> {
        if !self.entries.iter().any(|e| e.absent) {
            return Ok(None);
        }
        let mut entries = self.entries.clone();
        let arrived = recheck_absent(repo, &mut entries)?;
        Ok((arrived > 0).then_some(CommitTree { entries }))
    }

    /// The entry with exactly this path.
    pub fn find(&self, path: &[u8]) -> Option<&TreeEntry> {
        self.entries
            .binary_search_by(|e| e.path.as_slice().cmp(path))
            .ok()
            .map(|i| &self.entries[i])
    }

    /// The regular file with a plain path at exactly `path`: the only kind
    /// of entry whose text can be read.
    pub fn readable_file(&self, path: &[u8]) -> CoreResult<&TreeEntry> {
        self.find(path)
            .filter(|e| e.unusable.is_none())
            .ok_or(CoreError::GitRequestInvalid {
                what: "no regular file at this path",
            })
    }

    /// Every entry whose path contains `contains` and starts with `prefix`.
    pub fn find_paths<'t>(
        &'t self,
        contains: &[u8],
        prefix: Option<&[u8]>,
    ) -> impl Iterator<Item = &'t TreeEntry> + 't {
        let filter = Filter::new(prefix, false, Some(contains));
        self.entries
            .iter()
            .filter(move |entry| filter.accepts(&entry.path))
    }

    /// The files a search covers: below `prefix`, `*.sql` only if
    /// `sql_only`; files over `max_file_bytes` are skipped as `TooLarge`.
    pub fn select_files(
        &self,
        prefix: Option<&[u8]>,
        sql_only: bool,
        max_file_bytes: u64,
    ) -> Selection {
        self.select(&Filter::new(prefix, sql_only, None), max_file_bytes)
    }

    /// Splits the entries `filter` accepts into regular files up to
    /// `max_file_bytes` and skipped entries.
    pub fn select(&self, filter: &Filter, max_file_bytes: u64) -> Selection {
        let mut out = Selection {
            max_file_bytes,
            ..Selection::default()
        };
        for (index, entry) in self.entries.iter().enumerate() {
            if !filter.accepts(&entry.path) {
                continue;
            }
            match entry.unusable {
                Some(reason) => out.skipped.push((index, reason)),
                None if entry.size > max_file_bytes => {
                    out.skipped.push((index, SkipReason::TooLarge))
                }
                None => {
                    out.files.push(index);
                    out.total_bytes += entry.size;
                }
            }
        }
        out
    }
}

/// Every non-directory entry of the commit's tree, sorted and marked (see
/// [`sort_and_mark`]), each blob with its size from its object header
/// (nothing is inflated). The walk runs on up to `threads` workers (`0` =
/// every core), each with a handle from `handle`: a worker takes one tree
/// at a time from a shared stack, pushes its subtrees there and looks up
/// the sizes of the blobs it names right away, so the size lookups overlap
/// the walk instead of following it. The listing does not depend on the
/// thread count.
pub(super) fn list_entries(
    handle: impl Fn() -> Objects + Sync,
    commit: &ObjectId,
    max_entries: usize,
    threads: usize,
    deadline: Option<Instant>,
) -> CoreResult<Vec<TreeEntry>> {
    let tree_id = commit_tree(&handle(), commit)?;
    let walk = Walk {
        queue: Mutex::new(Queue {
            pending: vec![(Vec::new(), tree_id)],
            open: 1,
            failed: false,
        }),
        changed: Condvar::new(),
        listed: AtomicUsize::new(0),
        max_entries,
        deadline,
    };
    let threads = resolve_threads(threads);
    let run = || walk.run(&handle());
    let parts: Vec<CoreResult<Vec<TreeEntry>>> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(run)).collect();
        let mut parts = vec![run()];
        parts.extend(
            helpers
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
        );
        parts
    });
    let mut entries = Vec::new();
    for part in parts {
        entries.extend(part?);
    }
    sort_and_mark(&mut entries);
    Ok(entries)
}

fn commit_tree(repo: &Objects, commit: &ObjectId) -> CoreResult<ObjectId> {
    let mut buf = Vec::new();
    let found = repo
        .try_find(commit, &mut buf)
        .map_err(|_| unreadable("cannot read the commit object"))?;
    match found {
        None => Err(CoreError::GitCommitMissing { found: "nothing" }),
        Some(data) if data.kind != gix_object::Kind::Commit => Err(CoreError::GitCommitMissing {
            found: kind_name(data.kind),
        }),
        Some(data) => gix_object::CommitRefIter::from_bytes(data.data, gix_hash::Kind::Sha1)
            .tree_id()
            .map_err(|_| unreadable("the commit object is corrupt")),
    }
}

/// The state the workers of one walk share.
struct Walk {
    queue: Mutex<Queue>,
    /// Signalled when trees are pushed, when the last open tree is done and
    /// when a worker fails: a worker with nothing to read waits for it.
    changed: Condvar,
    /// Entries listed so far, by every worker (the `max_entries` bound).
    listed: AtomicUsize,
    max_entries: usize,
    deadline: Option<Instant>,
}

struct Queue {
    /// Trees not yet read: (directory prefix, tree ID).
    pending: Vec<(Vec<u8>, ObjectId)>,
    /// Trees pushed and not yet finished; the walk is over at 0.
    open: usize,
    failed: bool,
}

impl Walk {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn run(&self, repo: &Objects) -> CoreResult<Vec<TreeEntry>> {
        let mut mine = Vec::new();
        let mut subtrees = Vec::new();
        let mut buf = Vec::new();
        loop {
            let (prefix, id) = {
                let mut queue = self.lock();
                loop {
                    if queue.failed || queue.open == 0 {
                        return Ok(mine);
                    }
                    if let Some(job) = queue.pending.pop() {
                        break job;
                    }
                    // Another worker is reading a tree that may hold subtrees.
                    queue = self
                        .changed
                        .wait(queue)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            let read = check_deadline(self.deadline).and_then(|()| {
                self.read_tree(repo, &mut buf, &prefix, &id, &mut mine, &mut subtrees)
            });
            let mut queue = self.lock();
            if let Err(err) = read {
                queue.failed = true;
                self.changed.notify_all();
                return Err(err);
            }
            queue.open += subtrees.len();
            queue.open -= 1;
            queue.pending.append(&mut subtrees);
            if queue.open == 0 || !queue.pending.is_empty() {
                self.changed.notify_all();
            }
        }
    }

    fn read_tree(
        &self,
        repo: &Objects,
        buf: &mut Vec<u8>,
        prefix: &[u8],
        id: &ObjectId,
        entries: &mut Vec<TreeEntry>,
        subtrees: &mut Vec<(Vec<u8>, ObjectId)>,
    ) -> CoreResult<()> {
        let tree = repo
            .find_tree_iter(id, buf)
            .map_err(|_| unreadable("a tree object is missing or corrupt"))?;
        for entry in tree {
            let entry = entry.map_err(|_| unreadable("a tree object is corrupt"))?;
            let mut path = Vec::with_capacity(prefix.len() + 1 + entry.filename.len());
            path.extend_from_slice(prefix);
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(entry.filename);
            let kind = match entry.mode.kind() {
                GixEntryKind::Tree => {
                    subtrees.push((path, entry.oid.to_owned()));
                    continue;
                }
                GixEntryKind::Blob => EntryKind::Blob,
                GixEntryKind::BlobExecutable => EntryKind::Executable,
                GixEntryKind::Link => EntryKind::Symlink,
                GixEntryKind::Commit => EntryKind::Submodule,
            };
            if self.listed.fetch_add(1, Ordering::Relaxed) >= self.max_entries {
                return Err(CoreError::GitTooManyEntries {
                    limit: self.max_entries as u64,
                });
            }
            let oid = entry.oid.to_owned();
            let size = match kind {
                // A gitlink names a commit of another repository.
                EntryKind::Submodule => Some(0),
                _ => header_size(repo, &oid)?,
            };
            entries.push(TreeEntry {
                path,
                kind,
                oid,
                size: size.unwrap_or(0),
                absent: size.is_none(),
                unusable: None,
            });
        }
        Ok(())
    }
}

/// Sorts a listing by path bytes and marks every entry that is no readable
/// file (bad path, symlink, submodule, a path listed twice, a blob the
/// object database does not hold). The one place
/// these rules are applied: a listing read back from the persistent cache
/// goes through it too, so the cache stores no verdict of these rules.
pub(super) fn sort_and_mark(entries: &mut [TreeEntry]) {
    // Path first; the rest only orders a path listed twice, so that the
    // listing does not depend on which worker of the walk found which copy.
    entries.sort_unstable_by(|a, b| {
        a.path
            .cmp(&b.path)
            .then_with(|| (a.oid, a.kind.as_str()).cmp(&(b.oid, b.kind.as_str())))
    });
    for entry in entries.iter_mut() {
        entry.unusable = if path_problem(&entry.path, false).is_some() {
            Some(SkipReason::PathInvalid)
        } else {
            match entry.kind {
                EntryKind::Symlink => Some(SkipReason::Symlink),
                EntryKind::Submodule => Some(SkipReason::Submodule),
                EntryKind::Blob | EntryKind::Executable if entry.absent => {
                    Some(SkipReason::Missing)
                }
                EntryKind::Blob | EntryKind::Executable => None,
            }
        };
    }
    // A crafted tree can name one path twice: neither copy is trustworthy.
    for i in 1..entries.len() {
        if entries[i].path == entries[i - 1].path {
            entries[i].unusable = Some(SkipReason::PathInvalid);
            entries[i - 1].unusable = Some(SkipReason::PathInvalid);
        }
    }
}

/// Looks up again every entry of a stored listing whose blob was absent when
/// it was listed: a blob fetched since is listed with its size and becomes
/// readable (only a `Missing` verdict changes; the other rules of
/// [`sort_and_mark`] do not depend on the blob). Returns how many arrived.
pub(super) fn recheck_absent(repo: &Objects, entries: &mut [TreeEntry]) -> CoreResult<usize> {
    let mut arrived = 0;
    for entry in entries.iter_mut().filter(|e| e.absent) {
        if let Some(size) = header_size(repo, &entry.oid)? {
            entry.size = size;
            entry.absent = false;
            if entry.unusable == Some(SkipReason::Missing) {
                entry.unusable = None;
            }
            arrived += 1;
        }
    }
    Ok(arrived)
}
