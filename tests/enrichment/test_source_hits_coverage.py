"""The symbol hits of a build read ``coverage.complete``, not a provider boolean.

Version 1 of the project result said ``result.complete`` for "no file left
unsearched" (paging ignored), and the build read it as "every line is on this
page": a symbol named on more lines than ``symbol_hits`` got no
``source_hits_limit`` fact, and an unsearched file was worded as a second
page. Both now read the answer's coverage (docs/project-research-v1.md,
"Result versions").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.enrichment.world_fakes import FakeWorld, creature
from viano_bug_analysis.enrichment import parse_profile
from viano_bug_analysis.enrichment.engine import Enricher
from viano_bug_analysis.enrichment.extract import Mention
from viano_bug_analysis.enrichment.journal import StepOutcome

PROFILE = Path(__file__).parents[2] / "python/viano_bug_analysis/profiles/vcore/enrichment.toml"
C = 94001
SCRIPT = "npc_keg_runner"
TABLES = {"creature_template": [creature(C, ScriptName=SCRIPT)]}
FILES = {
    "src/server/scripts/Events/fair.cpp": f"struct {SCRIPT} : public ScriptedAI {{}};\n",
    "src/server/scripts/Events/fair_more.cpp": f"// {SCRIPT} again\n",
}


class Unsearched(FakeWorld):
    """Answers a symbol search as one page with one file left unsearched."""

    def __call__(self, query: Any) -> StepOutcome:
        outcome = super().__call__(query)
        if query["kind"] == "source.symbol":
            answer = outcome.capture.result  # type: ignore[union-attr]
            answer["result"]["files_unsearched"] = 1
            answer["coverage"]["complete"] = False
        return outcome


def _coverage_facts(world: FakeWorld, symbol_hits: int) -> list[dict[str, Any]]:
    profile = PROFILE.read_bytes()
    assert b"symbol_hits = 20\n" in profile
    text = profile.replace(b"symbol_hits = 20\n", f"symbol_hits = {symbol_hits}\n".encode())
    enricher = Enricher(parse_profile(text), world, capture_path=lambda sha: f"captures/{sha}.json")
    facts = enricher.run([Mention("creature", C, {"pointer": "/report/text", "offset": 0})]).facts
    return [
        f
        for f in facts
        if f["kind"] == "project_context_coverage"
        and f["reason"] == "source_hits_limit"
        and f.get("symbol") == SCRIPT
    ]


def test_a_symbol_on_more_lines_than_one_page_is_stated() -> None:
    [fact] = _coverage_facts(FakeWorld(TABLES, FILES), symbol_hits=1)
    assert fact["returned"] == 1
    assert fact["statement"].startswith("more lines name this symbol than symbol_hits")


def test_a_page_holding_every_line_states_nothing() -> None:
    assert _coverage_facts(FakeWorld(TABLES, FILES), symbol_hits=20) == []


def test_an_unsearched_file_is_stated_as_one_not_as_a_second_page() -> None:
    [fact] = _coverage_facts(Unsearched(TABLES, FILES), symbol_hits=20)
    assert fact["statement"].startswith("some files could not be searched")
