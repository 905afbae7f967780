"""The database name belongs to the operator, not to the profile.

The bundled profile names no database; its tables are read in the database
the project config names (``[database] name``) or, without a name, the only
one it allowlists. A profile's own ``database`` is used only where the
operator allowlists it.
"""

from __future__ import annotations

import pytest

from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.origin import query_database


def test_the_bundled_profile_names_no_database() -> None:
    assert vcore_profile().database is None


@pytest.mark.parametrize(
    ("profile_database", "database", "expected"),
    [
        (None, {"snapshot_id": "s", "databases": ["world"]}, "world"),
        ("cata_world", {"snapshot_id": "s", "databases": ["world"]}, "world"),
        ("cata_world", {"snapshot_id": "s", "databases": ["cata_world", "other"]}, "cata_world"),
        (None, {"snapshot_id": "s", "databases": ["a", "b"]}, None),
        (None, {"snapshot_id": "s", "databases": ["a", "b"], "name": "b"}, "b"),
        ("a", {"snapshot_id": "s", "databases": ["a", "b"], "name": "b"}, "b"),
    ],
)
def test_the_configured_name_then_the_allowlist_decide(
    profile_database: str | None, database: dict[str, object], expected: str | None
) -> None:
    assert query_database(profile_database, {"database": database}) == expected


def test_without_a_database_provider_the_profile_s_own_database_stays() -> None:
    assert query_database("cata_world", {"git": {"url": "u", "commit": "c"}}) == "cata_world"


def test_a_profile_in_a_database_sends_every_query_there() -> None:
    profile = vcore_profile().in_database("world")
    assert profile.database == "world"
    assert vcore_profile().database is None  # the shared profile is unchanged
