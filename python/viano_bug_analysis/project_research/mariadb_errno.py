"""PyMySQL errors as the research layer's typed errors.

A server or client error number becomes a :class:`ResearchError` with a
stable code, or :class:`ResearchUnavailable` with a reason when the database
cannot be reached at all. Details hold the errno and fixed phrases only:
never the server's message, which can quote the statement or the user name.
"""

from __future__ import annotations

import socket

import pymysql

from viano_bug_analysis.errors import ResearchAuthFailed, ResearchError, ResearchUnavailable

# Lost connection (client side), killed (MariaDB 1927), idle disconnect (MySQL 4031).
STALE_CONNECTION_ERRNOS = frozenset({0, 1927, 2006, 2013, 2055, 4031})


def errno(exc: BaseException) -> int | None:
    if isinstance(exc, pymysql.err.InterfaceError):
        return 0
    code = exc.args[0] if exc.args else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def is_stale(exc: BaseException) -> bool:
    """A pooled connection the server or network has dropped since its last use."""
    return errno(exc) in STALE_CONNECTION_ERRNOS


def unavailable(exc: pymysql.Error, *, connecting: bool) -> ResearchUnavailable:
    number = errno(exc)
    reason = "connection_failed" if connecting else "server_gone"
    if number in (1045, 1698):
        # Not "run again later": the same password is refused again.
        return ResearchAuthFailed("database", {"errno": number})
    if number in (1040, 1203, 1226):
        reason = "too_many_connections"
    elif number == 2003:
        original = getattr(exc, "original_exception", None)
        if isinstance(original, ConnectionRefusedError):
            reason = "connection_refused"
        elif isinstance(original, TimeoutError):
            reason = "timeout"
        elif isinstance(original, socket.gaierror):
            reason = "host_not_found"
    elif number in STALE_CONNECTION_ERRNOS:
        reason = "timeout" if _caused_by_timeout(exc) else "server_gone"
    return ResearchUnavailable("database", reason, details={"errno": number})


def _caused_by_timeout(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, TimeoutError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def map_error(exc: pymysql.Error, *, statement_timeout_s: float) -> ResearchError:
    """The error of a failed statement (or session setup)."""
    number = errno(exc)
    if number in (1969, 3024):
        return ResearchError(
            "query_timeout",
            "the query exceeded the server-side statement time limit",
            {"limit_s": statement_timeout_s},
        )
    if number in (1044, 1142, 1143, 1227):
        return ResearchError(
            "permission_denied",
            "the reader account may not read this; check the grants",
            {"provider": "database", "errno": number},
        )
    if number in (1049, 1146):
        return ResearchError(
            "table_not_found", "the database or table does not exist", {"errno": number}
        )
    if isinstance(exc, pymysql.err.OperationalError | pymysql.err.InterfaceError) and (
        number is None or number >= 2000 or number in (0, 1040, 1045, 1203, 1226, 1698, 1927, 4031)
    ):
        return unavailable(exc, connecting=False)
    return ResearchError(
        "database_error",
        "the database refused the query",
        {"provider": "database", "errno": number},
    )
