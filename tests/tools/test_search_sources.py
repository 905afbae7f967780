"""A search result lists only the sources with hits, plus how many were searched.

Issue 11, point 23: one ``sources`` entry per selected source made a
``limit: 1`` search over 1,522 sources ~180 KB, so a batch of such searches
hit ``result_too_large`` whatever page size was asked for.
"""

from __future__ import annotations

import jsonschema
import pytest

from tests.tools.many_sources import SOURCE_COUNT, build_many_sources, limits_for, search_all
from tests.tools.package_factory import BuiltPackage
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.tools import InvestigationToolRouter


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> BuiltPackage:
    return build_many_sources(tmp_path_factory.mktemp("many"))


def test_only_sources_with_hits_are_listed(package: BuiltPackage) -> None:
    router = InvestigationToolRouter(limits=limits_for(package))
    result = router.query(package.path, package.request(search_all(package, "Wolpertinger")))
    jsonschema.validate(result, InvestigationToolRouter.result_schema())
    found = result["results"][0]["result"]
    ref = package.refs["src/f0007.cpp"]
    assert found["sources_searched"] == SOURCE_COUNT
    assert [(s["source_ref"], s["matching_lines"]) for s in found["sources"]] == [(ref, 1)]
    assert [m["source_ref"] for m in found["matches"]] == [ref]


def test_a_search_without_hits_lists_no_source(package: BuiltPackage) -> None:
    router = InvestigationToolRouter(limits=limits_for(package))
    result = router.query(package.path, package.request(search_all(package, "Gnome")))
    found = result["results"][0]["result"]
    assert (found["sources"], found["sources_searched"], found["total"]) == ([], SOURCE_COUNT, 0)


def test_a_limit_one_search_over_1522_sources_is_small(package: BuiltPackage) -> None:
    router = InvestigationToolRouter(limits=limits_for(package))
    result = router.query(package.path, package.request(search_all(package, "Wolpertinger")))
    assert len(canonical_bytes(result)) < 4096


def test_a_full_batch_of_limit_one_searches_fits_the_default_result_size(
    package: BuiltPackage,
) -> None:
    # 16 searches, one hit each: before, 16 x ~180 KB of empty entries > 2 MiB.
    batch = package.request(*(search_all(package, "Wolpertinger") for _ in range(16)))
    result = InvestigationToolRouter(limits=limits_for(package)).query(package.path, batch)
    assert len(result["results"]) == 16
