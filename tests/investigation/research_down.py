"""A case blocked by an unreachable research service, for the tests of what
`vba status`, `vba investigate` and the case report say about it."""

from __future__ import annotations

from pathlib import Path

from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import (
    ROWS,
    SETTINGS,
    answer,
    built_package,
    scripted_client,
)
from viano_bug_analysis.errors import ResearchUnavailable
from viano_bug_analysis.investigation.controller import InvestigationController

SERVER_TEXT = "Access denied for user 'LEAK-CANARY'@'10.0.0.9'"
"""A server's own words: no block, status line or report may show them."""


class DownResearch:
    """Research whose service is down: every query raises ``error``."""

    def __init__(self, error: ResearchUnavailable) -> None:
        self.error = error

    def capture(self, query: object) -> object:
        raise self.error

    def query(self, query: object) -> object:
        raise self.error


def blocked_by(tmp_path: Path, error: ResearchUnavailable) -> Path:
    """A package whose investigation blocked on ``error`` at its first project query."""
    root = built_package(tmp_path)
    with ScriptedLlmServer([answer(ROWS)]) as server:
        controller = InvestigationController(
            root, model=scripted_client(server), settings=SETTINGS, research=DownResearch(error)
        )
        outcome = controller.run()
    assert (outcome.state, outcome.code) == ("blocked", "RESEARCH_UNAVAILABLE")
    return root
