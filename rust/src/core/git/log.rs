//! The first-parent history of a commit, each commit with its author, its
//! message and the files it changes against its first parent
//! (`git log --first-parent --no-renames --name-status`): what the
//! "already fixed?" candidates read.
//!
//! Bounded: at most `max_commits` commits, at most `max_files` changed files
//! listed per commit (all are counted), a message cut at
//! `max_message_bytes`. The tree diff is `changes::changed_files` (subtrees
//! with equal IDs are never read; a mode change alone is none; symlinks and
//! submodules count as no file). A merge is diffed against its first parent,
//! so it shows what the merge brought to the line.
//!
//! Cached per commit (`LogCache`): a commit's entry depends on the commit
//! alone, so walks from many reports over one pinned history read each
//! commit and diff each tree once. The cache is bounded by entries; when it
//! is full it is emptied (a triage run refills it in one walk).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use gix_hash::ObjectId;
use gix_object::commit::ref_iter::Token;
use gix_object::Find;

use super::changes::{changed_files, Side};
use super::objects::{check_deadline, unreadable, Objects};
use crate::core::error::CoreResult;

/// How a listed file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStatus {
    Added,
    Deleted,
    Modified,
}

impl FileStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Added => "added",
            FileStatus::Deleted => "deleted",
            FileStatus::Modified => "modified",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: Vec<u8>,
    pub status: FileStatus,
    pub old: Option<ObjectId>,
    pub new: Option<ObjectId>,
}

/// One commit of the first-parent line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogCommit {
    pub oid: ObjectId,
    pub parents: Vec<ObjectId>,
    pub author_name: String,
    pub author_email: String,
    /// Seconds since the epoch (UTC).
    pub author_time: i64,
    pub committer_time: i64,
    /// The whole message (lossy UTF-8), cut at the request's byte bound.
    pub message: String,
    pub message_truncated: bool,
    /// Every changed file against the first parent (the root: against nothing).
    pub files_total: usize,
    /// The first `max_files` of them, in path byte order.
    pub files: Vec<FileChange>,
}

/// What one walk asks.
#[derive(Debug, Clone, Copy)]
pub struct LogQuery {
    pub max_commits: usize,
    pub max_files: usize,
    pub max_message_bytes: usize,
}

/// The walk's answer: newest first, and whether the line goes on beyond
/// the last commit listed (the commit bound stopped it).
#[derive(Debug, Clone)]
pub struct LogOutcome {
    pub commits: Vec<Arc<LogCommit>>,
    pub more: bool,
    /// Commits the cache answered (no object read).
    pub cached: usize,
}

/// Most entries the per-commit cache keeps.
const CACHE_ENTRIES: usize = 1 << 18;

/// Entries by commit, with the bounds they were made under.
#[derive(Default)]
pub struct LogCache {
    entries: Mutex<HashMap<ObjectId, (LogQueryKey, Arc<LogCommit>)>>,
}

/// The bounds an entry was made under: it answers a request whose bounds
/// it covers (or that its content fits whole).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LogQueryKey {
    max_files: usize,
    max_message_bytes: usize,
}

impl LogCache {
    fn get(&self, oid: &ObjectId, query: &LogQuery) -> Option<Arc<LogCommit>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let (key, commit) = entries.get(oid)?;
        let files_fit =
            key.max_files >= query.max_files || commit.files.len() == commit.files_total;
        let message_fits =
            key.max_message_bytes >= query.max_message_bytes || !commit.message_truncated;
        if !(files_fit && message_fits) {
            return None;
        }
        if commit.files.len() <= query.max_files && commit.message.len() <= query.max_message_bytes
        {
            return Some(Arc::clone(commit));
        }
        Some(Arc::new(cut(commit, query)))
    }

    fn put(&self, commit: Arc<LogCommit>, query: &LogQuery) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= CACHE_ENTRIES {
            entries.clear();
        }
        let key = LogQueryKey {
            max_files: query.max_files,
            max_message_bytes: query.max_message_bytes,
        };
        entries.insert(commit.oid, (key, commit));
    }

    pub fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A cached entry narrowed to smaller bounds.
fn cut(commit: &LogCommit, query: &LogQuery) -> LogCommit {
    let mut out = commit.clone();
    out.files.truncate(query.max_files);
    let (message, cut_here) = cut_message(&commit.message, query.max_message_bytes);
    out.message_truncated |= cut_here;
    out.message = message;
    out
}

/// The first-parent line from `start`, newest first.
pub fn first_parent_log(
    cache: &LogCache,
    handle: impl Fn() -> Objects + Sync,
    start: &ObjectId,
    query: &LogQuery,
    threads: usize,
    deadline: Option<Instant>,
) -> CoreResult<LogOutcome> {
    let repo = handle();
    let mut buf = Vec::new();
    // Walk: the cache or the commit object gives the first parent.
    let mut line: Vec<Result<Arc<LogCommit>, Header>> = Vec::new();
    let mut next = Some(*start);
    let mut cached = 0;
    while let Some(oid) = next {
        if line.len() >= query.max_commits {
            break;
        }
        if line.len() % 256 == 255 {
            check_deadline(deadline)?;
        }
        if let Some(commit) = cache.get(&oid, query) {
            next = commit.parents.first().copied();
            cached += 1;
            line.push(Ok(commit));
            continue;
        }
        let header = read_header(&repo, &oid, query.max_message_bytes, &mut buf)?;
        next = header.parents.first().copied();
        line.push(Err(header));
    }
    let more = next.is_some();
    let fresh: Vec<&Header> = line.iter().filter_map(|c| c.as_ref().err()).collect();
    let diffs = crate::core::parallel::try_map_with(
        &fresh,
        threads,
        || (handle(), Vec::new()),
        |(repo, buf), header| -> CoreResult<Vec<FileChange>> {
            check_deadline(deadline)?;
            let parent_tree = match header.parents.first() {
                Some(parent) => Some(read_header(repo, parent, 0, buf)?.tree),
                None => None,
            };
            let pairs = changed_files(repo, parent_tree, header.tree, None)?;
            Ok(pairs.into_iter().filter_map(file_change).collect())
        },
    )?;
    let mut diffs = diffs.into_iter();
    let mut commits = Vec::with_capacity(line.len());
    for entry in line {
        let commit = match entry {
            Ok(commit) => commit,
            Err(header) => {
                let mut files = diffs.next().unwrap_or_default();
                let files_total = files.len();
                files.truncate(query.max_files);
                let commit = Arc::new(LogCommit {
                    oid: header.oid,
                    parents: header.parents,
                    author_name: header.author_name,
                    author_email: header.author_email,
                    author_time: header.author_time,
                    committer_time: header.committer_time,
                    message: header.message,
                    message_truncated: header.message_truncated,
                    files_total,
                    files,
                });
                cache.put(Arc::clone(&commit), query);
                commit
            }
        };
        commits.push(commit);
    }
    Ok(LogOutcome {
        commits,
        more,
        cached,
    })
}

/// A file of the tree diff, or None when neither side is a regular file.
fn file_change(pair: super::changes::FilePair) -> Option<FileChange> {
    let blob = |side: Side| match side {
        Side::File(oid) => Some(oid),
        Side::Absent | Side::Other(_) => None,
    };
    let (old, new) = (blob(pair.old), blob(pair.new));
    let status = match (old, new) {
        (None, None) => return None,
        (None, Some(_)) => FileStatus::Added,
        (Some(_), None) => FileStatus::Deleted,
        (Some(_), Some(_)) => FileStatus::Modified,
    };
    Some(FileChange {
        path: pair.path,
        status,
        old,
        new,
    })
}

/// What a commit object says, before its diff.
#[derive(Debug)]
struct Header {
    oid: ObjectId,
    tree: ObjectId,
    parents: Vec<ObjectId>,
    author_name: String,
    author_email: String,
    author_time: i64,
    committer_time: i64,
    message: String,
    message_truncated: bool,
}

fn read_header(
    repo: &Objects,
    oid: &ObjectId,
    max_message_bytes: usize,
    buf: &mut Vec<u8>,
) -> CoreResult<Header> {
    let data = repo
        .try_find(oid, buf)
        .map_err(|_| unreadable("cannot read a commit object"))?
        .ok_or(unreadable("a commit of the first-parent line is missing"))?;
    if data.kind != gix_object::Kind::Commit {
        return Err(unreadable("a commit names a parent that is no commit"));
    }
    let mut header = Header {
        oid: *oid,
        tree: ObjectId::null(gix_hash::Kind::Sha1),
        parents: Vec::new(),
        author_name: String::new(),
        author_email: String::new(),
        author_time: 0,
        committer_time: 0,
        message: String::new(),
        message_truncated: false,
    };
    let (mut has_tree, mut has_author, mut has_committer) = (false, false, false);
    for token in gix_object::CommitRefIter::from_bytes(data.data, gix_hash::Kind::Sha1) {
        match token.map_err(|_| unreadable("a commit object is malformed"))? {
            Token::Tree { id } => {
                header.tree = id;
                has_tree = true;
            }
            Token::Parent { id } => header.parents.push(id),
            Token::Author { signature } => {
                header.author_name = String::from_utf8_lossy(signature.name).into_owned();
                header.author_email = String::from_utf8_lossy(signature.email).into_owned();
                header.author_time = signature.seconds();
                has_author = true;
            }
            Token::Committer { signature } => {
                header.committer_time = signature.seconds();
                has_committer = true;
            }
            Token::Message(message) => {
                let text = String::from_utf8_lossy(message);
                let (text, truncated) = cut_message(&text, max_message_bytes);
                header.message = text;
                header.message_truncated = truncated;
            }
            _ => {}
        }
    }
    if !(has_tree && has_author && has_committer) {
        return Err(unreadable(
            "a commit object lacks its tree, author or committer",
        ));
    }
    Ok(header)
}

/// `text` cut to at most `max_bytes` on a character boundary.
fn cut_message(text: &str, max_bytes: usize) -> (String, bool) {
    if text.len() <= max_bytes {
        return (text.to_owned(), false);
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_owned(), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_cut_on_character_boundaries() {
        assert_eq!(cut_message("abc", 3), ("abc".to_owned(), false));
        assert_eq!(cut_message("abc", 2), ("ab".to_owned(), true));
        // 'é' is two bytes: a cut inside it keeps the byte before.
        assert_eq!(cut_message("aé", 2), ("a".to_owned(), true));
        assert_eq!(cut_message("", 0), (String::new(), false));
    }
}
