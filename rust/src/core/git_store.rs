//! Read-only access to one commit of a local git repository: the recursive
//! tree listing, the blobs it names, and line search over them.
//!
//! # Why an in-process reader (gix) and not `git cat-file --batch`
//! A search needs every blob of a selection inflated, and inflating is
//! nearly all of a cold search. Measured on a packed commit of 10,000 real
//! files (216 MB with binaries, 2 cores): `git cat-file --batch` alone
//! streams them in 0.6 s, as long as `git grep` at that commit takes (both
//! are zlib-bound; git grep inflates on 2 threads). gix reads the packs
//! in-process on every core with the `sirocco` inflater (about 2x zlib,
//! 1.25x zlib-rs here), and the per-file work (selection, cache lookups,
//! search) stays in Rust: a cold search is ~2.2x faster than `git grep` on
//! text-only trees and ~3x on the tree with binaries (one 45 MB file over the
//! size limit is never inflated). Numbers: `docs/benchmarks.md`, group
//! "git source.search ~10k files".
//!
//! # Isolation
//! The repository is opened with [`gix::open::Options::isolated`]: no
//! system, global or user configuration, no environment variables, no git
//! binary. Replace refs are off, so an object ID always names the bytes that
//! hash to it. Nothing here runs hooks, filters or textconv, reads the work
//! tree or the index, or writes anything.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind as GixEntryKind;
use gix::objs::{Find, FindExt, FindHeader};
use gix::ObjectId;
use sha2::{Digest, Sha256};

use super::git_cache::{BlobCache, Content};
use super::git_paths::path_problem;
use super::line_search::{self, CompiledQueries, Page, Query};
use super::text::SourceText;
use super::CoreError;

/// What can go wrong; every variant has a stable code and fixed phrases only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitError {
    /// The repository cannot be opened or its object database is damaged
    /// (missing object of a partial clone, corrupt pack).
    RepositoryUnavailable {
        what: &'static str,
    },
    /// No commit with this ID; `found` names the kind of object that is there instead.
    CommitMissing {
        found: &'static str,
    },
    /// The deadline passed.
    Timeout,
    /// The tree has more entries than the caller allows.
    TooManyEntries {
        limit: u64,
    },
    InvalidArgument {
        what: &'static str,
    },
}

impl GitError {
    pub fn code(&self) -> &'static str {
        match self {
            GitError::RepositoryUnavailable { .. } => "repository_unavailable",
            GitError::CommitMissing { .. } => "commit_missing",
            GitError::Timeout => "timeout",
            GitError::TooManyEntries { .. } => "selection_too_large",
            GitError::InvalidArgument { .. } => "request_invalid",
        }
    }
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GitError::RepositoryUnavailable { what } => {
                write!(f, "the git repository is not readable: {what}")
            }
            GitError::CommitMissing { found } => {
                write!(f, "the repository has no such commit (found: {found})")
            }
            GitError::Timeout => write!(f, "the git read did not finish in time"),
            GitError::TooManyEntries { limit } => {
                write!(f, "the commit's tree has more than {limit} entries")
            }
            GitError::InvalidArgument { what } => write!(f, "invalid argument: {what}"),
        }
    }
}

impl std::error::Error for GitError {}

impl From<CoreError> for GitError {
    fn from(err: CoreError) -> Self {
        match err {
            CoreError::InvalidArgument { what } => GitError::InvalidArgument { what },
            _ => GitError::InvalidArgument {
                what: "search arguments rejected",
            },
        }
    }
}

pub type GitResult<T> = Result<T, GitError>;

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
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// Full path as stored in the trees, `/`-separated; raw bytes.
    pub path: Vec<u8>,
    pub kind: EntryKind,
    pub oid: ObjectId,
    /// Blob size in bytes from the object header; 0 for submodules.
    pub size: u64,
    /// Why this entry is no readable file, or `None` for a regular file
    /// with a plain path.
    pub unusable: Option<SkipReason>,
}

/// One commit's files, sorted by path bytes (the order of `git ls-tree -r`).
#[derive(Debug)]
pub struct CommitTree {
    entries: Vec<TreeEntry>,
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
    pub fn accepts(&self, path: &[u8]) -> bool {
        self.prefix.as_ref().is_none_or(|p| path.starts_with(p))
            && (!self.sql_only
                || path.len() >= 4 && path[path.len() - 4..].eq_ignore_ascii_case(b".sql"))
            && self
                .path_contains
                .as_ref()
                .is_none_or(|needle| path.find(needle).is_some())
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

/// One page of a search over a selection.
#[derive(Debug)]
pub struct SearchOutcome {
    pub total: usize,
    pub files_searched: usize,
    /// The selection's skipped entries plus the files that turned out not to
    /// be text, in path order.
    pub skipped: Vec<(usize, SkipReason)>,
    /// `(entry index, 0-based line index, text)` of the page's hits.
    pub hits: Vec<(usize, u32, Arc<SourceText>)>,
}

impl CommitTree {
    pub fn entries(&self) -> &[TreeEntry] {
        &self.entries
    }

    /// The entry with exactly this path.
    pub fn find(&self, path: &[u8]) -> Option<&TreeEntry> {
        self.entries
            .binary_search_by(|e| e.path.as_slice().cmp(path))
            .ok()
            .map(|i| &self.entries[i])
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

/// An opened repository with its content cache, shareable between threads.
pub struct GitStore {
    repo: gix::ThreadSafeRepository,
    cache: Mutex<BlobCache>,
    blobs_read: AtomicU64,
}

impl GitStore {
    pub fn open(path: &std::path::Path, cache_bytes: u64) -> GitResult<Self> {
        let options = gix::open::Options::isolated()
            // An ID must always name the bytes that hash to it.
            .config_overrides(["core.useReplaceRefs=false"]);
        let repo = gix::ThreadSafeRepository::open_opts(path, options).map_err(|_| {
            GitError::RepositoryUnavailable {
                what: "cannot open the repository",
            }
        })?;
        if repo.to_thread_local().object_hash() != gix::hash::Kind::Sha1 {
            return Err(GitError::RepositoryUnavailable {
                what: "only SHA-1 repositories are supported",
            });
        }
        Ok(GitStore {
            repo,
            cache: Mutex::new(BlobCache::new(cache_bytes)),
            blobs_read: AtomicU64::new(0),
        })
    }

    /// How many blobs were inflated so far (a cached search inflates none).
    pub fn blobs_read(&self) -> u64 {
        self.blobs_read.load(Ordering::Relaxed)
    }

    /// `(entries, estimated bytes)` of the content cache.
    pub fn cache_stats(&self) -> (usize, u64) {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        (cache.len(), cache.bytes())
    }

    /// Every non-directory entry of the commit's tree, sorted by path bytes,
    /// with blob sizes from object headers (no blob is inflated).
    pub fn tree(
        &self,
        commit: &str,
        max_entries: usize,
        threads: usize,
        deadline: Option<Instant>,
    ) -> GitResult<CommitTree> {
        let commit = parse_oid(commit)?;
        let repo = self.repo.to_thread_local();
        let mut buf = Vec::new();
        let found = repo
            .objects
            .try_find(&commit, &mut buf)
            .map_err(|_| unreadable("cannot read the commit object"))?;
        let tree_id = match found {
            None => return Err(GitError::CommitMissing { found: "nothing" }),
            Some(data) if data.kind != gix::objs::Kind::Commit => {
                return Err(GitError::CommitMissing {
                    found: kind_name(data.kind),
                })
            }
            Some(data) => gix::objs::CommitRefIter::from_bytes(data.data, gix::hash::Kind::Sha1)
                .tree_id()
                .map_err(|_| unreadable("the commit object is corrupt"))?,
        };

        let mut entries = Vec::new();
        // Depth-first over (directory prefix, tree id); the sort below fixes the order.
        let mut pending: Vec<(Vec<u8>, ObjectId)> = vec![(Vec::new(), tree_id)];
        while let Some((prefix, id)) = pending.pop() {
            check_deadline(deadline)?;
            let tree = repo
                .objects
                .find_tree_iter(&id, &mut buf)
                .map_err(|_| unreadable("a tree object is missing or corrupt"))?;
            for entry in tree {
                let entry = entry.map_err(|_| unreadable("a tree object is corrupt"))?;
                let mut path = Vec::with_capacity(prefix.len() + 1 + entry.filename.len());
                path.extend_from_slice(&prefix);
                if !path.is_empty() {
                    path.push(b'/');
                }
                path.extend_from_slice(entry.filename.as_bytes());
                let kind = match entry.mode.kind() {
                    GixEntryKind::Tree => {
                        pending.push((path, entry.oid.to_owned()));
                        continue;
                    }
                    GixEntryKind::Blob => EntryKind::Blob,
                    GixEntryKind::BlobExecutable => EntryKind::Executable,
                    GixEntryKind::Link => EntryKind::Symlink,
                    GixEntryKind::Commit => EntryKind::Submodule,
                };
                if entries.len() >= max_entries {
                    return Err(GitError::TooManyEntries {
                        limit: max_entries as u64,
                    });
                }
                let unusable = if path_problem(&path, false).is_some() {
                    Some(SkipReason::PathInvalid)
                } else {
                    match kind {
                        EntryKind::Symlink => Some(SkipReason::Symlink),
                        EntryKind::Submodule => Some(SkipReason::Submodule),
                        EntryKind::Blob | EntryKind::Executable => None,
                    }
                };
                entries.push(TreeEntry {
                    path,
                    kind,
                    oid: entry.oid.to_owned(),
                    size: 0,
                    unusable,
                });
            }
        }
        entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        // A crafted tree can name one path twice: neither copy is trustworthy.
        for i in 1..entries.len() {
            if entries[i].path == entries[i - 1].path {
                entries[i].unusable = Some(SkipReason::PathInvalid);
                entries[i - 1].unusable = Some(SkipReason::PathInvalid);
            }
        }

        // Sizes from object headers (cheap: nothing is inflated), on every core.
        let with_blobs: Vec<usize> = (0..entries.len())
            .filter(|&i| entries[i].kind != EntryKind::Submodule)
            .collect();
        let sizes = self.map_blobs(&with_blobs, threads, deadline, |repo, &i| {
            header_size(repo, &entries[i].oid)
        })?;
        for (i, size) in with_blobs.into_iter().zip(sizes) {
            entries[i].size = size;
        }
        Ok(CommitTree { entries })
    }

    /// The decoded text (or skip reason) of each blob `(ID, listed size)`,
    /// from the cache or read on up to `threads` threads. A blob listed
    /// over `max_bytes` is `TooLarge` and never read.
    pub fn contents(
        &self,
        blobs: &[(ObjectId, u64)],
        max_bytes: u64,
        threads: usize,
        deadline: Option<Instant>,
    ) -> GitResult<Vec<Content>> {
        let mut out: Vec<Option<Content>> = Vec::with_capacity(blobs.len());
        let mut missing: Vec<(usize, ObjectId)> = Vec::new();
        {
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            for (i, &(oid, size)) in blobs.iter().enumerate() {
                if size > max_bytes {
                    out.push(Some(Err(SkipReason::TooLarge)));
                    continue;
                }
                let cached = cache.get(&oid);
                if cached.is_none() {
                    missing.push((i, oid));
                }
                out.push(cached);
            }
        }
        if !missing.is_empty() {
            // The same content under several paths is read once.
            let mut unique: Vec<ObjectId> = missing.iter().map(|&(_, oid)| oid).collect();
            unique.sort_unstable();
            unique.dedup();
            let loaded = self.map_blobs(&unique, threads, deadline, |repo, oid| {
                read_text(repo, oid, max_bytes)
            })?;
            self.blobs_read
                .fetch_add(unique.len() as u64, Ordering::Relaxed);
            for (i, oid) in missing {
                let at = unique.binary_search(&oid).unwrap_or_default();
                out[i] = Some(loaded[at].clone());
            }
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            cache.insert_many(
                unique
                    .into_iter()
                    .zip(loaded)
                    .filter(|(_, content)| !matches!(content, Err(SkipReason::TooLarge))),
            );
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// Reads the selection's files, then runs `query` over the texts and
    /// cuts one page. Texts are read on `threads` threads and searched on
    /// as many; the answer does not depend on the thread count.
    pub fn search(
        &self,
        tree: &CommitTree,
        selection: &Selection,
        query: &Query,
        page: Page,
        threads: usize,
        deadline: Option<Instant>,
    ) -> GitResult<SearchOutcome> {
        let blobs: Vec<(ObjectId, u64)> = selection
            .files
            .iter()
            .map(|&i| (tree.entries[i].oid, tree.entries[i].size))
            .collect();
        let contents = self.contents(&blobs, selection.max_file_bytes, threads, deadline)?;
        let mut skipped = selection.skipped.clone();
        let mut searched: Vec<usize> = Vec::with_capacity(contents.len());
        let mut texts: Vec<Arc<SourceText>> = Vec::with_capacity(contents.len());
        for (&index, content) in selection.files.iter().zip(contents) {
            match content {
                Ok(text) => {
                    searched.push(index);
                    texts.push(text);
                }
                Err(reason) => skipped.push((index, reason)),
            }
        }
        skipped.sort_unstable_by_key(|&(index, _)| index);
        let compiled = CompiledQueries::new(std::slice::from_ref(query))?;
        let refs: Vec<&SourceText> = texts.iter().map(Arc::as_ref).collect();
        let [result] = <[_; 1]>::try_from(line_search::search(&refs, &compiled, &[page], threads)?)
            .map_err(|_| GitError::InvalidArgument {
                what: "one page per query is required",
            })?;
        Ok(SearchOutcome {
            total: result.total,
            files_searched: texts.len(),
            skipped,
            hits: result
                .hits
                .into_iter()
                .map(|(t, line)| (searched[t], line, Arc::clone(&texts[t])))
                .collect(),
        })
    }

    /// SHA-256 of each blob's bytes (the provenance of a hit).
    pub fn sha256(
        &self,
        oids: &[ObjectId],
        threads: usize,
        deadline: Option<Instant>,
    ) -> GitResult<Vec<[u8; 32]>> {
        self.map_blobs(oids, threads, deadline, |repo, oid| {
            Ok(Sha256::digest(read_blob(repo, oid)?).into())
        })
    }

    /// Runs `work` for every item on up to `threads` scoped threads, each
    /// with its own repository handle (and so its own delta-base cache).
    /// Results keep the input order; the first error (or the deadline) stops
    /// every worker and is returned.
    fn map_blobs<T: Sync, R: Send>(
        &self,
        items: &[T],
        threads: usize,
        deadline: Option<Instant>,
        work: impl Fn(&gix::Repository, &T) -> GitResult<R> + Sync,
    ) -> GitResult<Vec<R>> {
        let threads = threads.clamp(1, items.len().max(1));
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let run = || -> GitResult<Vec<(usize, R)>> {
            let repo = self.repo.to_thread_local();
            let mut mine = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                match check_deadline(deadline).and_then(|()| work(&repo, item)) {
                    Ok(value) => mine.push((i, value)),
                    Err(err) => {
                        stop.store(true, Ordering::Relaxed);
                        return Err(err);
                    }
                }
            }
            Ok(mine)
        };
        let parts: Vec<GitResult<Vec<(usize, R)>>> = if threads == 1 {
            vec![run()]
        } else {
            std::thread::scope(|scope| {
                let workers: Vec<_> = (0..threads).map(|_| scope.spawn(run)).collect();
                workers
                    .into_iter()
                    .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        };
        let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
        for part in parts {
            for (i, value) in part? {
                slots[i] = Some(value);
            }
        }
        // Every index was claimed by exactly one worker and none failed.
        Ok(slots.into_iter().flatten().collect())
    }
}

pub fn parse_oid(hex: &str) -> GitResult<ObjectId> {
    let invalid = GitError::InvalidArgument {
        what: "object ID must be 40 hexadecimal digits",
    };
    if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid);
    }
    ObjectId::from_hex(hex.as_bytes()).map_err(|_| invalid)
}

fn header_size(repo: &gix::Repository, oid: &ObjectId) -> GitResult<u64> {
    let header = repo
        .objects
        .try_header(oid)
        .map_err(|_| unreadable("cannot read an object header"))?
        .ok_or(GitError::RepositoryUnavailable {
            what: "a blob of the commit is missing",
        })?;
    if header.kind != gix::objs::Kind::Blob {
        return Err(unreadable("a tree entry names an object that is no blob"));
    }
    Ok(header.size)
}

/// The blob's bytes in a buffer of their own (it becomes the text's storage).
fn read_blob(repo: &gix::Repository, oid: &ObjectId) -> GitResult<Vec<u8>> {
    let mut buf = Vec::new();
    let found = repo
        .objects
        .try_find(oid, &mut buf)
        .map_err(|_| unreadable("a blob is corrupt"))?;
    match found {
        None => Err(GitError::RepositoryUnavailable {
            what: "a blob of the commit is missing",
        }),
        Some(data) if data.kind != gix::objs::Kind::Blob => {
            Err(unreadable("a tree entry names an object that is no blob"))
        }
        Some(data) => {
            let len = data.data.len();
            buf.truncate(len);
            Ok(buf)
        }
    }
}

fn read_text(repo: &gix::Repository, oid: &ObjectId, max_bytes: u64) -> GitResult<Content> {
    let data = read_blob(repo, oid)?;
    if data.len() as u64 > max_bytes {
        // The listed size was wrong; still never decode past the limit.
        return Ok(Err(SkipReason::TooLarge));
    }
    match SourceText::decode(data) {
        Ok(text) => {
            // Build the line index now, while the text is still in cache:
            // the first search would otherwise read it from memory again.
            let _ = text.haystack();
            Ok(Ok(Arc::new(text)))
        }
        Err(CoreError::NulByte { .. }) => Ok(Err(SkipReason::Binary)),
        Err(_) => Ok(Err(SkipReason::NotUtf8)),
    }
}

fn check_deadline(deadline: Option<Instant>) -> GitResult<()> {
    match deadline {
        Some(at) if Instant::now() >= at => Err(GitError::Timeout),
        _ => Ok(()),
    }
}

fn unreadable(what: &'static str) -> GitError {
    GitError::RepositoryUnavailable { what }
}

fn kind_name(kind: gix::objs::Kind) -> &'static str {
    match kind {
        gix::objs::Kind::Blob => "blob",
        gix::objs::Kind::Tree => "tree",
        gix::objs::Kind::Commit => "commit",
        gix::objs::Kind::Tag => "tag",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?} failed");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// A repository with a text file, a CRLF file, a binary, a symlink and a
    /// nested file; returns (directory, commit).
    fn repo(name: &str) -> (PathBuf, String) {
        let dir = std::env::temp_dir().join(format!("vba-git-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        std::fs::write(dir.join("z.txt"), "one\nfoo two\nthree foo\n").unwrap();
        std::fs::write(dir.join("a.txt"), "x\r\nfoo\r\n").unwrap();
        std::fs::write(dir.join("a/b/c.sql"), "SELECT foo;\n").unwrap();
        std::fs::write(dir.join("bin.dat"), b"foo\0bar").unwrap();
        std::os::unix::fs::symlink("z.txt", dir.join("link")).unwrap();
        git(&dir, &["init", "-q"]);
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-q", "-m", "t"]);
        let commit = git(&dir, &["rev-parse", "HEAD"]);
        (dir, commit)
    }

    #[test]
    fn lists_in_path_order_with_kinds_and_sizes() {
        let (dir, commit) = repo("list");
        let store = GitStore::open(&dir, 1 << 20).unwrap();
        let tree = store.tree(&commit, 100, 2, None).unwrap();
        let listed: Vec<(&[u8], EntryKind, u64)> = tree
            .entries()
            .iter()
            .map(|e| (e.path.as_slice(), e.kind, e.size))
            .collect();
        assert_eq!(
            listed,
            vec![
                (&b"a.txt"[..], EntryKind::Blob, 8),
                (b"a/b/c.sql", EntryKind::Blob, 12),
                (b"bin.dat", EntryKind::Blob, 7),
                (b"link", EntryKind::Symlink, 5),
                (b"z.txt", EntryKind::Blob, 22),
            ]
        );
        assert!(tree.find(b"a/b/c.sql").is_some() && tree.find(b"a/b").is_none());
        assert_eq!(
            store.tree(&commit, 4, 1, None).unwrap_err().code(),
            "selection_too_large"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn searches_text_and_reports_skips() {
        let (dir, commit) = repo("search");
        let store = GitStore::open(&dir, 1 << 20).unwrap();
        let tree = store.tree(&commit, 100, 2, None).unwrap();
        let selection = tree.select(&Filter::default(), 1 << 20);
        let query = Query::new(line_search::SearchMode::Literal, "foo").unwrap();
        let page = Page {
            offset: 1,
            limit: 10,
        };
        let found = store
            .search(&tree, &selection, &query, page, 2, None)
            .unwrap();
        assert_eq!(found.total, 4);
        assert_eq!(found.files_searched, 3);
        let hits: Vec<(usize, u32)> = found.hits.iter().map(|(i, l, _)| (*i, *l)).collect();
        assert_eq!(hits, vec![(1, 0), (4, 1), (4, 2)]);
        assert_eq!(
            found.skipped,
            vec![(2, SkipReason::Binary), (3, SkipReason::Symlink)]
        );
        let read = store.blobs_read();
        store
            .search(&tree, &selection, &query, page, 2, None)
            .unwrap();
        assert_eq!(
            store.blobs_read(),
            read,
            "the second search is served from the cache"
        );
        let sql = tree.select(
            &Filter {
                sql_only: true,
                ..Filter::default()
            },
            1 << 20,
        );
        assert_eq!(sql.files, vec![1]);
        let small = tree.select(&Filter::default(), 10);
        assert!(small.skipped.contains(&(4, SkipReason::TooLarge)));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn missing_commit_and_bad_ids() {
        let (dir, commit) = repo("missing");
        let store = GitStore::open(&dir, 0).unwrap();
        let err = store.tree(&"1".repeat(40), 10, 1, None).unwrap_err();
        assert_eq!(err, GitError::CommitMissing { found: "nothing" });
        let tree_id = git(&dir, &["rev-parse", &format!("{commit}^{{tree}}")]);
        let err = store.tree(&tree_id, 10, 1, None).unwrap_err();
        assert_eq!(err, GitError::CommitMissing { found: "tree" });
        assert_eq!(
            store.tree("abc", 10, 1, None).unwrap_err().code(),
            "request_invalid"
        );
        let past = Some(Instant::now());
        assert_eq!(
            store.tree(&commit, 10, 1, past).unwrap_err(),
            GitError::Timeout
        );
        assert!(GitStore::open(&dir.join("nope"), 0).is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
