"""What a ``RESEARCH_UNAVAILABLE`` block stores about its cause, and what to fix.

When a project query finds its research service unreachable, the controller
blocks the case. The blocking checkpoint's payload then holds the typed fields
of the ``ResearchUnavailable`` error: ``provider`` (``database`` or ``git``),
``reason`` (a fixed phrase such as ``connection_refused``) and, for a missing
database password taken from the environment, ``variable`` (the variable's
name, which is configuration, not a secret). Never the error's message, a
server's text, a host, a user name or a password.

``cause_fields`` picks those fields from an error; ``blocked_cause`` reads them
back from a checkpoint's payload (a checkpoint written before they existed, or
one whose fields do not look like these names, gives ``None``: it stays
readable and the operator sees the generic advice); ``fix_text`` words what
the operator fixes before ``vba resume``. ``research_of`` is the one place
that turns a stored block into what ``vba investigate``, ``vba status`` and
the case report show.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.errors import ResearchUnavailable
from viano_bug_analysis.investigation.checkpoint_rules import RESEARCH_UNAVAILABLE
from viano_bug_analysis.vocabulary import ENV_NAME

PROVIDERS = frozenset({"database", "git"})
_REASON = re.compile(r"[a-z][a-z0-9_]{0,63}")

_FIXES: dict[tuple[str, str], str] = {
    ("database", "connection_refused"): (
        "nothing accepts connections at database.host and database.port: start the "
        "database server, or correct them in the research configuration"
    ),
    ("database", "connection_failed"): (
        "the database server cannot be reached: check database.host, database.port and the network"
    ),
    ("database", "host_not_found"): (
        "database.host does not resolve: correct it in the research configuration"
    ),
    ("database", "timeout"): (
        "the database server did not answer in time: check that it is up and reachable"
    ),
    ("database", "auth_failed"): (
        "the database refused the login: check database.user and the password "
        "(database.password_env or database.password_file)"
    ),
    ("database", "too_many_connections"): (
        "the database server has no free connection: wait, or raise its connection limit"
    ),
    ("database", "server_gone"): (
        "the database server closed the connection: check that it is running"
    ),
    ("database", "credentials_missing"): (
        "the database password is not available: set the variable of "
        "database.password_env, or fill the file of database.password_file"
    ),
    ("git", "repository_unavailable"): (
        "the git repository of source.repository cannot be read: check that it exists "
        "and holds source.commit"
    ),
    ("git", "timeout"): "reading the git repository took too long: check its disk",
}


def cause_fields(error: ResearchUnavailable) -> dict[str, Any]:
    """The payload fields a ``RESEARCH_UNAVAILABLE`` checkpoint stores for ``error``."""
    fields: dict[str, Any] = {"provider": error.provider, "reason": error.reason}
    variable = error.details.get("variable")
    if isinstance(variable, str) and ENV_NAME.fullmatch(variable):
        fields["variable"] = variable
    return fields


def blocked_cause(payload: Mapping[str, Any]) -> dict[str, str] | None:
    """``provider``, ``reason`` (and ``variable``) of a stored block, or ``None``."""
    provider, reason = payload.get("provider"), payload.get("reason")
    if provider not in PROVIDERS or not isinstance(reason, str):
        return None
    if not _REASON.fullmatch(reason):
        return None
    cause = {"provider": str(provider), "reason": reason}
    variable = payload.get("variable")
    if isinstance(variable, str) and ENV_NAME.fullmatch(variable):
        cause["variable"] = variable
    return cause


def fix_text(cause: Mapping[str, str] | None) -> str:
    """One line: which provider failed, why, and what the operator fixes."""
    if cause is None:
        return "a research provider was unavailable: check the research configuration"
    provider, reason = cause["provider"], cause["reason"]
    fix = _FIXES.get((provider, reason), "check the research configuration and the service")
    variable = cause.get("variable")
    if reason == "credentials_missing" and variable is not None:
        fix = (
            f"the database password is not available: set the environment variable "
            f"{variable} (database.password_env), or name a file with database.password_file"
        )
    return f"research provider {provider} unavailable ({reason}): {fix}"


def research_of(code: str, payload: Mapping[str, Any]) -> dict[str, str] | None:
    """A block's provider, reason (and variable) with the ``fix`` line, when the
    block is ``RESEARCH_UNAVAILABLE``; ``None`` for any other block."""
    if code != RESEARCH_UNAVAILABLE:
        return None
    cause = blocked_cause(payload)
    return {**(cause or {}), "fix": fix_text(cause)}


__all__ = ["PROVIDERS", "blocked_cause", "cause_fields", "fix_text", "research_of"]
