"""``case_facts`` on a package enriched against the test MariaDB and a real git repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.case.builder.conftest import CountingResearch, ResearchSetup
from tests.case.builder.test_enrichment_facts import build, captured
from viano_bug_analysis.enrichment.leads import leads_first
from viano_bug_analysis.investigation.project_context import LABELS
from viano_bug_analysis.jsonio import canonical_bytes, sha256_hex
from viano_bug_analysis.mcp_server.tools import McpTools
from viano_bug_analysis.profiles import load_profile
from viano_bug_analysis.schema_errors import check

pytestmark = pytest.mark.integration


def test_case_facts_are_the_revisions_facts_labelled_with_provenance(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    built = build(tmp_path, counting, research_setup)
    package = tmp_path / "package"
    outcome = McpTools(package, load_profile("vcore").router()).call("case_facts", {})
    assert outcome.is_error is False
    document = outcome.structured
    assert check("mcp-case-facts-v1", document) is None
    assert document["analysis_revision"] == built.revision
    # Every fact of the revision, the leads first (tests/mcp_server/test_case_facts_leads.py).
    assert [{k: v for k, v in f.items() if k != "label"} for f in document["facts"]] == leads_first(
        built.facts
    )
    assert all(fact["label"] == LABELS[fact["kind"]] for fact in document["facts"])
    assert document["research_origin"]["git"]["commit"] == research_setup.commit
    cited = [fact for fact in document["facts"] if "provenance" in fact]
    assert cited
    for fact in cited:
        # The provenance resolves in the stored capture.
        assert captured(package, fact["provenance"]) is not None
    assert outcome.recorded is not None
    assert outcome.recorded.result_sha256 == sha256_hex(canonical_bytes(document))
