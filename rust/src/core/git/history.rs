//! Commit history: a reported (possibly abbreviated) commit ID resolved in the
//! object database, and related to the pinned commit by a bounded walk.
//!
//! Uses `objects` only. The walk is git's merge-base walk ("paint down to
//! common"): both commits are pushed into one queue ordered by committer
//! time, newest first; each popped commit hands its side marks to its
//! parents. A commit marked by both sides that is not below another such
//! commit is a merge base; everything below a merge base is "stale". The walk
//! ends when only stale commits are queued and no queued commit could still
//! be the descendant of a commit marked by one side only (committer times
//! never decrease from parent to child, as git's own walk assumes; a history
//! whose clock went backwards can end it early, as it does git's).
//!
//! Each commit is loaded once and its marks change at most three times (one
//! side, both sides, stale), so the walk is linear in the commits it visits,
//! and it stops after `max_commits` of them.
//!
//! Why not `gix-revision`'s merge base: it names the bases but counts
//! neither side, and the count is what a report needs ("12 commits before the
//! pinned one"); counting takes this same walk, and the crate would add the
//! commit-graph and revwalk crates for it.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet};
use std::time::Instant;

use gix_hash::ObjectId;
use gix_object::commit::ref_iter::Token;
use gix_object::Find;

use super::objects::{check_deadline, commit_header, parse_oid, unreadable, Objects};
use crate::core::error::{CoreError, CoreResult};

/// Shortest abbreviation accepted (git's default abbreviation length).
pub const MIN_PREFIX_HEX: usize = 7;

/// The commits an abbreviated ID names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixMatch {
    /// Matching commits in ID order, at most `max_listed` of them.
    pub commits: Vec<ObjectId>,
    /// How many commits match (also those not listed).
    pub commit_count: usize,
    /// How many objects of another kind (blob, tree, tag) match.
    pub other_objects: usize,
}

/// Every commit whose ID starts with `hex` (7 to 40 hexadecimal digits, any case).
pub fn resolve_prefix(repo: &Objects, hex: &str, max_listed: usize) -> CoreResult<PrefixMatch> {
    if !(MIN_PREFIX_HEX..=40).contains(&hex.len()) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(CoreError::GitRequestInvalid {
            what: "revision must be 7 to 40 hexadecimal digits",
        });
    }
    let hex = hex.to_ascii_lowercase();
    let mut found: HashSet<ObjectId> = HashSet::new();
    if hex.len() == 40 {
        let oid = parse_oid(&hex)?;
        found.insert(oid);
    } else {
        let prefix =
            gix_hash::Prefix::from_hex(&hex).map_err(|_| CoreError::GitRequestInvalid {
                what: "revision must be 7 to 40 hexadecimal digits",
            })?;
        repo.lookup_prefix(prefix, Some(&mut found))
            .map_err(|_| unreadable("cannot read the object index"))?;
    }
    let mut commits = Vec::new();
    let mut other_objects = 0;
    for oid in found {
        match commit_header(repo, &oid) {
            Ok(()) => commits.push(oid),
            Err(CoreError::GitCommitMissing { found: "nothing" }) => {}
            Err(CoreError::GitCommitMissing { .. }) => other_objects += 1,
            Err(other) => return Err(other),
        }
    }
    commits.sort_unstable();
    let commit_count = commits.len();
    commits.truncate(max_listed);
    Ok(PrefixMatch {
        commits,
        commit_count,
        other_objects,
    })
}

/// How the reported commit relates to the pinned one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelationKind {
    Same,
    /// The reported commit is reachable from the pinned one.
    Ancestor,
    /// The pinned commit is reachable from the reported one.
    Descendant,
    /// Neither reaches the other; they share merge bases.
    Diverged,
    /// Neither reaches the other and they share no history.
    Unrelated,
    /// The walk stopped before it could tell (see `Relation::incomplete`).
    Undetermined,
}

impl RelationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RelationKind::Same => "same",
            RelationKind::Ancestor => "ancestor",
            RelationKind::Descendant => "descendant",
            RelationKind::Diverged => "diverged",
            RelationKind::Unrelated => "unrelated",
            RelationKind::Undetermined => "undetermined",
        }
    }
}

/// Why a walk could not tell the relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incomplete {
    /// It visited `max_commits` commits.
    WalkLimit,
    /// A parent commit is not in the object database (a shallow clone).
    HistoryMissing,
}

impl Incomplete {
    pub fn as_str(self) -> &'static str {
        match self {
            Incomplete::WalkLimit => "walk_limit",
            Incomplete::HistoryMissing => "history_missing",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relation {
    pub kind: RelationKind,
    /// Commits reachable from the pinned commit and not from the reported one
    /// (`None` when undetermined).
    pub pinned_only: Option<u64>,
    /// Commits reachable from the reported commit and not from the pinned one.
    pub reported_only: Option<u64>,
    /// The best common ancestors, newest first (ties in ID order).
    pub merge_bases: Vec<ObjectId>,
    pub commits_visited: u64,
    pub incomplete: Option<Incomplete>,
}

const PINNED: u8 = 1;
const REPORTED: u8 = 2;
const BOTH: u8 = PINNED | REPORTED;
/// Below a merge base: reachable from both sides through a common ancestor.
const STALE: u8 = 4;
/// Popped with both sides while not stale: a merge-base candidate.
const BASE: u8 = 8;

struct Node {
    oid: ObjectId,
    time: i64,
    parents: Vec<ObjectId>,
    marks: u8,
    queued: bool,
}

/// What looking up a commit of the walk found.
enum Loaded {
    At(usize),
    /// Not in the object database (a shallow clone's boundary).
    Missing,
    /// Loading it would pass the walk limit.
    OverLimit,
}

/// The state of one walk: the commits loaded so far and the queue.
struct Walk<'r> {
    repo: &'r Objects,
    nodes: Vec<Node>,
    index: gix_hashtable::HashMap<ObjectId, usize>,
    /// `(time, sequence, node)`: newest first, then first queued first.
    queue: BinaryHeap<(i64, Reverse<u64>, usize)>,
    pushed: u64,
    /// Queued nodes that are not stale: while there is one, bases may remain.
    queued_fresh: usize,
    /// Committer times of the nodes marked by one side only (a multiset).
    one_sided: BTreeMap<i64, u32>,
    max_commits: u64,
    missing_parent: bool,
    buf: Vec<u8>,
}

/// Relates `reported` to `pinned` (both full commit IDs of the repository),
/// visiting at most `max_commits` commits.
pub fn relate(
    repo: &Objects,
    reported: &ObjectId,
    pinned: &ObjectId,
    max_commits: u64,
    deadline: Option<Instant>,
) -> CoreResult<Relation> {
    walk_relation(repo, reported, pinned, max_commits, deadline).map(|(relation, _)| relation)
}

/// One commit of a range: its ID, committer time and first parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeCommit {
    pub oid: ObjectId,
    pub committer_time: i64,
    pub first_parent: Option<ObjectId>,
}

/// [`relate`], plus the commits reachable from `pinned` and not from
/// `since` (`git log since..pinned`) when the relation is known: newest
/// first by committer time, ties in ID order. The same walk counts
/// `pinned_only`, so the list holds exactly that many commits.
pub fn range(
    repo: &Objects,
    since: &ObjectId,
    pinned: &ObjectId,
    max_commits: u64,
    deadline: Option<Instant>,
) -> CoreResult<(Relation, Vec<RangeCommit>)> {
    let (relation, walk) = walk_relation(repo, since, pinned, max_commits, deadline)?;
    let Some(walk) = walk.filter(|_| relation.incomplete.is_none()) else {
        return Ok((relation, Vec::new()));
    };
    let mut commits: Vec<RangeCommit> = walk
        .nodes
        .iter()
        .filter(|node| node.marks & BOTH == PINNED)
        .map(|node| RangeCommit {
            oid: node.oid,
            committer_time: node.time,
            first_parent: node.parents.first().copied(),
        })
        .collect();
    commits.sort_by(|a, b| {
        b.committer_time
            .cmp(&a.committer_time)
            .then(a.oid.cmp(&b.oid))
    });
    Ok((relation, commits))
}

/// The relation and, unless the commits are the same, the walk that found it.
fn walk_relation<'r>(
    repo: &'r Objects,
    reported: &ObjectId,
    pinned: &ObjectId,
    max_commits: u64,
    deadline: Option<Instant>,
) -> CoreResult<(Relation, Option<Walk<'r>>)> {
    commit_header(repo, pinned)?;
    commit_header(repo, reported)?;
    if reported == pinned {
        let same = Relation {
            kind: RelationKind::Same,
            pinned_only: Some(0),
            reported_only: Some(0),
            merge_bases: vec![*pinned],
            commits_visited: 0,
            incomplete: None,
        };
        return Ok((same, None));
    }
    let mut walk = Walk {
        repo,
        nodes: Vec::new(),
        index: gix_hashtable::HashMap::default(),
        queue: BinaryHeap::new(),
        pushed: 0,
        queued_fresh: 0,
        one_sided: BTreeMap::new(),
        max_commits,
        missing_parent: false,
        buf: Vec::new(),
    };
    for (oid, side) in [(pinned, PINNED), (reported, REPORTED)] {
        match walk.load(oid)? {
            Loaded::At(at) => walk.mark(at, side),
            Loaded::Missing | Loaded::OverLimit => {
                return Ok((walk.stopped(Incomplete::WalkLimit), None))
            }
        }
    }
    let mut steps = 0u64;
    while walk.goes_on() {
        steps += 1;
        if steps.is_multiple_of(256) {
            check_deadline(deadline)?;
        }
        let Some((_, _, at)) = walk.queue.pop() else {
            break;
        };
        walk.nodes[at].queued = false;
        let mut marks = walk.nodes[at].marks;
        if marks & STALE == 0 {
            walk.queued_fresh -= 1;
            if marks & BOTH == BOTH {
                walk.nodes[at].marks |= BASE;
                marks |= STALE;
            }
        }
        for p in 0..walk.nodes[at].parents.len() {
            let parent = walk.nodes[at].parents[p];
            match walk.load(&parent)? {
                Loaded::At(index) => walk.mark(index, marks & (BOTH | STALE)),
                // Below a stale commit every commit is reachable from both
                // sides and counted by neither; below any other, counts are
                // unknown.
                Loaded::Missing => walk.missing_parent |= marks & STALE == 0,
                Loaded::OverLimit => return Ok((walk.stopped(Incomplete::WalkLimit), None)),
            }
        }
    }
    check_deadline(deadline)?;
    Ok((walk.outcome(), Some(walk)))
}

impl Walk<'_> {
    /// The node of `oid`, loaded on first use (its time and parent IDs only).
    fn load(&mut self, oid: &ObjectId) -> CoreResult<Loaded> {
        if let Some(&at) = self.index.get(oid) {
            return Ok(Loaded::At(at));
        }
        if self.nodes.len() as u64 >= self.max_commits {
            return Ok(Loaded::OverLimit);
        }
        let Some((time, parents)) = read_commit(self.repo, oid, &mut self.buf)? else {
            return Ok(Loaded::Missing);
        };
        let at = self.nodes.len();
        self.index.insert(*oid, at);
        self.nodes.push(Node {
            oid: *oid,
            time,
            parents,
            marks: 0,
            queued: false,
        });
        Ok(Loaded::At(at))
    }

    /// Adds `marks` to a node; a node whose marks change is queued (again),
    /// so that its parents learn the new marks too.
    fn mark(&mut self, at: usize, marks: u8) {
        let node = &mut self.nodes[at];
        let before = node.marks;
        let after = before | marks;
        if after == before {
            return;
        }
        node.marks = after;
        let (time, queued) = (node.time, node.queued);
        if is_one_sided(before) {
            remove_time(&mut self.one_sided, time);
        }
        if is_one_sided(after) {
            *self.one_sided.entry(time).or_insert(0) += 1;
        }
        let fresh = after & STALE == 0;
        if queued {
            if before & STALE == 0 && !fresh {
                self.queued_fresh -= 1;
            }
            return;
        }
        self.nodes[at].queued = true;
        self.pushed += 1;
        self.queue.push((time, Reverse(self.pushed), at));
        if fresh {
            self.queued_fresh += 1;
        }
    }

    fn goes_on(&self) -> bool {
        if self.queued_fresh > 0 {
            return true;
        }
        // Only stale commits are queued; one of them can still reach a
        // one-sided commit only if it is not older than that commit.
        match (self.queue.peek(), self.one_sided.keys().next()) {
            (Some(&(newest, _, _)), Some(&oldest_one_sided)) => newest >= oldest_one_sided,
            _ => false,
        }
    }

    fn stopped(&self, why: Incomplete) -> Relation {
        Relation {
            kind: RelationKind::Undetermined,
            pinned_only: None,
            reported_only: None,
            merge_bases: Vec::new(),
            commits_visited: self.nodes.len() as u64,
            incomplete: Some(why),
        }
    }

    fn outcome(&self) -> Relation {
        if self.missing_parent {
            return self.stopped(Incomplete::HistoryMissing);
        }
        let mut pinned_only = 0u64;
        let mut reported_only = 0u64;
        let mut bases: Vec<&Node> = Vec::new();
        for node in &self.nodes {
            match node.marks & BOTH {
                PINNED => pinned_only += 1,
                REPORTED => reported_only += 1,
                _ => {}
            }
            if node.marks & BASE != 0 && node.marks & STALE == 0 {
                bases.push(node);
            }
        }
        bases.sort_by(|a, b| b.time.cmp(&a.time).then(a.oid.cmp(&b.oid)));
        let merge_bases: Vec<ObjectId> = bases.iter().map(|node| node.oid).collect();
        let kind = if reported_only == 0 {
            RelationKind::Ancestor
        } else if pinned_only == 0 {
            RelationKind::Descendant
        } else if merge_bases.is_empty() {
            RelationKind::Unrelated
        } else {
            RelationKind::Diverged
        };
        Relation {
            kind,
            pinned_only: Some(pinned_only),
            reported_only: Some(reported_only),
            merge_bases,
            commits_visited: self.nodes.len() as u64,
            incomplete: None,
        }
    }
}

fn is_one_sided(marks: u8) -> bool {
    let sides = marks & BOTH;
    sides == PINNED || sides == REPORTED
}

fn remove_time(times: &mut BTreeMap<i64, u32>, time: i64) {
    if let Some(count) = times.get_mut(&time) {
        *count -= 1;
        if *count == 0 {
            times.remove(&time);
        }
    }
}

/// A commit's committer time and parent IDs (the only fields the walk reads),
/// or `None` when the object database does not hold it.
fn read_commit(
    repo: &Objects,
    oid: &ObjectId,
    buf: &mut Vec<u8>,
) -> CoreResult<Option<(i64, Vec<ObjectId>)>> {
    let Some(data) = repo
        .try_find(oid, buf)
        .map_err(|_| unreadable("cannot read a commit object"))?
    else {
        return Ok(None);
    };
    if data.kind != gix_object::Kind::Commit {
        return Err(unreadable("a commit names a parent that is no commit"));
    }
    let mut parents = Vec::new();
    for token in gix_object::CommitRefIter::from_bytes(data.data, gix_hash::Kind::Sha1) {
        match token.map_err(|_| unreadable("a commit object is malformed"))? {
            Token::Parent { id } => parents.push(id),
            Token::Committer { signature } => return Ok(Some((signature.seconds(), parents))),
            _ => {}
        }
    }
    Err(unreadable("a commit object has no committer"))
}
