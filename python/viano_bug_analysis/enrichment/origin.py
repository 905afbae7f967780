"""The identity of what ProjectResearch reads, recorded with every case revision."""

from __future__ import annotations

from collections.abc import Mapping
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
        if config.database.name is not None:
            origin["database"]["name"] = config.database.name
    return origin


def query_database(profile_database: str | None, origin: Mapping[str, Any]) -> str | None:
    """The database a profile's queries name, given what the research reads.

    The database belongs to the operator: the configured ``[database] name``,
    else the profile's own ``database`` when the operator allowlists it, else
    the only allowlisted database; with several and none named, None (each
    table is read in the database that allows it).
    """
    database = origin.get("database")
    if not isinstance(database, Mapping):
        return profile_database
    named = database.get("name")
    if isinstance(named, str):
        return named
    allowed = list(database.get("databases", ()))
    if profile_database in allowed:
        return profile_database
    return allowed[0] if len(allowed) == 1 else None


__all__ = ["query_database", "research_origin"]
