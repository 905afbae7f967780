"""Benchmark: one 16-request batch at the limits, through the router vs the bare core.

The package holds 63 source members (~400 KiB of real C/C++ text each) and a
100,000-row snapshot: 64 selected files, just under 32 MiB together. The
batch: 12 searches over all 63 sources (8 literal, 2 case-insensitive, 2
symbol), one read_context, one describe, one lookup, one find_references.

* ``core_same_work`` (reference): the same reads, decodes, parse, searches
  and lookups through the snapshot API, without the router;
* ``router_warm``: the router as a long-running process uses it (attachment
  digests and the parsed snapshot cached, members still verified);
* ``router_cold``: a fresh router and an empty attachment digest cache;
* ``rejected_*``: the same batch whose last request names an unknown column,
  against ``router_preflight_*`` (``InvestigationToolRouter.preflight`` of the
  valid batch: every check, no handler) and ``core_preflight_only`` (the bare
  reads, decodes and parse): a rejected batch should cost no more than its
  preflight.
Target: router overhead at most 15% over the core.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from benches.bench_search import _real_source_members
from tests.tools.package_factory import build_package
from viano_bug_analysis.case.package import clear_digest_cache
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
        clear_digest_cache()
        InvestigationToolRouter().query(setup["path"], setup["request"])

    benchmark.pedantic(run, rounds=10, warmup_rounds=1)


@pytest.mark.benchmark(group=REJECT_GROUP)
def test_router_preflight_cold(benchmark, setup) -> None:
    def run() -> None:
        clear_digest_cache()
        InvestigationToolRouter().preflight(setup["path"], setup["request"])

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
        clear_digest_cache()
        _rejected(InvestigationToolRouter(), setup)

    benchmark.pedantic(run, rounds=10, warmup_rounds=1)


@pytest.mark.benchmark(group=REJECT_GROUP)
def test_rejected_warm(benchmark, setup) -> None:
    router = InvestigationToolRouter()
    benchmark.pedantic(_rejected, args=(router, setup), rounds=10, warmup_rounds=1)
