"""The fact kinds "already fixed?" states (one definition for the phase and every renderer)."""

CANDIDATE_KIND = "project_fix_candidate"
SEARCH_KIND = "project_fix_search"

__all__ = ["CANDIDATE_KIND", "SEARCH_KIND"]
