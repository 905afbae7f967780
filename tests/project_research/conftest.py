"""Fixtures for the ProjectResearch tests that need the real MariaDB.

`make test` starts a throwaway server loaded with tests/fixtures/world_db.sql
and world_db_noquest.sql (scripts/test_services.sh) and exports VBA_TEST_DB_PORT,
VBA_TEST_DB_PASSWORD_FILE and VBA_TEST_DB_DIR. Without them the database
tests skip, except under CI=true, where a missing service fails the run.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymysql
import pytest

from viano_bug_analysis.project_research.mariadb_source import MariaDbSource

WORLD_DATABASE = "cata_world"
# The same world without quest_template (tests/fixtures/world_db_noquest.sql).
NOQUEST_DATABASE = "cata_world_noquest"
# The same world under TrinityCore's default name (tests/fixtures/world_db_default_name.sql).
DEFAULT_NAME_DATABASE = "world"
# Not a world database: one table with a column of every awkward type.
TYPES_DATABASE = "vba_fixture_types"
WORLD_TABLES = (
    "creature_template",
    "quest_template",
    "quest_template_addon",
    "item_script_names",
    "item_template_addon",
    "creature_queststarter",
    "creature_questender",
    "smart_scripts",
    "spell_script_names",
    "conditions",
    "creature",
    "gameobject",
    "quest_template_locale",
    "creature_template_locale",
    "gameobject_template_locale",
)
ALLOW: Mapping[str, Sequence[str]] = {
    WORLD_DATABASE: WORLD_TABLES,
    TYPES_DATABASE: ("world_meta",),
}
SNAPSHOT_ID = "cata_world@fixture"
READER = "viano_reader"
HOW_TO_ENABLE = (
    "run `make test` (starts a throwaway MariaDB) or set VBA_TEST_DB_PORT/VBA_TEST_DB_PASSWORD_FILE"
)


@dataclass(frozen=True)
class TestDatabase:
    """Where the throwaway server listens and how to reach it."""

    __test__ = False  # not a test class, despite the name

    port: int
    password: str
    directory: Path | None
    host: str = "127.0.0.1"
    user: str = READER

    def source(self, **overrides: Any) -> MariaDbSource:
        settings: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "allow": ALLOW,
            "snapshot_id": SNAPSHOT_ID,
        }
        settings.update(overrides)
        return MariaDbSource(**settings)

    def admin(self) -> pymysql.connections.Connection[Any]:
        """The server's admin over its unix socket (socket authentication, as in
        scripts/dev_world_db.py); for tests that must change server state."""
        if self.directory is None:
            pytest.skip("needs VBA_TEST_DB_DIR (the admin socket); run `make test`")
        user = "root" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
        return pymysql.connect(
            unix_socket=str(self.directory / "mariadb.sock"),
            user=user,
            charset="utf8mb4",
            autocommit=True,
        )


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but the test MariaDB is not available: {reason}", pytrace=False)
    pytest.skip(f"{reason}: {HOW_TO_ENABLE}")


@pytest.fixture(scope="session")
def mariadb() -> TestDatabase:
    port = os.environ.get("VBA_TEST_DB_PORT")
    password_file = os.environ.get("VBA_TEST_DB_PASSWORD_FILE")
    if not port or not password_file:
        _missing("no test MariaDB configured")
    assert port is not None and password_file is not None
    try:
        password = Path(password_file).read_text().strip()
    except OSError as err:
        _missing(f"cannot read VBA_TEST_DB_PASSWORD_FILE ({err.strerror})")
        raise
    directory = os.environ.get("VBA_TEST_DB_DIR")
    return TestDatabase(
        port=int(port), password=password, directory=Path(directory) if directory else None
    )


@pytest.fixture
def source(mariadb: TestDatabase) -> Iterator[MariaDbSource]:
    with mariadb.source() as opened:
        yield opened
