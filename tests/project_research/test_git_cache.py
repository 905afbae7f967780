"""The persistent content cache of GitSource (``source.cache_dir``).

A differential test (hypothesis) checks that the answers with the cache (the
process that fills it and a later one served from it) are exactly those
without it. The other tests use real separate processes: a second process
reads no blob from git, concurrent processes share one directory, a damaged
cache file is detected and rebuilt, the bound evicts, ``--no-cache`` leaves
the directory alone. The Rust side has its own tests of the file format
(``rust/src/core/git/disk_cache_tests.rs``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.project_research.git_fixtures import URL, FixtureRepo, build_fixture_repo
from tests.project_research.test_git_differential import PATTERNS, commit, encode, files_strategy
from viano_bug_analysis.project_research.config import parse_config
from viano_bug_analysis.project_research.errors import ResearchError, ResearchUnavailable
from viano_bug_analysis.project_research.git_source import GitSource

QUERIES: list[dict[str, Any]] = [
    {"text": "foo", "case_sensitive": True},
    {"text": "FOO", "case_sensitive": False},
    {"text": "a", "case_sensitive": True},
]

# One search in a fresh process: prints the answers and the cache counters.
CHILD = """
import json, sys
from viano_bug_analysis.project_research.config import parse_config
from viano_bug_analysis.project_research.errors import ResearchError, ResearchUnavailable
from viano_bug_analysis.project_research.git_source import GitSource
repo, commit, cache, bound = sys.argv[1:5]
source = GitSource(repo, commit, url="https://git.example.invalid/fixture.git",
                   disk_cache=cache, disk_cache_bytes=int(bound))
answers = [source.search(text=t, case_sensitive=c, path_prefix=None, offset=0, limit=100)
           for t, c in json.loads(sys.argv[5])]
print(json.dumps({"answers": answers, "read": source.cache_info()["blobs_read"],
                  "disk": source.disk_cache_info()}))
"""


@pytest.fixture(scope="module")
def fixture(tmp_path_factory: pytest.TempPathFactory) -> FixtureRepo:
    return build_fixture_repo(tmp_path_factory.mktemp("cache-fixture"))


def search_all(source: GitSource) -> list[dict[str, Any]]:
    return [source.search(path_prefix=None, offset=0, limit=100, **query) for query in QUERIES] + [
        source.symbol(symbol="foo", path_prefix=None, offset=0, limit=100),
        source.schema(text="SELECT", case_sensitive=False, offset=0, limit=100),
    ]


def child(repo: Path, commit: str, cache: Path, bound: int = 1 << 30) -> subprocess.Popen[str]:
    queries = json.dumps([[q["text"], q["case_sensitive"]] for q in QUERIES])
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(repo), commit, str(cache), str(bound), queries],
        stdout=subprocess.PIPE,
        text=True,
    )


def run_child(repo: Path, commit: str, cache: Path, bound: int = 1 << 30) -> dict[str, Any]:
    process = child(repo, commit, cache, bound)
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 0
    result: dict[str, Any] = json.loads(out)
    return result


def segments(cache: Path) -> list[Path]:
    return sorted(cache.glob("seg-*.vbc"))


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(generated=files_strategy, pattern=st.sampled_from(PATTERNS), ignore_case=st.booleans())
def test_cache_disabled_filling_and_served_answer_the_same(
    tmp_path_factory: pytest.TempPathFactory,
    generated: dict[str, tuple[list[str], str]],
    pattern: str,
    ignore_case: bool,
) -> None:
    repo = tmp_path_factory.mktemp("cache-diff")
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    files = {name: encode(*spec) for name, spec in generated.items()}
    head = commit(repo, files)
    cache = tmp_path_factory.mktemp("cache-diff-dir")

    def answers(source: GitSource) -> list[dict[str, Any]]:
        sensitive = not ignore_case
        found = source.search(
            text=pattern, case_sensitive=sensitive, path_prefix=None, offset=0, limit=100
        )
        sql = source.schema(text=pattern, case_sensitive=sensitive, offset=0, limit=100)
        reads = [
            source.read(path=m["path"], start_line=m["line"], end_line=m["line"])
            for m in found["matches"]
        ]
        return [found, sql, *reads]

    plain = answers(GitSource(repo, head, url=URL, cache_bytes=0))
    filling = GitSource(repo, head, url=URL, cache_bytes=0, disk_cache=cache)
    assert answers(filling) == plain
    filling.flush()  # what a process does at exit (the texts are written in the background)
    served = GitSource(repo, head, url=URL, cache_bytes=0, disk_cache=cache)
    assert answers(served) == plain
    assert served.cache_info()["blobs_read"] == 0


def test_a_second_process_reads_no_blob(fixture: FixtureRepo, tmp_path: Path) -> None:
    expected = search_all(GitSource(fixture.path, fixture.first, url=URL))[: len(QUERIES)]
    cache = tmp_path / "cache"
    first = run_child(fixture.path, fixture.first, cache)
    assert first["answers"] == expected
    assert first["read"] > 0 and first["disk"]["written"] == 2  # the listing and one segment
    second = run_child(fixture.path, fixture.first, cache)
    assert second["answers"] == expected
    assert second["read"] == 0, "every text came from the cache file"
    assert second["disk"]["hits"] > 0 and second["disk"]["rejected"] == 0


def test_concurrent_processes_share_one_directory(fixture: FixtureRepo, tmp_path: Path) -> None:
    expected = search_all(GitSource(fixture.path, fixture.first, url=URL))[: len(QUERIES)]
    cache = tmp_path / "cache"
    processes = [child(fixture.path, fixture.first, cache) for _ in range(4)]
    for process in processes:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0
        assert json.loads(out)["answers"] == expected
    names = {p.name for p in cache.iterdir()}
    listing = f"tree-{fixture.first}.vbt"
    assert all(
        n in ("lock", listing) or (n.startswith("seg-") and n.endswith(".vbc")) for n in names
    )
    last = run_child(fixture.path, fixture.first, cache)
    assert last["answers"] == expected and last["read"] == 0
    assert last["disk"]["rejected"] == 0


@pytest.mark.parametrize("damage", ["garbage", "truncated", "bit_flip", "empty"])
def test_a_damaged_cache_file_is_detected_and_rebuilt(
    fixture: FixtureRepo, tmp_path: Path, damage: str
) -> None:
    cache = tmp_path / "cache"
    expected = run_child(fixture.path, fixture.first, cache)["answers"]
    [segment] = segments(cache)
    data = bytearray(segment.read_bytes())
    if damage == "garbage":
        data = bytearray(b"\x17" * len(data))
    elif damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "bit_flip":
        data[-len(data) // 3] ^= 0x01
    else:
        data = bytearray()
    segment.write_bytes(bytes(data))
    damaged = run_child(fixture.path, fixture.first, cache)
    assert damaged["answers"] == expected
    assert damaged["disk"]["rejected"] >= 1 and damaged["read"] > 0
    assert segment not in segments(cache), "the damaged file was deleted"
    rebuilt = run_child(fixture.path, fixture.first, cache)
    assert rebuilt["answers"] == expected
    assert rebuilt["read"] == 0 and rebuilt["disk"]["rejected"] == 0


def cache_bytes(cache: Path) -> int:
    return sum(p.stat().st_size for p in cache.iterdir() if p.name != "lock")


def test_the_bound_holds_by_evicting(fixture: FixtureRepo, tmp_path: Path) -> None:
    # Which files go first is checked in Rust (disk_cache_tests.rs); here:
    # a bound just above what the first commit needs makes the second
    # commit's files evict, and the directory stays within the bound.
    cache = tmp_path / "cache"
    first = run_child(fixture.path, fixture.first, cache)
    bound = cache_bytes(cache) + 1
    second = run_child(fixture.path, fixture.second, cache, bound=bound)
    assert second["disk"]["evicted"] >= 1 and second["disk"]["written"] >= 1
    assert cache_bytes(cache) <= bound
    again = run_child(fixture.path, fixture.first, cache, bound=bound)
    assert again["answers"] == first["answers"]
    assert cache_bytes(cache) <= bound
    # A segment larger than the whole bound is never written.
    tiny = tmp_path / "tiny"
    assert run_child(fixture.path, fixture.first, tiny, bound=100)["disk"]["written"] == 0
    assert segments(tiny) == []


def test_no_cache_neither_reads_nor_writes_it(fixture: FixtureRepo, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    config = tmp_path / "research.toml"
    config.write_text(
        "[source]\n"
        f'repository = "{fixture.path}"\n'
        f'url = "{URL}"\n'
        f'commit = "{fixture.first}"\n'
        'cache_dir = "cache"\n'
    )
    query = tmp_path / "query.json"
    query.write_text(
        json.dumps(
            {
                "kind": "source.search",
                "text": "foo",
                "case_sensitive": True,
                "offset": 0,
                "limit": 10,
            }
        )
    )
    vba = [sys.executable, "-m", "viano_bug_analysis.cli", "research"]
    args = ["--config", str(config), "--query", str(query)]
    without = subprocess.run([*vba, *args, "--no-cache"], capture_output=True, check=True)
    assert not cache.exists()
    with_cache = subprocess.run([*vba, *args], capture_output=True, check=True)
    assert len(segments(cache)) == 1
    assert json.loads(with_cache.stdout)["result"] == json.loads(without.stdout)["result"]


def test_cache_dir_resolves_against_the_config_and_no_cache_drops_it(tmp_path: Path) -> None:
    source = {"repository": "repo.git", "url": URL, "commit": "a" * 40}
    config = parse_config(
        {"source": {**source, "cache_dir": "../cache"}, "limits": {"disk_cache_bytes": 1 << 20}},
        base_dir=tmp_path / "etc",
        path=tmp_path / "etc" / "research.toml",
    )
    assert config.source is not None
    assert config.source.cache_dir == (tmp_path / "cache").resolve()
    assert config.limits.disk_cache_bytes == 1 << 20
    plain = config.without_content_cache()
    assert plain.source is not None and plain.source.cache_dir is None
    assert plain.source.repository == config.source.repository
    assert plain.without_content_cache() is plain
    unset = parse_config({"source": source}, base_dir=tmp_path, path=tmp_path / "r.toml")
    assert unset.source is not None and unset.source.cache_dir is None
    for bad in ({"cache_dir": ""}, {"cache_dir": 7}):
        with pytest.raises(ResearchError) as info:
            parse_config({"source": {**source, **bad}}, base_dir=tmp_path, path=tmp_path / "r")
        assert info.value.code == "config_invalid"
        assert info.value.details["key"] == "source.cache_dir"
    with pytest.raises(ResearchError) as info:
        parse_config(
            {"source": source, "limits": {"disk_cache_bytes": -1}},
            base_dir=tmp_path,
            path=tmp_path / "r",
        )
    assert info.value.details["key"] == "limits.disk_cache_bytes"


def test_an_unusable_cache_dir_is_an_outage_named_in_the_error(
    fixture: FixtureRepo, tmp_path: Path
) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    source = GitSource(fixture.path, fixture.first, url=URL, disk_cache=not_a_dir)
    with pytest.raises(ResearchUnavailable) as info:
        source.check()
    assert info.value.details.get("what") == "cannot use the content cache directory"
    assert source.disk_cache_info() == {"hits": 0, "rejected": 0, "written": 0, "evicted": 0}


# A search, then a kill -9 of this very process while the background writer
# has its temporary file open (polled for in the cache directory).
KILLED = """
import os, signal, sys, time
from viano_bug_analysis.project_research.git_source import GitSource
repo, commit, cache = sys.argv[1:4]
source = GitSource(repo, commit, url="https://git.example.invalid/big.git", disk_cache=cache)
source.search(text="needle", case_sensitive=True, path_prefix=None, offset=0, limit=100)
give_up = time.monotonic() + 30
while time.monotonic() < give_up:
    names = os.listdir(cache)
    if any(n.startswith("tmp-") for n in names):
        print("writing", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    if any(n.startswith("seg-") for n in names):
        break
print("missed", flush=True)
"""

# A search and a normal exit without any call that waits for the writer.
EXITS = """
import sys
from viano_bug_analysis.project_research.git_source import GitSource
repo, commit, cache = sys.argv[1:4]
source = GitSource(repo, commit, url="https://git.example.invalid/big.git", disk_cache=cache)
source.search(text="needle", case_sensitive=True, path_prefix=None, offset=0, limit=100)
"""


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    # ~25 MB of text, so that writing the segment takes long enough to be caught.
    repo = tmp_path_factory.mktemp("cache-big")
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    line = b"".join(b"line %d of a generated file, no match here\n" % i for i in range(6000))
    files = {f"f{n:03d}.txt": line + b"needle %d\n" % n for n in range(100)}
    return repo, commit(repo, files)


def big_search(repo: Path, head: str, cache: Path | None) -> dict[str, Any]:
    source = GitSource(repo, head, url="https://git.example.invalid/big.git", disk_cache=cache)
    result = source.search(
        text="needle", case_sensitive=True, path_prefix=None, offset=0, limit=100
    )
    source.close()
    return result


def test_kill_9_while_writing_leaves_only_a_temp_file(
    big_repo: tuple[Path, str], tmp_path: Path
) -> None:
    repo, head = big_repo
    expected = big_search(repo, head, None)
    # The kill has to land while the writer runs; a child whose writer was
    # faster than its poll says "missed" and leaves a whole segment, so that
    # attempt proves nothing and is tried again in a fresh directory.
    for attempt in range(8):
        cache = tmp_path / f"cache-{attempt}"
        cache.mkdir()
        done = subprocess.run(
            [sys.executable, "-c", KILLED, str(repo), head, str(cache)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.stdout != "missed\n":
            break
    assert done.stdout == "writing\n", "the kill must land while the segment is written"
    assert done.returncode == -9
    names = {p.name for p in cache.iterdir()}
    assert any(n.startswith("tmp-") for n in names), names
    assert not segments(cache), "no segment appears from a killed write"
    # The next process ignores the temporary file, answers the same, writes
    # the segment and removes what the killed writer left.
    source = GitSource(repo, head, url="https://git.example.invalid/big.git", disk_cache=cache)
    found = source.search(text="needle", case_sensitive=True, path_prefix=None, offset=0, limit=100)
    assert found == expected
    assert source.cache_info()["blobs_read"] == 100
    source.close()
    assert not any(p.name.startswith("tmp-") for p in cache.iterdir())
    assert len(segments(cache)) == 1
    assert big_search(repo, head, cache) == expected


def test_a_process_that_just_exits_still_leaves_its_segment(
    big_repo: tuple[Path, str], tmp_path: Path
) -> None:
    repo, head = big_repo
    cache = tmp_path / "cache"
    subprocess.run(
        [sys.executable, "-c", EXITS, str(repo), head, str(cache)], check=True, timeout=120
    )
    assert len(segments(cache)) == 1
    assert not any(p.name.startswith("tmp-") for p in cache.iterdir())
    served = GitSource(repo, head, url="https://git.example.invalid/big.git", disk_cache=cache)
    served.search(text="needle", case_sensitive=True, path_prefix=None, offset=0, limit=100)
    assert served.cache_info()["blobs_read"] == 0
