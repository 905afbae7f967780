"""A partial clone (``git clone --filter=blob:limit=...``): blobs its trees name
that its object database does not hold.

The clone is real: made by the test from a local source repository with
``uploadpack.allowFilter`` (no network). Each such file is skipped as
``missing`` and the answer is not complete; a read of it is a typed refusal;
the persistent cache never keeps the verdict, so a blob fetched later is
searched by the next process. A missing tree stays an outage
(``test_git_limits.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.project_research.git_fixtures import URL, git
from viano_bug_analysis.project_research.errors import ResearchError
from viano_bug_analysis.project_research.git_source import GitSource

NEEDLE = "KilledMonsterCredit"
# Over the clone's filter limit of 1 KiB: left out of the clone.
LARGE = {
    "data/sql/base/world.sql": f"INSERT INTO t VALUES ('{NEEDLE}');\n" * 100,
    "src/huge.cpp": f"// {NEEDLE} in a large file\n" * 100,
}
SMALL = {
    "data/sql/updates/one.sql": f"-- {NEEDLE}\n",
    "src/small.cpp": f"void {NEEDLE}();\n",
    "src/other.cpp": "nothing here\n",
}


@dataclass(frozen=True)
class PartialClone:
    source: Path
    clone: Path
    commit: str


def partial_clone(root: Path) -> PartialClone:
    source = root / "source"
    for path, text in {**LARGE, **SMALL}.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_text(text)
    git(source, "init", "-q", "-b", "main")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "fixture")
    git(source, "config", "uploadpack.allowFilter", "true")
    clone = root / "clone.git"
    git(root, "clone", "-q", "--bare", "--filter=blob:limit=1k", source.as_uri(), str(clone))
    commit = git(source, "rev-parse", "HEAD")
    absent = git(clone, "rev-list", "--objects", "--missing=print", "HEAD").split("\n")
    assert len([line for line in absent if line.startswith("?")]) == len(LARGE)
    return PartialClone(source, clone, commit)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> PartialClone:
    return partial_clone(tmp_path_factory.mktemp("partial"))


def search(source: GitSource, text: str = NEEDLE, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"case_sensitive": True, "path_prefix": None, "offset": 0, "limit": 100}
    return source.search(text=text, **{**args, **kw})


def skipped_missing(answer: dict[str, Any]) -> list[str]:
    return [p["path"] for p in answer["skipped"]["paths"] if p["reason"] == "missing"]


def test_a_search_answers_from_the_files_the_clone_holds(repo: PartialClone) -> None:
    source = GitSource(repo.clone, repo.commit, url=URL)
    answer = search(source)
    assert [m["path"] for m in answer["matches"]] == ["data/sql/updates/one.sql", "src/small.cpp"]
    assert answer["files_unsearched"] == len(LARGE)
    assert answer["skipped"]["by_reason"] == {"missing": len(LARGE)}
    assert skipped_missing(answer) == sorted(LARGE)
    symbol = source.symbol(symbol=NEEDLE, path_prefix="src/", offset=0, limit=10)
    assert (symbol["total"], symbol["files_unsearched"], skipped_missing(symbol)) == (
        1,
        1,
        ["src/huge.cpp"],
    )
    registration = source.registration(symbol=NEEDLE, path_prefix=None, offset=0, limit=10)
    assert registration["files_unsearched"] > 0
    schema = source.schema(text=NEEDLE, case_sensitive=True, offset=0, limit=10)
    assert (schema["total"], schema["files_unsearched"], skipped_missing(schema)) == (
        1,
        1,
        ["data/sql/base/world.sql"],
    )
    # Where nothing is missing, the answer is complete as before.
    assert search(source, path_prefix="data/sql/updates/")["files_unsearched"] == 0
    files = source.files(text=".cpp", path_prefix=None, offset=0, limit=10)
    # A file the clone does not hold is still a file of the commit: listed, size unknown.
    assert [(f["path"], f["size"], f.get("absent")) for f in files["files"]] == [
        ("src/huge.cpp", None, "missing"),
        ("src/other.cpp", len(SMALL["src/other.cpp"]), None),
        ("src/small.cpp", len(SMALL["src/small.cpp"]), None),
    ]
    assert files["skipped"]["by_reason"] == {}


def test_reading_a_missing_file_is_a_typed_refusal(repo: PartialClone) -> None:
    source = GitSource(repo.clone, repo.commit, url=URL)
    with pytest.raises(ResearchError) as err:
        source.read(path="src/huge.cpp", start_line=1, end_line=1)
    assert err.value.code == "path_not_readable"
    assert err.value.details["reason"] == "missing"
    assert str(repo.clone) not in str(err.value)
    read = source.read(path="src/small.cpp", start_line=1, end_line=1)
    assert read["lines"][0]["text"] == f"void {NEEDLE}();"


def test_a_blob_gone_after_the_listing_is_skipped_as_missing(tmp_path: Path) -> None:
    fresh = partial_clone(tmp_path)
    source = GitSource(fresh.source, fresh.commit, url=URL)
    source.check()  # the listing needs only headers: remove a blob after it
    blob = git(fresh.source, "rev-parse", f"{fresh.commit}:src/small.cpp")
    (fresh.source / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    answer = search(source, path_prefix="src/")
    assert (answer["total"], answer["files_unsearched"]) == (100, 1)  # src/huge.cpp
    assert skipped_missing(answer) == ["src/small.cpp"]
    with pytest.raises(ResearchError) as err:
        source.read(path="src/small.cpp", start_line=1, end_line=1)
    assert err.value.details["reason"] == "missing"


# One search in a fresh process with the persistent cache (every
# `vba research` is one): prints the answer.
CHILD = """
import json, sys
from viano_bug_analysis.project_research.git_source import GitSource
repo, commit, cache = sys.argv[1:4]
source = GitSource(repo, commit, url="https://git.example.invalid/fixture.git", disk_cache=cache)
print(json.dumps(source.search(text=sys.argv[4], case_sensitive=True, path_prefix=None,
                               offset=0, limit=100)))
"""


def run_child(repo: Path, commit: str, cache: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(repo), commit, str(cache), NEEDLE],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_a_blob_fetched_later_is_searched_by_the_next_process(tmp_path: Path) -> None:
    fresh = partial_clone(tmp_path)
    cache = tmp_path / "cache"
    first = run_child(fresh.clone, fresh.commit, cache)
    assert first["skipped"]["by_reason"] == {"missing": 2}
    assert list(cache.glob("tree-*.vbt")), "the listing is stored"
    assert run_child(fresh.clone, fresh.commit, cache) == first, "served from the cache"
    # What a fetch does for the object database: the blob arrives.
    text = LARGE["src/huge.cpp"].encode()
    git(fresh.clone, "hash-object", "-w", "--stdin", input=text)
    later = run_child(fresh.clone, fresh.commit, cache)
    assert later["skipped"]["by_reason"] == {"missing": 1}
    assert later["total"] == first["total"] + 100
    assert "src/huge.cpp" in {m["path"] for m in later["matches"]}
    uncached = search(GitSource(fresh.clone, fresh.commit, url=URL))
    assert later == uncached


def test_a_listing_with_an_absent_file_is_a_complete_project_result(
    repo: PartialClone, tmp_path: Path
) -> None:
    from tests.project_research.research_fakes import make_config
    from viano_bug_analysis.project_research.service import ProjectResearch

    source = GitSource(repo.clone, repo.commit, url=URL)
    research = ProjectResearch(make_config(tmp_path), git=source)
    query = {"kind": "source.files", "text": "huge", "offset": 0, "limit": 10}
    result = research.query(query)  # checked against project-result-v2 on the way out
    assert result["result"]["files"] == [
        {"path": "src/huge.cpp", "blob": result["result"]["files"][0]["blob"], "size": None,
         "absent": "missing"}
    ]  # fmt: skip
    assert result["coverage"]["complete"] is True


@pytest.mark.parametrize("disk_cache", [False, True])
def test_a_blob_fetched_meanwhile_is_searched_by_the_same_process(
    tmp_path: Path, disk_cache: bool
) -> None:
    # A long-lived process (vba mcp) keeps its listing: only its absent
    # entries are looked up again, so the arrival needs no restart.
    fresh = partial_clone(tmp_path)
    cache = tmp_path / "cache" if disk_cache else None
    source = GitSource(fresh.clone, fresh.commit, url=URL, disk_cache=cache)
    first = search(source)
    assert first["skipped"]["by_reason"] == {"missing": 2}
    git(fresh.clone, "hash-object", "-w", "--stdin", input=LARGE["src/huge.cpp"].encode())
    later = search(source)
    assert later["skipped"]["by_reason"] == {"missing": 1}
    assert "src/huge.cpp" in {m["path"] for m in later["matches"]}
    listed = source.files(text="huge", path_prefix=None, offset=0, limit=10)["files"]
    assert [(f["path"], f["size"] is not None, "absent" in f) for f in listed] == [
        ("src/huge.cpp", True, False)
    ]
    assert later == search(GitSource(fresh.clone, fresh.commit, url=URL))
