"""The case report shows the ranked leads before the hypotheses and the facts: in the JSON
document (``leads``, valid against case-report-v3), in HTML (each lead linking to the facts
it rests on) and in Markdown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.case.leads_package import package_with_facts, ranked_facts
from tests.enrichment.lead_facts import mention, numbered, script_file, with_leads
from viano_bug_analysis.report import build_report, render_html, render_markdown
from viano_bug_analysis.schemas import schema_validator


def test_the_json_report_carries_the_leads_in_rank_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = build_report(package_with_facts(tmp_path, monkeypatch, ranked_facts(max_leads=3)))
    assert schema_validator("case-report-v3").is_valid(report)
    assert [(lead["rank"], lead["lead"], lead["fact_id"]) for lead in report["leads"]] == [
        (1, "changed_since_report", "P7"),
        (2, "engine_check", "P8"),
        (3, "missing_reference", "P9"),
    ]
    assert report["leads"][1]["where"] == "creature_template entry=5"
    assert report["leads"][1]["entity"] == "creature 5"
    assert report["leads"][0]["entity"] is None
    assert report["leads_left_out"] == 2
    # The facts stay complete: every lead and every fact it rests on is listed there too.
    listed = {row["fact_id"] for table in report["fact_tables"] for row in table["rows"]}
    assert {f for lead in report["leads"] for f in [lead["fact_id"], *lead["rests_on"]]} <= listed
    keys = list(report)
    assert keys.index("leads") < keys.index("fact_tables")


def test_html_and_markdown_show_leads_before_hypotheses_and_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = build_report(package_with_facts(tmp_path, monkeypatch, ranked_facts(max_leads=3)))
    page = render_html(report)
    assert page.index('<h2 id="leads">Leads</h2>') < page.index("<h2>Hypotheses</h2>")
    assert page.index("<h2>Hypotheses</h2>") < page.index('<h2 id="facts">Facts</h2>')
    assert '<tr id="lead-1"><td>1</td><td>changed_since_report</td>' in page
    assert "(2 more left out by max_leads)" in page
    # Each fact a lead rests on is a link to its row among the facts.
    assert '<a href="#fact-P4">P4</a>, <a href="#fact-P1">P1</a>' in page
    assert 'id="fact-P4"' in page and 'id="fact-P1"' in page
    text = render_markdown(report)
    assert text.index("## Leads") < text.index("## Hypotheses") < text.index("## Facts")
    assert "- **2.** engine\\_check at `creature_template entry=5`: the engine" in text
    assert "(2 more left out by max\\_leads)" in text


def test_a_path_with_markup_is_shown_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = "src/server/scripts/<img src=x onerror=alert(1)>.cpp"
    facts = with_leads(numbered(mention("creature", 5), script_file(5, hostile, "zone")))
    report = build_report(package_with_facts(tmp_path, monkeypatch, facts))
    page = render_html(report)
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    # Markdown: escaped inline, literal only inside code spans (which CommonMark never
    # reads as HTML).
    text = render_markdown(report)
    assert "&lt;img src=x onerror=alert(1)\\>" in text
    assert "<img" not in re.sub(r"(`+)(?:(?!\1).)*\1", "", text)


def test_without_leads_or_enrichment_the_report_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    enriched = build_report(
        package_with_facts(tmp_path / "a", monkeypatch, numbered(mention("creature", 5)))
    )
    assert (enriched["leads"], enriched["leads_left_out"]) == ([], 0)
    assert "<p>None: no fact of this revision points at a place to look.</p>" in render_html(
        enriched
    )
    assert "## Leads\n\nNone: no fact of this revision" in render_markdown(enriched)
    bare = build_report(package_with_facts(tmp_path / "b", monkeypatch, None))
    assert bare["leads"] == []
    assert "No leads (the case was built without project research)." in render_html(bare)
    assert "## Leads" not in render_markdown(bare)
