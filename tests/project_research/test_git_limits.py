"""GitSource limits, timeouts, outages and the content cache."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.project_research.git_fixtures import (
    NEEDLE,
    URL,
    FixtureRepo,
    build_fixture_repo,
    git,
)
from viano_bug_analysis._native import GitRepository
from viano_bug_analysis.project_research.errors import ResearchError, ResearchUnavailable
from viano_bug_analysis.project_research.git_source import GitSource


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> FixtureRepo:
    return build_fixture_repo(tmp_path_factory.mktemp("git") / "fixture")


def search(source: GitSource, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "text": NEEDLE,
        "case_sensitive": True,
        "path_prefix": None,
        "offset": 0,
        "limit": 100,
    }
    args.update(kw)
    return source.search(**args)


# --- selection limits ------------------------------------------------------------------


def test_too_many_files_is_rejected_never_cut(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL, max_files=10)
    with pytest.raises(ResearchError) as err:
        search(source)
    assert err.value.code == "selection_too_large"
    assert err.value.details["what"] == "files" and err.value.details["limit"] == 10
    assert "path_prefix" in err.value.details["hint"]
    assert source.cache_info()["blobs_read"] == 0
    assert search(source, path_prefix="src/game/")["total"] > 0


def test_too_many_bytes_is_rejected_never_cut(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL, max_total_bytes=1 << 20)
    with pytest.raises(ResearchError) as err:
        search(source)
    assert err.value.code == "selection_too_large" and err.value.details["what"] == "bytes"
    assert err.value.details["selected"] > 1 << 20
    assert source.cache_info()["blobs_read"] == 0
    assert search(source, path_prefix="src/")["files_unsearched"] == 0
    # A file skipped as too large is never read, so it does not count either.
    small_files = GitSource(
        repo.path, repo.first, url=URL, max_total_bytes=1 << 20, max_file_bytes=1 << 20
    )
    result = search(small_files)
    assert {"path": "data/big.txt", "reason": "too_large"} in result["skipped"]["paths"]


def test_schema_limit_hint_names_no_prefix(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL, max_files=1)
    with pytest.raises(ResearchError) as err:
        source.schema(text="x", case_sensitive=True, offset=0, limit=10)
    assert err.value.code == "selection_too_large"
    assert "path_prefix" not in err.value.details["hint"]


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("max_files", 0),
        ("max_file_bytes", -1),
        ("max_total_bytes", 1.5),
        ("max_line_chars", True),
        ("max_page", "10"),
        ("timeout_s", 0),
        ("timeout_s", float("nan")),
        ("cache_bytes", -1),
        ("url", ""),
    ],
)
def test_settings_are_checked(repo: FixtureRepo, setting: str, value: Any) -> None:
    with pytest.raises(ResearchError) as err:
        GitSource(repo.path, repo.first, **{"url": URL, setting: value})
    assert err.value.code == "config_invalid" and err.value.details["key"] == setting


# --- time and outages ------------------------------------------------------------------


def test_timeout_is_an_outage(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL, timeout_s=1e-9)
    with pytest.raises(ResearchUnavailable) as err:
        search(source)
    assert (err.value.provider, err.value.reason) == ("git", "timeout")
    assert err.value.code == "research_unavailable"


@pytest.mark.parametrize("stage", ["tree", "search", "sha256", "text"])
def test_native_deadline_stops_git_reads(repo: FixtureRepo, stage: str) -> None:
    native = GitRepository(repo.path, cache_bytes=0)
    if stage == "tree":
        call: Any = lambda: native.tree(repo.first, max_entries=1000, timeout_s=0.0)  # noqa: E731
    else:
        tree = native.tree(repo.first, max_entries=1000, timeout_s=10.0)
        selection = tree.select(prefix=None, sql_only=False, max_file_bytes=1 << 30)
        call = {
            "search": lambda: selection.search(
                "literal", "x", offset=0, limit=1, max_chars=10, timeout_s=0.0
            ),
            "sha256": lambda: native.sha256([repo.blob_id(repo.first, "README.md")], timeout_s=0),
            "text": lambda: tree.text("README.md", max_bytes=1000, timeout_s=0.0),
        }[stage]
    with pytest.raises(ResearchUnavailable) as err:
        call()
    assert err.value.reason == "timeout"


@pytest.mark.parametrize("kind", ["missing", "empty_dir", "file", "tree_missing"])
def test_unreadable_repository_is_an_outage(repo: FixtureRepo, tmp_path: Path, kind: str) -> None:
    target = tmp_path / "repo"
    if kind == "empty_dir":
        target.mkdir()
    elif kind == "file":
        target.write_text("not a repository")
    elif kind == "tree_missing":
        fresh = build_fixture_repo(target)
        tree = git(fresh.path, "rev-parse", f"{repo.first}^{{tree}}")
        (fresh.path / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    source = GitSource(target, repo.first, url=URL)
    with pytest.raises(ResearchUnavailable) as err:
        search(source)
    assert (err.value.provider, err.value.reason) == ("git", "repository_unavailable")
    assert str(target) not in str(err.value)


def test_a_blob_gone_after_the_listing_is_a_gap_not_an_outage(tmp_path: Path) -> None:
    # A blob the object database lacks is a skipped file (as in a partial
    # clone, test_git_partial_clone.py), whenever its absence is found.
    fresh = build_fixture_repo(tmp_path / "r")
    source = GitSource(fresh.path, fresh.first, url=URL)
    source.check()  # the listing needs only headers: remove a blob after it
    blob = fresh.blob_id(fresh.first, "src/game/Spell.h")
    (fresh.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    answer = search(source, path_prefix="src/game/")
    assert answer["files_unsearched"] == 1
    assert answer["skipped"]["by_reason"]["missing"] == 1
    assert search(source, path_prefix="sql/")["total"] == 2  # the rest is still readable


def test_a_corrupt_pack_is_an_outage(tmp_path: Path) -> None:
    fresh = build_fixture_repo(tmp_path / "r")
    git(fresh.path, "gc", "-q", "--prune=now")
    [pack] = (fresh.path / ".git" / "objects" / "pack").glob("*.pack")
    data = bytearray(pack.read_bytes())
    for i in range(200, len(data) - 100, 97):
        data[i] ^= 0x5A
    pack.chmod(0o644)
    pack.write_bytes(bytes(data))
    with pytest.raises(ResearchUnavailable) as err:
        search(GitSource(fresh.path, fresh.first, url=URL))
    assert err.value.reason == "repository_unavailable"


# --- the content cache -----------------------------------------------------------------


def test_a_repeated_search_reads_no_git_object(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL)
    first = search(source)
    read = source.cache_info()["blobs_read"]
    assert read > 0
    assert search(source) == first
    assert (
        source.search(
            text=NEEDLE.upper(), case_sensitive=False, path_prefix=None, offset=3, limit=5
        )["returned"]
        == 5
    )
    assert source.read(path="src/game/Spell.cpp", start_line=1, end_line=2)["lines"]
    info = source.cache_info()
    assert info["blobs_read"] == read
    assert 0 < info["bytes"] <= 512 << 20


def test_no_cache_reads_again_with_the_same_answer(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL, cache_bytes=0)
    first = search(source)
    read = source.cache_info()["blobs_read"]
    assert search(source) == first
    assert source.cache_info() == {"entries": 0, "bytes": 0, "blobs_read": 2 * read}


def test_the_cache_stays_within_its_bound(repo: FixtureRepo) -> None:
    bound = 64 << 10
    small = GitSource(repo.path, repo.first, url=URL, cache_bytes=bound)
    roomy = GitSource(repo.path, repo.first, url=URL)
    for _ in range(2):
        assert search(small) == search(roomy)
        assert small.cache_info()["bytes"] <= bound
    assert small.cache_info()["entries"] > 0


def test_identical_blobs_under_several_paths_are_read_once(tmp_path: Path) -> None:
    fresh = build_fixture_repo(tmp_path / "r")
    for i in range(5):
        (fresh.path / f"copy{i}.txt").write_text(f"same {NEEDLE}\n")
    git(fresh.path, "add", "-A")
    git(fresh.path, "commit", "-q", "-m", "copies")
    source = GitSource(fresh.path, git(fresh.path, "rev-parse", "HEAD"), url=URL)
    result = search(source, path_prefix="copy")
    assert [m["path"] for m in result["matches"]] == [f"copy{i}.txt" for i in range(5)]
    assert len({m["blob"] for m in result["matches"]}) == 1
    assert source.cache_info()["blobs_read"] == 1


def test_concurrent_searches_agree(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL, cache_bytes=1 << 20)
    expected = search(GitSource(repo.path, repo.first, url=URL))
    results: list[dict[str, Any]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for _ in range(3):
                results.append(search(source))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results == [expected] * 12


def test_close_drops_state_and_the_next_query_reopens(repo: FixtureRepo) -> None:
    source = GitSource(repo.path, repo.first, url=URL)
    first = search(source)
    source.close()
    assert source.cache_info() == {"entries": 0, "bytes": 0, "blobs_read": 0}
    assert search(source) == first
