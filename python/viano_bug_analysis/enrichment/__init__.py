"""Case enrichment through ProjectResearch (SPEC §7).

    from viano_bug_analysis.case.builder import CaseBuilder
    from viano_bug_analysis.enrichment import vcore_profile, research_origin

The profile (:mod:`.profile`) says what to look up; :mod:`.extract` finds the
IDs a case names; :mod:`.engine` runs the lookups and relationships through a
journal (:mod:`.journal`) that makes an interrupted build resumable without
asking anything twice; :mod:`.origin` names what ProjectResearch read. What
the investigation prompt sees of the result is chosen by its user,
``investigation.project_context``. See docs/case-enrichment.md.
"""

from typing import Any

from viano_bug_analysis.enrichment.origin import research_origin
from viano_bug_analysis.enrichment.profile import (
    EnrichmentProfile,
    load_profile,
    parse_profile,
)
from viano_bug_analysis.enrichment.summary import summarize


def __getattr__(name: str) -> Any:
    # vcore_profile belongs to the Vcore profile package; it is passed on
    # here (on first use, so enrichment imports nothing of profiles/) because
    # the first release documented this import.
    if name == "vcore_profile":
        from viano_bug_analysis.profiles.vcore import vcore_profile

        return vcore_profile
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EnrichmentProfile",
    "load_profile",
    "parse_profile",
    "research_origin",
    "summarize",
    "vcore_profile",
]
