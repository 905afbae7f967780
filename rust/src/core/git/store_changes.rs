//! `GitStore::changes`: the commits of `since..pinned` whose change to a
//! file adds or removes a line that names a term (`source.changes`).
//!
//! Bounded three ways, each stated in the outcome: the history walk that
//! finds the range visits at most `max_walk_commits` commits; at most
//! `max_commits` commits of the range are examined, newest first; their
//! changed files name at most `max_blobs` distinct blobs (a commit whose
//! blobs would pass the bound is not examined, nor is any older one). Each
//! examined commit is diffed against its first parent (`changes` module):
//! trees with equal IDs are skipped, every distinct blob is read once (from
//! the content caches when they hold it) and scanned for the terms while it
//! is in memory; only its term lines are kept.

use std::collections::HashMap;
use std::time::Instant;

use gix_hash::ObjectId;

use super::changes::{
    changed_files, read_commit_meta, unpaired, CommitMeta, FilePair, Side, TermLine, Terms,
};
use super::history::{self, Relation, RelationKind};
use super::objects::{check_deadline, header_size, parse_oid};
use super::paths::path_problem;
use super::store::GitStore;
use super::tree::SkipReason;
use crate::core::error::CoreResult;
use crate::core::parallel::try_map_with;

/// What one `changes` call asks.
#[derive(Debug, Clone, Copy)]
pub struct ChangesQuery<'a> {
    pub since: &'a str,
    pub pinned: &'a str,
    pub terms: &'a [String],
    pub prefix: Option<&'a [u8]>,
    pub max_walk_commits: u64,
    pub max_commits: usize,
    pub max_blobs: usize,
    pub max_file_bytes: u64,
    /// Most changed lines listed per commit (all are counted).
    pub max_changes: usize,
}

/// Why fewer commits than the range holds were examined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangesStop {
    CommitLimit,
    BlobLimit,
}

impl ChangesStop {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangesStop::CommitLimit => "commit_limit",
            ChangesStop::BlobLimit => "blob_limit",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeSide {
    Added,
    Removed,
}

impl ChangeSide {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeSide::Added => "added",
            ChangeSide::Removed => "removed",
        }
    }
}

/// A line a commit added (numbered in the new blob) or removed (in the old one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineChange {
    pub path: Vec<u8>,
    pub side: ChangeSide,
    /// 1-based.
    pub line: u32,
    pub text: String,
    pub blob: ObjectId,
    /// Index into the query's terms.
    pub term: u16,
}

#[derive(Debug, Clone)]
pub struct CommitChanges {
    pub oid: ObjectId,
    pub meta: CommitMeta,
    /// Every changed term line of the commit.
    pub changes_total: usize,
    /// The first `max_changes` of them, by path, removed before added.
    pub changes: Vec<LineChange>,
}

#[derive(Debug)]
pub struct ChangesOutcome {
    /// How `since` relates to the pinned commit; only an ancestor (or the
    /// same commit) has a range.
    pub relation: Relation,
    pub range_commits: usize,
    pub examined: usize,
    pub stop: Option<ChangesStop>,
    /// Distinct blobs the examined commits' changes name.
    pub blobs: usize,
    /// Examined commits with at least one changed term line, newest first.
    pub commits: Vec<CommitChanges>,
    /// Changed files of examined commits that were not compared, in commit
    /// then path order.
    pub skipped: Vec<(Vec<u8>, SkipReason)>,
}

/// One examined commit before its blobs are read.
struct Examined {
    oid: ObjectId,
    meta: CommitMeta,
    files: Vec<FilePair>,
}

type Scanned = Result<Vec<TermLine>, SkipReason>;

/// Blobs read per batch: the texts of one batch are in memory at once.
const BATCH: usize = 256;

impl GitStore {
    pub fn changes(
        &self,
        query: &ChangesQuery<'_>,
        threads: usize,
        deadline: Option<Instant>,
    ) -> CoreResult<ChangesOutcome> {
        let terms = Terms::new(query.terms)?;
        let (since, pinned) = (parse_oid(query.since)?, parse_oid(query.pinned)?);
        let (relation, range) = history::range(
            &self.handle(),
            &since,
            &pinned,
            query.max_walk_commits,
            deadline,
        )?;
        let mut outcome = ChangesOutcome {
            relation,
            range_commits: range.len(),
            examined: 0,
            stop: None,
            blobs: 0,
            commits: Vec::new(),
            skipped: Vec::new(),
        };
        if outcome.relation.kind != RelationKind::Ancestor {
            return Ok(outcome);
        }
        let mut range = range;
        if range.len() > query.max_commits {
            range.truncate(query.max_commits);
            outcome.stop = Some(ChangesStop::CommitLimit);
        }
        let examined = try_map_with(
            &range,
            threads,
            || (self.handle(), Vec::new()),
            |(repo, buf), commit| -> CoreResult<Examined> {
                check_deadline(deadline)?;
                let meta = read_commit_meta(repo, &commit.oid, buf)?;
                let parent_tree = match commit.first_parent {
                    Some(parent) => Some(read_commit_meta(repo, &parent, buf)?.tree),
                    None => None,
                };
                let files = changed_files(repo, parent_tree, meta.tree, query.prefix)?;
                Ok(Examined {
                    oid: commit.oid,
                    meta,
                    files,
                })
            },
        )?;
        let (examined, blobs) = within_blob_limit(examined, query.max_blobs, &mut outcome);
        outcome.blobs = blobs.len();
        let scanned = self.scan(&blobs, &terms, query.max_file_bytes, threads, deadline)?;
        for commit in examined {
            if let Some(found) = compare(commit, &scanned, query.max_changes, &mut outcome.skipped)
            {
                outcome.commits.push(found);
            }
        }
        Ok(outcome)
    }

    /// The term lines of each blob, or why it has none; read in batches
    /// so that only one batch of texts is in memory at a time.
    fn scan(
        &self,
        blobs: &[ObjectId],
        terms: &Terms,
        max_file_bytes: u64,
        threads: usize,
        deadline: Option<Instant>,
    ) -> CoreResult<HashMap<ObjectId, Scanned>> {
        // A partial clone leaves blobs out: those are `missing`, never read.
        let sizes = self.map_blobs(blobs, threads, deadline, |repo, _, oid| {
            header_size(repo, oid)
        })?;
        let mut scanned: HashMap<ObjectId, Scanned> = HashMap::with_capacity(blobs.len());
        let mut present: Vec<(ObjectId, u64)> = Vec::new();
        for (oid, size) in blobs.iter().zip(sizes) {
            match size {
                Some(size) => present.push((*oid, size)),
                None => {
                    scanned.insert(*oid, Err(SkipReason::Missing));
                }
            }
        }
        for batch in present.chunks(BATCH) {
            check_deadline(deadline)?;
            let loaded = self.load(batch, max_file_bytes, threads, deadline, false, |content| {
                content
                    .as_ref()
                    .map(|text| terms.lines(text.as_str()))
                    .map_err(|reason| *reason)
            })?;
            for ((oid, _), (_, lines)) in batch.iter().zip(loaded) {
                scanned.insert(*oid, lines);
            }
        }
        Ok(scanned)
    }
}

/// The examined commits up to the blob limit and the distinct blobs they
/// name, in first-use order.
fn within_blob_limit(
    examined: Vec<Examined>,
    max_blobs: usize,
    outcome: &mut ChangesOutcome,
) -> (Vec<Examined>, Vec<ObjectId>) {
    let mut seen: std::collections::HashSet<ObjectId> = std::collections::HashSet::new();
    let mut blobs = Vec::new();
    let mut kept = Vec::with_capacity(examined.len());
    for commit in examined {
        let fresh: Vec<ObjectId> = commit
            .files
            .iter()
            .filter(|pair| path_problem(&pair.path, false).is_none())
            .flat_map(|pair| [pair.old, pair.new])
            .filter_map(|side| match side {
                Side::File(oid) => Some(oid),
                _ => None,
            })
            .filter(|oid| !seen.contains(oid))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if blobs.len() + fresh.len() > max_blobs {
            outcome.stop = Some(ChangesStop::BlobLimit);
            break;
        }
        seen.extend(fresh.iter().copied());
        blobs.extend(fresh);
        kept.push(commit);
    }
    outcome.examined = kept.len();
    (kept, blobs)
}

/// The commit's changed term lines, or None when it has none; files that
/// could not be compared go to `skipped`.
fn compare(
    commit: Examined,
    scanned: &HashMap<ObjectId, Scanned>,
    max_changes: usize,
    skipped: &mut Vec<(Vec<u8>, SkipReason)>,
) -> Option<CommitChanges> {
    let mut changes = Vec::new();
    let mut total = 0usize;
    for pair in commit.files {
        if path_problem(&pair.path, false).is_some() {
            skipped.push((pair.path, SkipReason::PathInvalid));
            continue;
        }
        let (old, old_note) = side_lines(pair.old, scanned);
        let (new, new_note) = side_lines(pair.new, scanned);
        let (old, new) = match (old, new) {
            (Ok(old), Ok(new)) => (old, new),
            // A side without text (binary, not UTF-8, too large, missing):
            // the file is not compared, as `git log -p` shows no lines of a
            // binary file.
            (Err(reason), _) | (_, Err(reason)) => {
                skipped.push((pair.path, reason));
                continue;
            }
        };
        if let Some(reason) = old_note.or(new_note) {
            skipped.push((pair.path.clone(), reason));
        }
        let (removed, added) = unpaired(old, new);
        total += removed.len() + added.len();
        let blob = |side: Side| match side {
            Side::File(oid) => oid,
            _ => ObjectId::null(gix_hash::Kind::Sha1),
        };
        let listed = removed
            .iter()
            .map(|&i| (ChangeSide::Removed, &old[i], blob(pair.old)))
            .chain(
                added
                    .iter()
                    .map(|&i| (ChangeSide::Added, &new[i], blob(pair.new))),
            );
        for (side, line, blob) in listed {
            if changes.len() >= max_changes {
                break;
            }
            changes.push(LineChange {
                path: pair.path.clone(),
                side,
                line: line.line + 1,
                text: line.text.clone(),
                blob,
                term: line.term,
            });
        }
    }
    (total > 0).then_some(CommitChanges {
        oid: commit.oid,
        meta: commit.meta,
        changes_total: total,
        changes,
    })
}

/// The term lines of one side of a changed path; a side that is no
/// regular file (a symlink, a submodule) has none, and is noted.
fn side_lines(
    side: Side,
    scanned: &HashMap<ObjectId, Scanned>,
) -> (Result<&[TermLine], SkipReason>, Option<SkipReason>) {
    match side {
        Side::Absent => (Ok(&[]), None),
        Side::Other(reason) => (Ok(&[]), Some(reason)),
        Side::File(oid) => match scanned.get(&oid) {
            Some(Ok(lines)) => (Ok(lines.as_slice()), None),
            Some(Err(reason)) => (Err(*reason), None),
            None => (Err(SkipReason::Missing), None),
        },
    }
}
