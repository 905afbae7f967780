"""PyMySQL errors as typed research errors, without a server: each errno
class maps to its stable code or unavailability reason, and no detail holds
the server's message (which can quote the statement or the account)."""

from __future__ import annotations

import socket

import pymysql
import pytest

from viano_bug_analysis.errors import ResearchUnavailable
from viano_bug_analysis.project_research import mariadb_errno

SERVER_TEXT = "Access denied for user 'reader-user-name'@'10.0.0.7' SELECT secret"


@pytest.mark.parametrize(
    ("error", "code", "details"),
    [
        (pymysql.err.OperationalError(1969, SERVER_TEXT), "query_timeout", {"limit_s": 2.5}),
        (pymysql.err.OperationalError(3024, SERVER_TEXT), "query_timeout", {"limit_s": 2.5}),
        (
            pymysql.err.OperationalError(1142, SERVER_TEXT),
            "permission_denied",
            {"provider": "database", "errno": 1142},
        ),
        (pymysql.err.ProgrammingError(1146, SERVER_TEXT), "table_not_found", {"errno": 1146}),
        (pymysql.err.OperationalError(1049, SERVER_TEXT), "table_not_found", {"errno": 1049}),
        (
            pymysql.err.ProgrammingError(1064, SERVER_TEXT),
            "database_error",
            {"provider": "database", "errno": 1064},
        ),
        (
            pymysql.err.InternalError("no number", SERVER_TEXT),
            "database_error",
            {"provider": "database", "errno": None},
        ),
    ],
)
def test_statement_errors(error: pymysql.Error, code: str, details: dict[str, object]) -> None:
    mapped = mariadb_errno.map_error(error, statement_timeout_s=2.5)
    assert not isinstance(mapped, ResearchUnavailable)
    assert (mapped.code, mapped.details) == (code, details)
    assert "reader-user-name" not in str(mapped) + repr(mapped.details)


def refused(original: BaseException) -> pymysql.err.OperationalError:
    error = pymysql.err.OperationalError(2003, SERVER_TEXT)
    error.original_exception = original  # type: ignore[attr-defined]  # set by PyMySQL
    return error


@pytest.mark.parametrize(
    ("error", "connecting", "reason"),
    [
        (pymysql.err.OperationalError(1045, SERVER_TEXT), True, "auth_failed"),
        (pymysql.err.OperationalError(1698, SERVER_TEXT), True, "auth_failed"),
        (pymysql.err.OperationalError(1040, SERVER_TEXT), True, "too_many_connections"),
        (refused(ConnectionRefusedError()), True, "connection_refused"),
        (refused(TimeoutError()), True, "timeout"),
        (refused(socket.gaierror()), True, "host_not_found"),
        (refused(OSError()), True, "connection_failed"),
        (pymysql.err.OperationalError(2013, SERVER_TEXT), False, "server_gone"),
        (pymysql.err.InterfaceError(SERVER_TEXT), False, "server_gone"),
    ],
)
def test_unavailable_reasons(error: pymysql.Error, connecting: bool, reason: str) -> None:
    mapped = mariadb_errno.unavailable(error, connecting=connecting)
    # A refused password has its own code (exit 9): running again cannot help.
    code = "research_auth_failed" if reason == "auth_failed" else "research_unavailable"
    assert (mapped.code, mapped.details["reason"]) == (code, reason)
    assert "reader-user-name" not in str(mapped) + repr(mapped.details)


def test_a_read_timeout_is_a_timeout_not_a_lost_server() -> None:
    error = pymysql.err.OperationalError(2013, SERVER_TEXT)
    error.__cause__ = TimeoutError()
    assert mariadb_errno.unavailable(error, connecting=False).details["reason"] == "timeout"
    # A lost connection during a statement is unavailability, not a query error.
    mapped = mariadb_errno.map_error(error, statement_timeout_s=1.0)
    assert isinstance(mapped, ResearchUnavailable)


@pytest.mark.parametrize(
    ("error", "stale"),
    [
        (pymysql.err.OperationalError(2006, SERVER_TEXT), True),
        (pymysql.err.OperationalError(4031, SERVER_TEXT), True),
        (pymysql.err.InterfaceError(SERVER_TEXT), True),
        (pymysql.err.OperationalError(1045, SERVER_TEXT), False),
        (pymysql.err.ProgrammingError(1146, SERVER_TEXT), False),
    ],
)
def test_stale_pooled_connections(error: pymysql.Error, stale: bool) -> None:
    assert mariadb_errno.is_stale(error) is stale
