"""Prints where the browser test left its screenshot, at the end of the run."""

from __future__ import annotations

from typing import Any

from tests.report.browser import WRITTEN


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if WRITTEN:
        terminalreporter.write_sep("-", "report screenshot")
        for path in WRITTEN:
            terminalreporter.write_line(f"report screenshot: {path}")
