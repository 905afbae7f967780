//! The history walk on real repositories made with `git`, checked against
//! `git rev-list --count` and `git merge-base --all` as the reference.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gix_hash::ObjectId;

use super::history::{relate, resolve_prefix, Incomplete, RelationKind};
use super::tests::git;
use super::GitStore;
use crate::core::CoreError;

/// An empty repository in a fresh directory.
fn empty_repo(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vba-history-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    dir
}

/// Commits nothing new at committer time `time` (seconds) on the current
/// branch, merging `merge` if given; returns the commit ID.
fn commit_at(dir: &Path, time: i64, message: &str, merge: Option<&str>) -> String {
    let date = format!("@{time} +0000");
    let mut args = vec!["-c", "commit.gpgsign=false"];
    match merge {
        Some(other) => args.extend([
            "merge",
            "-q",
            "--no-ff",
            "--allow-unrelated-histories",
            "-m",
            message,
            other,
        ]),
        None => args.extend(["commit", "-q", "--allow-empty", "-m", message]),
    }
    let out = Command::new("git")
        .args(&args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?} failed");
    git(dir, &["rev-parse", "HEAD"])
}

fn oid(hex: &str) -> ObjectId {
    ObjectId::from_hex(hex.as_bytes()).unwrap()
}

fn store(dir: &Path) -> GitStore {
    GitStore::open(dir, 1 << 20, None).unwrap()
}

/// Relates `reported` to `pinned` and checks the answer against git's.
fn check_against_git(dir: &Path, reported: &str, pinned: &str) -> RelationKind {
    let relation = store(dir).relate(reported, pinned, 10_000, None).unwrap();
    let count = |range: String| {
        git(dir, &["rev-list", "--count", &range])
            .parse::<u64>()
            .unwrap()
    };
    assert_eq!(
        relation.pinned_only,
        Some(count(format!("{reported}..{pinned}")))
    );
    assert_eq!(
        relation.reported_only,
        Some(count(format!("{pinned}..{reported}")))
    );
    let bases = Command::new("git")
        .args(["merge-base", "--all", reported, pinned])
        .current_dir(dir)
        .output()
        .unwrap();
    let mut expected: Vec<String> = String::from_utf8(bases.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let mut found: Vec<String> = relation
        .merge_bases
        .iter()
        .map(ToString::to_string)
        .collect();
    expected.sort();
    found.sort();
    assert_eq!(found, expected);
    assert_eq!(relation.incomplete, None);
    relation.kind
}

#[test]
fn a_linear_history_gives_ancestor_descendant_and_same() {
    let dir = empty_repo("linear");
    let ids: Vec<String> = (0..5)
        .map(|i| commit_at(&dir, 1_000 + i * 10, "c", None))
        .collect();
    let s = store(&dir);
    let back = s.relate(&ids[1], &ids[4], 100, None).unwrap();
    assert_eq!(back.kind, RelationKind::Ancestor);
    assert_eq!((back.pinned_only, back.reported_only), (Some(3), Some(0)));
    assert_eq!(back.merge_bases, vec![oid(&ids[1])]);
    let ahead = s.relate(&ids[4], &ids[0], 100, None).unwrap();
    assert_eq!(ahead.kind, RelationKind::Descendant);
    assert_eq!((ahead.pinned_only, ahead.reported_only), (Some(0), Some(4)));
    let same = s.relate(&ids[2], &ids[2], 100, None).unwrap();
    assert_eq!(same.kind, RelationKind::Same);
    assert_eq!((same.pinned_only, same.reported_only), (Some(0), Some(0)));
    for (r, p) in [(1, 4), (4, 0), (0, 3)] {
        check_against_git(&dir, &ids[r], &ids[p]);
    }
}

#[test]
fn branches_diverge_from_their_merge_base_and_a_merge_joins_them() {
    let dir = empty_repo("branches");
    let a1 = commit_at(&dir, 1_000, "a1", None);
    git(&dir, &["checkout", "-q", "-b", "side"]);
    let b1 = commit_at(&dir, 1_010, "b1", None);
    let b2 = commit_at(&dir, 1_030, "b2", None);
    git(&dir, &["checkout", "-q", "main"]);
    let a2 = commit_at(&dir, 1_020, "a2", None);
    let a3 = commit_at(&dir, 1_040, "a3", None);
    let diverged = store(&dir).relate(&b2, &a3, 100, None).unwrap();
    assert_eq!(diverged.kind, RelationKind::Diverged);
    assert_eq!(
        (diverged.pinned_only, diverged.reported_only),
        (Some(2), Some(2))
    );
    assert_eq!(diverged.merge_bases, vec![oid(&a1)]);
    let merge = commit_at(&dir, 1_050, "m", Some("side"));
    assert_eq!(check_against_git(&dir, &b1, &merge), RelationKind::Ancestor);
    assert_eq!(check_against_git(&dir, &a2, &merge), RelationKind::Ancestor);
    assert_eq!(
        check_against_git(&dir, &merge, &a1),
        RelationKind::Descendant
    );
    assert_eq!(check_against_git(&dir, &b2, &a3), RelationKind::Diverged);
}

#[test]
fn a_criss_cross_merge_has_two_merge_bases() {
    let dir = empty_repo("criss");
    commit_at(&dir, 1_000, "root", None);
    git(&dir, &["checkout", "-q", "-b", "side"]);
    let s1 = commit_at(&dir, 1_010, "s1", None);
    git(&dir, &["checkout", "-q", "main"]);
    let m1 = commit_at(&dir, 1_020, "m1", None);
    git(&dir, &["checkout", "-q", "side"]);
    let side_merge = commit_at(&dir, 1_030, "side merges main", Some(&m1));
    git(&dir, &["checkout", "-q", "main"]);
    let main_merge = commit_at(&dir, 1_040, "main merges side", Some(&s1));
    let relation = store(&dir)
        .relate(&side_merge, &main_merge, 100, None)
        .unwrap();
    assert_eq!(relation.kind, RelationKind::Diverged);
    assert_eq!(relation.merge_bases.len(), 2);
    check_against_git(&dir, &side_merge, &main_merge);
}

#[test]
fn commits_of_one_second_and_clock_order_ties_still_count_exactly() {
    let dir = empty_repo("ties");
    let base = commit_at(&dir, 5_000, "base", None);
    git(&dir, &["checkout", "-q", "-b", "side"]);
    let mut side = base.clone();
    for i in 0..4 {
        side = commit_at(&dir, 5_000, &format!("s{i}"), None);
    }
    git(&dir, &["checkout", "-q", "main"]);
    let mut main = base.clone();
    for i in 0..3 {
        main = commit_at(&dir, 5_000, &format!("m{i}"), None);
    }
    let merged = commit_at(&dir, 5_000, "merge", Some("side"));
    for (r, p) in [
        (&side, &main),
        (&base, &merged),
        (&side, &merged),
        (&merged, &base),
    ] {
        check_against_git(&dir, r, p);
    }
}

#[test]
fn histories_without_a_common_commit_are_unrelated() {
    let dir = empty_repo("unrelated");
    let main = commit_at(&dir, 1_000, "main", None);
    git(&dir, &["checkout", "-q", "--orphan", "other"]);
    let other = commit_at(&dir, 1_010, "other", None);
    let relation = store(&dir).relate(&other, &main, 100, None).unwrap();
    assert_eq!(relation.kind, RelationKind::Unrelated);
    assert_eq!(
        (relation.pinned_only, relation.reported_only),
        (Some(1), Some(1))
    );
    assert!(relation.merge_bases.is_empty());
}

#[test]
fn the_walk_stops_at_its_limit_and_says_so() {
    let dir = empty_repo("bound");
    let ids: Vec<String> = (0..40)
        .map(|i| commit_at(&dir, 1_000 + i, "c", None))
        .collect();
    let s = store(&dir);
    let relation = s.relate(&ids[0], &ids[39], 10, None).unwrap();
    assert_eq!(relation.kind, RelationKind::Undetermined);
    assert_eq!(relation.incomplete, Some(Incomplete::WalkLimit));
    assert_eq!((relation.pinned_only, relation.reported_only), (None, None));
    assert!(relation.commits_visited <= 10);
    // The same question within the bound is answered.
    let enough = s.relate(&ids[0], &ids[39], 40, None).unwrap();
    assert_eq!(
        (enough.kind, enough.pinned_only),
        (RelationKind::Ancestor, Some(39))
    );
    // A near commit needs few visits, whatever lies below it.
    let near = s.relate(&ids[37], &ids[39], 5, None).unwrap();
    assert_eq!(
        (near.kind, near.pinned_only),
        (RelationKind::Ancestor, Some(2))
    );
}

#[test]
fn a_shallow_boundary_below_the_merge_base_does_not_matter_above_it_does() {
    let dir = empty_repo("deep");
    let ids: Vec<String> = (0..6)
        .map(|i| commit_at(&dir, 1_000 + i * 10, "c", None))
        .collect();
    git(&dir, &["checkout", "-q", "-b", "side", &ids[1]]);
    let side = commit_at(&dir, 2_000, "side", None);
    git(&dir, &["checkout", "-q", "main"]);
    let shallow = std::env::temp_dir().join(format!("vba-history-shallow-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&shallow);
    let url = format!("file://{}", dir.display());
    let target = shallow.to_str().unwrap();
    git(
        &dir,
        &[
            "clone",
            "-q",
            "--no-single-branch",
            "--depth",
            "1",
            &url,
            target,
        ],
    );
    git(&shallow, &["fetch", "-q", "--depth", "3", "origin", "main"]);
    let s = store(&shallow);
    let known = s.relate(&ids[4], &ids[5], 100, None).unwrap();
    assert_eq!(
        (known.kind, known.pinned_only),
        (RelationKind::Ancestor, Some(1))
    );
    // ids[3] is the boundary: its parent is missing, but nothing below a
    // merge base is counted.
    let boundary = s.relate(&ids[3], &ids[5], 100, None).unwrap();
    assert_eq!(
        (boundary.kind, boundary.pinned_only),
        (RelationKind::Ancestor, Some(2))
    );
    // The side commit's parent is not there: where the lines meet is unknown.
    let cut = s.relate(&side, &ids[5], 100, None).unwrap();
    assert_eq!(cut.kind, RelationKind::Undetermined);
    assert_eq!(cut.incomplete, Some(Incomplete::HistoryMissing));
    assert!(matches!(
        s.relate(&ids[1], &ids[5], 100, None),
        Err(CoreError::GitCommitMissing { .. })
    ));
}

/// Writes a raw object with `git hash-object`; returns its ID.
fn write_object(dir: &Path, kind: &str, body: &[u8]) -> String {
    let mut child = Command::new("git")
        .args(["hash-object", "-w", "-t", kind, "--stdin"])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(body).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A root commit whose ID was chosen to share a prefix with another object
/// (found by hashing candidates: `root 530` and `root 12625` share `19fe8b2`,
/// `root 105970` shares `855c802` with the blob `blob 1374\n`).
fn root_commit(dir: &Path, n: u32) -> String {
    let body = format!(
        "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\
         author t <t@example.invalid> 1000000000 +0000\n\
         committer t <t@example.invalid> 1000000000 +0000\n\nroot {n}\n"
    );
    write_object(dir, "commit", body.as_bytes())
}

#[test]
fn an_abbreviated_id_resolves_to_its_commits_only() {
    let dir = empty_repo("prefix");
    write_object(&dir, "tree", b"");
    let first = root_commit(&dir, 530);
    let second = root_commit(&dir, 12625);
    assert_eq!((&first[..7], &second[..7]), ("19fe8b2", "19fe8b2"));
    let s = store(&dir);
    let both = s.resolve_revision("19FE8B2", 10).unwrap();
    assert_eq!(both.commit_count, 2);
    let mut expected = vec![oid(&first), oid(&second)];
    expected.sort();
    assert_eq!(both.commits, expected);
    let listed_one = s.resolve_revision("19fe8b2", 1).unwrap();
    assert_eq!((listed_one.commit_count, listed_one.commits.len()), (2, 1));
    let longer = &first[..12];
    assert_eq!(
        s.resolve_revision(longer, 10).unwrap().commits,
        vec![oid(&first)]
    );
    assert_eq!(
        s.resolve_revision(&first, 10).unwrap().commits,
        vec![oid(&first)]
    );

    let commit = root_commit(&dir, 105970);
    let blob = write_object(&dir, "blob", b"blob 1374\n");
    assert_eq!((&commit[..7], &blob[..7]), ("855c802", "855c802"));
    let mixed = s.resolve_revision("855c802", 10).unwrap();
    assert_eq!(
        (mixed.commits.clone(), mixed.other_objects),
        (vec![oid(&commit)], 1)
    );
    let blob_only = s.resolve_revision(&blob, 10).unwrap();
    assert_eq!((blob_only.commit_count, blob_only.other_objects), (0, 1));

    let unknown = s.resolve_revision("deadbee", 10).unwrap();
    assert_eq!((unknown.commit_count, unknown.other_objects), (0, 0));
    let absent_full = s.resolve_revision(&"0".repeat(40), 10).unwrap();
    assert_eq!(absent_full.commit_count, 0);
}

#[test]
fn a_malformed_revision_is_refused_before_any_lookup() {
    let dir = empty_repo("malformed");
    let s = store(&dir);
    for bad in [
        "",
        "abc12",
        "abcdef",
        "xyz1234",
        "0123456g",
        &"a".repeat(41),
        "abc 1234",
        "+abcdef0",
    ] {
        assert!(
            matches!(
                s.resolve_revision(bad, 10),
                Err(CoreError::GitRequestInvalid { .. })
            ),
            "{bad:?}"
        );
    }
    let repo = s.handle_for_profile();
    assert!(resolve_prefix(&repo, "abcdef1", 10).is_ok());
    let missing = oid(&"1".repeat(40));
    assert!(matches!(
        relate(&repo, &missing, &missing, 10, None),
        Err(CoreError::GitCommitMissing { found: "nothing" })
    ));
}
