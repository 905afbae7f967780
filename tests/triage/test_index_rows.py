"""The index's row columns that need no database (issue 34 point 8): steps written
without numbers count as steps, the tracker's state spellings sort as one word,
and the repository a number belongs to is shown."""

from __future__ import annotations

from typing import Any

import pytest

from viano_bug_analysis.triage.html import render_index
from viano_bug_analysis.triage.index import needs_info, normalized_state


def spec(text: str, **metadata: Any) -> dict[str, Any]:
    return {"report": {"title": "t", "text": text, "metadata": {"revision": "abc1234", **metadata}}}


@pytest.mark.parametrize(
    "text",
    [
        "1. take the quest\n2. kill the wolf\n",
        "- take the quest\n- kill the wolf\n- nothing happens\n",
        "* take the quest\n* kill the wolf\n",
        "Steps to reproduce:\ntake the quest, kill the wolf, no credit\n",
        "**Steps:**\n\ngo to the glade and pull the spider\n",
        "How to reproduce\nuse the net on it\n",
    ],
)
def test_steps_without_numbers_are_steps(text: str) -> None:
    assert needs_info(spec(text)) == []


@pytest.mark.parametrize(
    "text",
    ["the quest is broken, fix pls", "- one bullet is no list of steps\n", "steps: \n"],
)
def test_a_report_without_steps_is_flagged(text: str) -> None:
    assert needs_info(spec(text)) == ["no_steps"]


@pytest.mark.parametrize(
    ("state", "word"),
    [("OPEN", "open"), ("opened", "open"), ("reopened", "open"), ("CLOSED", "closed"),
     ("closed", "closed"), ("locked", "closed"), ("Triaged", "triaged"), (None, None), ("", None)],
)  # fmt: skip
def test_states_normalise(state: Any, word: Any) -> None:
    assert normalized_state(state) == word


def test_the_page_shows_the_repository_and_the_failure_reason() -> None:
    row = {
        "case": "vcore-1",
        "title": "x",
        "url": "https://github.com/o/r/issues/1",
        "repository": "o/r",
        "number": 1,
        "state": "open",
        "labels": [],
        "status": "failed",
        "error": {"stage": "build", "code": "research_auth_failed",
                  "details": {"reason": "auth_failed"}},
        "needs_info": [],
    }  # fmt: skip
    page = render_index({"reports": 1, "by_status": {"failed": 1}, "rows": [row]})
    assert '1<br><span class="meta">o/r</span>' in page
    assert "failed (build: research_auth_failed, auth_failed)" in page
