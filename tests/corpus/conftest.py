"""Fixtures for the corpus self-check: the throwaway MariaDB of tests/project_research.

``make test`` starts it; without it the database checks skip (saying how to enable them),
except under CI=true.
"""

from __future__ import annotations

# Re-exported fixture: the test MariaDB loaded with tests/fixtures/world_db.sql.
from tests.project_research.conftest import mariadb

__all__ = ["mariadb"]
