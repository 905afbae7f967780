"""Benchmark: one 16-request batch at the limits, through the router vs the bare core.

The package holds 63 source members (~400 KiB of real C/C++ text each) and a
100,000-row snapshot: 64 selected files, just under 32 MiB together. The
batch: 12 searches over all 63 sources (8 literal, 2 case-insensitive, 2
symbol), one read_context, one describe, one lookup, one find_references.

* ``core_same_work`` (reference): the same reads, decodes, parse, searches
  and lookups through the snapshot API, without the router;
* ``router_warm``: the router as a long-running process uses it (attachment
  digests and the parsed snapshot cached, members still verified);
* ``router_cold``: a fresh router that trusts no digest (``digest_cache=False``:
  every attachment hashed, every member read);
* ``rejected_*``: the same batch whose last request names an unknown column,
  against ``router_preflight_*`` (``InvestigationToolRouter.preflight`` of the
  valid batch: every check, no handler) and ``core_preflight_only`` (the bare
  reads, decodes and parse): a rejected batch should cost no more than its
  preflight.
Target: router overhead at most 15% over the core.

A third group (issue 25): one typed lookup (``database.lookup``, one filter)
on a 100,000-row table (6.2 MB member), warm, through the router against a
plain Python loop with typed equality over the already-parsed rows (the
reference, ``bench_rows.typed_lookup``):

* ``lookup_router_digest_cache``: the router as a long-lived process uses it
  by default: the attachment's file identity checked by ``fstat`` on every
  batch, its digest and the member's verification trusted from the digest
  cache, the parsed rows from the table cache;
* ``lookup_router_member_rehash``: the same, but the member is inflated and
  hashed on every batch (what every warm batch paid before the digest cache
  kept member verifications);
* ``lookup_router_no_digest_cache``: ``--no-digest-cache``: the attachment
  hashed and the member verified on every batch;
* ``lookup_second_process_first``: a new process's first lookup (timed from
  outside: the process is started and has imported everything before the
  clock starts), trusting the digest cache file an earlier process wrote; it
  still reads and parses the member, as no rows are cached yet;
* ``lookup_second_process_first_no_digest_cache``: the same with
  ``--no-digest-cache`` (the attachment hashed as well).
Target: ``lookup_router_digest_cache`` at most 0.5x the reference.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from benches.bench_rows import typed_lookup
from benches.bench_search import _real_source_members
from tests.tools.package_factory import build_package
from viano_bug_analysis.case import digest_cache
from viano_bug_analysis.case.digest_cache import DigestCache
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.snapshot import (
    LineQuery,
    MemberRef,
    RowTable,
    SnapshotArchive,
    read_lines,
    search_lines,
)
from viano_bug_analysis.tools import InvestigationToolRouter, ToolError

SOURCES = 63
SOURCE_BYTES = 400 * 1024
ROWS = 100_000
GROUP = "router: 16-request batch at the limits (64 files, ~32 MiB, 100k rows)"
REJECT_GROUP = "router: rejected batch (unknown column in the last request)"
LOOKUP_GROUP = "router: warm typed lookup, 100k-row table (6.2 MB), vs a Python loop"
LOOKUP_FILTER = {"faction": 35}
REPO = Path(__file__).resolve().parents[1]

SEARCHES = [
    LineQuery("literal", "#include <vector>"),
    LineQuery("literal", "static_assert("),
    LineQuery("literal", "std::unique_ptr"),
    LineQuery("literal", "return nullptr;"),
    LineQuery("literal", "Wolpertinger"),
    LineQuery("literal", "typedef struct"),
    LineQuery("literal", "noexcept(true)"),
    LineQuery("literal", "__THROW"),
    LineQuery("literal_ignore_case", "deprecated"),
    LineQuery("literal_ignore_case", "copyright"),
    LineQuery("symbol", "memcpy"),
    LineQuery("symbol", "pthread_mutex_lock"),
]


def _rows() -> bytes:
    rng = random.Random(7)
    rows = [
        {"entry": i, "name": f"c{i}", "faction": rng.randrange(2000), "ScriptName": ""}
        for i in range(ROWS)
    ]
    return orjson.dumps(
        {
            "format": "viano-database-snapshot",
            "format_version": 1,
            "table": "creature_template",
            "columns": [
                {"name": "entry", "type": "integer"},
                {"name": "name", "type": "string"},
                {"name": "faction", "type": "integer"},
                {"name": "ScriptName", "type": "string"},
            ],
            "rows": rows,
            "coverage": "complete_snapshot",
        }
    )


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sources = dict(_real_source_members(SOURCES, SOURCE_BYTES))
    rows = _rows()
    built = build_package(
        tmp_path_factory.mktemp("bench-router"),
        sources=sources,
        database={"creature_template.json": rows},
    )
    src_refs = [built.refs[name] for name in sources]
    db_ref = built.refs["creature_template.json"]
    requests: list[dict[str, Any]] = []
    for query in SEARCHES:
        if query.mode == "symbol":
            args = {"source_refs": src_refs, "symbol": query.pattern}
            requests.append({"operation": "source.find_symbol", "arguments": args})
        else:
            args = {
                "source_refs": src_refs,
                "text": query.pattern,
                "case_sensitive": query.mode == "literal",
            }
            requests.append({"operation": "source.find_text", "arguments": args})
        args.update(offset=0, limit=100)
    requests += [
        {
            "operation": "source.read_context",
            "arguments": {"source_ref": src_refs[5], "start_line": 100, "end_line": 299},
        },
        {"operation": "database.describe", "arguments": {"source_ref": db_ref}},
        {
            "operation": "database.lookup",
            "arguments": {
                "source_ref": db_ref,
                "filters": {"faction": 35},
                "offset": 0,
                "limit": 100,
            },
        },
        {
            "operation": "database.find_references",
            "arguments": {
                "source_ref": db_ref,
                "search_columns": ["entry", "faction"],
                "value": 1200,
                "offset": 0,
                "limit": 100,
            },
        },
    ]
    request = built.request(*requests)
    bad = orjson.loads(orjson.dumps(request))
    bad["requests"][-1]["arguments"]["search_columns"] = ["entry", "no_such_column"]
    source_refs = [MemberRef(n, hashlib.sha256(d).hexdigest(), len(d)) for n, d in sources.items()]
    db_member = MemberRef("creature_template.json", hashlib.sha256(rows).hexdigest(), len(rows))
    return {
        "path": built.path,
        "request": request,
        "bad": bad,
        "source_refs": source_refs,
        "db_member": db_member,
    }


def _core(setup: dict[str, Any], *, run_queries: bool) -> None:
    root: Path = setup["path"]
    texts = SnapshotArchive(root / "attachments" / "wowsrc.zip").read_texts(
        setup["source_refs"], max_bytes=8 << 20
    )
    db = SnapshotArchive(root / "attachments" / "db.zip")
    table = RowTable.parse(db.read_bytes(setup["db_member"], max_bytes=8 << 20))
    if not run_queries:
        return
    search_lines(texts, SEARCHES)
    read_lines(texts[5], 100, 299)
    table.lookup({"faction": 35}, limit=100)
    table.find_references(1200, ["entry", "faction"], limit=100)


@pytest.mark.benchmark(group=GROUP)
def test_core_same_work(benchmark, setup) -> None:
    benchmark.extra_info["role"] = "reference"
    benchmark.pedantic(
        _core, args=(setup,), kwargs={"run_queries": True}, rounds=10, warmup_rounds=1
    )


@pytest.mark.benchmark(group=GROUP)
def test_router_warm(benchmark, setup) -> None:
    router = InvestigationToolRouter()
    result = benchmark.pedantic(
        router.query, args=(setup["path"], setup["request"]), rounds=10, warmup_rounds=1
    )
    assert len(result["results"]) == 16


@pytest.mark.benchmark(group=GROUP)
def test_router_cold(benchmark, setup) -> None:
    def run() -> None:
        InvestigationToolRouter(digest_cache=False).query(setup["path"], setup["request"])

    benchmark.pedantic(run, rounds=10, warmup_rounds=1)


@pytest.mark.benchmark(group=REJECT_GROUP)
def test_router_preflight_cold(benchmark, setup) -> None:
    def run() -> None:
        InvestigationToolRouter(digest_cache=False).preflight(setup["path"], setup["request"])

    benchmark.pedantic(run, rounds=10, warmup_rounds=1)


@pytest.mark.benchmark(group=REJECT_GROUP)
def test_router_preflight_warm(benchmark, setup) -> None:
    benchmark.extra_info["role"] = "reference"
    router = InvestigationToolRouter()
    benchmark.pedantic(
        router.preflight, args=(setup["path"], setup["request"]), rounds=10, warmup_rounds=1
    )


@pytest.mark.benchmark(group=REJECT_GROUP)
def test_core_preflight_only(benchmark, setup) -> None:
    benchmark.pedantic(
        _core, args=(setup,), kwargs={"run_queries": False}, rounds=10, warmup_rounds=1
    )


def _rejected(router: InvestigationToolRouter, setup: dict[str, Any]) -> None:
    try:
        router.query(setup["path"], setup["bad"])
    except ToolError as err:
        assert err.code == "unknown_column"
    else:
        raise AssertionError("batch was not rejected")


@pytest.mark.benchmark(group=REJECT_GROUP)
def test_rejected_cold(benchmark, setup) -> None:
    def run() -> None:
        _rejected(InvestigationToolRouter(digest_cache=False), setup)

    benchmark.pedantic(run, rounds=10, warmup_rounds=1)


@pytest.mark.benchmark(group=REJECT_GROUP)
def test_rejected_warm(benchmark, setup) -> None:
    router = InvestigationToolRouter()
    benchmark.pedantic(_rejected, args=(router, setup), rounds=10, warmup_rounds=1)


# --- warm typed lookup on a 100,000-row table (issue 25) ---------------------------------


class _NoMemberTrust(DigestCache):
    """The digest cache without its member verifications: the member is re-hashed."""

    def verified_members(self, root: Any, sha256: str) -> frozenset[str]:
        return frozenset()


@pytest.fixture(scope="module")
def lookup_setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    rows = _rows()
    built = build_package(
        tmp_path_factory.mktemp("bench-lookup"), database={"creature_template.json": rows}
    )
    ref = built.refs["creature_template.json"]
    request = built.request(
        {
            "operation": "database.lookup",
            "arguments": {"source_ref": ref, "filters": LOOKUP_FILTER, "offset": 0, "limit": 100},
        }
    )
    request_file = built.path.parent / "lookup-request.json"
    request_file.write_bytes(orjson.dumps(request))
    # A package is older than the digest cache's granule when it is queried in
    # practice; until then every batch hashes (racy-git rule).
    time.sleep(digest_cache.GRANULE_NS / 1e9 + 0.1)
    first = InvestigationToolRouter(digest_cache=DigestCache(persistent=True))
    expected = first.query(built.path, request)
    assert (built.path / PackageLayout.DIGEST_CACHE).is_file()
    return {
        "path": built.path,
        "request": request,
        "request_file": request_file,
        "parsed_rows": json.loads(rows)["rows"],
        "expected": expected,
        "table_bytes": len(rows),
    }


def _check_lookup(setup: dict[str, Any], result: dict[str, Any]) -> None:
    body = result["results"][0]["result"]
    total, page = typed_lookup(setup["parsed_rows"], list(LOOKUP_FILTER.items()), 100)
    assert body["total"] == total > 0
    assert [m["row"] for m in body["rows"]] == [row for _, row in page]


@pytest.mark.benchmark(group=LOOKUP_GROUP)
def test_lookup_python_loop_baseline(benchmark, lookup_setup) -> None:
    benchmark.extra_info["role"] = "reference"
    benchmark.pedantic(
        typed_lookup,
        args=(lookup_setup["parsed_rows"], list(LOOKUP_FILTER.items()), 100),
        rounds=30,
        warmup_rounds=2,
    )


def _warm_router(benchmark, setup: dict[str, Any], cache: DigestCache | bool, rounds: int) -> None:
    router = InvestigationToolRouter(digest_cache=cache)
    router.query(setup["path"], setup["request"])
    result = benchmark.pedantic(
        router.query, args=(setup["path"], setup["request"]), rounds=rounds, warmup_rounds=3
    )
    _check_lookup(setup, result)
    assert result == setup["expected"]


@pytest.mark.benchmark(group=LOOKUP_GROUP)
def test_lookup_router_digest_cache(benchmark, lookup_setup) -> None:
    _warm_router(benchmark, lookup_setup, DigestCache(persistent=True), rounds=200)


@pytest.mark.benchmark(group=LOOKUP_GROUP)
def test_lookup_router_member_rehash(benchmark, lookup_setup) -> None:
    _warm_router(benchmark, lookup_setup, _NoMemberTrust(persistent=True), rounds=30)


@pytest.mark.benchmark(group=LOOKUP_GROUP)
def test_lookup_router_no_digest_cache(benchmark, lookup_setup) -> None:
    _warm_router(benchmark, lookup_setup, False, rounds=30)


_CHILD = """
import sys
sys.path.insert(0, {repo!r})
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.profiles import load_profile
from viano_bug_analysis.tools import InvestigationToolRouter
import orjson
request = orjson.loads(open(sys.argv[2], "rb").read())
router = InvestigationToolRouter(digest_cache=sys.argv[3] == "cache")
print("ready", flush=True)
sys.stdin.readline()
result = router.query(sys.argv[1], request)
sys.stdout.write(canonical_bytes(result).decode() + "\\n")
sys.stdout.flush()
"""


def _second_process(benchmark, setup: dict[str, Any], mode: str) -> None:
    children: list[subprocess.Popen[str]] = []
    outputs: list[str] = []
    script = _CHILD.format(repo=str(REPO))
    args = [sys.executable, "-c", script, str(setup["path"]), str(setup["request_file"]), mode]

    def start() -> tuple[tuple[Any, ...], dict[str, Any]]:
        child = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ)
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        children.append(child)
        return (child,), {}

    def first_lookup(child: subprocess.Popen[str]) -> None:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write("go\n")
        child.stdin.flush()
        outputs.append(child.stdout.readline())

    try:
        benchmark.pedantic(first_lookup, setup=start, rounds=8, warmup_rounds=1)
    finally:
        for child in children:
            child.communicate(timeout=60)
    assert outputs and all(orjson.loads(line) == setup["expected"] for line in outputs)


@pytest.mark.benchmark(group=LOOKUP_GROUP)
def test_lookup_second_process_first(benchmark, lookup_setup) -> None:
    _second_process(benchmark, lookup_setup, "cache")


@pytest.mark.benchmark(group=LOOKUP_GROUP)
def test_lookup_second_process_first_no_digest_cache(benchmark, lookup_setup) -> None:
    _second_process(benchmark, lookup_setup, "no-cache")
