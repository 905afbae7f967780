"""The ``references`` kind of ``project.query``: ``vba references`` as one capture.

``ProjectResearch`` alone has no reference map and refuses the kind
(``provider_not_configured``, provider ``reference_map``).
``ReferenceResearch`` wraps a service with a profile's map: every other kind
passes through unchanged; a ``references`` query runs the same search as
``vba references`` (``reference_search.find_references``, without the case's
snapshots, which the model reads through its own snapshot operations) and
answers it as one project-result-v2 document:

* ``result`` is the references-v2 document. Its rows and lines name the part
  captures they came from (``capture_sha256`` and a JSON Pointer), and its
  ``captures`` holds those part documents, so the one stored capture carries
  every proof (``captures.check_parts`` verifies them on every read);
* ``origin`` names both providers: the pinned commit and the world database;
* ``coverage`` is complete only when every count is exact and no map entry
  was refused.

The model sees the document without its parts (``evidence.payload``): they
are for checking, and the prompt has no room for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.enrichment.profile import EnrichmentProfile
from viano_bug_analysis.enrichment.reference_search import (
    Bounds,
    check_request,
    find_references,
    live_profile,
)
from viano_bug_analysis.errors import EnrichmentError
from viano_bug_analysis.project_research.captures import REFERENCES_KIND, Capture
from viano_bug_analysis.project_research.errors import ResearchError
from viano_bug_analysis.project_research.result_versions import CURRENT_VERSION
from viano_bug_analysis.project_research.service import (
    ProjectResearch,
    frozen_result,
    query_sha256,
    validate_query,
)

DEFAULT_SHOWN = 20


class ReferenceResearch:
    """``research`` with the ``references`` kind answered through ``profile``'s map."""

    def __init__(self, research: ProjectResearch, profile: EnrichmentProfile) -> None:
        self.research = research
        self.config = research.config
        self.profile = profile
        self._live: EnrichmentProfile | None = None

    def __enter__(self) -> ReferenceResearch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.research.close()

    def query(self, query: Mapping[str, Any]) -> dict[str, Any]:
        """A project-result-v2 document, as ``ProjectResearch.query`` answers."""
        document = validate_query(query, self.config.limits)
        if document["kind"] != REFERENCES_KIND:
            return self.research.query(document)
        return self._references(document)

    def capture(self, query: Mapping[str, Any]) -> Capture:
        return Capture.from_result(self.query(query))

    def _references(self, query: Mapping[str, Any]) -> dict[str, Any]:
        entity_type, value = query["entity_type"], query["id"]
        try:
            entity_type = check_request(self.profile, entity_type, value)
        except EnrichmentError as err:
            pointer = "/entity_type" if err.code == "entity_type_unknown" else "/id"
            raise ResearchError(err.code, err.message, {**err.details, "path": pointer}) from None
        bounds = Bounds.for_research(self.config.limits, shown=query.get("limit", DEFAULT_SHOWN))
        document = find_references(self._live_profile(), self.research, entity_type, value, bounds)
        return frozen_result(
            {
                "format": "viano-project-result",
                "format_version": CURRENT_VERSION,
                "query": dict(query),
                "query_sha256": query_sha256(query),
                "origin": _origin(self.profile.name, document),
                "coverage": _coverage(document),
                "result": document,
            }
        )

    def _live_profile(self) -> EnrichmentProfile:
        # The column names this database uses are read once per service: they
        # change only with the schema, and every part capture records the
        # columns it actually asked for.
        if self._live is None:
            self._live = live_profile(self.profile, self.config, self.research.query)
        return self._live


def _origin(profile: str, document: Mapping[str, Any]) -> dict[str, Any]:
    """Both providers, as the part captures name them (null where none was read)."""
    found: dict[str, Any] = {"source": None, "database": None}
    for part in document["captures"]:
        origin = part["capture"]["origin"]
        slot = "source" if origin["kind"] == "git" else "database"
        if found[slot] is None:
            found[slot] = dict(origin)
    return {"kind": REFERENCES_KIND, "profile": profile, **found}


def _coverage(document: Mapping[str, Any]) -> dict[str, Any]:
    database = document["database"]
    database_complete = (
        database["available"] and database["total_exact"] and database["refused"] == 0
    )
    source = document["source"]
    source_complete = (
        source["available"]
        and source["literal"]["count_exact"]
        and source["literal"]["files_unsearched"] == 0
        and all(c["count_exact"] for c in source["constants"])
    )
    return {
        "complete": bool(database_complete and source_complete),
        "database_complete": bool(database_complete),
        "source_complete": bool(source_complete),
        "parts": len(document["captures"]),
    }


def with_reference_map(research: ProjectResearch, profile: Any) -> ProjectResearch | Any:
    """``research`` able to answer ``references`` when ``profile`` has a map, else as it is."""
    enrichment = getattr(profile, "enrichment", None)
    if not isinstance(enrichment, EnrichmentProfile) or not enrichment.references:
        return research
    return ReferenceResearch(research, enrichment)


__all__ = ["DEFAULT_SHOWN", "ReferenceResearch", "with_reference_map"]
