"""The identity of what ProjectResearch reads, recorded with every case revision."""

from __future__ import annotations

from typing import Any

from viano_bug_analysis.project_research.config import ResearchConfig


def research_origin(config: ResearchConfig) -> dict[str, Any]:
    """The git URL and commit and the database snapshot a revision was enriched from."""
    origin: dict[str, Any] = {}
    if config.source is not None:
        origin["git"] = {"url": config.source.url, "commit": config.source.commit}
    if config.database is not None:
        origin["database"] = {
            "snapshot_id": config.database.snapshot_id,
            "databases": sorted(config.database.allow),
        }
    return origin


__all__ = ["research_origin"]
