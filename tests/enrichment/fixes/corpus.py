"""Runs the "already fixed?" phase over the corpus: each report as the build reads it.

A report goes the way of a build: the tracker's JSON through intake
(``issue_from_json``, ``build_spec``), the profile's extraction for its IDs and
names, the build's reported-revision step, then ``fix_candidates`` against the
history of ``corpus_history`` through ``ProjectResearch`` (the journaled
``source.changes`` pages, the first-parent log). Only the database is stood in
for: what its lookups would state of the entities the report names (their names,
the ScriptNames of their rows, the files naming those) comes from ``WORLD``, the
same world for every report; a name the report writes counts when an entity of
the world carries exactly that name, as the build's name lookup matches.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.enrichment.fixes.corpus_history import WORLD, Entity, make_history
from tests.enrichment.fixes.corpus_reports import FIXED, OURS, UNFIXED
from tests.project_research.git_fixtures import GIT_ENV
from viano_bug_analysis.case.intake.forms import issue_from_json
from viano_bug_analysis.case.intake.spec import build_spec
from viano_bug_analysis.case.report_revision import journaled_revision_step
from viano_bug_analysis.enrichment import research_origin, vcore_profile
from viano_bug_analysis.enrichment.extract import extract
from viano_bug_analysis.enrichment.fixes.phase import fix_candidates
from viano_bug_analysis.enrichment.fixes.source import history_sources
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.jsonio import canonical_sha256
from viano_bug_analysis.project_research import Capture, ProjectResearch, load_config

URL = f"https://github.com/{OURS}.git"


@dataclass(frozen=True)
class Outcome:
    number: int
    expected: str | None  # the label of the fixing commit; None: not fixed
    verdict: str
    ranked: tuple[str, ...]  # the labels of the listed candidates, best first
    candidates: tuple[Mapping[str, Any], ...]

    @property
    def first(self) -> bool:
        return bool(self.ranked) and self.ranked[0] == self.expected

    @property
    def top3(self) -> bool:
        return self.expected in self.ranked[:3]


@dataclass(frozen=True)
class Figures:
    fixed: int
    first: int
    top3: int
    unfixed: int
    false_fixed_by: int
    first_ranked_maybe: int
    leads_without_subject_or_reasons: int

    def text(self) -> str:
        return (
            f"fixed reports: {self.fixed}; fix ranked first: {self.first} "
            f"({100 * self.first // self.fixed} %), in the top 3: {self.top3} "
            f"({100 * self.top3 // self.fixed} %); negative controls: {self.unfixed}; "
            f'"fixed by" on them: {self.false_fixed_by}; a first-ranked "maybe" on them: '
            f"{self.first_ranked_maybe}; leads without subject or reasons: "
            f"{self.leads_without_subject_or_reasons}"
        )


class _Context:
    """The phase's view of a build: the facts so far, research for its queries."""

    def __init__(self, facts: list[dict[str, Any]], research: ProjectResearch) -> None:
        self._facts = facts
        self._research = research
        self.profile = vcore_profile()
        self.asked: list[Mapping[str, Any]] = []

    @property
    def facts(self) -> Sequence[Mapping[str, Any]]:
        return self._facts

    def ask(self, query: Mapping[str, Any], purpose: Mapping[str, Any]) -> StepOutcome:
        self.asked.append(query)
        return _asked(self._research, query, len(self.asked))

    def fact(self, kind: str, **fields: Any) -> str:
        fact_id = f"P{len(self._facts) + 1}"
        self._facts.append({"fact_id": fact_id, "kind": kind, **fields})
        return fact_id

    def provenance(self, capture: Capture, pointer: str) -> dict[str, Any]:
        return {"capture_sha256": capture.sha256, "pointer": pointer}


def _asked(research: ProjectResearch, query: Mapping[str, Any], step: int) -> StepOutcome:
    capture = research.capture(query)
    return StepOutcome(step, canonical_sha256(query), capture, None, False)


def run_corpus(workdir: Path) -> tuple[list[Outcome], dict[str, str]]:
    """Every report of the corpus through the phase; the outcomes and the commits."""
    commits = make_history(workdir / "repo")
    labels = {commit: label for label, commit in commits.items()}
    config_file = workdir / "research.toml"
    config_file.write_text(
        f'[source]\nrepository = "{workdir / "repo"}"\nurl = "{URL}"\n'
        f'commit = "{commits["ci_image"]}"\n'
    )
    config = load_config(config_file)
    sources = history_sources(config)
    origin = research_origin(config)
    outcomes = []
    with ProjectResearch(config) as research:
        cases = [(obj, label) for obj, label in FIXED] + [(obj, None) for obj in UNFIXED]
        for obj, expected in cases:
            report = _report(obj, commits)
            facts = _facts(report, workdir / "repo", commits["ci_image"])
            step = journaled_revision_step(
                lambda q: _asked(research, q, 0), report, origin, None, lambda sha: sha
            )
            context = _Context(facts, research)
            fix_candidates(report, sources, step.fact)(context)  # type: ignore[arg-type]
            listed = [
                f
                for f in facts
                if f["kind"] == "project_fix_candidate" and f["repository"] == "source"
            ]
            (search,) = [f for f in facts if f["kind"] == "project_fix_search"]
            outcomes.append(
                Outcome(
                    int(obj["number"]),
                    expected,
                    str(search["verdict"]),
                    tuple(labels[f["commit"]] for f in listed),
                    tuple(listed),
                )
            )
    return outcomes, commits


def figures(outcomes: Sequence[Outcome]) -> Figures:
    fixed = [o for o in outcomes if o.expected is not None]
    unfixed = [o for o in outcomes if o.expected is None]
    return Figures(
        fixed=len(fixed),
        first=sum(o.first for o in fixed),
        top3=sum(o.top3 for o in fixed),
        unfixed=len(unfixed),
        false_fixed_by=sum(o.verdict == "fixed_by" for o in unfixed),
        first_ranked_maybe=sum(o.verdict == "maybe" for o in unfixed),
        leads_without_subject_or_reasons=sum(
            not (c.get("subject") and c.get("reasons")) for o in outcomes for c in o.candidates
        ),
    )


def _report(obj: Mapping[str, Any], commits: Mapping[str, str]) -> dict[str, Any]:
    """The case spec's report, as ``vba case import`` writes it."""
    filled = {
        key: value.format(**commits) if isinstance(value, str) else value
        for key, value in obj.items()
    }
    report: dict[str, Any] = build_spec(issue_from_json(filled), stem=None, with_comments=False)[
        "report"
    ]
    return report


def _facts(report: Mapping[str, Any], repo: Path, pinned: str) -> list[dict[str, Any]]:
    """What the build's lookups state before the phase: the mentions, and of each
    entity of the world the report names its entity fact, its ScriptName row and
    the files naming that ScriptName."""
    profile = vcore_profile()
    found = extract(profile, report, [])
    facts: list[dict[str, Any]] = []

    def add(kind: str, **fields: Any) -> None:
        facts.append({"fact_id": f"P{len(facts) + 1}", "kind": kind, **fields})

    by_id: dict[int, list[Entity]] = {}
    for entity in WORLD:
        by_id.setdefault(entity.entity_id, []).append(entity)
    reached: list[Entity] = []
    for mention in found.mentions:
        add("case_mention", entity_type=mention.entity_type, entity_id=mention.entity_id)
        reached += [
            e for e in by_id.get(mention.entity_id, ()) if e.entity_type == mention.entity_type
        ]
    for untyped in found.untyped:
        types = [
            e.entity_type
            for e in by_id.get(untyped.entity_id, ())
            if e.entity_type in untyped.entity_types
        ]
        add("case_untyped_mention", entity_id=untyped.entity_id, found_as=types)
        reached += [e for e in by_id.get(untyped.entity_id, ()) if e.entity_type in types]
    for name in found.names:
        matches = [
            e
            for e in WORLD
            if e.name.casefold() == name.name.casefold() and e.entity_type in name.entity_types
        ]
        if matches:
            add(
                "project_name_match",
                name=name.name,
                followed=True,
                matches=[{"entity_type": e.entity_type, "entity_id": e.entity_id} for e in matches],
            )
            reached += matches
    for entity in dict.fromkeys(reached):
        add(
            "project_entity",
            entity_type=entity.entity_type,
            entity_id=entity.entity_id,
            name=entity.name,
        )
        if entity.script_name is not None:
            add("project_rows", table="script", rows=[{"ScriptName": entity.script_name}])
            paths = _files_naming(repo, pinned, entity.script_name)
            add(
                "project_source_hits",
                symbol=entity.script_name,
                matches=[{"path": path} for path in paths],
            )
    return facts


def _files_naming(repo: Path, commit: str, symbol: str) -> list[str]:
    done = subprocess.run(
        ["git", "grep", "-l", "-w", symbol, commit],
        cwd=repo,
        env=GIT_ENV,
        capture_output=True,
        text=True,
    )
    return [line.split(":", 1)[1] for line in done.stdout.splitlines()]


def digest(outcomes: Sequence[Outcome]) -> str:
    """One line per report (for a failing assertion's message)."""
    return "\n".join(
        f"#{o.number} expected {o.expected} verdict {o.verdict} ranked {list(o.ranked)}"
        for o in outcomes
    )


__all__ = ["Figures", "Outcome", "digest", "figures", "run_corpus"]
