"""Benchmark (prompt tokens): the case brief against the fact dump, same scripted answers.

Two cases, each investigated once with an in-process scripted model (the same
answers for every hypothesis: a ``database.rows`` query, a ``source.search``
or snapshot search, and a conclusion):

- the real-schema fixture world: a case built with live research against the
  test MariaDB world DB and the fixture git repository (the enrichment of the
  vcore profile), three hypotheses;
- the README's first case (``samples/first-case``, BUG-41: the spec and log the
  README's "Your first case" shows), built with live research like the README
  does with ``--project-config``, without hypotheses: a scripted interpretation
  proposes three (each with its first query), then they are investigated;
- the demo's snapshot case (samples/bug-20, no research, its two hypotheses):
  shown for what a case without facts costs; it has nothing to leave out, so
  the one-fifth target is not asserted for it.

Every call of the run is measured twice, side by side: as it was sent
(``investigation_project_v4`` / ``investigation_v3``, with ``context_tokens =
16384``) and as today's versions (``investigation_project_v3`` /
``investigation_v2``) would have built it from the same package state at that
moment: the same evidence records, this hypothesis' payloads in full, every
enrichment fact of the project context. Counts are the conservative count of
``investigation/token_budget.py`` over the whole request. Targets (issue 33):
the new median step prompt <= 6,000 tokens, no new request (prompt plus the
answer's room) over 12,000, and per case at most one fifth of today's.

``VBA_BENCH_DUMP_PROMPTS=DIR`` writes every prompt sent to DIR (one file per call),
to read them as the model does.

Needs the test MariaDB for the first two cases (scripts/with_test_services.sh);
the third runs anywhere:

    .venv/bin/python -m pytest benches/bench_prompt_budget.py -o python_files="bench_*.py" \\
        --benchmark-only -s
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.case.builder.conftest import (  # noqa: F401 (fixtures)
    ResearchSetup,
    case_spec,
    mariadb,
    research_setup,
    source_repo,
)
from tests.investigation.package_fixtures import built_with_research
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.investigation import interpretation_prompt
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.evidence import EvidenceStore
from viano_bug_analysis.investigation.interpreter import MAX_ATTEMPTS, CaseInterpreter
from viano_bug_analysis.investigation.llm.messages import ChatResult
from viano_bug_analysis.investigation.project_context import project_prompt_context
from viano_bug_analysis.investigation.prompts import build_messages
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.investigation.token_budget import TokenBudget, message_tokens

REPO = Path(__file__).resolve().parents[1]
BUDGET = TokenBudget(16384, "config", 2048)
SETTINGS = InvestigationSettings(max_steps=8, response_recovery_version=1)
TARGET_MEDIAN_STEP = 6000
TARGET_MAX_REQUEST = 12000
TARGET_CASE_RATIO = 0.2


def _answer(hid: str, next_step: Mapping[str, Any]) -> str:
    return orjson.dumps(
        {
            "hypothesis_id": hid,
            "assessment": "undetermined",
            "confidence": 0.4,
            "evidence": [],
            "next": next_step,
        }
    ).decode()


def _project_script(hid: str) -> list[str]:
    rows = {
        "kind": "database.rows",
        "table": "creature_template",
        "columns": ["entry", "name", "ScriptName"],
        "filters": [{"column": "entry", "operator": "eq", "value": 90002}],
        "offset": 0,
        "limit": 20,
    }
    search = {
        "kind": "source.search",
        "text": "90002",
        "case_sensitive": True,
        "path_prefix": "src/",
        "offset": 0,
        "limit": 20,
    }
    return [
        _answer(hid, {"kind": "tool", "operation": "project.query", "arguments": rows}),
        _answer(hid, {"kind": "tool", "operation": "project.query", "arguments": search}),
        _answer(hid, {"kind": "conclusion", "summary": "Scripted."}),
    ]


def _snapshot_script(hid: str) -> list[str]:
    find = {
        "source_refs": ["src-001"],
        "text": "Wolpertinger",
        "case_sensitive": True,
        "offset": 0,
        "limit": 20,
    }
    lookup = {"source_ref": "db-001", "filters": {"ID": 90001}, "offset": 0, "limit": 5}
    return [
        _answer(hid, {"kind": "tool", "operation": "source.find_text", "arguments": find}),
        _answer(hid, {"kind": "tool", "operation": "database.lookup", "arguments": lookup}),
        _answer(hid, {"kind": "conclusion", "summary": "Scripted."}),
    ]


class ScriptedModel:
    def __init__(self, script: list[str]) -> None:
        self.script = list(script)

    def chat(self, messages: list[dict[str, str]], **_: Any) -> ChatResult:
        return ChatResult(
            content=self.script.pop(0),
            usage=None,
            model="scripted",
            finish_reason="stop",
            endpoint_index=0,
            attempts=1,
            latency_ms=0,
            request_sha256="0" * 64,
        )


def _today_context(root: Path, call: Mapping[str, Any], hid: str, research: bool) -> dict[str, Any]:
    """The context today's controller (before the brief) built for the same call:
    this hypothesis' evidence in full, the others' IDs, every project fact."""
    package = load_package(root)
    store = EvidenceStore(root)
    context = call["context"]
    taken = {entry["evidence_id"] for entry in context["ledger"]}
    evidence = []
    others: dict[str, list[str]] = {}
    for record in store.records():
        if record["evidence_id"] not in taken:
            continue
        if record["hypothesis_id"] != hid:
            others.setdefault(record["hypothesis_id"], []).append(record["evidence_id"])
            continue
        evidence.append(
            {
                "evidence_id": record["evidence_id"],
                "kind": record["kind"],
                "request": record["request"]
                if record["kind"] == "project_query"
                else record["request"]["requests"][0],
                "payload": store.payload(record),
            }
        )
    today: dict[str, Any] = {
        **{k: context[k] for k in ("case_id", "analysis_revision", "report", "hypothesis")},
        "other_hypotheses": [
            {**h, "evidence_ids": others.get(h["id"], [])} for h in context["other_hypotheses"]
        ],
        "sources": context["sources"],
        "evidence": evidence,
        **{k: context[k] for k in ("step", "attempt", "max_steps")},
    }
    if research:
        today["project_context"] = project_prompt_context(package)
    return today


def _interpretation_calls(root: Path) -> list[tuple[list[Any], list[Any]]]:
    """Each interpretation call: its messages as sent and as ``case_interpretation_v1``
    (every enrichment fact as JSON, the fact dump of today) would have built them."""
    layout = PackageLayout(root)
    package = load_package(root)
    project = project_prompt_context(package) or {}
    every_fact = [
        {"label": fact["fact_id"], "kind": "project_fact", "fact": fact}
        for fact in project.get("facts", [])
    ]
    calls = []
    for attempt in range(1, MAX_ATTEMPTS + 1):
        rel = PackageLayout.interpretation(1) / f"{attempt:02d}-call.json"
        call = layout.files.read_document(rel)
        if call is None:
            break
        context = call["context"]
        today = {k: v for k, v in context.items() if k != "brief"}
        snapshot = [f for f in context["facts"] if f["kind"] != "project_fact"]
        today["facts"] = [*snapshot, *every_fact]
        calls.append(
            (
                interpretation_prompt.build_messages(context, call["prompt_version"]),
                interpretation_prompt.build_messages(
                    today, interpretation_prompt.PROMPT_VERSION_V1
                ),
            )
        )
    return calls


def _measure(
    root: Path,
    research: Any,
    hypotheses: list[str],
    script: list[str],
    interpretation: str | None = None,
) -> dict[str, Any]:
    new_steps, old_steps = [], []
    if interpretation is not None:
        CaseInterpreter(
            root,
            model=ScriptedModel([interpretation]),  # type: ignore[arg-type]
            settings=SETTINGS,
            research_enabled=research is not None,
            token_budget=BUDGET,
        ).run()
        for new, old in _interpretation_calls(root):
            _dump(new, "interpretation")
            new_steps.append(message_tokens(new))
            old_steps.append(message_tokens(old))
    InvestigationController(
        root,
        model=ScriptedModel(script),  # type: ignore[arg-type]
        settings=SETTINGS,
        research=research,
        token_budget=BUDGET,
    ).run()
    log = StepLog(root)
    old_version = "investigation_project_v3" if research else "investigation_v2"
    for hid, step, attempt, event in log.events():
        if event != "call":
            continue
        call = log.get(hid, step, attempt, event)
        assert call is not None
        messages = build_messages(call["prompt_version"], call["context"])
        new_steps.append(message_tokens(messages))
        _dump(messages, f"{hid}-{step}-{attempt}")
        old = _today_context(root, call, hid, research is not None)
        old_steps.append(message_tokens(build_messages(old_version, old)))
    return {
        "hypotheses": len(hypotheses),
        "calls": len(new_steps),
        "new_median_step": statistics.median(new_steps),
        "new_max_request": max(new_steps) + BUDGET.answer_tokens,
        "new_case": sum(new_steps),
        "today_median_step": statistics.median(old_steps),
        "today_max_request": max(old_steps) + BUDGET.answer_tokens,
        "today_case": sum(old_steps),
        "case_ratio": round(sum(new_steps) / sum(old_steps), 3),
    }


def _dump(messages: list[Any], name: str) -> None:
    if dump := os.environ.get("VBA_BENCH_DUMP_PROMPTS"):
        # To read the prompts as the model does: one file per call.
        Path(dump).mkdir(parents=True, exist_ok=True)
        text = "\n\n".join(f"## {m['role']}\n{m['content']}" for m in messages)
        (Path(dump) / f"{name}.txt").write_text(text, encoding="utf-8")


def _report(name: str, figures: Mapping[str, Any]) -> None:
    print(f"\n{name}: " + ", ".join(f"{k} {v}" for k, v in figures.items()))


def _with_hypotheses(spec_path: Path, statements: list[str]) -> list[str]:
    spec = orjson.loads(spec_path.read_bytes())
    spec["hypotheses"] = [
        {"id": f"H{n}", "statement": statement} for n, statement in enumerate(statements, 1)
    ]
    spec_path.write_bytes(orjson.dumps(spec))
    return [h["id"] for h in spec["hypotheses"]]


STATEMENTS = [
    "The net's spell hit gives no quest credit.",
    "The quest requires a different creature than the one caught.",
    "The creature has no script that reacts to the spell.",
]


@pytest.mark.benchmark(group="prompt tokens per case")
def test_fixture_world_case_three_hypotheses(
    benchmark: Any,
    tmp_path: Path,
    research_setup: ResearchSetup,  # noqa: F811 (the imported fixture)
) -> None:
    spec_path = case_spec(tmp_path / "inputs")
    hypotheses = _with_hypotheses(spec_path, STATEMENTS)
    root = built_with_research(spec_path, tmp_path / "package", research_setup)
    script = [a for hid in hypotheses for a in _project_script(hid)]
    with research_setup.research() as research:
        figures = benchmark.pedantic(
            _measure, args=(root, research, hypotheses, script), rounds=1, iterations=1
        )
    benchmark.extra_info.update(figures)
    _report("fixture world, 3 hypotheses", figures)
    assert figures["new_median_step"] <= TARGET_MEDIAN_STEP
    assert figures["new_max_request"] <= TARGET_MAX_REQUEST
    assert figures["case_ratio"] <= TARGET_CASE_RATIO


def _rows_query(table: str, columns: list[str], value: int) -> dict[str, Any]:
    return {
        "operation": "project.query",
        "arguments": {
            "kind": "database.rows",
            "table": table,
            "columns": columns,
            "filters": [{"column": columns[0], "operator": "eq", "value": value}],
            "offset": 0,
            "limit": 20,
        },
    }


# What a model proposes for the README's report: three hypotheses, each with its first query.
README_INTERPRETATION = orjson.dumps(
    {
        "hypotheses": [
            {
                "statement": statement,
                "refuted_if": refuted_if,
                "rests_on": ["report", "diag-001"],
                "first_query": query,
            }
            for statement, refuted_if, query in (
                (
                    "The net's spell 90004 has no effect or script that gives quest credit.",
                    "A script or spell effect of 90004 credits quest 90001's objective.",
                    _rows_query("spell_script_names", ["spell_id", "ScriptName"], 90004),
                ),
                (
                    "Quest 90001's objective names another creature than entry 90002.",
                    "The quest's required NPC is 90002.",
                    _rows_query("quest_template", ["ID", "LogTitle", "RequiredNpcOrGo1"], 90001),
                ),
                (
                    "Creature 90002 has no script that reacts to the net.",
                    "The creature has an AI or smart script handling spell 90004.",
                    _rows_query(
                        "creature_template", ["entry", "name", "AIName", "ScriptName"], 90002
                    ),
                ),
            )
        ]
    }
).decode()


@pytest.mark.benchmark(group="prompt tokens per case")
def test_readme_first_case(
    benchmark: Any,
    tmp_path: Path,
    research_setup: ResearchSetup,  # noqa: F811 (the imported fixture)
) -> None:
    """``samples/first-case`` built with ``--project-config``, interpreted, investigated."""
    root = built_with_research(
        REPO / "samples" / "first-case" / "case-spec.json", tmp_path / "package", research_setup
    )
    hypotheses = ["H1", "H2", "H3"]
    # Step 1 of each is its first query (run without a call); then a search and the end.
    script = [a for hid in hypotheses for a in _project_script(hid)[1:]]
    with research_setup.research() as research:
        figures = benchmark.pedantic(
            _measure,
            args=(root, research, hypotheses, script, README_INTERPRETATION),
            rounds=1,
            iterations=1,
        )
    benchmark.extra_info.update(figures)
    _report("README first case (samples/first-case, interpreted)", figures)
    assert figures["new_median_step"] <= TARGET_MEDIAN_STEP
    assert figures["new_max_request"] <= TARGET_MAX_REQUEST
    assert figures["case_ratio"] <= TARGET_CASE_RATIO


@pytest.mark.benchmark(group="prompt tokens per case")
def test_snapshot_case_without_facts(benchmark: Any, tmp_path: Path) -> None:
    root = tmp_path / "package"
    CaseBuilder(REPO / "samples" / "bug-20" / "case-spec.json", root).build()
    hypotheses = [h["id"] for h in load_package(root).case["hypotheses"]]
    script = [a for hid in hypotheses for a in _snapshot_script(hid)]
    figures = benchmark.pedantic(
        _measure, args=(root, None, hypotheses, script), rounds=1, iterations=1
    )
    benchmark.extra_info.update(figures)
    _report("snapshot case without facts (samples/bug-20)", figures)
    assert figures["new_median_step"] <= TARGET_MEDIAN_STEP
    assert figures["new_max_request"] <= TARGET_MAX_REQUEST
