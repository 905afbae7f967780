"""The enrichment engine with client data: set-apart names resolve to spells and items,
mentioned spells become their records, every lookup is a query of the one budget."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.project_research.research_fakes import make_config
from tests.project_research.test_client_data import SOURCE_TOML, HeaderGit, research  # noqa: F401
from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.engine import Enricher, EnrichmentRun
from viano_bug_analysis.enrichment.extract import MAX_CLIENT_NAMES, extract
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.errors import ResearchError
from viano_bug_analysis.project_research import ProjectResearch, query_sha256

TEXT = (
    "Casting the spell Rescue Drowning Watchman with [Grandma's good clothes] on; "
    "spell 75048 stays. Rescue Drowning Watchman is a title-case run only."
)


def _runner(answers: ProjectResearch) -> Callable[[Mapping[str, Any]], StepOutcome]:
    steps = itertools.count(1)

    def run(query: Mapping[str, Any]) -> StepOutcome:
        step, sha = next(steps), query_sha256(query)
        if query["kind"] != "client.records":  # no world database or source here
            return StepOutcome(step, sha, None, "provider_not_configured", False)
        try:
            return StepOutcome(step, sha, answers.capture(query), None, False)
        except ResearchError as err:
            return StepOutcome(step, sha, None, err.code, False)

    return run


def _enrich(
    answers: ProjectResearch, client_data: bool | None, max_queries: int = 512
) -> EnrichmentRun:
    vcore = vcore_profile()
    limits = dataclasses.replace(vcore.limits, max_queries=max_queries)
    profile = dataclasses.replace(vcore, limits=limits)
    found = extract(profile, {"title": "Drowning", "text": TEXT}, [])
    enricher = Enricher(
        profile, _runner(answers), capture_path=lambda sha: sha, client_data=client_data
    )
    return enricher.run(found)


def _of(run: EnrichmentRun, kind: str) -> list[dict[str, Any]]:
    return [f for f in run.facts if f["kind"] == kind]


def test_set_apart_names_resolve_and_mentioned_spells_are_described(
    research: ProjectResearch,  # noqa: F811
) -> None:
    run = _enrich(research, client_data=True)
    matches = {
        (f["phrase"].casefold(), f["entity_type"], f["entity_id"])
        for f in _of(run, "client_name_match")
    }
    assert matches == {
        ("rescue drowning watchman", "spell", 1),
        ("grandma's good clothes", "item", 52069),
    }  # fmt: skip
    records = {(f["entity_type"], f["entity_id"]): f for f in _of(run, "client_record")}
    assert records[("spell", 75048)]["effects"][0]["aura_name"] == "SPELL_AURA_MOD_INVISIBILITY"
    assert records[("spell", 1)]["name"] == "Rescue Drowning Watchman"
    # A resolved name is an entity of the case: its map entries were asked like a mention's.
    assert any(
        q["purpose"].get("kind") == "constant_search" and q["purpose"]["entity_id"] == 1
        for q in run.queries
    )
    # The resolved names are no longer "not asked" or "not found".
    [candidates] = _of(run, "case_name_candidates")
    listed = {n.casefold() for n in candidates["not_asked"] + candidates["not_found"]}
    assert "grandma's good clothes" not in listed
    # Each name is asked once per table, each lookup once.
    asked = [query_sha256(q) for q in run.queries]
    assert len(asked) == len(set(asked))


def test_client_lookups_are_counted_in_the_query_budget(
    research: ProjectResearch,  # noqa: F811
) -> None:
    run = _enrich(research, client_data=True, max_queries=6)
    assert len(run.queries) <= 6
    [budget] = [f for f in run.facts if f.get("reason") == "query_budget"]
    assert budget["asked"] == len(run.queries)
    # The lookups by ID keep their own share: the mentioned spell is described.
    assert any(f["entity_id"] == 75048 for f in _of(run, "client_record"))


def test_without_client_data_nothing_is_asked_and_one_fact_says_so(tmp_path: Path) -> None:
    unconfigured = ProjectResearch(make_config(tmp_path, SOURCE_TOML), git=HeaderGit())
    run = _enrich(unconfigured, client_data=False)
    assert not any(str(q["purpose"]["kind"]).startswith("client_") for q in run.queries)
    [note] = [f for f in run.facts if f.get("reason") == "client_data_not_configured"]
    assert note["entity_types"] == {"spell": 1} and note["count"] == 1
    # Not said at all when the caller does not say whether client data is configured.
    quiet = _enrich(unconfigured, client_data=None)
    assert not any(f.get("reason") == "client_data_not_configured" for f in quiet.facts)
    assert len(quiet.facts) == len(run.facts) - 1


def test_client_name_candidates_come_from_structure_and_are_bounded() -> None:
    profile = vcore_profile()
    text = "Rescue Drowning Watchman fails. " + " ".join(
        f'"Name Number {chr(65 + i)}"' for i in range(MAX_CLIENT_NAMES + 3)
    )
    found = extract(profile, {"title": "t", "text": text}, [])
    names = [n.name for n in found.client_names]
    assert len(names) == MAX_CLIENT_NAMES and names[0] == "Name Number A"
    assert "Rescue Drowning Watchman" not in names  # a bare title-case run is not asked
    assert found.dropped["client_names"] == 3
