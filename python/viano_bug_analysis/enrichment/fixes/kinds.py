"""The fact kinds "already fixed?" states, under the names the phase and its renderers
use; defined once with the other kind names the views select by (``facts.text``)."""

from viano_bug_analysis.facts.text import FIX_CANDIDATE_KIND as CANDIDATE_KIND
from viano_bug_analysis.facts.text import FIX_SEARCH_KIND as SEARCH_KIND

__all__ = ["CANDIDATE_KIND", "SEARCH_KIND"]
