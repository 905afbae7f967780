"""Re-exported fixtures: the test MariaDB and the enriched-case setup of the builder tests
(the tests that build a real index skip without it, except under CI=true)."""

from tests.case.builder.conftest import counting, research_setup, source_repo
from tests.project_research.conftest import mariadb

__all__ = ["counting", "mariadb", "research_setup", "source_repo"]
