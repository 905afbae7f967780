"""``case_facts`` lists the leads first, ranked as every other listing ranks them.

The package is a real build whose enrichment facts are given (no database):
the leads stand in the index behind other facts and out of rank order, so
only the ranking itself can put them first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.case.leads_package import package_with_facts, ranked_facts
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.enrichment.leads import LEAD_KIND, leads_of
from viano_bug_analysis.investigation.project_context import project_prompt_context
from viano_bug_analysis.mcp_server.tools import McpTools
from viano_bug_analysis.profiles import load_profile
from viano_bug_analysis.schema_errors import check


def test_case_facts_lists_the_ranked_leads_before_every_other_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranked = ranked_facts(max_leads=5)
    leads = [f for f in ranked if f["kind"] == LEAD_KIND]
    others = [f for f in ranked if f["kind"] != LEAD_KIND]
    assert len(leads) == 5
    # Leads behind the first other facts, and in reverse rank order.
    shuffled = [*others[:2], *reversed(leads), *others[2:]]
    package = package_with_facts(tmp_path, monkeypatch, shuffled)

    outcome = McpTools(package, load_profile("vcore").router()).call("case_facts", {})

    assert outcome.is_error is False
    document = outcome.structured
    assert check("mcp-case-facts-v1", document) is None
    kinds = [f["kind"] for f in document["facts"]]
    assert kinds[:5] == [LEAD_KIND] * 5 and LEAD_KIND not in kinds[5:]
    listed = [f["fact_id"] for f in document["facts"]]
    assert listed[:5] == [f["fact_id"] for f in leads_of(shuffled)]
    assert [f["rank"] for f in document["facts"][:5]] == [1, 2, 3, 4, 5]
    # The same order as the prompt selection's: one ranking for every listing.
    prompt = project_prompt_context(load_package(package))
    assert prompt is not None
    assert [f["fact_id"] for f in prompt["facts"]][:5] == listed[:5]
    # The others keep the index's order, and nothing is lost or added.
    stored = [f["fact_id"] for f in others]
    assert [i for i in listed[5:] if i in stored] == stored
    assert sorted(listed) == sorted({*listed})
