"""The errors of ProjectResearch (git and database providers, service, CLI).

``ResearchError`` is a rejected query or an unusable configuration: the
caller (or the model) asked for something the providers refuse, and asking
again unchanged will fail again. ``ResearchUnavailable`` is an outage: the
git repository or the database cannot be reached right now; the controller
maps it to ``BLOCKED / RESEARCH_UNAVAILABLE`` and the same query may succeed
after the operator fixes the service.

Both carry a stable ``code`` and ``details`` of fixed phrases, names of
identifiers that passed validation, and numbers. Never values, search text,
row contents, hosts, user names, passwords or file system paths of secrets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.errors import VbaError


class ResearchError(VbaError):
    """A rejected project query or configuration problem, with a stable code."""

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(code, message, details)


class ResearchUnavailable(ResearchError):
    """The research service (``details["provider"]``: ``database`` or ``git``) cannot
    be reached; ``details["reason"]`` is a fixed phrase such as
    ``connection_refused``, ``timeout``, ``auth_failed`` or ``server_gone``."""

    def __init__(
        self,
        provider: str,
        reason: str,
        message: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(
            "research_unavailable",
            message or f"research provider {provider!r} is unavailable ({reason})",
            {**(details or {}), "provider": provider, "reason": reason},
        )

    @property
    def provider(self) -> str:
        return str(self.details["provider"])

    @property
    def reason(self) -> str:
        return str(self.details["reason"])
