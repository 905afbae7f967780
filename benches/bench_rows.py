"""Benchmark (rows): typed row snapshot queries, 100,000 rows x 12 columns.

One generated `viano-database-snapshot` document (fixed seed, ~25 MB; ints,
big ints, floats, strings with escapes and non-ASCII text, bools, nulls),
three groups, each side by side with its pure-Python baseline:

* cold: ``RowSnapshot.parse`` + one typed lookup, vs ``orjson.loads`` (and
  ``json.loads``) + a Python loop with typed equality. Note that orjson
  turns integers beyond 64 bits into floats, so its baseline would not even
  find a big-int value; it is the fastest Python parse, so it is the bar.
* warm lookup on the parsed snapshot vs the loop over already-parsed rows;
* warm reference search of one value across 3 columns vs the loop.

Run: ``pytest benches/bench_rows.py --benchmark-only --benchmark-group-by=group``.
The ratios (baseline median / ours median) are printed at the end of the
module and stored in each ``ours`` benchmark's ``extra_info``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from benches.ratios import Ratios
from viano_bug_analysis._native import RowSnapshot

ROWS = 100_000
SEED = 20_240_611
LIMIT = 20
FILTERS: list[tuple[str, object]] = [("account_id", 4242)]
REFERENCE_VALUE = 77
REFERENCE_COLUMNS = ["account_id", "level", "flags"]

COLD = "rows cold: parse + 1 typed lookup, 100k x 12"
WARM = "rows warm: 1 typed lookup, 100k x 12"
REFS = "rows warm: 1 value in 3 columns, 100k x 12"

RATIOS = Ratios()


def _document() -> bytes:
    rng = random.Random(SEED)
    notes = ["ok", 'caf\u00e9 "quoted"', "line\nbreak", "1; DROP TABLE x", "\U0001f600 smile", ""]
    rows = []
    for i in range(ROWS):
        rows.append(
            {
                "id": i + 1,
                "account_id": rng.randrange(1, 5000),
                "guid": rng.randrange(2**64, 2**72) if rng.random() < 0.3 else rng.randrange(2**40),
                "score": rng.random() * 1000,
                "name": f"player_{rng.randrange(100_000)}",
                "email": f"user{rng.randrange(100_000)}@example.com",
                "note": rng.choice(notes),
                "active": rng.random() < 0.5,
                "deleted_at": None if rng.random() < 0.8 else f"2024-0{rng.randrange(1, 10)}-11",
                "balance": round(rng.uniform(-1e6, 1e6), 2),
                "level": rng.randrange(1, 100),
                "flags": rng.choice([None, 0, 1, 77, "77", True, 77.0]),
            }
        )
    doc = {
        "format": "viano-database-snapshot",
        "format_version": 1,
        "table": "players",
        "columns": [{"name": name, "type": "any"} for name in rows[0]],
        "rows": rows,
        "coverage": "partial",
    }
    return json.dumps(doc).encode()


@pytest.fixture(scope="module")
def data() -> bytes:
    return _document()


@pytest.fixture(scope="module")
def parsed_rows(data: bytes) -> list[dict[str, Any]]:
    return json.loads(data)["rows"]  # exact ints, unlike orjson


@pytest.fixture(scope="module")
def snapshot(data: bytes) -> RowSnapshot:
    return RowSnapshot.parse(data)


@pytest.fixture(scope="module", autouse=True)
def report_ratios(request: pytest.FixtureRequest) -> Iterator[None]:
    yield from RATIOS.report(request)


_MISSING = object()


def typed_lookup(rows: list[dict[str, Any]], filters: list[tuple[str, object]], limit: int):  # type: ignore[no-untyped-def]
    """The baseline: a plain loop with strict typed equality (no generator per row)."""
    hits = []
    for index, row in enumerate(rows):
        for column, value in filters:
            cell = row.get(column, _MISSING)
            if type(cell) is not type(value) or cell != value:
                break
        else:
            hits.append((index, row))
    return len(hits), hits[:limit]


def typed_references(rows: list[dict[str, Any]], value: object, columns: list[str], limit: int):  # type: ignore[no-untyped-def]
    hits = []
    kind = type(value)
    for index, row in enumerate(rows):
        matched = []
        for column in columns:
            cell = row.get(column, _MISSING)
            if type(cell) is kind and cell == value:
                matched.append(column)
        if matched:
            hits.append((index, matched, row))
    return len(hits), hits[:limit]


def ours_lookup(snap: RowSnapshot) -> tuple[int, list[Any]]:
    return snap.lookup(FILTERS, columns=None, offset=0, limit=LIMIT)


# --- 1. cold ------------------------------------------------------------------------------


@pytest.mark.benchmark(group=COLD)
def test_cold_baseline_orjson_loop(benchmark: Any, data: bytes) -> None:
    def run() -> tuple[int, list[Any]]:
        return typed_lookup(orjson.loads(data)["rows"], FILTERS, LIMIT)

    total, _ = benchmark.pedantic(run, rounds=5, warmup_rounds=1)
    assert total > 0
    RATIOS.record(benchmark, COLD, "orjson.loads+loop")


@pytest.mark.benchmark(group=COLD)
def test_cold_json_loop(benchmark: Any, data: bytes) -> None:
    def run() -> tuple[int, list[Any]]:
        return typed_lookup(json.loads(data)["rows"], FILTERS, LIMIT)

    benchmark.pedantic(run, rounds=3, warmup_rounds=0)
    RATIOS.record(benchmark, COLD, "json.loads+loop")


@pytest.mark.benchmark(group=COLD)
def test_cold_ours(benchmark: Any, data: bytes, parsed_rows: list[dict[str, Any]]) -> None:
    total, page = benchmark.pedantic(
        lambda: ours_lookup(RowSnapshot.parse(data)), rounds=10, warmup_rounds=1
    )
    expected_total, expected_page = typed_lookup(parsed_rows, FILTERS, LIMIT)
    assert (total, page) == (expected_total, expected_page)
    RATIOS.record(benchmark, COLD, "ours")


# --- 2. warm lookup -----------------------------------------------------------------------


@pytest.mark.benchmark(group=WARM)
def test_warm_baseline_loop(benchmark: Any, parsed_rows: list[dict[str, Any]]) -> None:
    benchmark.pedantic(typed_lookup, args=(parsed_rows, FILTERS, LIMIT), rounds=20, warmup_rounds=1)
    RATIOS.record(benchmark, WARM, "python loop")


@pytest.mark.benchmark(group=WARM)
def test_warm_ours(
    benchmark: Any, snapshot: RowSnapshot, parsed_rows: list[dict[str, Any]]
) -> None:
    result = benchmark.pedantic(ours_lookup, args=(snapshot,), rounds=200, warmup_rounds=5)
    assert result == typed_lookup(parsed_rows, FILTERS, LIMIT)
    RATIOS.record(benchmark, WARM, "ours")


# --- 3. warm reference search ---------------------------------------------------------------


@pytest.mark.benchmark(group=REFS)
def test_refs_baseline_loop(benchmark: Any, parsed_rows: list[dict[str, Any]]) -> None:
    benchmark.pedantic(
        typed_references,
        args=(parsed_rows, REFERENCE_VALUE, REFERENCE_COLUMNS, LIMIT),
        rounds=20,
        warmup_rounds=1,
    )
    RATIOS.record(benchmark, REFS, "python loop")


@pytest.mark.benchmark(group=REFS)
def test_refs_ours(
    benchmark: Any, snapshot: RowSnapshot, parsed_rows: list[dict[str, Any]]
) -> None:
    def run() -> tuple[int, list[Any]]:
        return snapshot.find_references(
            REFERENCE_VALUE, REFERENCE_COLUMNS, columns=None, offset=0, limit=LIMIT
        )

    total, page = benchmark.pedantic(run, rounds=200, warmup_rounds=5)
    expected = typed_references(parsed_rows, REFERENCE_VALUE, REFERENCE_COLUMNS, LIMIT)
    assert total == expected[0] > 0
    assert page == expected[1]
    RATIOS.record(benchmark, REFS, "ours")
