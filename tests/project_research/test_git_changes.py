"""source.changes over real histories, checked against ``git log -p``.

The reference is git's own patch output for ``since..pinned`` (first-parent
diffs of merges, no rename detection) with a Python whole-word check; the
provider's changed lines must equal git's added-minus-removed term lines per
commit, path and text, and each named line must hold that text in the blob it
names. Refusals, bounds and skipped files are checked on small histories.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.project_research.changes_fixtures import (
    History,
    blob_lines,
    build_history,
    nonempty,
    provider_net,
    reference,
    word_of,
)
from tests.project_research.git_fixtures import URL, git
from tests.project_research.research_fakes import make_config
from viano_bug_analysis.project_research import ProjectResearch, ResearchError
from viano_bug_analysis.project_research.git_source import GitSource

TERMS = ["12345", "npc_foo", "QUEST_HOLY"]

STEPS: list[dict[str, Any]] = [
    {"src/quest.cpp": "// start\nint q = 1;\n", "sql/a.sql": "-- nothing\n"},
    # The report's commit is the next one.
    {"src/quest.cpp": "// start\nint q = 12345;\nnpc_foo_bar();\n"},
    {"sql/updates/1.sql": "UPDATE quest_template SET x=1 WHERE ID=12345;\n-- 123456\n"},
    # A moved line (a diff shows it removed and added): no change of its text.
    {"src/quest.cpp": "npc_foo_bar();\n// start\nint q = 12345;\n"},
    # A duplicated line: one more occurrence is one added line.
    {"src/quest.cpp": "npc_foo_bar();\n// start\nint q = 12345;\nint q = 12345;\n"},
    {"src/npc.cpp": "void npc_foo() {}\n#define QUEST_HOLY 12345\n", "img.bin": b"\x00npc_foo\x00"},
    {"src/quest.cpp": "npc_foo_bar();\n// start\n", "sql/updates/1.sql": None},
    {"latin.txt": b"npc_foo caf\xe9\n", "link": "->src/npc.cpp"},
    {"src/npc.cpp": "void npc_foo() {}\n#define QUEST_HOLY 12345 // fixed\n"},
]
SIDE: list[dict[str, Any]] = [
    {"side/s.cpp": "12345 on the side\n"},
    {"side/s.cpp": "12345 on the side\nnpc_foo again\n"},
]
SKIP = {"img.bin", "latin.txt", "link"}


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    root = tmp_path_factory.mktemp("changes") / "repo"
    return build_history(root, STEPS, side=SIDE, branch_at=2, merge_at=6)


def changes(
    repo: Path,
    since: str,
    pinned: str,
    terms: list[str] = TERMS,
    *,
    research_dir: Path,
    source_kw: dict[str, Any] | None = None,
    **query: Any,
) -> dict[str, Any]:
    source = GitSource(repo, pinned, url=URL, **(source_kw or {}))
    research = ProjectResearch(make_config(research_dir), git=source)
    return research.query(
        {
            "kind": "source.changes",
            "since": since,
            "terms": terms,
            "offset": 0,
            "limit": 50,
            **query,
        }
    )


def check_against_git(
    repo: Path, since: str, pinned: str, terms: list[str], result: dict[str, Any], skip: set[str]
) -> None:
    expected = nonempty(reference(repo, since, pinned, terms, skip))
    assert nonempty(provider_net(result)) == expected
    # Each text appears with one sign only (a moved line is no change).
    for commit in result["commits"]:
        sides: dict[tuple[str, str], set[str]] = {}
        for change in commit["changes"]:
            sides.setdefault((change["path"], change["text"]), set()).add(change["side"])
            assert blob_lines(repo, change["blob"])[change["line"] - 1] == change["text"]
            assert change["term"] == word_of(terms, change["text"])
        assert all(len(s) == 1 for s in sides.values())
    # Newest first, exactly the commits git shows with a term line.
    order = git(repo, "log", "--format=%H", "--diff-merges=first-parent", f"{since}..{pinned}")
    listed = [c["commit"] for c in result["commits"]]
    assert listed == [c for c in order.split("\n") if c in expected]


def test_the_changed_lines_are_what_git_log_p_shows(history: History, tmp_path: Path) -> None:
    since, pinned = history.commits[1], history.commits[-1]
    answer = changes(history.path, since, pinned, research_dir=tmp_path)
    result = answer["result"]
    check_against_git(history.path, since, pinned, TERMS, result, SKIP)
    assert result["relation"] == "ancestor"
    assert result["range_commits"] == int(
        git(history.path, "rev-list", "--count", f"{since}..{pinned}")
    )
    assert result["commits_examined"] == result["range_commits"]
    by_commit = {c["commit"]: c for c in result["commits"]}
    # The moved-line commit changed no term line; the duplicate commit added one.
    assert history.commits[3] not in by_commit
    dup = by_commit[history.commits[4]]["changes"]
    assert [(c["side"], c["line"], c["text"]) for c in dup] == [("added", 4, "int q = 12345;")]
    # The merge shows the side branch's lines against its first parent.
    merge = next(c for c in result["commits"] if c["summary"] == "merge side 6")
    assert {c["path"] for c in merge["changes"]} == {"side/s.cpp"}
    # The binary and Latin-1 files are counted, never decoded; a symlink is no file
    # of the repository and holds no lines.
    skipped = result["skipped"]["by_reason"]
    assert skipped == {"binary": 1, "not_utf8": 1}
    assert result["examination_gaps"] == ["files_skipped"]
    assert result["examined_in_full"] is False and answer["coverage"]["files_unsearched"] == 1
    first = result["commits"][0]
    assert first["summary"] == f"step {len(STEPS) - 1}"
    assert first["author_time"] == f"2024-01-01T00:{len(STEPS) + len(SIDE) + 1:02d}:00Z"


def test_a_path_prefix_narrows_the_files(history: History, tmp_path: Path) -> None:
    since, pinned = history.commits[1], history.commits[-1]
    result = changes(history.path, since, pinned, research_dir=tmp_path, path_prefix="sql/")[
        "result"
    ]
    paths = {c["path"] for commit in result["commits"] for c in commit["changes"]}
    assert paths == {"sql/updates/1.sql"}
    assert result["examined_in_full"] is True and result["skipped"]["total"] == 0


def test_pages_cut_the_matching_commits(history: History, tmp_path: Path) -> None:
    since, pinned = history.commits[0], history.commits[-1]
    whole = changes(history.path, since, pinned, research_dir=tmp_path)["result"]
    first = changes(history.path, since, pinned, research_dir=tmp_path, limit=2)
    second = changes(history.path, since, pinned, research_dir=tmp_path, offset=2, limit=50)
    assert first["result"]["next_offset"] == 2 and first["coverage"]["complete"] is False
    assert first["result"]["commits"] + second["result"]["commits"] == whole["commits"]
    assert first["result"]["total"] == whole["total"] == len(whole["commits"])


def test_the_same_commit_has_no_range(history: History, tmp_path: Path) -> None:
    pinned = history.commits[-1]
    result = changes(history.path, pinned, pinned, research_dir=tmp_path)["result"]
    assert (result["relation"], result["range_commits"], result["commits"]) == ("same", 0, [])
    assert result["examined_in_full"] is True


@pytest.mark.parametrize(
    ("since", "pinned", "relation"),
    [(-1, 1, "descendant"), ("side", 4, "diverged")],
)
def test_a_commit_off_the_pinned_history_is_refused(
    history: History, tmp_path: Path, since: Any, pinned: int, relation: str
) -> None:
    since_commit = history.side[-1] if since == "side" else history.commits[since]
    with pytest.raises(ResearchError) as refused:
        changes(history.path, since_commit, history.commits[pinned], research_dir=tmp_path)
    assert refused.value.code == "since_not_ancestor"
    assert refused.value.details["relation"] == relation


def test_an_unknown_commit_is_refused_as_not_in_the_repository(
    history: History, tmp_path: Path
) -> None:
    with pytest.raises(ResearchError) as refused:
        changes(history.path, "0" * 40, history.commits[-1], research_dir=tmp_path)
    assert refused.value.code == "since_not_ancestor"
    assert refused.value.details == {"argument": "since", "relation": "not_in_repository"}


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ({"terms": []}, "query_invalid"),
        ({"terms": ["a b"]}, "query_invalid"),
        ({"terms": ["x"] * 33}, "query_invalid"),
        ({"terms": ["x" * 257]}, "query_invalid"),
        ({"since": "abc1234"}, "query_invalid"),
        ({"limit": 51}, "query_invalid"),
    ],
)
def test_malformed_arguments_are_refused_before_git_is_read(
    tmp_path: Path, query: dict[str, Any], code: str
) -> None:
    full = {"kind": "source.changes", "since": "a" * 40, "terms": ["1"], "offset": 0, "limit": 1}
    research = ProjectResearch(make_config(tmp_path))
    with pytest.raises(ResearchError) as refused:
        research.query({**full, **query})
    assert refused.value.code == code


@pytest.mark.parametrize(
    ("source_kw", "reason"),
    [
        ({"max_walk_commits": 2}, "walk_limit"),
        ({"max_change_commits": 2}, "commit_limit"),
        ({"max_change_blobs": 3}, "blob_limit"),
    ],
)
def test_each_bound_is_stated_when_reached(
    history: History, tmp_path: Path, source_kw: dict[str, Any], reason: str
) -> None:
    since, pinned = history.commits[1], history.commits[-1]
    result = changes(
        history.path, since, pinned, research_dir=tmp_path, source_kw=source_kw, path_prefix="src/"
    )["result"]
    assert result["examined_in_full"] is False and result["examination_gaps"] == [reason]
    if reason == "walk_limit":
        assert (result["relation"], result["range_commits"], result["commits"]) == (
            "undetermined",
            None,
            [],
        )
    else:
        assert result["commits_examined"] < result["range_commits"]
        # What was examined is still exact: the newest commits, as git shows them.
        examined = git(history.path, "log", "--format=%H", f"{since}..{pinned}").split("\n")
        kept = set(examined[: result["commits_examined"]])
        expected = nonempty(reference(history.path, since, pinned, TERMS, SKIP))
        paths = {
            c: {p: n for p, n in v.items() if p.startswith("src/")} for c, v in expected.items()
        }
        want = nonempty({c: v for c, v in paths.items() if c in kept})
        assert nonempty(provider_net(result)) == want


def test_a_partial_clone_counts_absent_blobs_as_missing(tmp_path: Path) -> None:
    source = build_history(
        tmp_path / "source",
        [
            {"a.txt": "seed\n"},
            {"big.sql": "-- 12345\n" + "x" * 4000 + "\n", "small.sql": "12345\n"},
        ],
    )
    git(source.path, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone.git"
    git(
        tmp_path,
        "clone",
        "-q",
        "--bare",
        "--filter=blob:limit=1k",
        source.path.as_uri(),
        str(clone),
    )
    result = changes(clone, source.commits[0], source.commits[1], ["12345"], research_dir=tmp_path)[
        "result"
    ]
    assert result["skipped"]["by_reason"] == {"missing": 1}
    assert result["examination_gaps"] == ["files_skipped"]
    assert [c["path"] for c in result["commits"][0]["changes"]] == ["small.sql"]


# -- generated histories -----------------------------------------------------------------

LINES = ["q 100", "x 1000", "npc_a();", "npc_a_b();", "100", "other", "", "id=100;npc_a"]
GEN_TERMS = ["100", "npc_a"]
PATHS = ["a.txt", "d/b.sql", "d/e/c.cpp"]

contents = st.lists(st.sampled_from(LINES), max_size=6).map(
    lambda lines: "".join(f"{line}\n" for line in lines)
)
step = st.dictionaries(st.sampled_from(PATHS), st.one_of(st.none(), contents), min_size=1)
# The side branch keeps to its own file, so that the merge never conflicts.
side_step = st.dictionaries(st.just("s/side.txt"), contents, min_size=1)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=st.lists(step, min_size=2, max_size=6),
    side=st.lists(side_step, max_size=2),
    since_at=st.integers(0, 5),
)
def test_generated_histories_agree_with_git(
    tmp_path_factory: pytest.TempPathFactory,
    steps: list[dict[str, Any]],
    side: list[dict[str, Any]],
    since_at: int,
) -> None:
    root = tmp_path_factory.mktemp("generated")
    merge_at = len(steps) - 1 if side else None
    made = build_history(root / "repo", steps, side=side, branch_at=0, merge_at=merge_at)
    since = made.commits[min(since_at, len(made.commits) - 1)]
    result = changes(made.path, since, made.commits[-1], GEN_TERMS, research_dir=root)["result"]
    assert result["examined_in_full"] is True
    check_against_git(made.path, since, made.commits[-1], GEN_TERMS, result, set())
