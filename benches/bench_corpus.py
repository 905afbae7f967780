"""Benchmark: the report corpus (tests/corpus) imported and built against the test DB.

Each round imports every report (the library behind `vba case import`) and
builds it into a fresh package with the bundled Vcore profile against the
fixture world under the name ``world``, with the BUG-20 sample sources as
the git repository. The row's figures are the corpus's mention precision
and recall (targets: at least 0.95 each; tests/corpus/test_corpus_mentions.py
asserts them) and the queries spent per report. Beside it, the
``baseline-import-and-extract`` row: the same reports imported and their
mentions extracted, nothing asked — what reading the reports costs alone.

Needs the test MariaDB (VBA_TEST_DB_PORT, VBA_TEST_DB_PASSWORD_FILE): `make
bench` starts it.
"""

from __future__ import annotations

import itertools
import statistics
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.case.builder.conftest import build_source_repo, write_config
from tests.corpus.scoring import (
    Score,
    expected_keys,
    expected_of,
    found_keys,
    import_and_build,
    reports,
)
from tests.project_research.conftest import TestDatabase, mariadb
from viano_bug_analysis.case.intake import specs_from_source
from viano_bug_analysis.case.intake.source import read_source
from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.extract import extract
from viano_bug_analysis.project_research import ProjectResearch, load_config

__all__ = ["mariadb"]

GROUP = "corpus: import + build of every tracker report against the test DB"
_ROUND = itertools.count()


@pytest.fixture(scope="module")
def corpus_config(tmp_path_factory: pytest.TempPathFactory, mariadb: TestDatabase) -> Path:
    root = tmp_path_factory.mktemp("bench-corpus")
    repo, commit = build_source_repo(root / "repo")
    return write_config(root, mariadb, repo, commit, database="world")


def _build_all(config_path: Path, root: Path) -> Score:
    config = load_config(config_path)
    score = Score()
    with ProjectResearch(config) as research:
        for report in reports():
            built = import_and_build(report, root, research, config)
            expected = expected_keys(expected_of(report))
            score.add(report.stem, expected, found_keys(built.facts), built.queries)
    return score


def test_corpus_import_and_build(benchmark: Any, corpus_config: Path) -> None:
    benchmark.group = GROUP
    benchmark.name = f"import-and-build-{len(reports())}-reports"
    scores: list[Score] = []

    def fresh() -> tuple[tuple[Path, Path], dict[str, Any]]:
        # A new package directory per round: a rebuild of the same package asks nothing.
        return (corpus_config, corpus_config.parent / f"round-{next(_ROUND)}"), {}

    def run(config: Path, root: Path) -> None:
        scores.append(_build_all(config, root))

    benchmark.pedantic(run, setup=fresh, rounds=3, warmup_rounds=0)
    score = scores[-1]
    benchmark.extra_info["figures"] = {
        "precision": round(score.precision, 4),
        "recall": round(score.recall, 4),
        "reports": len(score.queries),
        "queries per report (mean)": round(statistics.mean(score.queries), 1),
        "queries per report (max)": max(score.queries),
    }


def test_baseline_import_and_extract(benchmark: Any) -> None:
    benchmark.group = GROUP
    benchmark.name = "baseline-import-and-extract"
    profile = vcore_profile()

    def run() -> int:
        mentions = 0
        for report in reports():
            specs, _ = specs_from_source(read_source(report))
            for imported in specs:
                found = extract(profile, orjson.loads(imported.data())["report"], [])
                mentions += len(found.mentions) + len(found.untyped) + len(found.names)
        return mentions

    benchmark.pedantic(run, rounds=5, warmup_rounds=1)
