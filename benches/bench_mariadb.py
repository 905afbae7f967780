"""Benchmark (database.rows): one 100-row page from the fixture world DB.

``MariaDbSource.rows`` (validation, allowlist, cached column check, pooled
connection, read-only transaction, JSON value forms, result dict) against raw
PyMySQL running the same SQL with the same parameters on an already open
connection, in the same transaction statements (``START TRANSACTION READ
ONLY``, the SELECT, ``ROLLBACK``) with PyMySQL's default conversions.
Target: at most 20% overhead (ours median / raw median <= 1.2). Besides the
two benchmarks, the module prints a paired ratio (median of per-round ratios
with both interleaved), which load on a shared machine disturbs far less.

Needs the test MariaDB (VBA_TEST_DB_PORT, VBA_TEST_DB_PASSWORD_FILE); skipped
without it. Run:

    scripts/test_services.sh start && set -a && . service-data/test-services.env && set +a
    .venv/bin/python -m pytest benches/bench_mariadb.py -o python_files="bench_*.py" \\
        --benchmark-only --benchmark-group-by=group
    scripts/test_services.sh stop
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pymysql
import pytest

from viano_bug_analysis.project_research.mariadb_source import MariaDbSource

GROUP = "database.rows 100-row page"
COLUMNS = [
    "entry", "name", "subname", "minlevel", "maxlevel", "faction", "npcflag",
    "speed_run", "HealthModifier", "DamageModifier", "ScriptName", "IconName",
]  # fmt: skip
FILTERS = [{"column": "entry", "operator": "ge", "value": 200000}]
LIMIT = 100
# What MariaDbSource.rows sends for the request above (checked in the test).
RAW_SQL = (
    f"SELECT {', '.join(f'`{c}`' for c in COLUMNS)} FROM `cata_world`.`creature_template`"
    " WHERE `entry` >= %s ORDER BY `entry` LIMIT %s OFFSET %s"
)
RAW_PARAMS = (200000, LIMIT + 1, 0)
ROUNDS = 500
PAIRED_ROUNDS = 1000

MEDIANS: dict[str, float] = {}
PAIRED: dict[str, float] = {}


def _settings() -> dict[str, Any]:
    port = os.environ.get("VBA_TEST_DB_PORT")
    password_file = os.environ.get("VBA_TEST_DB_PASSWORD_FILE")
    if not port or not password_file:
        pytest.skip(
            "no test MariaDB: run `scripts/test_services.sh start` and export "
            "service-data/test-services.env (VBA_TEST_DB_PORT/VBA_TEST_DB_PASSWORD_FILE)"
        )
    return {
        "host": "127.0.0.1",
        "port": int(port),
        "user": "viano_reader",
        "password": Path(password_file).read_text().strip(),
    }


@pytest.fixture(scope="module")
def settings() -> dict[str, Any]:
    return _settings()


@pytest.fixture(scope="module")
def source(settings: dict[str, Any]) -> Iterator[MariaDbSource]:
    with MariaDbSource(
        **settings, allow={"cata_world": ["creature_template"]}, snapshot_id="bench"
    ) as opened:
        yield opened


@pytest.fixture(scope="module")
def raw(settings: dict[str, Any]) -> Iterator[pymysql.connections.Connection[Any]]:
    connection = pymysql.connect(**settings, charset="utf8mb4", autocommit=False)
    with connection.cursor() as cursor:
        cursor.execute("SET SESSION max_statement_time = 5, time_zone = '+00:00'")
    yield connection
    connection.close()


@pytest.fixture(scope="module", autouse=True)
def report_ratio(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "ours" not in MEDIANS or "raw" not in MEDIANS:
        return
    line = (
        f"ratio  {GROUP}: ours {MEDIANS['ours'] * 1e3:.3f} ms / raw PyMySQL"
        f" {MEDIANS['raw'] * 1e3:.3f} ms = {MEDIANS['ours'] / MEDIANS['raw']:.2f}x"
        f" (overhead {(MEDIANS['ours'] / MEDIANS['raw'] - 1) * 100:+.1f}%, target <= +20%)"
    )
    lines = [line]
    if "ours/raw" in PAIRED:
        paired = PAIRED["ours/raw"]
        lines.append(
            f"ratio  {GROUP}: paired median ours/raw = {paired:.2f}x"
            f" (overhead {(paired - 1) * 100:+.1f}%, {PAIRED_ROUNDS} interleaved rounds)"
        )
    plugins = request.config.pluginmanager
    reporter = plugins.get_plugin("terminalreporter")
    capture = plugins.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line("")
            for text in lines:
                reporter.write_line(text)


def _record(benchmark: Any, role: str) -> None:
    if benchmark.stats is None:  # --benchmark-disable
        return
    MEDIANS[role] = benchmark.stats.stats.median
    benchmark.extra_info["role"] = "reference" if role == "raw" else role
    if "raw" in MEDIANS and "ours" in MEDIANS:
        benchmark.extra_info["overhead_vs_raw"] = MEDIANS["ours"] / MEDIANS["raw"] - 1


def ours(source: MariaDbSource) -> dict[str, Any]:
    return source.rows(
        database=None,
        table="creature_template",
        columns=COLUMNS,
        filters=FILTERS,
        offset=0,
        limit=LIMIT,
    )


def raw_page(connection: pymysql.connections.Connection[Any]) -> tuple[tuple[Any, ...], ...]:
    with connection.cursor() as cursor:
        cursor.execute("START TRANSACTION READ ONLY")
        cursor.execute(RAW_SQL, RAW_PARAMS)
        fetched = tuple(cursor.fetchall())
    connection.rollback()
    return fetched


@pytest.mark.benchmark(group=GROUP)
def test_rows_page_raw_pymysql(benchmark: Any, raw: pymysql.connections.Connection[Any]) -> None:
    fetched = benchmark.pedantic(raw_page, args=(raw,), rounds=ROUNDS, warmup_rounds=20)
    assert len(fetched) == LIMIT + 1
    _record(benchmark, "raw")


@pytest.mark.benchmark(group=GROUP)
def test_rows_page_ours(
    benchmark: Any, source: MariaDbSource, raw: pymysql.connections.Connection[Any]
) -> None:
    ours(source)  # warm: column cache and one pooled connection
    sent: list[tuple[str, Any]] = []
    run = source._run

    def spy(statements: Sequence[tuple[str, Any]]) -> Any:
        sent.extend(statements)
        return run(statements)

    source._run = spy  # type: ignore[method-assign]
    ours(source)
    del source._run
    assert sent == [(RAW_SQL, RAW_PARAMS)]  # the baseline runs exactly our statement
    result = benchmark.pedantic(ours, args=(source,), rounds=ROUNDS, warmup_rounds=20)
    assert result["returned"] == LIMIT and result["truncated"] is True
    expected = raw_page(raw)[:LIMIT]
    assert [row["entry"] for row in result["rows"]] == [row[0] for row in expected]
    # FLOAT columns (the real schema's modifiers) come back as the same number.
    assert [row["HealthModifier"] for row in result["rows"]] == [row[8] for row in expected]
    _record(benchmark, "ours")
    # The two benchmarks above run one after the other, so load drift on a busy
    # machine moves their ratio; interleaving both per round gives a steadier one.
    ratios = []
    for _ in range(PAIRED_ROUNDS):
        start = time.perf_counter()
        raw_page(raw)
        middle = time.perf_counter()
        ours(source)
        ratios.append((time.perf_counter() - middle) / (middle - start))
    PAIRED["ours/raw"] = statistics.median(ratios)
    benchmark.extra_info["paired_overhead_vs_raw"] = PAIRED["ours/raw"] - 1
