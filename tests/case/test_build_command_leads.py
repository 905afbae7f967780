"""``vba case build`` prints the Leads block before the facts: in the compact summary, with
``--verbose`` (``--all-facts``) and in ``--json`` (where ``leads`` comes before ``facts``)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.case.leads_package import ranked_facts
from tests.enrichment.lead_facts import mention, numbered
from viano_bug_analysis.case import build_command
from viano_bug_analysis.case.builder import BuildResult
from viano_bug_analysis.cli import main


def _build(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    facts: list[dict[str, Any]],
    *options: str,
) -> str:
    class _Builder:
        def __init__(self, *_args: Any, **_kwargs: Any) -> None:
            pass

        def build(self) -> BuildResult:
            package = SimpleNamespace(package_id="pkg-77", path=Path("pkg"))
            return BuildResult(package, 1, False, facts, [], 0)  # type: ignore[arg-type]

    monkeypatch.setattr(build_command, "CaseBuilder", _Builder)
    assert main(["case", "build", "spec.json", "pkg", *options]) == 0
    return capsys.readouterr().out


def test_the_leads_come_first_then_the_facts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for options in ((), ("--verbose",), ("--all-facts",)):
        lines = _build(monkeypatch, capsys, ranked_facts(max_leads=3), *options).splitlines()
        start = lines.index("leads: 3 leads, most telling first, 2 more left out by max_leads")
        assert lines[start + 1].startswith("  [P7] 1. changed since the report at commit ")
        assert lines[start + 2].startswith("  [P8] 2. engine check at creature_template entry=5")
        assert lines[start + 3].startswith("  [P9] 3. missing reference at conditions ")
        assert lines[start + 4].startswith("  [P10] coverage: leads_limit: 2 more leads")
        assert lines[start + 5] == "facts:"
        assert lines[start + 6].startswith("  [P1] ")
        # No lead is listed a second time among the facts.
        assert not [line for line in lines[start + 6 :] if "[P7]" in line or "[P10]" in line]


def test_a_revision_without_leads_says_none_before_the_facts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _build(monkeypatch, capsys, numbered(mention("creature", 5))).splitlines()
    assert lines[3].startswith("leads: none (")
    assert lines[4:] == ["facts:", "  [P1] mentioned in /report/text: creature 5"]


def test_json_has_the_ranked_leads_before_all_facts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    facts = ranked_facts(max_leads=3)
    document = json.loads(_build(monkeypatch, capsys, facts, "--json"))
    keys = list(document)
    assert keys.index("leads") < keys.index("leads_left_out") < keys.index("facts")
    assert [lead["fact_id"] for lead in document["leads"]] == ["P7", "P8", "P9"]
    assert document["leads_left_out"] == 2
    assert document["facts"] == facts
