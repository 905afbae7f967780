"""The test MariaDB and the fixture git repository of the case-builder tests."""

from __future__ import annotations

from tests.case.builder.conftest import mariadb, research_setup, source_repo

__all__ = ["mariadb", "research_setup", "source_repo"]
