"""``vba interpret``, ``vba investigate``, ``vba status`` and ``vba resume``.

Progress goes to stderr (one updating line on a terminal), results to
stdout. Exit codes are the table of every command (``viano_bug_analysis.
exit_codes``): 0 concluded, 4 blocked (the reason is printed; an operator
resumes with ``vba resume``), 2 rejected input, 3 research or the LLM
unavailable (running the same command again resumes), 5 damaged package
state, 6 package not writable or readable, 7 package busy.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from viano_bug_analysis.case.build_command import ProgressLine
from viano_bug_analysis.case.leads_command import leads_lines, leads_view
from viano_bug_analysis.case.lock import INVESTIGATION_LOCK, package_lock
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.exit_codes import ExitCode
from viano_bug_analysis.investigation.budget import BudgetManager
from viano_bug_analysis.investigation.checkpoints import (
    BLOCKED,
    Checkpoint,
    CheckpointStore,
)
from viano_bug_analysis.investigation.config import InvestigationConfig, load_investigation_config
from viano_bug_analysis.investigation.controller import (
    InvestigationController,
    Research,
    RunOutcome,
)
from viano_bug_analysis.investigation.evidence import EvidenceStore
from viano_bug_analysis.investigation.interpretation_state import (
    interpretation_state,
    is_proposed,
)
from viano_bug_analysis.investigation.interpreter import CaseInterpreter, InterpretationOutcome
from viano_bug_analysis.investigation.llm import ChatClient
from viano_bug_analysis.investigation.manifest_sync import manifest_status
from viano_bug_analysis.investigation.research_block import research_of
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.investigation.token_budget import TokenBudget, resolve_budget
from viano_bug_analysis.investigation.token_use import Prices, token_use
from viano_bug_analysis.investigation.verdict import VerdictStore, hypothesis_entries, usage_of

EXIT_BLOCKED = ExitCode.BLOCKED


@contextlib.contextmanager
def _research(path: Any, profile: Any) -> Iterator[Research | None]:
    if path is None:
        yield None
        return
    from viano_bug_analysis.enrichment.reference_query import with_reference_map
    from viano_bug_analysis.project_research import ProjectResearch, load_config

    # The model's project.query may ask the references kind of the profile's map.
    with with_reference_map(ProjectResearch(load_config(path)), profile) as research:
        yield research


def _interpret(
    package: Any,
    config: InvestigationConfig,
    router: Any,
    progress: ProgressLine,
    *,
    reinterpret: bool = False,
) -> InterpretationOutcome:
    # The interpreter asks nothing live: with research configured it shows the
    # revision's enrichment facts and may propose a project.query first query.
    interpreter = CaseInterpreter(
        package,
        model=ChatClient(config.llm),
        settings=config.settings,
        research_enabled=config.research_config is not None,
        router=router,
        progress=progress,
        reinterpret=reinterpret,
        token_budget=token_budget(config),
    )
    return interpreter.run()


def _allowed_tables(path: Any) -> list[str] | None:
    """The tables the research configuration allowlists (every database), for the
    case brief; None without research or without a database."""
    if path is None:
        return None
    from viano_bug_analysis.project_research import load_config

    database = load_config(path).database
    if database is None:
        return None
    return sorted({table for tables in database.allow.values() for table in tables})


def token_budget(config: InvestigationConfig) -> TokenBudget:
    """The context window of this configuration's requests: ``[llm] context_tokens``,
    else what the server advertises, else the default (investigation/token_budget.py)."""
    from viano_bug_analysis.investigation.llm.check import advertised_context_window

    configured = config.context_tokens
    advertised = None if configured is not None else advertised_context_window(config.llm)
    return resolve_budget(
        configured=configured, advertised=advertised, max_tokens=config.llm.max_tokens
    )


def _print_interpretation(outcome: InterpretationOutcome, package: Any) -> int:
    ids = ", ".join(h["id"] for h in outcome.hypotheses)
    if outcome.state == BLOCKED:
        print(f"blocked: {outcome.code} — fix the cause, then `vba resume {package}`")
        return ExitCode.BLOCKED
    if not outcome.new:
        print(f"already interpreted: {ids} (revision {outcome.revision})")
        return ExitCode.OK
    print(f"interpreted: {ids} (revision {outcome.revision})")
    for hypothesis in outcome.hypotheses:
        origin = hypothesis["origin"]
        print(f"{hypothesis['id']}: {hypothesis['statement']}")
        print(f"  refuted if: {origin['refuted_if']}")
        print(f"  rests on: {', '.join(origin['rests_on'])}")
        print(f"  first query: {origin['first_query']['operation']}")
    return ExitCode.OK


def run_interpret(args: argparse.Namespace) -> int:
    from viano_bug_analysis.profiles import profile_from_args

    config = load_investigation_config(args.config)
    profile = profile_from_args(args)
    progress = ProgressLine(sys.stderr)
    reinterpret = bool(getattr(args, "reinterpret", False))
    outcome = _interpret(args.package, config, profile.router(), progress, reinterpret=reinterpret)
    progress.done()
    return _print_interpretation(outcome, args.package)


@dataclass(frozen=True, slots=True)
class InvestigationRun:
    interpreted: InterpretationOutcome | None  # None: the case has operator hypotheses only
    outcome: RunOutcome | None  # None: the interpretation blocked, nothing was investigated


def investigate_package(
    package: Any,
    config: InvestigationConfig,
    profile: Any,
    progress: Any,
    *,
    reinvestigate: bool = False,
) -> InvestigationRun:
    """``vba investigate`` without its output: interpret the case when it has no
    hypotheses yet (a rerun after a kill finishes the interpretation from its
    records), then investigate every hypothesis (resuming from stored answers).
    ``vba triage`` runs the same for each report.

    A case whose report changed after its interpretation is refused
    (``report_changed_since_interpretation``) unless ``reinvestigate``: then the
    current revision is interpreted again and its new hypotheses investigated
    (``CaseInterpreter(reinterpret=True)``); the earlier hypotheses, outcomes and
    verdict stay in the package's history."""
    interpreted = None
    loaded = load_package(package)
    hypotheses = loaded.case["hypotheses"]
    # An interpreted case goes through the interpreter too: it asks nothing when the
    # interpretation is current, and completes one a kill cut short after its commit.
    if not hypotheses or any(is_proposed(h) for h in hypotheses):
        interpreted = _interpret(
            package, config, profile.router(), progress, reinterpret=reinvestigate
        )
        progress.done()
        if interpreted.state == BLOCKED:
            return InvestigationRun(interpreted, None)
    with _research(config.research_config, profile) as research:
        controller = InvestigationController(
            package,
            model=ChatClient(config.llm),
            settings=config.settings,
            research=research,
            # The router answers the model's snapshot requests with the profile's
            # schema adapter, exactly as `vba query` would answer them.
            router=profile.router(),
            progress=progress,
            token_budget=token_budget(config),
            readable_tables=_allowed_tables(config.research_config),
        )
        outcome = controller.run()
    progress.done()
    return InvestigationRun(interpreted, outcome)


def run_investigate(args: argparse.Namespace) -> int:
    from viano_bug_analysis.profiles import profile_from_args

    config = load_investigation_config(args.config)
    profile = profile_from_args(args)
    # Each line carries the budget left as the controller's own journal has it
    # at that moment (a manager opened here would show the state before the run).
    progress = ProgressLine(sys.stderr)
    reinvestigate = bool(getattr(args, "reinvestigate", False))
    run = investigate_package(args.package, config, profile, progress, reinvestigate=reinvestigate)
    interpreted = run.interpreted
    if (
        interpreted is not None
        and (interpreted.new or interpreted.state == BLOCKED)
        and _print_interpretation(interpreted, args.package) != 0
    ):
        return ExitCode.BLOCKED
    outcome = run.outcome
    assert outcome is not None
    for hid, result in sorted(outcome.outcomes.items()):
        cited = ", ".join(e["evidence_id"] for e in result.get("evidence", []))
        print(f"{hid}: {result['assessment']} ({result['reason']}) evidence: {cited or 'none'}")
        if result.get("summary"):
            print(f"  {result['summary']}")
    if outcome.state == BLOCKED:
        print(f"blocked: {outcome.code} — fix the cause, then `vba resume {args.package}`")
        block = _research_block(CheckpointStore(PackageLayout(args.package)).current())
        if block is not None:
            print(f"  {block['fix']}")
        return ExitCode.BLOCKED
    return ExitCode.OK


def _research_block(current: Checkpoint | None) -> dict[str, str] | None:
    if current is None or current.blocked is None:
        return None
    return research_of(current.blocked.code, current.payload)


def status_document(package_path: Any, prices: Prices | None = None) -> dict[str, Any]:
    """What the package says, read only: the state comes from the checkpoint log
    (the truth); ``manifest_in_sync`` says whether the manifest agrees with it (a
    kill between a checkpoint and the manifest update leaves the manifest behind
    until the next ``vba investigate`` or ``vba resume``)."""
    package = load_package(package_path)
    layout = PackageLayout(package.path)
    checkpoints = CheckpointStore(layout)
    current = checkpoints.current()
    in_sync = current is None or manifest_status(current) == (
        package.manifest["phase"],
        package.manifest["status"],
    )
    budget = BudgetManager(layout)
    log = StepLog(layout)
    verdict = VerdictStore(layout).current()
    return {
        "package_id": package.package_id,
        "analysis_revision": package.analysis_revision,
        "phase": package.phase,
        "state": current.state if current else "not started",
        "blocked": _blocked_record(current),
        "manifest_in_sync": in_sync,
        # Where to look first in the current revision (``vba case leads`` shows the same).
        "leads": leads_view(package),
        # The revision the hypotheses were proposed on, and whether the report was
        # edited since (then the outcomes answer the earlier text: --reinvestigate).
        "interpretation": interpretation_state(package).to_record(),
        # The current verdict (the newest issued version) and the revision it is of.
        "verdict": None
        if verdict is None
        else {
            "version": verdict["version"],
            "analysis_revision": verdict["analysis_revision"],
            "complete": verdict["complete"],
            "current": verdict["analysis_revision"] == package.analysis_revision,
        },
        "budget": {
            a.account: {
                "limit": a.limit,
                "spent": a.spent,
                "available": a.available,
                "status": a.status,
            }
            for a in budget.accounts()
        },
        "evidence": len(EvidenceStore(layout).records()),
        "hypotheses": {
            h["id"]: (log.outcome(h["id"]) or {}).get("assessment", "open")
            for h in package.case["hypotheses"]
        },
        # Each ended hypothesis's conclusion in the model's words, with its confidence.
        "outcomes": {
            entry["id"]: {k: entry[k] for k in ("assessment", "confidence", "summary", "reason")}
            for entry in hypothesis_entries(layout, package.case["hypotheses"])
            if entry["reason"] is not None
        },
        # Tokens as the LLM server reported them, apart from the budget's units
        # (tokens plus the fixed cost of each tool dispatch).
        "usage": usage_of(layout),
        # Per call, step and hypothesis, with cost (given prices) and the prompt
        # prefix each call repeats (investigation/token_use.py).
        "tokens": token_use(layout, prices),
    }


def _blocked_record(current: Checkpoint | None) -> dict[str, Any] | None:
    if current is None or current.blocked is None:
        return None
    record: dict[str, Any] = current.blocked.to_record()
    research = _research_block(current)
    if research is not None:
        record["research"] = research
    return record


def run_status(args: argparse.Namespace) -> int:
    prices = None
    if getattr(args, "config", None) is not None:
        prices = load_investigation_config(args.config).prices
    document = status_document(args.package, prices)
    if args.json:
        sys.stdout.write(orjson.dumps(document).decode() + "\n")
        return 0
    print(f"package {document['package_id']}: phase {document['phase']}, {document['state']}")
    if document["blocked"]:
        print(
            f"blocked: {document['blocked']['code']} (resumes into "
            f"{document['blocked']['resume_state']})"
        )
        if "research" in document["blocked"]:
            print(f"  {document['blocked']['research']['fix']}")
    if not document["manifest_in_sync"]:
        print("manifest: behind the checkpoint log (`vba investigate` or `vba resume` updates it)")
    interpretation = document["interpretation"]
    if interpretation["report_changed"]:
        print(
            f"report: edited after revision {interpretation['interpreted_revision']} was "
            "interpreted; the hypotheses and the verdict answer the earlier text "
            f"(`vba investigate {args.package} --reinvestigate` investigates the new one)"
        )
    verdict = document["verdict"]
    if verdict is not None:
        line = f"verdict: version {verdict['version']} of revision {verdict['analysis_revision']}"
        if not verdict["current"]:
            line += f" (the case is at revision {document['analysis_revision']})"
        print(line)
    for line in leads_lines(document["leads"]):
        print(line)
    for account, numbers in document["budget"].items():
        print(
            f"budget {account}: {numbers['spent']} of {numbers['limit']} spent "
            f"({numbers['status']})"
        )
    usage = document["usage"]
    print(
        f"tokens: {usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion "
        f"in {usage['model_answers']} model answer(s)"
        + (
            f", {usage['answers_without_usage']} without reported usage"
            if usage["answers_without_usage"]
            else ""
        )
    )
    print(
        f"budget units: {usage['budget_units_spent']} of {usage['budget_units_limit']} spent "
        "(tokens plus the fixed cost of each tool call)"
    )
    for line in token_lines(document["tokens"]):
        print(line)
    print(f"evidence: {document['evidence']} record(s)")
    for hid, assessment in document["hypotheses"].items():
        outcome = document["outcomes"].get(hid)
        if outcome is None:
            print(f"{hid}: {assessment}")
            continue
        confidence = outcome["confidence"]
        shown = "no confidence" if confidence is None else f"confidence {confidence:.2f}"
        print(f"{hid}: {assessment} ({outcome['reason']}, {shown})")
        if outcome["summary"]:
            print(f"  {_one_line(str(outcome['summary']))}")
    return 0


def token_lines(tokens: dict[str, Any]) -> list[str]:
    """``vba status``'s lines of the ``tokens`` view: per hypothesis, per step, the
    repeated prompt prefix, the cost."""
    if not tokens["calls"]:
        return []
    lines = ["tokens per hypothesis and step (prompt + completion, cached where reported):"]
    shares: dict[tuple[Any, Any], list[str]] = {}
    for call in tokens["calls"]:
        if call["prefix_share"] is not None:
            shares.setdefault((call["hypothesis"], call["step"]), []).append(
                f"{call['prefix_share']:.0%}"
            )
    for group in tokens["by_hypothesis"]:
        owner = group["hypothesis"]
        lines.append(f"  {owner}: {_token_sums(group)}")
        if owner == "interpretation" and shares.get((None, None)):
            lines[-1] += f"; prompt prefix repeated {', '.join(shares[(None, None)])}"
        for step in tokens["by_step"]:
            if step["hypothesis"] != owner:
                continue
            line = f"    step {step['step']}: {_token_sums(step)}"
            if shares.get((owner, step["step"])):
                line += f"; prompt prefix repeated {', '.join(shares[(owner, step['step'])])}"
            lines.append(line)
    prefix = tokens["prompt_prefix"]
    if prefix["share"] is not None:
        lines.append(
            f"prompt prefix: {prefix['share']:.0%} of {prefix['prompt_bytes']} prompt bytes "
            f"repeat the previous call's ({prefix['compared_calls']} call(s) compared; "
            "what server-side prompt caching can reuse)"
        )
    if tokens["prices"] is not None:
        lines.append(
            f"cost: {tokens['total']['cost']:.6f} (per million tokens: "
            f"{tokens['prices']['prompt']:g} prompt, {tokens['prices']['completion']:g} completion)"
        )
    return lines


def _token_sums(sums: dict[str, Any]) -> str:
    text = f"{sums['prompt_tokens']} + {sums['completion_tokens']}"
    if sums["cached_prompt_tokens"] is not None:
        text += f" ({sums['cached_prompt_tokens']} cached)"
    text += f" in {sums['answers']} answer(s)"
    if sums["answers_without_usage"]:
        text += f", {sums['answers_without_usage']} without usage"
    if sums.get("cost") is not None:
        text += f", cost {sums['cost']:.6f}"
    return text


def _one_line(text: str) -> str:
    """The model's words for a terminal: one line, no control characters, so a
    summary can neither fake further status lines nor send escape sequences."""
    spaced = " ".join(text.split())
    return "".join("?" if unicodedata.category(c).startswith("C") else c for c in spaced)


def run_resume(args: argparse.Namespace) -> int:
    # The investigation lock: a resume writes the checkpoint log and the
    # manifest, which a running investigation of the package also writes.
    with package_lock(args.package, INVESTIGATION_LOCK, "investigation"):
        checkpoints = CheckpointStore(args.package)
        if checkpoints.current() is not None:
            checkpoints.sync_manifest()  # a kill inside an earlier resume left it behind
        resumed = checkpoints.resume(args.operator)
        checkpoints.sync_manifest()
    print(f"resumed into {resumed.state} by {args.operator}; run `vba investigate` to continue")
    return 0


__all__ = [
    "EXIT_BLOCKED",
    "InvestigationRun",
    "investigate_package",
    "run_interpret",
    "run_investigate",
    "run_resume",
    "run_status",
    "status_document",
]
