"""Scoring the report corpus: import each report, build it against the test DB, compare.

What a report names is a set of keys: ``(type, id)`` for typed mentions,
for the types an untyped ID was found as and for the entities a name is
exact for; ``("untyped", id)`` for an untyped ID found nowhere;
``("link:<site type>", id)`` for a link to a type the profile does not
read. The expected set comes from ``tests/corpus/expected/<stem>.json``
(written by a person reading the report), the found set from the facts of
the built revision. Precision and recall are over the union of all reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.case.intake import import_report
from viano_bug_analysis.enrichment import research_origin, vcore_profile
from viano_bug_analysis.project_research import ProjectResearch
from viano_bug_analysis.project_research.config import ResearchConfig

CORPUS = Path(__file__).parent
REPORTS = CORPUS / "reports"
EXPECTED = CORPUS / "expected"

Key = tuple[str, int]


def reports() -> list[Path]:
    if not REPORTS.is_dir():
        return []  # test_the_corpus_is_big_enough says so
    return sorted(p for p in REPORTS.iterdir() if p.is_file() and not p.name.startswith("."))


def expected_of(report: Path) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((EXPECTED / f"{report.stem}.json").read_bytes())
    return data


def expected_keys(expected: Mapping[str, Any]) -> set[Key]:
    keys = {(m["entity_type"], int(m["entity_id"])) for m in expected.get("mentions", [])}
    for untyped in expected.get("untyped", []):
        types = untyped.get("found_as") or ["untyped"]
        keys.update((t, int(untyped["entity_id"])) for t in types)
    for name in expected.get("names", []):
        keys.update((m["entity_type"], int(m["entity_id"])) for m in name.get("found_as", []))
    for link in expected.get("unresolved_links", []):
        keys.add((f"link:{link['site_type']}", int(link["site_id"])))
    return keys


def forbidden(expected: Mapping[str, Any], found: set[Key]) -> set[Key]:
    """The found keys a report sets as traps; a trap without a type forbids its number as any."""
    traps = expected.get("not", [])
    typed = {(m["entity_type"], int(m["entity_id"])) for m in traps if m["entity_type"]}
    numbers = {int(m["entity_id"]) for m in traps if not m["entity_type"]}
    return {key for key in found if key in typed or key[1] in numbers}


def found_keys(facts: Iterable[Mapping[str, Any]]) -> set[Key]:
    keys: set[Key] = set()
    for fact in facts:
        kind = fact["kind"]
        if kind == "case_mention":
            keys.add((fact["entity_type"], fact["entity_id"]))
        elif kind == "case_untyped_mention":
            types = fact["found_as"] or ["untyped"]
            keys.update((t, fact["entity_id"]) for t in types)
        elif kind == "project_name_match":
            keys.update((m["entity_type"], m["entity_id"]) for m in fact["matches"])
        elif kind == "case_unresolved_mention":
            keys.add((f"link:{fact['form'].split(':', 1)[1]}", fact["entity_id"]))
    return keys


@dataclass
class Score:
    """Counts over the corpus, and per report what was missed or extra."""

    true_positive: int = 0
    found: int = 0
    expected: int = 0
    queries: list[int] = field(default_factory=list)
    misses: dict[str, list[Key]] = field(default_factory=dict)
    extras: dict[str, list[Key]] = field(default_factory=dict)

    def add(self, name: str, expected: set[Key], found: set[Key], queries: int) -> None:
        self.true_positive += len(expected & found)
        self.found += len(found)
        self.expected += len(expected)
        self.queries.append(queries)
        if expected - found:
            self.misses[name] = sorted(expected - found)
        if found - expected:
            self.extras[name] = sorted(found - expected)

    @property
    def precision(self) -> float:
        return self.true_positive / self.found if self.found else 1.0

    @property
    def recall(self) -> float:
        return self.true_positive / self.expected if self.expected else 1.0


@dataclass
class Built:
    """One report as `vba case import` and `vba case build` left it."""

    spec: dict[str, Any]
    facts: list[dict[str, Any]]
    queries: int
    package: Path


def import_and_build(
    report: Path, root: Path, research: ProjectResearch, config: ResearchConfig
) -> Built:
    """Imports ``report`` into ``root/specs`` and builds it into ``root/packages``."""
    spec_path = root / "specs" / f"{report.stem}.json"
    spec_path.parent.mkdir(parents=True, exist_ok=True)
    import_report(report, output=spec_path, force=True)
    package = root / "packages" / report.stem
    result = CaseBuilder(
        spec_path,
        package,
        profile=vcore_profile(),
        project_research=research,
        research_origin=research_origin(config),
    ).build()
    spec: dict[str, Any] = orjson.loads(spec_path.read_bytes())
    return Built(spec, result.facts, len(result.queries), package)
