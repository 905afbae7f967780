//! Behaviour of the git reader on a real repository made with `git`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::*;
use crate::core::line_search::Page;
use crate::core::CoreError;
pub(super) fn git(dir: &Path, args: &[&str]) -> String {
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
pub(super) fn repo(name: &str) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("vba-git-{name}-{}", std::process::id()));
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

/// [`repo`] opened with a 1 MiB cache and listed on `threads` threads.
fn opened(name: &str, threads: usize) -> (PathBuf, String, GitStore, CommitTree) {
    let (dir, commit) = repo(name);
    let store = GitStore::open(&dir, 1 << 20, None).unwrap();
    let tree = store.tree(&commit, 100, threads, None).unwrap();
    (dir, commit, store, tree)
}

#[test]
fn lists_in_path_order_with_kinds_and_sizes() {
    let (dir, commit, store, tree) = opened("list", 2);
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
    let (dir, _, store, tree) = opened("search", 2);
    let selection = tree.select(&Filter::default(), 1 << 20);
    let page = Page {
        offset: 1,
        limit: 10,
    };
    let found = store
        .search(&tree, &selection, "literal", "foo", page, 2, None)
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
        .search(&tree, &selection, "literal", "foo", page, 2, None)
        .unwrap();
    assert_eq!(
        store.blobs_read(),
        read,
        "the second search is served from the cache"
    );
    let sql = tree.select_files(None, true, 1 << 20);
    let below_a = tree.select_files(Some(b"a/"), false, 1 << 20);
    assert_eq!(below_a.files, vec![1]);
    assert_eq!(sql.files, vec![1]);
    let small = tree.select(&Filter::default(), 10);
    assert!(small.skipped.contains(&(4, SkipReason::TooLarge)));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn missing_commit_and_bad_ids() {
    let (dir, commit) = repo("missing");
    let store = GitStore::open(&dir, 0, None).unwrap();
    let err = store.tree(&"1".repeat(40), 10, 1, None).unwrap_err();
    assert_eq!(err, CoreError::GitCommitMissing { found: "nothing" });
    let tree_id = git(&dir, &["rev-parse", &format!("{commit}^{{tree}}")]);
    let err = store.tree(&tree_id, 10, 1, None).unwrap_err();
    assert_eq!(err, CoreError::GitCommitMissing { found: "tree" });
    assert_eq!(
        store.tree("abc", 10, 1, None).unwrap_err().code(),
        "request_invalid"
    );
    let past = Some(Instant::now());
    assert_eq!(
        store.tree(&commit, 10, 1, past).unwrap_err(),
        CoreError::GitTimeout
    );
    assert!(GitStore::open(&dir.join("nope"), 0, None).is_err());
    std::fs::remove_dir_all(dir).unwrap();
}

/// What the bindings used to compose themselves: one core call each now.
#[test]
fn paths_texts_digests_and_request_errors() {
    let (dir, _, store, tree) = opened("calls", 0);
    let found: Vec<&[u8]> = tree
        .find_paths(b".", Some(b"a"))
        .map(|e| e.path.as_slice())
        .collect();
    assert_eq!(found, vec![&b"a.txt"[..], b"a/b/c.sql"]);
    let text = store.text(&tree, b"z.txt", 1 << 20, None).unwrap().unwrap();
    assert_eq!(text.line_count(), 3);
    let binary = store.text(&tree, b"bin.dat", 1 << 20, None).unwrap();
    assert!(matches!(binary, Err(SkipReason::Binary)));
    for not_a_file in [&b"link"[..], b"a/b", b"nope"] {
        let err = store.text(&tree, not_a_file, 1 << 20, None).unwrap_err();
        assert_eq!(err.code(), "request_invalid");
    }
    let blob = tree.find(b"z.txt").unwrap().oid.to_string();
    let expected = git(&dir, &["cat-file", "blob", &blob]);
    let digests = store.sha256_hex(&[blob.as_str()], 0, None).unwrap();
    assert_eq!(digests[0].len(), 64);
    let again = store.sha256_hex(&[blob], 1, None).unwrap();
    assert_eq!(digests, again);
    assert!(!expected.is_empty());
    assert_eq!(
        store.sha256_hex(&["xyz"], 1, None).unwrap_err().code(),
        "request_invalid"
    );
    let selection = tree.select(&Filter::default(), 1 << 20);
    let page = Page {
        offset: 0,
        limit: 1,
    };
    for (mode, pattern) in [
        ("regex", "foo"),
        ("symbol", "not an identifier"),
        ("literal", ""),
    ] {
        let err = store
            .search(&tree, &selection, mode, pattern, page, 1, None)
            .unwrap_err();
        assert_eq!(err.class(), crate::core::ErrorClass::Research, "{mode}");
        assert_eq!(err.code(), "request_invalid", "{mode}");
    }
    assert_eq!(deadline_after(-1.0).unwrap_err().code(), "request_invalid");
    assert_eq!(
        deadline_after(f64::NAN).unwrap_err().code(),
        "request_invalid"
    );
    assert_eq!(deadline_after(1e9).unwrap(), None);
    assert!(deadline_after(1.0).unwrap().is_some());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_listing_does_not_depend_on_the_thread_count() {
    // Enough nested trees that every worker of the walk reads some of them.
    let dir = std::env::temp_dir().join(format!("vba-git-walk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for d in 0..24 {
        let sub = dir.join(format!("d{d}/e{}", d % 5));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..6 {
            std::fs::write(sub.join(format!("f{f}.txt")), "x".repeat(d * 7 + f)).unwrap();
            std::fs::write(dir.join(format!("d{d}/top{f}")), format!("{d} {f}\n")).unwrap();
        }
    }
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "t"]);
    let commit = git(&dir, &["rev-parse", "HEAD"]);
    let store = GitStore::open(&dir, 0, None).unwrap();
    let listing = |threads| {
        let tree = store.tree(&commit, 1000, threads, None).unwrap();
        let entries: Vec<(Vec<u8>, String, u64)> = tree
            .entries()
            .iter()
            .map(|e| (e.path.clone(), e.oid.to_string(), e.size))
            .collect();
        entries
    };
    let one = listing(1);
    assert_eq!(one.len(), 24 * 12);
    assert!(one.windows(2).all(|w| w[0].0 < w[1].0));
    assert_eq!(one[0].2, 0, "d0/e0/f0.txt is empty");
    for threads in [2, 3, 8] {
        assert_eq!(listing(threads), one, "{threads} threads");
        // The bound counts the entries of every worker together.
        let over = store
            .tree(&commit, one.len() - 1, threads, None)
            .unwrap_err();
        assert_eq!(over.code(), "selection_too_large");
        assert!(store.tree(&commit, one.len(), threads, None).is_ok());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn texts_stored_as_deltas_read_like_any_other() {
    // Similar files packed by `git gc` become deltas of each other, whose
    // resolution grows the buffer the text is inflated into.
    let dir = std::env::temp_dir().join(format!("vba-git-delta-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let base: String = (0..2000)
        .map(|n| format!("line {n} of the base\n"))
        .collect();
    let files = [
        ("base.txt", base.clone()),
        (
            "changed.txt",
            base.replace("line 1000 ", "line one thousand "),
        ),
        ("crlf.txt", base.replace('\n', "\r\n")),
        ("bom.txt", format!("\u{feff}{base}extra\n")),
    ];
    for (name, body) in &files {
        std::fs::write(dir.join(name), body).unwrap();
    }
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "t"]);
    git(&dir, &["gc", "-q", "--aggressive"]);
    let bases = git(
        &dir,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(deltabase)",
        ],
    );
    assert!(
        bases.lines().any(|b| b.bytes().any(|c| c != b'0')),
        "no delta"
    );
    let commit = git(&dir, &["rev-parse", "HEAD"]);
    let store = GitStore::open(&dir, 1 << 20, None).unwrap();
    let tree = store.tree(&commit, 100, 2, None).unwrap();
    for (name, body) in &files {
        let text = store
            .text(&tree, name.as_bytes(), 1 << 20, None)
            .unwrap()
            .unwrap();
        let expected = body.trim_start_matches('\u{feff}').replace("\r\n", "\n");
        assert_eq!(text.as_str(), expected, "{name}");
        let id = tree.find(name.as_bytes()).unwrap().oid.to_string();
        let digest = store.sha256_hex(&[id], 1, None).unwrap();
        let want: String = Sha256::digest(body.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(digest, vec![want], "{name}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_missing_tree_fails_the_walk_on_any_thread_count() {
    let dir = std::env::temp_dir().join(format!("vba-git-broken-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for d in 0..8 {
        std::fs::create_dir_all(dir.join(format!("d{d}/sub"))).unwrap();
        std::fs::write(dir.join(format!("d{d}/sub/f.txt")), format!("{d}\n")).unwrap();
    }
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "t"]);
    let commit = git(&dir, &["rev-parse", "HEAD"]);
    // Loose objects (no gc): removing one subtree's file breaks the walk there.
    let sub = git(&dir, &["rev-parse", "HEAD:d5/sub"]);
    std::fs::remove_file(dir.join(".git/objects").join(&sub[..2]).join(&sub[2..])).unwrap();
    let store = GitStore::open(&dir, 0, None).unwrap();
    for threads in [1, 2, 4] {
        let err = store.tree(&commit, 1000, threads, None).unwrap_err();
        assert_eq!(err.code(), "repository_unavailable", "{threads} threads");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Removes the loose object `oid` of the repository at `dir` (what a
/// partial clone leaves out, for the object database).
pub(super) fn drop_object(dir: &Path, oid: &str) {
    std::fs::remove_file(dir.join(".git/objects").join(&oid[..2]).join(&oid[2..])).unwrap();
}

#[test]
fn an_absent_blob_is_a_skipped_file_and_the_others_are_searched() {
    let (dir, commit) = repo("absent");
    drop_object(&dir, &git(&dir, &["rev-parse", "HEAD:z.txt"]));
    let store = GitStore::open(&dir, 1 << 20, None).unwrap();
    for threads in [1, 2] {
        let tree = store.tree(&commit, 100, threads, None).unwrap();
        let z = tree.find(b"z.txt").unwrap();
        assert_eq!(
            (z.absent, z.size, z.unusable),
            (true, 0, Some(SkipReason::Missing))
        );
        let selection = tree.select(&Filter::default(), 1 << 20);
        let found = store
            .search(
                &tree,
                &selection,
                "literal",
                "foo",
                Page {
                    offset: 0,
                    limit: 10,
                },
                2,
                None,
            )
            .unwrap();
        assert_eq!(found.total, 2, "a.txt and a/b/c.sql still answer");
        assert!(found.skipped.contains(&(4, SkipReason::Missing)));
        assert_eq!(
            store
                .text(&tree, b"z.txt", 1 << 20, None)
                .unwrap()
                .unwrap_err(),
            SkipReason::Missing
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_listing_sees_a_blob_that_arrived_after_it_was_made() {
    let (dir, commit) = repo("arrived");
    let oid = git(&dir, &["rev-parse", "HEAD:z.txt"]);
    let file = dir.join(".git/objects").join(&oid[..2]).join(&oid[2..]);
    let bytes = std::fs::read(&file).unwrap();
    drop_object(&dir, &oid);
    let store = GitStore::open(&dir, 0, None).unwrap();
    let tree = store.tree(&commit, 100, 1, None).unwrap();
    assert!(tree.find(b"z.txt").unwrap().absent);
    assert!(
        store.refresh_absent(&tree).unwrap().is_none(),
        "still absent"
    );
    std::fs::write(&file, bytes).unwrap(); // what a fetch does for this blob
    let fresh = store.refresh_absent(&tree).unwrap().expect("it arrived");
    let z = fresh.find(b"z.txt").unwrap();
    assert_eq!((z.absent, z.unusable), (false, None));
    assert!(z.size > 0);
    assert!(store.text(&fresh, b"z.txt", 1 << 20, None).unwrap().is_ok());
    assert!(
        store.refresh_absent(&fresh).unwrap().is_none(),
        "nothing absent is left"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_blob_that_is_there_but_corrupt_still_fails_the_listing() {
    let (dir, commit) = repo("corrupt-blob");
    let oid = git(&dir, &["rev-parse", "HEAD:z.txt"]);
    let file = dir.join(".git/objects").join(&oid[..2]).join(&oid[2..]);
    // Loose objects are read-only: replaced, not written over.
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, b"not zlib at all").unwrap();
    let store = GitStore::open(&dir, 0, None).unwrap();
    let err = store.tree(&commit, 100, 1, None).unwrap_err();
    assert_eq!(err.code(), "repository_unavailable");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_blob_gone_after_listing_reads_as_missing_and_is_not_kept() {
    let (dir, commit) = repo("gone");
    let store = GitStore::open(&dir, 1 << 20, None).unwrap();
    let tree = store.tree(&commit, 100, 1, None).unwrap();
    let oid = git(&dir, &["rev-parse", "HEAD:z.txt"]);
    drop_object(&dir, &oid);
    assert_eq!(
        store
            .text(&tree, b"z.txt", 1 << 20, None)
            .unwrap()
            .unwrap_err(),
        SkipReason::Missing
    );
    // Back again: the verdict was not cached, the text is read.
    git(&dir, &["hash-object", "-w", "z.txt"]);
    assert!(store.text(&tree, b"z.txt", 1 << 20, None).unwrap().is_ok());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_nul_after_invalid_utf8_is_binary_and_latin1_text_is_not_utf8() {
    // A PNG starts with 0x89 (invalid UTF-8) and has its first NUL at byte 8;
    // a Latin-1 source has no NUL. Only the second can hide a text hit.
    let dir = std::env::temp_dir().join(format!("vba-git-png-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    std::fs::write(dir.join("latin1.cpp"), b"// caf\xe9 foo\n").unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "t"]);
    let commit = git(&dir, &["rev-parse", "HEAD"]);
    let store = GitStore::open(&dir, 1 << 20, None).unwrap();
    let tree = store.tree(&commit, 100, 1, None).unwrap();
    let png = store.text(&tree, b"logo.png", 1 << 20, None).unwrap();
    assert!(matches!(png, Err(SkipReason::Binary)), "{png:?}");
    let latin1 = store.text(&tree, b"latin1.cpp", 1 << 20, None).unwrap();
    assert!(matches!(latin1, Err(SkipReason::NotUtf8)), "{latin1:?}");
    std::fs::remove_dir_all(dir).unwrap();
}
