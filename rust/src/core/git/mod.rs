//! Read-only access to one commit of a local git repository: the recursive
//! tree listing, the blobs it names, and line search over them.
//!
//! - `location`: where the repository's objects are (no configuration read);
//! - `paths`: which paths are plain enough to be named, searched and read;
//! - `tree`: one commit's listing, entry kinds, skip reasons, filters;
//! - `objects`: object IDs, headers, blob bytes, deadlines;
//! - `cache`: decoded blobs by blob ID, bounded in memory;
//! - `disk_cache`: the same, persistent, in files shared between processes
//!   (`disk_cache/`: `listing` the per-commit listing file, `segment` reading
//!   a segment, `write` writing one)
//!   (`mapped`: the one module that maps a file, and so uses `unsafe`);
//! - `history`: an abbreviated commit ID resolved, and a reported commit
//!   related to the pinned one by a bounded merge-base walk;
//! - `changes`: term lines, the line diff and the tree diff of a commit
//!   range (`source.changes`);
//! - `log`: the first-parent line of a commit, each commit with its author,
//!   message and changed files, cached per commit ("already fixed?");
//! - `store`: `GitStore`, the opened repository the bindings call.
//!
//! Dependencies point one way: `store` → `location`, `cache`, `disk_cache`,
//! `tree`, `history`, `changes`, `objects`; `history` → `objects`; `changes` →
//! `objects`, `tree` (its `SkipReason`); `cache` and `disk_cache` → `tree` (its `SkipReason`); `tree` → `paths`,
//! `objects`; `objects`, `paths` and `location` use no other module here.
//!
//! # Why an in-process reader (gix-odb) and not `git cat-file --batch`
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
//! Only the object database is opened (`gix-odb`, no repository facade):
//! no system, global, user or repository configuration beyond the object
//! format, no environment variables, no git binary, no refs. Replace refs
//! are never consulted, so an object ID always names the bytes that hash to
//! it. Alternates (`objects/info/alternates`) are followed, as git does.
//! Nothing here runs hooks, filters or textconv, reads the work tree or the
//! index, or writes anything.
//!
//! Errors are `CoreError`'s `Git*` variants (ProjectResearch errors in
//! Python); a core error met on the way keeps its own code.

pub mod cache;
pub mod changes;
pub mod disk_cache;
pub mod history;
pub mod location;
pub mod log;
mod mapped;
pub mod objects;
pub mod paths;
pub mod store;
mod store_changes;
pub mod tree;

#[cfg(test)]
mod disk_cache_tests;
#[cfg(test)]
mod history_tests;
#[cfg(test)]
mod log_tests;
#[cfg(test)]
mod phase_profile;
#[cfg(test)]
mod tests;

pub use cache::Content;
pub use history::{Incomplete, PrefixMatch, Relation, RelationKind};
pub use log::{FileChange, FileStatus, LogCommit, LogOutcome, LogQuery};
pub use objects::{deadline_after, parse_oid};
pub use paths::path_problem;
pub use store::{DiskCacheConfig, GitStore, SearchOutcome};
pub use store_changes::{
    ChangeSide, ChangesOutcome, ChangesQuery, ChangesStop, CommitChanges, LineChange,
};
pub use tree::{CommitTree, EntryKind, Filter, Selection, SkipReason, TreeEntry};
