//! What a range of commits changed in lines that name given terms: the
//! pure parts of `source.changes` (term lines, the line diff, the tree
//! diff, commit metadata). `store` runs them over a commit range.
//!
//! # Terms
//! A term is 1 to 256 identifier bytes (`[A-Za-z0-9_]`: an entity ID, a
//! ScriptName, a constant). It matches where it stands as a whole word: the
//! bytes on both sides are no identifier bytes (or the text's edge), the
//! token-boundary rule of `line_search`'s symbol mode, here allowed for
//! words that start with a digit. All terms are found in one overlapping
//! Aho-Corasick pass (linear in the text plus one step per occurrence, at
//! most one per term and byte), so a rejected occurrence never hides an
//! accepted one.
//!
//! # The line diff
//! A commit's change to a file is the difference, as multisets of line
//! texts, between the old and the new blob's lines that hold a term: a
//! text the new blob holds `n` times and the old one `o` times is added
//! `n - o` times (or removed `o - n` times). For every edit script a line
//! diff can produce (git's Myers or histogram alike), the lines it adds
//! minus the lines it removes, counted per text, are exactly this
//! difference; a diff only adds pairs of one text removed and added again
//! (a moved line), which say nothing about the text. So the answer is
//! exact and independent of diff heuristics, and costs one hash per term
//! line. Which occurrence is named: the first `min(n, o)` occurrences of a
//! text in the new blob pair with the first ones in the old blob, in line
//! order; the unpaired later ones are the change.
//!
//! Renames are not detected: a moved file's term lines are removed at the
//! old path and added at the new one (`git log -p --no-renames`).

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use gix_hash::ObjectId;
use gix_object::commit::ref_iter::Token;
use gix_object::tree::EntryKind as GixEntryKind;
use gix_object::{Find, FindExt};

use super::objects::{unreadable, Objects};
use super::tree::SkipReason;
use crate::core::error::{CoreError, CoreResult};
use crate::core::line_search::at_token_boundary;
use crate::core::text::count_newlines;

/// Longest term, in bytes.
pub const MAX_TERM_BYTES: usize = 256;
/// Most terms of one query.
pub const MAX_TERMS: usize = 32;

/// The terms of one query, compiled once.
pub struct Terms {
    searcher: AhoCorasick,
}

/// A line that holds a term: 0-based line, the first term of the query's
/// list it holds, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermLine {
    pub line: u32,
    pub term: u16,
    pub text: String,
}

impl Terms {
    pub fn new<S: AsRef<str>>(terms: &[S]) -> CoreResult<Self> {
        if terms.is_empty() || terms.len() > MAX_TERMS {
            return Err(CoreError::GitRequestInvalid {
                what: "terms must be 1 to 32 words",
            });
        }
        for term in terms {
            let term = term.as_ref().as_bytes();
            if term.is_empty()
                || term.len() > MAX_TERM_BYTES
                || !term.iter().all(|&b| b == b'_' || b.is_ascii_alphanumeric())
            {
                return Err(CoreError::GitRequestInvalid {
                    what: "a term must be 1 to 256 letters, digits or underscores",
                });
            }
        }
        let searcher = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(terms.iter().map(AsRef::as_ref))
            .or_else(|_| {
                // A DFA over 32 long terms may pass the builder's size
                // limit; the NFA answers the same.
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .build(terms.iter().map(AsRef::as_ref))
            })
            .map_err(|_| CoreError::GitRequestInvalid {
                what: "the terms cannot be compiled",
            })?;
        Ok(Terms { searcher })
    }

    /// Every line of `text` (a decoded text: lines end at `\n`) that holds
    /// a term as a whole word, in line order.
    pub fn lines(&self, text: &str) -> Vec<TermLine> {
        let bytes = text.as_bytes();
        let mut found: Vec<(u32, u16, usize)> = Vec::new();
        let (mut pos, mut line) = (0usize, 0u32);
        // Occurrences come by end offset; a term holds no line break, so an
        // occurrence lies on the line of its last byte.
        for hit in self.searcher.find_overlapping_iter(bytes) {
            if !at_token_boundary(bytes, hit.start(), hit.end()) {
                continue;
            }
            let last = hit.end() - 1;
            line += count_newlines(&bytes[pos..last]) as u32;
            pos = last;
            let term = hit.pattern().as_u32() as u16;
            match found.last_mut() {
                Some((at, first, _)) if *at == line => *first = (*first).min(term),
                _ => found.push((line, term, last)),
            }
        }
        found
            .into_iter()
            .map(|(line, term, inside)| {
                let start = memchr::memrchr(b'\n', &bytes[..inside]).map_or(0, |i| i + 1);
                let end =
                    memchr::memchr(b'\n', &bytes[inside..]).map_or(bytes.len(), |i| inside + i);
                TermLine {
                    line,
                    term,
                    text: text[start..end].to_owned(),
                }
            })
            .collect()
    }
}

/// The term lines a change removed from `old` and added in `new` (indexes
/// into each, in line order): the multiset difference of the module doc.
pub fn unpaired(old: &[TermLine], new: &[TermLine]) -> (Vec<usize>, Vec<usize>) {
    let mut by_text: HashMap<&str, (Vec<usize>, Vec<usize>)> = HashMap::new();
    for (i, line) in old.iter().enumerate() {
        by_text.entry(&line.text).or_default().0.push(i);
    }
    for (i, line) in new.iter().enumerate() {
        by_text.entry(&line.text).or_default().1.push(i);
    }
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    for (olds, news) in by_text.into_values() {
        let paired = olds.len().min(news.len());
        removed.extend_from_slice(&olds[paired..]);
        added.extend_from_slice(&news[paired..]);
    }
    removed.sort_unstable();
    added.sort_unstable();
    (removed, added)
}

/// One side of a changed path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// No entry at this path on this side.
    Absent,
    /// A regular file (executable or not) with this blob.
    File(ObjectId),
    /// An entry that is no regular file (symlink, submodule): no lines.
    Other(SkipReason),
}

/// A path whose entry differs between a commit and its first parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePair {
    pub path: Vec<u8>,
    pub old: Side,
    pub new: Side,
}

/// The paths (below `prefix`) whose entries differ between the trees
/// `old` (None: the empty tree of a root commit) and `new`, in path byte
/// order. Subtrees with the same ID on both sides are never read, so the
/// cost is the trees the change touches. A change of mode only is none.
///
/// Both trees are walked side by side in git's entry order (names compared
/// bytewise, a tree's name as if it ended in `/`), as `git diff-tree` does:
/// an entry equal on both sides costs one comparison and no allocation; only
/// a changed path is copied out.
pub fn changed_files(
    repo: &Objects,
    old: Option<ObjectId>,
    new: ObjectId,
    prefix: Option<&[u8]>,
) -> CoreResult<Vec<FilePair>> {
    let mut out = Vec::new();
    let mut pending: Vec<(Vec<u8>, Option<ObjectId>, Option<ObjectId>)> =
        vec![(Vec::new(), old, Some(new))];
    let (mut old_buf, mut new_buf) = (Vec::new(), Vec::new());
    while let Some((dir, old, new)) = pending.pop() {
        if old == new {
            continue;
        }
        let olds = read_tree(repo, old, &mut old_buf)?;
        let news = read_tree(repo, new, &mut new_buf)?;
        let (mut i, mut j) = (0, 0);
        while i < olds.len() || j < news.len() {
            let order = match (olds.get(i), news.get(j)) {
                (Some(a), Some(b)) => git_order(a, b),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            let (before, after) = match order {
                std::cmp::Ordering::Less => {
                    i += 1;
                    (olds.get(i - 1), None)
                }
                std::cmp::Ordering::Greater => {
                    j += 1;
                    (None, news.get(j - 1))
                }
                std::cmp::Ordering::Equal => {
                    i += 1;
                    j += 1;
                    let (a, b) = (&olds[i - 1], &news[j - 1]);
                    if a.oid == b.oid && a.side == b.side {
                        continue; // the same entry: nothing below it changed
                    }
                    (Some(a), Some(b))
                }
            };
            let name = before.or(after).map(|e| e.name).unwrap_or_default();
            let mut path = dir.clone();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(name);
            let subtree = |e: Option<&Entry<'_>>| e.filter(|e| e.is_tree).map(|e| e.oid);
            let (old_dir, new_dir) = (subtree(before), subtree(after));
            if (old_dir.is_some() || new_dir.is_some()) && may_hold(&path, prefix) {
                pending.push((path.clone(), old_dir, new_dir));
            }
            let side = |e: Option<&Entry<'_>>| match e {
                None => Side::Absent,
                Some(e) if e.is_tree => Side::Absent,
                Some(e) => e.side,
            };
            let (old_side, new_side) = (side(before), side(after));
            let unchanged = match (old_side, new_side) {
                (Side::File(a), Side::File(b)) => a == b,
                (Side::Absent | Side::Other(_), Side::Absent | Side::Other(_)) => true,
                _ => false,
            };
            if !unchanged && prefix.is_none_or(|p| path.starts_with(p)) {
                out.push(FilePair {
                    path,
                    old: old_side,
                    new: new_side,
                });
            }
        }
    }
    out.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// git's tree entry order: names bytewise, a tree's name as if followed by `/`.
fn git_order(a: &Entry<'_>, b: &Entry<'_>) -> std::cmp::Ordering {
    let common = a.name.len().min(b.name.len());
    match a.name[..common].cmp(&b.name[..common]) {
        std::cmp::Ordering::Equal => {}
        other => return other,
    }
    let next = |e: &Entry<'_>| match e.name.get(common) {
        Some(&byte) => byte,
        None if e.is_tree => b'/',
        None => 0,
    };
    next(a).cmp(&next(b))
}

/// Whether paths below directory `dir` can start with `prefix`.
fn may_hold(dir: &[u8], prefix: Option<&[u8]>) -> bool {
    let Some(prefix) = prefix else { return true };
    let mut below = dir.to_vec();
    below.push(b'/');
    below.starts_with(prefix) || prefix.starts_with(&below)
}

struct Entry<'a> {
    name: &'a [u8],
    oid: ObjectId,
    is_tree: bool,
    side: Side,
}

/// A tree's entries in stored order, their names borrowed from `buf`; None: the
/// empty tree.
fn read_tree<'b>(
    repo: &Objects,
    id: Option<ObjectId>,
    buf: &'b mut Vec<u8>,
) -> CoreResult<Vec<Entry<'b>>> {
    let Some(id) = id else {
        return Ok(Vec::new());
    };
    let tree = repo
        .find_tree_iter(&id, buf)
        .map_err(|_| unreadable("a tree object is missing or corrupt"))?;
    let mut entries = Vec::new();
    for entry in tree {
        let entry = entry.map_err(|_| unreadable("a tree object is corrupt"))?;
        let oid = entry.oid.to_owned();
        let (is_tree, side) = match entry.mode.kind() {
            GixEntryKind::Tree => (true, Side::Absent),
            GixEntryKind::Blob | GixEntryKind::BlobExecutable => (false, Side::File(oid)),
            GixEntryKind::Link => (false, Side::Other(SkipReason::Symlink)),
            GixEntryKind::Commit => (false, Side::Other(SkipReason::Submodule)),
        };
        entries.push(Entry {
            name: entry.filename,
            oid,
            is_tree,
            side,
        });
    }
    Ok(entries)
}

/// What a listed commit says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitMeta {
    pub tree: ObjectId,
    /// Author time, seconds since the epoch (UTC).
    pub author_time: i64,
    /// The message's first line; None when the message is not UTF-8.
    pub summary: Option<String>,
}

pub fn read_commit_meta(
    repo: &Objects,
    oid: &ObjectId,
    buf: &mut Vec<u8>,
) -> CoreResult<CommitMeta> {
    let data = repo
        .try_find(oid, buf)
        .map_err(|_| unreadable("cannot read a commit object"))?
        .ok_or(unreadable("a commit of the range is missing"))?;
    if data.kind != gix_object::Kind::Commit {
        return Err(unreadable("a commit names a parent that is no commit"));
    }
    let (mut tree, mut author_time, mut summary) = (None, None, None);
    for token in gix_object::CommitRefIter::from_bytes(data.data, gix_hash::Kind::Sha1) {
        match token.map_err(|_| unreadable("a commit object is malformed"))? {
            Token::Tree { id } => tree = Some(id),
            Token::Author { signature } => author_time = Some(signature.seconds()),
            Token::Message(message) => {
                let first = message.split(|&b| b == b'\n').next().unwrap_or_default();
                let first = first.strip_suffix(b"\r").unwrap_or(first);
                summary = std::str::from_utf8(first).ok().map(str::to_owned);
            }
            _ => {}
        }
    }
    Ok(CommitMeta {
        tree: tree.ok_or(unreadable("a commit object has no tree"))?,
        author_time: author_time.ok_or(unreadable("a commit object has no author"))?,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(terms: &[&str], text: &str) -> Vec<(u32, u16, String)> {
        Terms::new(terms)
            .unwrap()
            .lines(text)
            .into_iter()
            .map(|l| (l.line, l.term, l.text))
            .collect()
    }

    #[test]
    fn terms_match_whole_words_only() {
        let text = "a 12345 b\nx123456\n_12345\n(12345)\nnpc_foo npc_foo_bar\n12345";
        assert_eq!(
            lines(&["12345", "npc_foo"], text),
            vec![
                (0, 0, "a 12345 b".to_owned()),
                (3, 0, "(12345)".to_owned()),
                (4, 1, "npc_foo npc_foo_bar".to_owned()),
                (5, 0, "12345".to_owned()),
            ]
        );
    }

    #[test]
    fn a_rejected_occurrence_hides_no_later_one() {
        // "ab" inside "abab" fails the boundary; the one after the space counts.
        assert_eq!(
            lines(&["ab", "b"], "abab ab"),
            vec![(0, 0, "abab ab".to_owned())]
        );
        // Overlapping terms: the line names the first term of the list it holds.
        assert_eq!(
            lines(&["b_c", "a_b_c"], "a_b_c"),
            vec![(0, 1, "a_b_c".to_owned())]
        );
        assert_eq!(lines(&["x", "a"], "a x"), vec![(0, 0, "a x".to_owned())]);
    }

    #[test]
    fn terms_are_words() {
        for bad in [&[][..], &[""], &["a b"], &["a-b"], &["\u{e9}"]] {
            assert!(Terms::new(bad).is_err(), "{bad:?}");
        }
        assert!(Terms::new(&["x".repeat(257)]).is_err());
        assert!(Terms::new(&vec!["x"; 33]).is_err());
        assert!(Terms::new(&vec!["x".repeat(256); 32]).is_ok());
    }

    fn term_lines(texts: &[&str]) -> Vec<TermLine> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| TermLine {
                line: i as u32,
                term: 0,
                text: (*t).to_owned(),
            })
            .collect()
    }

    #[test]
    fn the_diff_is_the_multiset_difference() {
        let old = term_lines(&["a", "b", "a", "c"]);
        let new = term_lines(&["b", "a", "d", "a", "a"]);
        // c removed; d and the third a added (the first two pair with the old ones).
        assert_eq!(unpaired(&old, &new), (vec![3], vec![2, 4]));
        assert_eq!(unpaired(&new, &new), (vec![], vec![]));
        assert_eq!(unpaired(&[], &new), (vec![], vec![0, 1, 2, 3, 4]));
    }

    #[test]
    fn entries_follow_gits_tree_order() {
        let oid = ObjectId::null(gix_hash::Kind::Sha1);
        let e = |name: &'static str, is_tree: bool| Entry {
            name: name.as_bytes(),
            oid,
            is_tree,
            side: Side::Absent,
        };
        use std::cmp::Ordering::*;
        // A tree sorts as if its name ended in '/': "lib" < "lib.h" < "lib/" < "lib0".
        assert_eq!(git_order(&e("lib", false), &e("lib.h", false)), Less);
        assert_eq!(git_order(&e("lib.h", false), &e("lib", true)), Less);
        assert_eq!(git_order(&e("lib", true), &e("lib0", false)), Less);
        assert_eq!(git_order(&e("lib", false), &e("lib", true)), Less);
        assert_eq!(git_order(&e("lib", true), &e("lib", true)), Equal);
    }

    #[test]
    fn prefixes_reach_into_directories() {
        assert!(may_hold(b"src", Some(b"src/game/")));
        assert!(may_hold(b"src", Some(b"sr")));
        assert!(may_hold(b"src/game", Some(b"src/")));
        assert!(!may_hold(b"sql", Some(b"src/")));
        assert!(!may_hold(b"srcx", Some(b"src/")));
    }
}
