"""The report corpus end to end: `vba case import`, then `vba case build` against the test DB.

Every report of tests/corpus/reports is imported as an operator would (the
library function behind `vba case import`) and built with the bundled Vcore
profile, unchanged, against the fixture world database loaded under
TrinityCore's default name ``world`` (the profile names no database). What
the facts name is compared with what a person read in the report
(tests/corpus/expected): precision and recall over the corpus at least 0.95
each, and no report yields a mention it sets as a trap (a list number, an
issue reference, a build number). benches/bench_corpus.py reports the same
figures and the queries per report.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.case.builder.conftest import source_repo, write_config
from tests.corpus.scoring import (
    Built,
    Score,
    expected_keys,
    expected_of,
    forbidden,
    found_keys,
    import_and_build,
    reports,
)
from tests.project_research.conftest import TestDatabase, mariadb
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.project_research import ProjectResearch, load_config

__all__ = ["mariadb", "source_repo"]

WORLD = "world"


@pytest.fixture(scope="module")
def corpus_builds(
    tmp_path_factory: pytest.TempPathFactory,
    mariadb: TestDatabase,
    source_repo: tuple[Path, str],
) -> Iterator[dict[str, Built]]:
    root = tmp_path_factory.mktemp("corpus")
    repo, commit = source_repo
    config_path = write_config(root, mariadb, repo, commit, database=WORLD)
    config = load_config(config_path)
    with ProjectResearch(config) as research:
        built = {r.stem: import_and_build(r, root, research, config) for r in reports()}
    yield built


def test_the_corpus_is_big_enough() -> None:
    assert len(reports()) >= 40


def test_mentions_reach_the_precision_and_recall_targets(corpus_builds: dict[str, Built]) -> None:
    score = Score()
    for report in reports():
        built = corpus_builds[report.stem]
        score.add(
            report.stem,
            expected_keys(expected_of(report)),
            found_keys(built.facts),
            built.queries,
        )
    detail = f"misses {score.misses}\nextras {score.extras}"
    assert score.precision >= 0.95, detail
    assert score.recall >= 0.95, detail


@pytest.mark.parametrize("report", reports(), ids=lambda p: p.stem)
def test_no_report_yields_a_mention_it_does_not_make(
    report: Path, corpus_builds: dict[str, Built]
) -> None:
    found = found_keys(corpus_builds[report.stem].facts)
    assert not forbidden(expected_of(report), found)


@pytest.mark.parametrize("report", reports(), ids=lambda p: p.stem)
def test_the_imported_spec_keeps_title_url_and_revision(
    report: Path, corpus_builds: dict[str, Built]
) -> None:
    expected = expected_of(report)
    spec = corpus_builds[report.stem].spec
    metadata = spec["report"]["metadata"]
    assert spec["report"]["title"] == expected["title"]
    assert metadata["source"]["url"] == expected["url"]
    revision = metadata.get("revision", {}).get("commit")
    assert revision == expected["revision"]


def test_every_package_of_the_corpus_loads(corpus_builds: dict[str, Built]) -> None:
    # The builds wrote real packages; each one loads (manifest, case, hashes).
    for built in corpus_builds.values():
        assert load_package(built.package).case["report"]["title"] == built.spec["report"]["title"]
