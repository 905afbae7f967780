"""The errors of ProjectResearch (git and database providers, service, CLI).

``ResearchError`` is a rejected query or an unusable configuration: the
caller (or the model) asked for something the providers refuse, and asking
again unchanged will fail again. ``ResearchUnavailable`` is an outage: the
git repository or the database cannot be reached right now; the controller
maps it to ``BLOCKED / RESEARCH_UNAVAILABLE`` and the same query may succeed
after the operator fixes the service.

Both are defined in :mod:`viano_bug_analysis.errors`; this module re-exports
them because the native extension's git binding imports them from here.
"""

from __future__ import annotations

from viano_bug_analysis.errors import ResearchError, ResearchUnavailable

__all__ = ["ResearchError", "ResearchUnavailable"]
