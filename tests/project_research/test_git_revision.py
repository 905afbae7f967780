"""source.revision over a real history: resolution, every relation, the walk bound.

Counts and merge bases are checked against git's own (``rev-list --count``,
``merge-base --all``) on the repository of ``history_fixtures``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.project_research.git_fixtures import URL
from tests.project_research.history_fixtures import (
    AMBIGUOUS_PREFIX,
    HistoryRepo,
    build_history_repo,
    merge_bases,
    rev_list_count,
)
from tests.project_research.research_fakes import make_config
from viano_bug_analysis.project_research import Capture, ProjectResearch, ResearchError
from viano_bug_analysis.project_research.git_source import GitSource


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> HistoryRepo:
    return build_history_repo(tmp_path_factory.mktemp("history") / "repo")


def ask(
    history: HistoryRepo, tmp_path: Path, revision: str, *, pinned: str = "M", **kw: Any
) -> dict[str, Any]:
    source = GitSource(history.path, history.commits[pinned], url=URL, **kw)
    research = ProjectResearch(make_config(tmp_path), git=source)
    return research.query({"kind": "source.revision", "revision": revision})


@pytest.mark.parametrize(
    ("reported", "pinned", "relation"),
    [
        ("M", "M", "same"),
        ("c2", "M", "ancestor"),
        ("s1", "M", "ancestor"),
        ("c0", "c4", "ancestor"),
        ("M", "c1", "descendant"),
        ("s2", "c1", "descendant"),
        ("s2", "c4", "diverged"),
        ("c3", "s2", "diverged"),
    ],
)
def test_each_relation_counts_what_git_counts(
    history: HistoryRepo, tmp_path: Path, reported: str, pinned: str, relation: str
) -> None:
    commit, pinned_commit = history.commits[reported], history.commits[pinned]
    answer = ask(history, tmp_path, commit[:9], pinned=pinned)
    result = answer["result"]
    assert result["relation"] == relation
    assert (result["resolution"], result["commit"]) == ("resolved", commit)
    assert result["pinned_commit"] == pinned_commit
    assert result["pinned_only"] == rev_list_count(history, commit, pinned_commit)
    assert result["reported_only"] == rev_list_count(history, pinned_commit, commit)
    assert sorted(result["merge_bases"]) == merge_bases(history, commit, pinned_commit)
    assert answer["coverage"] == {"complete": True}
    assert answer["origin"] == {"kind": "git", "url": URL, "commit": pinned_commit}


def test_a_commit_without_common_history_is_unrelated(history: HistoryRepo, tmp_path: Path) -> None:
    result = ask(history, tmp_path, history.commits["o1"])["result"]
    assert result["relation"] == "unrelated"
    assert result["merge_bases"] == []
    assert result["reported_only"] == 1


def test_an_ambiguous_abbreviation_is_said_so_with_its_candidates(
    history: HistoryRepo, tmp_path: Path
) -> None:
    result = ask(history, tmp_path, AMBIGUOUS_PREFIX)["result"]
    assert (result["resolution"], result["relation"]) == ("ambiguous", "ambiguous")
    assert result["candidate_count"] == 2
    assert result["candidates"] == sorted(history.ambiguous)
    assert result["commit"] is None and result["pinned_only"] is None
    # One more digit names one commit.
    longer = ask(history, tmp_path, history.ambiguous[0][:12])["result"]
    assert longer["relation"] == "unrelated"


def test_an_unknown_commit_is_not_in_the_repository(history: HistoryRepo, tmp_path: Path) -> None:
    for revision in ("deadbee", "0" * 40):
        result = ask(history, tmp_path, revision)["result"]
        assert (result["resolution"], result["relation"]) == ("not_found", "not_in_repository")
        assert result["candidate_count"] == 0


def test_an_object_that_is_no_commit_is_not_a_revision(
    history: HistoryRepo, tmp_path: Path
) -> None:
    from tests.project_research.git_fixtures import git

    blob = git(history.path, "rev-parse", f"{history.commits['c2']}:c2.txt")
    result = ask(history, tmp_path, blob)["result"]
    assert (result["resolution"], result["relation"]) == ("not_a_commit", "not_in_repository")


@pytest.mark.parametrize(
    "revision", ["HEAD", "main", "c0^", "--all", "0123ab", "0123ABC", "a" * 41, "abc 1234", ""]
)
def test_anything_but_lower_case_hex_is_refused_before_git_is_read(
    history: HistoryRepo, tmp_path: Path, revision: str
) -> None:
    with pytest.raises(ResearchError) as info:
        ask(history, tmp_path, revision)
    assert info.value.code == "query_invalid"
    assert info.value.details["path"] == "/revision"
    # The provider refuses the same on its own (it is called by more than the service).
    source = GitSource(history.path, history.commits["M"], url=URL)
    with pytest.raises(ResearchError) as direct:
        source.revision(revision=revision)
    assert (direct.value.code, direct.value.details["argument"]) == ("request_invalid", "revision")


def test_the_walk_bound_leaves_the_relation_undetermined_and_incomplete(
    history: HistoryRepo, tmp_path: Path
) -> None:
    answer = ask(history, tmp_path, history.commits["c0"], max_walk_commits=3)
    result = answer["result"]
    assert result["relation"] == "undetermined"
    assert (result["walk_finished"], result["walk_stopped_by"]) == (False, "walk_limit")
    assert "complete" not in result and "incomplete_reason" not in result
    assert result["commits_visited"] <= 3 and result["walk_limit"] == 3
    assert answer["coverage"] == {"complete": False}
    assert result["commit"] == history.commits["c0"]  # resolved all the same


def test_the_answer_is_captured_like_every_other(history: HistoryRepo, tmp_path: Path) -> None:
    source = GitSource(history.path, history.commits["M"], url=URL)
    research = ProjectResearch(make_config(tmp_path), git=source)
    capture = research.capture({"kind": "source.revision", "revision": history.commits["c2"][:7]})
    assert isinstance(capture, Capture)
    assert capture.result["result"]["relation"] == "ancestor"
    assert capture.origin["commit"] == history.commits["M"]
