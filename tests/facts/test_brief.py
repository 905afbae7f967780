"""The brief's fact sections: compact, deterministic, within the budget, nothing lost silently."""

from __future__ import annotations

import copy
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.facts.sample import facts, index
from viano_bug_analysis.facts.brief import fact_sections, table_access

HASH = re.compile(r"[0-9a-f]{40,64}")
HEADINGS = ("Entities", "Leads", "Rows found", "Other findings", "Empty lookups", "Coverage")


def test_sections_in_order_every_fact_shown_once_no_hashes() -> None:
    sections = fact_sections(index(), max_chars=100_000)
    assert sections.left_out == ()
    assert sorted(sections.shown, key=lambda i: int(i[1:])) == [f["fact_id"] for f in facts()]
    starts = [sections.text.find(h) for h in HEADINGS]
    assert all(s >= 0 for s in starts) and starts == sorted(starts)
    assert not HASH.search(sections.text)
    assert "{" not in sections.text, "rows are tables, not JSON"


def test_entities_name_what_exists_and_the_report_ones_come_first() -> None:
    text = fact_sections(index(), max_chars=100_000).text
    entities = text.split("Leads")[0].splitlines()[1:]
    assert entities[0].startswith('- quest 90001 "Catch the Wolpertinger": named in the report')
    assert "rows in quest_template" in entities[0]
    assert entities[1].startswith("- creature 90002: named in the report")
    assert "nothing in 1 other table" in entities[1]


def test_a_relationship_that_restates_an_empty_result_is_folded_into_it() -> None:
    text = fact_sections(index(), max_chars=100_000).text
    empty = [line for line in text.splitlines() if line.startswith("- creature 90002: nothing")]
    assert empty == ["- creature 90002: nothing in conditions (P9-P10)"]
    assert "cond: creature 90002 -> conditions" not in text


def test_coverage_is_one_counted_line_per_reason() -> None:
    text = fact_sections(index(), max_chars=100_000).text
    coverage = text.split("Coverage (what the build did not read):\n")[1].splitlines()
    assert coverage[0].startswith("- max_depth: 2 references not followed")
    assert coverage[0].endswith("(P15-P16)")
    assert coverage[1].startswith("- query_refused table_not_allowed: creature_loot_template")


def test_what_does_not_fit_is_left_out_whole_and_listed() -> None:
    full = fact_sections(index(), max_chars=100_000)
    small = fact_sections(index(), max_chars=len(full.text) // 2)
    assert len(small.text) <= len(full.text) // 2
    assert small.left_out and set(small.left_out).isdisjoint(small.shown)
    assert set(small.left_out) | set(small.shown) == set(full.shown)
    assert "Left out for room:" in small.text and "case.facts" in small.text
    # Entities and leads are kept first.
    assert small.text.startswith("Entities") and "P23 1. engine check" in small.text


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=6000))
def test_never_longer_than_the_budget_and_deterministic(max_chars: int) -> None:
    first = fact_sections(index(), max_chars=max_chars)
    assert len(first.text) <= max_chars
    assert first == fact_sections(index(), max_chars=max_chars)
    assert len(first.shown) + len(first.left_out) == len(facts())


def test_table_access_reads_refusals_and_absent_tables() -> None:
    extra = {
        "fact_id": "P99",
        "kind": "project_context_coverage",
        "reason": "query_refused",
        "code": "table_not_found",
        "table": "spell_dbc",
        "count": 1,
    }
    source = {**extra, "fact_id": "P100", "code": "path_not_found", "source": "source.search"}
    del source["table"]
    access = table_access(index([*facts(), extra, source]))
    assert access.read == ("conditions", "quest_template")
    assert access.refused == {"table_not_allowed": ("creature_loot_template",)}
    assert access.absent == ("spell_dbc",)


def test_an_entity_only_reached_gives_way_before_the_leads() -> None:
    reached = copy.deepcopy(index())
    for number in range(5):  # rows of creatures the report does not name
        reached["facts"].append(
            {
                "fact_id": f"P{900 + number}",
                "kind": "project_rows",
                "table": "creature_template",
                "complete_filtered_rows": True,
                "filters": [{"column": "entry", "operator": "eq", "value": 95000 + number}],
                "purpose": {
                    "kind": "entity_lookup",
                    "entity_type": "creature",
                    "entity_id": 95000 + number,
                },
                "rows": [{"entry": 95000 + number, "name": f"Bystander {number}"}],
                "provenance": reached["facts"][-1].get("provenance")
                or next(f["provenance"] for f in reached["facts"] if "provenance" in f),
            }
        )
    full = fact_sections(reached, max_chars=100_000).text
    entities = [line for line in full.splitlines() if ": reached;" in line]
    leads = [line for line in full.splitlines() if re.match(r"- P\d+ \d+\. ", line)]
    assert len(entities) == 5 and leads
    for max_chars in range(200, len(full), 40):
        text = fact_sections(reached, max_chars=max_chars).text
        missing = [line for line in leads if line not in text]
        shown = [line for line in entities if line in text]
        if missing and shown:
            # Only a line that fits where no left-out lead did (the room left over).
            assert max(map(len, shown)) < min(map(len, missing)), max_chars


def test_a_lead_about_a_reached_entity_gives_way_before_the_rows_the_report_names() -> None:
    # A load-check hit on an entity three references away said less about the report
    # than the rows of its own entities, yet every lead was kept and those rows left out.
    with_reached = copy.deepcopy(index())
    lead = next(f for f in with_reached["facts"] if f["kind"] == "project_lead")
    far = {
        **copy.deepcopy(lead),
        "fact_id": "P950",
        "rank": 2,
        "why": "the engine flags it; reached from the report's entities " + "x" * 300,
        "location": {"table": "creature_template", "key": {"entry": 96000}},
        "entity_id": 96000,
    }
    with_reached["facts"].append(far)
    full = fact_sections(with_reached, max_chars=100_000)
    assert {"P950", str(lead["fact_id"])} <= set(full.shown)
    named_rows = [
        str(f["fact_id"])
        for f in with_reached["facts"]
        if f["kind"] == "project_rows" and f["purpose"].get("entity_id") in (90001, 90002)
    ]
    assert named_rows
    for max_chars in range(200, len(full.text), 20):
        shown = set(fact_sections(with_reached, max_chars=max_chars).shown)
        if "P950" in shown:
            assert set(named_rows) <= shown, max_chars
        assert str(lead["fact_id"]) in shown or not shown & set(named_rows), max_chars


def _with_fixes() -> dict[str, object]:
    sample = copy.deepcopy(index())
    facts = sample["facts"]
    assert isinstance(facts, list)
    n = len(facts)

    def candidate(rank: int, subject: str, repository: str = "source") -> dict[str, object]:
        n_id = len(facts) + 1
        return {
            "fact_id": f"P{n_id}",
            "kind": "project_fix_candidate",
            "rank": rank,
            "verdict": "maybe" if repository == "source" else "upstream_maybe",
            "repository": repository,
            "commit": f"{rank:040x}",
            "subject": subject,
            "date": "2024-03-05T00:00:00Z",
            "author": "Dee",
            "files_changed": 1,
            "files": ["sql/updates/1.sql"],
            "link": None,
            "score": 75,
            "reasons": [{"code": "subject_names_entity", "weight": 40, "detail": "names 90001"}],
            "statement": "s",
        }

    facts.append(candidate(1, "DB/Quest: Catch the Wolpertinger counts the net"))
    facts.append(candidate(2, "DB/Misc: a weaker one"))
    facts.append(
        {
            "fact_id": f"P{n + 3}",
            "kind": "project_fix_search",
            "repository": "source",
            "verdict": "maybe",
            "basis": "report_date",
            "commits_read": 9,
            "candidates_examined": 9,
            "candidates_ranked": 2,
            "statement": "already fixed? 9 commits read: ranked",
        }
    )
    return sample


def test_the_best_fix_candidate_and_the_verdict_lead_the_leads() -> None:
    sample = _with_fixes()
    text = fact_sections(sample, max_chars=100_000).text
    leads = text.split("Leads (where to look first; a lead is not a finding):\n")[1].splitlines()
    n = len(index()["facts"])
    assert leads[0] == (
        f'- P{n + 1} 1. maybe fixed by {"0" * 12} "DB/Quest: Catch the Wolpertinger counts the '
        'net" (2024-03-05, Dee, 1 file): names 90001'
    )
    assert leads[1] == f"- P{n + 3} already fixed? 9 commits read: ranked"
    # The second candidate is another finding, left out before the leads.
    assert f"P{n + 2} " not in "\n".join(leads[:3])
    assert f"P{n + 2}" in text.split("Other findings:")[1]
    small = fact_sections(sample, max_chars=len(text) // 2)
    assert f"P{n + 1} 1. maybe fixed by" in small.text and small.left_out
