//! One commit's listing: entry kinds, why an entry is skipped, the filters
//! a query applies, and the walk over the commit's trees.

use std::time::Instant;

use gix_hash::ObjectId;
use gix_object::tree::EntryKind as GixEntryKind;
use gix_object::{Find, FindExt};

use super::objects::{check_deadline, kind_name, unreadable, Objects};
use super::paths::path_problem;
use crate::core::error::{CoreError, CoreResult};

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

/// Every non-directory entry of `commit`'s tree, sorted by path bytes, with
/// sizes still 0 (the store fills them from object headers).
pub(super) fn list_entries(
    repo: &Objects,
    commit: &ObjectId,
    max_entries: usize,
    deadline: Option<Instant>,
) -> CoreResult<Vec<TreeEntry>> {
    let mut buf = Vec::new();
    let found = repo
        .try_find(commit, &mut buf)
        .map_err(|_| unreadable("cannot read the commit object"))?;
    let tree_id = match found {
        None => return Err(CoreError::GitCommitMissing { found: "nothing" }),
        Some(data) if data.kind != gix_object::Kind::Commit => {
            return Err(CoreError::GitCommitMissing {
                found: kind_name(data.kind),
            })
        }
        Some(data) => gix_object::CommitRefIter::from_bytes(data.data, gix_hash::Kind::Sha1)
            .tree_id()
            .map_err(|_| unreadable("the commit object is corrupt"))?,
    };

    let mut entries = Vec::new();
    // Depth-first over (directory prefix, tree id); the sort below fixes the order.
    let mut pending: Vec<(Vec<u8>, ObjectId)> = vec![(Vec::new(), tree_id)];
    while let Some((prefix, id)) = pending.pop() {
        check_deadline(deadline)?;
        let tree = repo
            .find_tree_iter(&id, &mut buf)
            .map_err(|_| unreadable("a tree object is missing or corrupt"))?;
        for entry in tree {
            let entry = entry.map_err(|_| unreadable("a tree object is corrupt"))?;
            let mut path = Vec::with_capacity(prefix.len() + 1 + entry.filename.len());
            path.extend_from_slice(&prefix);
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(entry.filename);
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
                return Err(CoreError::GitTooManyEntries {
                    limit: max_entries as u64,
                });
            }
            entries.push(TreeEntry {
                path,
                kind,
                oid: entry.oid.to_owned(),
                size: 0,
                unusable: None,
            });
        }
    }
    sort_and_mark(&mut entries);
    Ok(entries)
}

/// Sorts a listing by path bytes and marks every entry that is no readable
/// file (bad path, symlink, submodule, a path listed twice). The one place
/// these rules are applied: a listing read back from the persistent cache
/// goes through it too, so the cache stores no verdict of these rules.
pub(super) fn sort_and_mark(entries: &mut [TreeEntry]) {
    entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    for entry in entries.iter_mut() {
        entry.unusable = if path_problem(&entry.path, false).is_some() {
            Some(SkipReason::PathInvalid)
        } else {
            match entry.kind {
                EntryKind::Symlink => Some(SkipReason::Symlink),
                EntryKind::Submodule => Some(SkipReason::Submodule),
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
