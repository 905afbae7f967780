"""Already fixed? The commits that may have fixed a report, with their reasons.

``clues``: what the report and the facts give to match (links, trace, entities);
``evidence``: the reasons, the score, the ranking and the verdict (pure);
``source``: the histories read (the configured source and its upstream);
``phase``: the build phase stating ``project_fix_candidate`` and ``project_fix_search``.
"""

from viano_bug_analysis.enrichment.fixes.phase import CANDIDATE_KIND, SEARCH_KIND, fix_candidates
from viano_bug_analysis.enrichment.fixes.source import HistorySource, history_sources

__all__ = [
    "CANDIDATE_KIND",
    "SEARCH_KIND",
    "HistorySource",
    "fix_candidates",
    "history_sources",
]
