"""The build summary starts with the "Leads" block: rank, class, location, why and the
facts each lead rests on; the listings after it still show every other fact once."""

from __future__ import annotations

import re

from tests.case.leads_package import ranked_facts
from tests.enrichment.lead_facts import RAW, mention, numbered
from tests.enrichment.test_summary import _labels
from viano_bug_analysis.enrichment.summary import lead_summary, summarize, summarize_all


def test_the_block_lists_the_leads_by_rank_and_the_limit_fact() -> None:
    facts = ranked_facts(max_leads=3)
    head, lines = lead_summary(facts)
    assert head == "leads: 3 leads, most telling first, 2 more left out by max_leads"
    assert [re.match(r"\[P\d+\] (\d+)\. ", line).group(1) for line in lines[:3]] == ["1", "2", "3"]  # type: ignore[union-attr]
    assert lines[0].startswith("[P7] 1. changed since the report at commit aaaaaaaaaaaa: ")
    assert lines[1].endswith("(rests on P5)")
    assert lines[3] == (
        "[P10] coverage: leads_limit: 2 more leads ranked past max_leads (3): 1 heuristic, "
        "1 script file"
    )


def test_block_and_listing_together_show_every_label_once() -> None:
    facts = ranked_facts(max_leads=3)
    _, block = lead_summary(facts)
    for listing in (summarize(facts), summarize_all(facts)):
        labels = [label for line in block + listing for label in _labels(line)]
        assert sorted(labels) == sorted(f["fact_id"] for f in facts)
        assert not [line for line in listing if "] lead " in line or "leads_limit" in line]


def test_without_leads_the_block_says_none() -> None:
    head, lines = lead_summary(numbered(mention("creature", 5)))
    assert head.startswith("leads: none (") and lines == []


def test_lead_sources_have_one_line_each() -> None:
    lines = {line.split("] ")[0][1:]: line for line in summarize_all(ranked_facts())}
    assert lines["P3"] == (
        "[P3] heuristic rule gossip_without_menu: creature 5 (creature_template entry=5)"
    )
    assert lines["P5"] == (
        "[P5] engine rule spellclick_without_rows: creature 5 (creature_template entry=5, "
        "checked at src/server/game/Globals/ObjectMgr.cpp:812)"
    )
    assert lines["P4"] == (
        "[P4] missing reference conditions_creature: conditions.ConditionValue1 of conditions "
        "SourceEntry=5 SourceTypeOrReferenceId=22 names creature 99, none in "
        "creature_template.entry"
    )
    assert lines["P2"] == (
        "[P2] script file candidate for creature 5: src/server/scripts/Zone/zone_keg.cpp "
        "(zone, 1 line of evidence)"
    )
    # The commit's first line is shown (cut), as descriptions are.
    assert lines["P6"] == (
        f'[P6] changed since the report: commit aaaaaaaaaaaa (2026-01-02T00:00:00Z) "{RAW}": '
        "1 changed line naming 5"
    )
