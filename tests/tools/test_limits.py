"""One ``ToolLimits`` object reaches every layer of the router (issue 11, point 17)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.package_factory import BuiltPackage, build_package
from tests.tools.test_router import DESCRIPTOR, ROWS, lookup
from viano_bug_analysis.profiles.vcore.db_tools import normalize_schema_descriptor
from viano_bug_analysis.tools import InvestigationToolRouter, ToolError, ToolLimits
from viano_bug_analysis.tools.database_query import DatabaseQueryTool


@pytest.fixture
def package(tmp_path: Path) -> BuiltPackage:
    return build_package(
        tmp_path,
        database={"quest_template.rows.json": ROWS, "quest_template.schema.json": DESCRIPTOR},
    )


def _query(router: InvestigationToolRouter, package: BuiltPackage) -> dict[str, object]:
    request = package.request(lookup(package.refs["quest_template.rows.json"], {"ID": 1}))
    return router.query(package.path, request)


def test_database_rows_applies_with_a_database_tool_passed_in(package: BuiltPackage) -> None:
    # The README/demo construction: an adapter-carrying tool plus limits.
    router = InvestigationToolRouter(
        database_tool=DatabaseQueryTool(normalize_schema_descriptor),
        limits=ToolLimits(database_rows=4),
    )
    with pytest.raises(ToolError) as info:
        _query(router, package)
    assert info.value.code == "snapshot_too_many_rows"
    assert (info.value.details["limit"], info.value.details["rows"]) == (4, 5)


def test_raised_database_rows_overrides_the_tool_default(package: BuiltPackage) -> None:
    tool = DatabaseQueryTool(normalize_schema_descriptor, max_rows=2)
    router = InvestigationToolRouter(database_tool=tool, limits=ToolLimits(database_rows=5))
    assert _query(router, package)["results"]


def test_a_cached_table_is_checked_against_each_router_limits(package: BuiltPackage) -> None:
    tool = DatabaseQueryTool(normalize_schema_descriptor)
    generous = InvestigationToolRouter(database_tool=tool, limits=ToolLimits(database_rows=5))
    strict = InvestigationToolRouter(database_tool=tool, limits=ToolLimits(database_rows=4))
    assert _query(generous, package)["results"]
    with pytest.raises(ToolError) as info:
        _query(strict, package)
    assert info.value.code == "snapshot_too_many_rows"
