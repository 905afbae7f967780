"""A case package whose revision holds given enrichment facts, built without a database.

The CaseBuilder runs as in ``vba case build``; only the enrichment's lookups
are replaced by the facts given (every query the build still asks itself,
the schema of the column alternatives, is refused). So the package, its
index and its hashes are exactly what a build writes, and the readers of
leads (``vba case leads``, ``vba status``, the report) see a real package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.case.builder.conftest import case_spec
from tests.enrichment.lead_facts import (
    change,
    mention,
    missing,
    numbered,
    rule_hit,
    script_file,
    with_leads,
)
from viano_bug_analysis.case import builder
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.engine import EnrichmentRun
from viano_bug_analysis.errors import ResearchError

ORIGIN = {"git": {"url": "https://git.example.invalid/vcore.git", "commit": "0" * 40}}


class _RefusingResearch:
    def capture(self, query: Mapping[str, Any]) -> Any:
        raise ResearchError("table_not_allowed", "not allowed here", {})


def ranked_facts(max_leads: int = 3) -> list[dict[str, Any]]:
    """One source fact of every lead class (five leads), ranked with ``max_leads``."""
    return with_leads(
        numbered(
            mention("creature", 5),
            script_file(5, "src/server/scripts/Zone/zone_keg.cpp", "zone"),
            rule_hit(
                "gossip_without_menu", "heuristic", "creature", 5, "creature_template", {"entry": 5}
            ),
            missing(
                "creature", 99, "conditions", {"SourceTypeOrReferenceId": 22, "SourceEntry": 5}
            ),
            rule_hit(
                "spellclick_without_rows",
                "engine",
                "creature",
                5,
                "creature_template",
                {"entry": 5},
            ),
            change("a" * 40, ["5"], "2026-01-02T00:00:00Z"),
        ),
        max_leads,
    )


def package_with_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, facts: Sequence[Mapping[str, Any]] | None
) -> Path:
    """The package at ``tmp_path/pkg``: enriched with ``facts``, or not enriched (None)."""
    root = tmp_path / "pkg"
    spec = case_spec(tmp_path / "inputs")
    if facts is None:
        CaseBuilder(spec, root).build()
        return root

    class _Enricher:
        def __init__(self, *_args: Any, **_kwargs: Any) -> None:
            pass

        def run(self, *_args: Any) -> EnrichmentRun:
            return EnrichmentRun([dict(f) for f in facts], [])

    monkeypatch.setattr(builder, "Enricher", _Enricher)
    CaseBuilder(
        spec,
        root,
        profile=vcore_profile(),
        project_research=_RefusingResearch(),
        research_origin=ORIGIN,
    ).build()
    return root
