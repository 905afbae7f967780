"""The "already fixed?" facts in every view: the build summary's lead block,
``vba case leads``, the triage column and the case report."""

from __future__ import annotations

from typing import Any

from viano_bug_analysis.case.leads_command import leads_lines
from viano_bug_analysis.enrichment.fixes.render import fix_column, report_section
from viano_bug_analysis.enrichment.summary import lead_summary, summarize_all
from viano_bug_analysis.triage.html import _fixed_cell

COMMIT = "1a2b3c4d5e6f" + "0" * 28
SEARCH: dict[str, Any] = {
    "fact_id": "P40",
    "kind": "project_fix_search",
    "repository": "source",
    "verdict": "maybe",
    "statement": "already fixed? 12 commits of the source's history read (...): ranked",
}
CANDIDATE: dict[str, Any] = {
    "fact_id": "P41",
    "kind": "project_fix_candidate",
    "rank": 1,
    "verdict": "maybe",
    "repository": "source",
    "commit": COMMIT,
    "subject": "(Core/Smart Script) Gasping for Breath - Quest: 14395 (#33)",
    "date": "2024-03-05T00:00:00Z",
    "author": "Dee",
    "files_changed": 1,
    "files": ["sql/updates/world/2024_03_05_00.sql"],
    "link": f"https://github.com/vcore/vcore/commit/{COMMIT}",
    "score": 75,
    "reasons": [
        {"code": "subject_names_entity", "weight": 40, "detail": "the subject names 14395"},
        {"code": "changes_entity_rows", "weight": 35, "detail": "changes rows keyed by 14395"},
    ],
    "mass_change": False,
    "timing": "after_report_date",
    "statement": "maybe fixed by ...",
}
FACTS = [SEARCH, CANDIDATE]


def test_the_lead_block_shows_subject_date_author_files_link_and_reasons() -> None:
    _head, lines = lead_summary(FACTS)
    (line,) = [x for x in lines if x.startswith("[P41]")]
    assert "maybe fixed by 1a2b3c4d5e6f" in line
    assert '"(Core/Smart Script) Gasping for Breath - Quest: 14395 (#33)"' in line
    assert "(2024-03-05, Dee, 1 file)" in line and CANDIDATE["link"] in line
    assert "the subject names 14395; changes rows keyed by 14395" in line
    assert any(x.startswith("[P40] already fixed?") for x in lines)
    # In the block only: the per-fact listing does not repeat them.
    assert summarize_all(FACTS) == []


def test_vba_case_leads_shows_them_after_the_leads() -> None:
    view = {"enriched": True, "leads": [], "left_out": 0, "fixes": FACTS}
    lines = leads_lines(view)
    assert lines[0].startswith("leads: none")
    assert lines[-1].startswith("  [P41] 1. maybe fixed by 1a2b3c4d5e6f")


def test_the_triage_cell_sorts_fixed_by_maybe_none_then_no_history() -> None:
    cell = fix_column(FACTS)
    assert cell is not None and cell["verdict"] == "maybe" and cell["sort"] == 1
    assert cell["commit"] == COMMIT and cell["why"][0] == "the subject names 14395"
    html = _fixed_cell(cell)
    assert 'data-sort="1"' in html and f'href="{CANDIDATE["link"]}"' in html
    none = fix_column([{**SEARCH, "verdict": "none"}])
    assert none == {"verdict": "none", "sort": 2}
    assert 'data-sort="2">none<' in _fixed_cell(none)
    assert fix_column([]) is None and _fixed_cell(None) == '<td data-sort="3"></td>'


def test_a_link_that_is_no_web_address_is_not_made_a_link() -> None:
    cell = fix_column([SEARCH, {**CANDIDATE, "link": "javascript:alert(1)"}])
    assert "href" not in _fixed_cell(cell)


def test_the_case_report_section() -> None:
    section = report_section(FACTS)
    assert section is not None and section["verdict"] == "maybe"
    (candidate,) = section["candidates"]
    assert candidate["fact_id"] == "P41" and candidate["subject"].startswith("(Core/Smart")
    assert [r["code"] for r in candidate["reasons"]] == [
        "subject_names_entity",
        "changes_entity_rows",
    ]
    assert report_section([]) is None
