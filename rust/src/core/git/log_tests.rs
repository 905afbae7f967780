//! The first-parent log on a repository made with `git`, checked against
//! `git log --first-parent` and `git diff-tree --no-renames` as the reference.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::log::LogQuery;
use super::tests::git;
use super::GitStore;

fn repo(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vba-log-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    dir
}

/// Commits the work tree as it is, at `time`, by `author`.
fn commit(dir: &Path, time: i64, author: &str, message: &str) -> String {
    git(dir, &["add", "-A"]);
    let date = format!("@{time} +0000");
    let out = Command::new("git")
        .args([
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
        ])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", author)
        .env("GIT_AUTHOR_EMAIL", "a@example.invalid")
        .env("GIT_COMMITTER_NAME", "c")
        .env("GIT_COMMITTER_EMAIL", "c@example.invalid")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .unwrap();
    assert!(out.status.success());
    git(dir, &["rev-parse", "HEAD"])
}

fn write(dir: &Path, path: &str, text: &str) {
    let file = dir.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

fn query(max_commits: usize) -> LogQuery {
    LogQuery {
        max_commits,
        max_files: 100,
        max_message_bytes: 4096,
    }
}

/// `git`'s view: (commit, author, author time, subject, name-status lines).
fn reference(dir: &Path, head: &str) -> Vec<(String, String, i64, String, Vec<String>)> {
    let log = git(
        dir,
        &[
            "log",
            "--first-parent",
            "--format=%H%x09%P%x09%an%x09%at%x09%s",
            head,
        ],
    );
    log.lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let first_parent = f[1].split(' ').next().unwrap_or("");
            let diff = if first_parent.is_empty() {
                git(
                    dir,
                    &[
                        "diff-tree",
                        "-r",
                        "--root",
                        "--no-renames",
                        "--name-status",
                        "--no-commit-id",
                        f[0],
                    ],
                )
            } else {
                git(
                    dir,
                    &[
                        "diff-tree",
                        "-r",
                        "--no-renames",
                        "--name-status",
                        first_parent,
                        f[0],
                    ],
                )
            };
            let files = diff.lines().map(|l| l.replace('\t', " ")).collect();
            (
                f[0].to_owned(),
                f[2].to_owned(),
                f[3].parse().unwrap(),
                f[4].to_owned(),
                files,
            )
        })
        .collect()
}

fn ours(
    store: &GitStore,
    head: &str,
    max: usize,
) -> Vec<(String, String, i64, String, Vec<String>)> {
    let outcome = store.first_parent_log(head, &query(max), 2, None).unwrap();
    outcome
        .commits
        .iter()
        .map(|c| {
            let files = c
                .files
                .iter()
                .map(|f| {
                    let status = match f.status {
                        super::FileStatus::Added => "A",
                        super::FileStatus::Deleted => "D",
                        super::FileStatus::Modified => "M",
                    };
                    format!("{status} {}", String::from_utf8_lossy(&f.path))
                })
                .collect();
            let subject = c.message.lines().next().unwrap_or("").to_owned();
            (
                c.oid.to_string(),
                c.author_name.clone(),
                c.author_time,
                subject,
                files,
            )
        })
        .collect()
}

#[test]
fn the_log_is_gits_first_parent_log_with_its_tree_diffs() {
    let dir = repo("main");
    write(&dir, "src/a.cpp", "a\n");
    write(&dir, "sql/base/dump.sql", "INSERT INTO t VALUES (1);\n");
    commit(&dir, 1_000, "Ann", "Initial import");
    write(&dir, "src/a.cpp", "a2\n");
    commit(
        &dir,
        2_000,
        "Bob",
        "Core/Quest: fix 14395 (#33)\n\nCloses #12",
    );
    git(&dir, &["checkout", "-q", "-b", "side"]);
    write(&dir, "src/game/b.cpp", "b\n");
    commit(&dir, 3_000, "Cid", "side work");
    git(&dir, &["checkout", "-q", "main"]);
    std::fs::remove_file(dir.join("sql/base/dump.sql")).unwrap();
    commit(&dir, 4_000, "Dee", "drop the dump");
    let out = Command::new("git")
        .args([
            "-c",
            "commit.gpgsign=false",
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge side",
            "side",
        ])
        .current_dir(&dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Eve")
        .env("GIT_AUTHOR_EMAIL", "e@example.invalid")
        .env("GIT_COMMITTER_NAME", "Eve")
        .env("GIT_COMMITTER_EMAIL", "e@example.invalid")
        .env("GIT_AUTHOR_DATE", "@5000 +0000")
        .env("GIT_COMMITTER_DATE", "@5000 +0000")
        .output()
        .unwrap();
    assert!(out.status.success());
    let head = git(&dir, &["rev-parse", "HEAD"]);
    let store = GitStore::open(&dir, 1 << 20, None).unwrap();
    let expected = reference(&dir, &head);
    assert_eq!(
        expected.len(),
        4,
        "the side commit is not on the first-parent line"
    );
    assert_eq!(ours(&store, &head, 100), expected);
    // A second walk is answered by the cache, and the same.
    assert_eq!(store.log_cache_len(), 4);
    let again = store.first_parent_log(&head, &query(100), 1, None).unwrap();
    assert_eq!(again.cached, 4);
    assert_eq!(ours(&store, &head, 100), expected);
    // Bounded: two commits, and the line goes on.
    let two = store.first_parent_log(&head, &query(2), 1, None).unwrap();
    assert_eq!(two.commits.len(), 2);
    assert!(two.more);
    assert!(!again.more);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn file_lists_and_messages_are_bounded_and_the_cache_keeps_the_bounds() {
    let dir = repo("bounds");
    for i in 0..5 {
        write(&dir, &format!("f{i}.txt"), "x\n");
    }
    let message = format!("subject\n\n{}", "é".repeat(100));
    let head = commit(&dir, 1_000, "Ann", &message);
    let store = GitStore::open(&dir, 1 << 20, None).unwrap();
    let small = LogQuery {
        max_commits: 10,
        max_files: 2,
        max_message_bytes: 10,
    };
    let out = store.first_parent_log(&head, &small, 1, None).unwrap();
    let c = &out.commits[0];
    assert_eq!((c.files.len(), c.files_total), (2, 5));
    assert!(c.message_truncated);
    assert_eq!(c.message, "subject\n\n");
    // Larger bounds than the cached entry's: read again, whole.
    let out = store.first_parent_log(&head, &query(10), 1, None).unwrap();
    assert_eq!(out.cached, 0);
    let c = &out.commits[0];
    assert_eq!((c.files.len(), c.files_total), (5, 5));
    assert!(!c.message_truncated);
    // Smaller again: the cache answers, narrowed.
    let out = store.first_parent_log(&head, &small, 1, None).unwrap();
    assert_eq!(out.cached, 1);
    assert_eq!(out.commits[0].files.len(), 2);
    assert!(out.commits[0].message_truncated);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_start_is_a_typed_error() {
    let dir = repo("unknown");
    write(&dir, "a", "a");
    commit(&dir, 1_000, "Ann", "one");
    let store = GitStore::open(&dir, 1 << 20, None).unwrap();
    let missing = "0123456789abcdef0123456789abcdef01234567";
    assert!(store.first_parent_log(missing, &query(5), 1, None).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
