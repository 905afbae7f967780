"""Prints where the browser test left its screenshot, at the end of the run."""

from __future__ import annotations

from typing import Any

from tests.report.browser import WRITTEN


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if WRITTEN:
        terminalreporter.write_sep("-", "report screenshot")
        for path in WRITTEN:
            terminalreporter.write_line(f"report screenshot: {path}")


# The research case's report needs the real MariaDB and git fixtures of the builder.
from tests.case.builder.conftest import mariadb, research_setup, source_repo  # noqa: E402

__all__ = ["mariadb", "pytest_terminal_summary", "research_setup", "source_repo"]
