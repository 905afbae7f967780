"""The case report leads with what matters: the verdict (or "not investigated yet"), the
leads, the entities the report names, then the report text; the facts are tables grouped
by kind, each row with where it was read, never JSON. A document written by an older
version (facts as JSON excerpts, case-report-v1) still renders."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.case.leads_package import package_with_facts, ranked_facts
from tests.enrichment.lead_facts import PROVENANCE, mention, numbered
from viano_bug_analysis.report import build_report, render_html, render_markdown
from viano_bug_analysis.schemas import schema_validator

ROWS = {
    "kind": "project_rows",
    "table": "quest_template",
    "filters": [{"column": "ID", "operator": "eq", "value": 90001}],
    "rows": [
        {"ID": 90001, "LogTitle": "Catch the Wolpertinger"},
        {"ID": 90001, "LogTitle": "<b>twice</b>"},
    ],
    "complete_filtered_rows": True,
    "purpose": {"kind": "entity_lookup", "entity_type": "quest", "entity_id": 90001},
    "provenance": {**PROVENANCE, "pointer": "/result/result/rows"},
}
ENTITY = {
    "kind": "project_entity",
    "entity_type": "quest",
    "entity_id": 90001,
    "name": "Catch the Wolpertinger",
    "runtime_observed": False,
    "provenance": {**PROVENANCE, "pointer": "/result/result/rows/0/ID"},
}
EMPTY = {
    "kind": "project_empty_result",
    "table": "creature_template",
    "filters": [{"column": "entry", "operator": "eq", "value": 5}],
    "purpose": {"kind": "entity_lookup", "entity_type": "creature", "entity_id": 5},
    "statement": "none in this table",
    "provenance": {**PROVENANCE, "pointer": "/result/result/rows"},
}


def _facts() -> list[dict[str, Any]]:
    return numbered(mention("quest", 90001), mention("creature", 5), ROWS, ENTITY, EMPTY)


def _report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, facts: Any) -> dict[str, Any]:
    return build_report(package_with_facts(tmp_path, monkeypatch, facts))


def test_an_uninvestigated_case_says_so_in_one_line_before_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _report(tmp_path, monkeypatch, ranked_facts(max_leads=3))
    page = render_html(report)
    first = page.index("<h2")
    assert page[first:].startswith('<h2 id="verdict">Verdict</h2>\n<p>Not investigated yet.</p>')
    # No empty verdict table.
    assert "<th>Hypothesis</th>" not in page
    text = render_markdown(report)
    assert text.index("## Verdict\n\nNot investigated yet.") == text.index("## ")
    assert "| Hypothesis | Result |" not in text


def test_leads_then_entities_then_the_report_text_then_the_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _report(tmp_path, monkeypatch, [*_facts(), *ranked_facts(max_leads=3)[5:]])
    page = render_html(report)
    order = [
        '<h2 id="verdict">',
        '<h2 id="leads">',
        '<h2 id="entities">',
        "<h2>The report</h2>",
        "<h2>Hypotheses</h2>",
        '<h2 id="facts">',
    ]
    assert [page.index(head) for head in order] == sorted(page.index(head) for head in order)
    text = render_markdown(report)
    heads = ["## Verdict", "## Leads", "## Entities", "## The report", "## Facts"]
    assert [text.index(h) for h in heads] == sorted(text.index(h) for h in heads)


def test_the_entities_the_report_names_say_what_exists_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _report(tmp_path, monkeypatch, _facts())
    assert schema_validator("case-report-v3").is_valid(report)
    assert report["entities"] == [
        {
            "entity_type": "quest",
            "entity_id": "90001",
            "name": "Catch the Wolpertinger",
            "exists": ["quest_template: 2 rows"],
        },
        {
            "entity_type": "creature",
            "entity_id": "5",
            "name": None,
            "exists": ["no row in creature_template"],
        },
    ]
    page = render_html(report)
    assert (
        "<tr><td>quest</td><td>90001</td><td>Catch the Wolpertinger</td>"
        "<td>quest_template: 2 rows</td></tr>"
    ) in page


def test_facts_are_tables_by_kind_with_where_each_row_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _report(tmp_path, monkeypatch, _facts())
    (rows,) = [t for t in report["fact_tables"] if t["kind"] == "project_rows"]
    assert rows["title"] == "rows of quest_template"
    assert rows["columns"] == ["ID", "LogTitle"]
    assert [r["cells"] for r in rows["rows"]] == [
        ["90001", "Catch the Wolpertinger"],
        ["90001", "<b>twice</b>"],
    ]
    # Each row: the capture, its SHA-256's first 12 digits and the row's pointer.
    assert [r["source"] for r in rows["rows"]] == [
        {
            "capture_path": PROVENANCE["capture_path"],
            "sha256": "c" * 12,
            "pointer": f"/result/result/rows/{i}",
            "origin": None,
        }
        for i in range(2)
    ]
    (mentions,) = [t for t in report["fact_tables"] if t["kind"] == "case_mention"]
    assert mentions["rows"][0]["source"] is None  # the case inputs
    page = render_html(report, package_href="../pkg")
    facts = page[page.index('<h2 id="facts">') :]
    assert "<th>Fact</th><th>ID</th><th>LogTitle</th><th>Read from</th>" in facts
    assert "&lt;b&gt;twice&lt;/b&gt;" in facts and "<b>twice" not in facts
    assert (
        f'<a href="../pkg/{PROVENANCE["capture_path"]}">{"c" * 12}</a></span> '
        "<code>/result/result/rows/1</code>"
    ) in facts
    # No fact as a JSON dump.
    assert not re.search(r"\{&quot;|\{\"", facts)
    text = render_markdown(report, package_href="../pkg")
    md_facts = text[text.index("## Facts") :]
    assert "| Fact | ID | LogTitle | Read from |" in md_facts
    assert "{" not in md_facts.replace("{" + "}", "")


def test_a_document_of_an_older_version_still_renders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = _report(tmp_path, monkeypatch, _facts())
    older = {k: v for k, v in report.items() if k not in {"entities", "fact_tables"}}
    older["format_version"] = 1
    older["facts"] = [
        {
            "fact_id": "P3",
            "kind": "project_rows",
            "label": "project data: rows of the world database",
            "statement": None,
            "excerpt": '{"table": "quest_template"}',
            "truncated": False,
            "provenance": ROWS["provenance"],
        }
    ]
    assert schema_validator("case-report-v1").is_valid(older)
    page = render_html(older)
    assert 'id="fact-P3"' in page and "quest_template" in page
    assert "<p>Not investigated yet.</p>" in page
    assert "**P3**" in render_markdown(older)
