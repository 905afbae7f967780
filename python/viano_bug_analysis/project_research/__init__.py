"""ProjectResearch v1: live read-only queries over a pinned git commit and a MariaDB database.

    from viano_bug_analysis.project_research import CaptureStore, ProjectResearch, load_config

    with ProjectResearch(load_config("config/project.local.toml")) as research:
        result = research.query(query)          # project-result-v2 document
        capture = research.capture(query)       # the same answer as capture v2
    CaptureStore(package_dir).put(capture)      # (sha256, is_new); the caller stores, never a tool

See docs/project-research-v1.md. The providers (``git_source.GitSource``,
``mariadb_source.MariaDbSource``) are built from the configuration on first
use and are imported lazily, so this package imports without them.
"""

from viano_bug_analysis.project_research.captures import Capture, CaptureError, CaptureStore
from viano_bug_analysis.project_research.config import (
    DatabaseConfig,
    Limits,
    ResearchConfig,
    SourceConfig,
    load_config,
)
from viano_bug_analysis.project_research.errors import ResearchError, ResearchUnavailable
from viano_bug_analysis.project_research.service import (
    DATABASE_KINDS,
    KINDS,
    OPERATORS,
    SOURCE_KINDS,
    ProjectResearch,
    coverage,
    query_sha256,
    validate_query,
)

__all__ = [
    "DATABASE_KINDS",
    "KINDS",
    "OPERATORS",
    "SOURCE_KINDS",
    "Capture",
    "CaptureError",
    "CaptureStore",
    "DatabaseConfig",
    "Limits",
    "ProjectResearch",
    "ResearchConfig",
    "ResearchError",
    "ResearchUnavailable",
    "SourceConfig",
    "coverage",
    "load_config",
    "query_sha256",
    "validate_query",
]
