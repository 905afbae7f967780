"""``vba status`` shows where to look first: the current revision's leads right after the
state, before budget, evidence and hypotheses; ``--json`` carries the same block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.case.leads_package import package_with_facts, ranked_facts
from tests.cli.helpers import vba


def test_status_lists_the_leads_after_the_state_and_before_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = package_with_facts(tmp_path, monkeypatch, ranked_facts(max_leads=3))
    done = vba("status", root)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith(": phase investigation, not started")
    assert lines[1] == "leads: 3, most telling first, 2 more left out by max_leads"
    assert [line[:12] for line in lines[2:5]] == ["  [P7] 1. ch", "  [P8] 2. en", "  [P9] 3. mi"]
    assert lines[5].startswith("tokens: ")
    # The same block as `vba case leads`, after its own header line.
    assert vba("case", "leads", root).stdout.splitlines()[1:] == lines[1:5]
    document = json.loads(vba("status", root, "--json").stdout)
    assert document["leads"]["enriched"] is True and document["leads"]["left_out"] == 2
    assert [lead["rank"] for lead in document["leads"]["leads"]] == [1, 2, 3]


def test_status_of_a_revision_without_enrichment_says_there_are_no_leads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = package_with_facts(tmp_path, monkeypatch, None)
    lines = vba("status", root).stdout.splitlines()
    assert lines[1].startswith("leads: none, this revision was built without enrichment")
    document = json.loads(vba("status", root, "--json").stdout)
    assert document["leads"] == {"enriched": False, "leads": [], "left_out": 0}
