"""The investigation controller: the hypothesis loop over one case package.

For each hypothesis, until the model concludes, the step limit or the
budget ends, or the case blocks:

1. build the prompt from stored state (``investigation_project_v5`` when
   research is enabled, else ``investigation_v3``) and record it (``call``);
2. reserve budget for the call, send it, record the answer (``reply``) and
   settle from the stored answer's tokens (the stored answer is the commit
   point: it is never requested again, and a later start settles from it);
3. recover and validate the answer as a whole (``decision``); a rejected
   answer counts against the invalid-response limit and its hint goes back
   to the model in the next attempt; at the limit the case blocks
   (``INVALID_LLM_RESPONSES``);
4. for a tool step: reserve the dispatch, record the confirmed plan in a
   checkpoint, dispatch to the snapshot router or ``project.query``, take
   the answer over as evidence together with its capture, settle
   (``dispatch``). A research outage blocks the case
   (``RESEARCH_UNAVAILABLE``) with the plan and its reservation kept; an
   operator resume continues exactly there. A tool's refusal is a technical
   rejection: recorded, fed back, never an end of the hypothesis;
5. for a conclusion: store the hypothesis outcome (the commit point), then
   close its account and write ``hypothesis_done``; every start completes
   both for a stored outcome that lacks them.

Every record is written once; a rerun after a kill replays what is recorded
(no request is sent twice or lost, nothing is charged twice, no evidence is
taken twice). A run holds the package's investigation lock from before it
reads anything, and every start first brings the manifest in line with the
checkpoint log. Only a fully validated answer is ever acted on. A case whose
report was edited after its interpretation is refused before anything is
written (``report_changed_since_interpretation``): its outcomes answer the
earlier text, and ``vba investigate --reinvestigate`` interprets it first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viano_bug_analysis.case.lock import INVESTIGATION_LOCK, package_lock
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import InterpretationError, ToolError, VbaError
from viano_bug_analysis.facts.query import facts_query
from viano_bug_analysis.investigation.answer_schema import (
    available_operations,
    repair_schema,
    step_schema,
    structured_reply,
)
from viano_bug_analysis.investigation.budget import BudgetError, BudgetManager
from viano_bug_analysis.investigation.case_brief import brief_of, fit, ledger_line, shown_request
from viano_bug_analysis.investigation.checkpoints import (
    BLOCKED,
    CONCLUDED,
    INVALID_LLM_RESPONSES,
    INVESTIGATION,
    REOPENED,
    RESEARCH_UNAVAILABLE,
    CheckpointStore,
)
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.evidence import (
    CaseFacts,
    CitationResolver,
    EvidenceError,
    EvidenceStore,
)
from viano_bug_analysis.investigation.interpretation_state import (
    interpretation_state,
    report_changed_error,
)
from viano_bug_analysis.investigation.llm import AnswerSchema, ChatModel
from viano_bug_analysis.investigation.llm_formats import PackageFormats
from viano_bug_analysis.investigation.model_call import (
    CallPlan,
    CallSlot,
    ModelCallStep,
    epoch,
    invalid_count,
    stored_policy,
)
from viano_bug_analysis.investigation.project_context import load_index
from viano_bug_analysis.investigation.prompts import (
    CURRENT_PROJECT_VERSION,
    CURRENT_VERSION,
    PROJECT_PROMPT_VERSIONS,
    build_messages,
)
from viano_bug_analysis.investigation.recovery import (
    CallRecordStore,
    ProviderReply,
    RecoveryContext,
    RecoveryLimits,
    ResponseContract,
    pending_repair,
    recover_response,
    resume_repair,
)
from viano_bug_analysis.investigation.recovery.audit import sha256_hex, text_bytes
from viano_bug_analysis.investigation.recovery.repair import (
    CASE_FACTS_OPERATION,
    RESPONSE_SCHEMA,
    RESPONSE_SCHEMA_V2,
)
from viano_bug_analysis.investigation.research_block import cause_fields
from viano_bug_analysis.investigation.steps import StepLog, check_writable
from viano_bug_analysis.investigation.token_budget import TokenBudget
from viano_bug_analysis.investigation.verdict import VerdictStore, build_verdict
from viano_bug_analysis.project_research import (
    ResearchError,
    ResearchUnavailable,
    query_sha256,
)
from viano_bug_analysis.project_research.protocol import Research
from viano_bug_analysis.tools.answer_view import refusal_record, refusal_text, unsearched_note
from viano_bug_analysis.tools.batch import request_batch
from viano_bug_analysis.tools.router import InvestigationToolRouter

_DONE = "done"  # a dispatch ended the hypothesis (budget), not the case
Progress = Callable[[str], None]
StepHook = Callable[[str], None]


@dataclass(frozen=True)
class RunOutcome:
    state: str  # investigation state at the end: concluded or blocked
    code: str | None  # the blocking code
    outcomes: dict[str, dict[str, Any]]  # per hypothesis


class InvestigationController:
    def __init__(
        self,
        package_path: str | Path,
        *,
        model: ChatModel,
        settings: InvestigationSettings,
        research: Research | None = None,
        router: InvestigationToolRouter | None = None,
        progress: Progress | None = None,
        after_step: StepHook | None = None,
        token_budget: TokenBudget | None = None,
        readable_tables: list[str] | None = None,
    ) -> None:
        """``token_budget``: the context window every request must fit (``vba
        investigate`` resolves it from the configuration or the server); without
        it requests are not measured against a window. ``readable_tables``: the
        tables the research configuration allowlists, shown in the case brief."""
        self._root = Path(package_path)
        self._layout = PackageLayout(self._root)
        self._model = model
        self._settings = settings
        self._research = research
        self._router = router or InvestigationToolRouter()
        self._progress = progress or (lambda _text: None)
        self._hook = after_step or (lambda _point: None)
        self._tokens = token_budget
        self._readable = readable_tables

    # -- the loop -----------------------------------------------------------------------

    def run(self) -> RunOutcome:
        """Runs the loop until the case concludes or blocks.

        A second run of the same package, in this process or another, is
        refused at once with ``package_busy``: the lock is taken before any
        store is read, so the second run neither replays logs the first is
        still writing nor pays for a model request.
        """
        with package_lock(self._root, INVESTIGATION_LOCK, "investigation"):
            self._open_stores()
            return self._run()

    def _open_stores(self) -> None:
        # The stores keep their next sequence numbers in memory: they are only
        # valid while the lock is held, so they are (re)read under it.
        self._checkpoints = CheckpointStore(self._layout)
        self._budget = BudgetManager(self._layout)
        self._evidence = EvidenceStore(self._layout)
        self._log = StepLog(self._layout)
        self._audit = CallRecordStore(self._layout)
        self._formats = PackageFormats(self._layout)
        self._policy = stored_policy(self._log, self._settings)
        self._calls = ModelCallStep(
            model=self._model,
            budget=self._budget,
            formats=self._formats,
            settings=self._settings,
            tokens=self._tokens,
            hook=self._hook,
        )

    def _run(self) -> RunOutcome:
        package = load_package(self._root)
        if not package.case["hypotheses"]:
            # An empty list would "conclude" at once; `vba investigate` interprets first.
            raise InterpretationError(
                "case_has_no_hypotheses",
                "the case has no hypotheses: run vba interpret (vba investigate does it first)",
                {"analysis_revision": package.analysis_revision},
            )
        changed = interpretation_state(package)
        if changed.report_changed:
            # The hypotheses answer an earlier report text: a verdict issued now would
            # claim the current one. `vba investigate --reinvestigate` interprets first.
            raise report_changed_error(package, changed)
        check_writable(self._layout)  # a read-only or full package fails before a paid call
        current = self._checkpoints.current()
        if current is not None:
            # The checkpoint log is the truth, the manifest its summary: a kill
            # between a checkpoint and the manifest update (here or inside
            # `vba resume`) left the manifest behind, and the router acts on it.
            self._checkpoints.sync_manifest()
        if current is not None and current.state == BLOCKED:
            return self._finish(BLOCKED, current.blocked.code if current.blocked else None)
        if current is None:
            self._checkpoints.advance(INVESTIGATION, event="started")
            self._checkpoints.sync_manifest()
        elif current.state == CONCLUDED:
            # An earlier version concluded a case past a conclusion it had not
            # completed (its account still open): the account can still be closed.
            open_ids = []
            for hypothesis in package.case["hypotheses"]:
                stored = self._log.outcome(hypothesis["id"])
                if stored is not None:
                    self._close_account(hypothesis["id"], stored)
                else:
                    open_ids.append(hypothesis["id"])
            if not open_ids:
                return self._finish(CONCLUDED, None)
            # A later case revision added hypotheses: the one move out of
            # `concluded` reopens the investigation for them.
            self._checkpoints.advance(
                INVESTIGATION,
                event=REOPENED,
                analysis_revision=package.analysis_revision,
                hypotheses=open_ids,
            )
            self._checkpoints.sync_manifest()
            self._hook("reopened")
        for hypothesis in package.case["hypotheses"]:
            stored = self._log.outcome(hypothesis["id"])
            if stored is not None:
                self._complete_conclusion(hypothesis["id"], stored)
                continue
            blocked = self._investigate(hypothesis)
            if blocked is not None:
                return self._finish(BLOCKED, blocked)
        self._checkpoints.advance(CONCLUDED, event="all hypotheses done")
        self._checkpoints.sync_manifest()
        return self._finish(CONCLUDED, None)

    def _finish(self, state: str, code: str | None) -> RunOutcome:
        if state == CONCLUDED:
            # Every hypothesis has ended: issue the case verdict (a new version only
            # when it differs from the last one, so a rerun after a kill issues it once).
            VerdictStore(self._layout).issue(build_verdict(self._layout))
            self._hook("verdict")
        outcomes = {}
        for hypothesis in load_package(self._root).case["hypotheses"]:
            stored = self._log.outcome(hypothesis["id"])
            if stored is not None:
                outcomes[hypothesis["id"]] = stored
        return RunOutcome(state, code, outcomes)

    def _investigate(self, hypothesis: Mapping[str, Any]) -> str | None:
        hid = hypothesis["id"]
        self._budget.open_account(hid, self._settings.budget_per_hypothesis)
        for step in range(1, self._settings.max_steps + 1):
            attempt = 1
            while True:
                decision = self._decide(hypothesis, step, attempt)
                if decision is None:
                    return self._block_invalid(hid, step)
                if decision.get("budget_exhausted"):
                    self._conclude(hid, None, "budget_exhausted")
                    return None
                if decision["status"] == "accepted":
                    break
                attempt += 1
            response = decision["response"]
            if response["next"]["kind"] == "conclusion":
                self._conclude(hid, response, "concluded")
                return None
            ended = self._dispatch(hypothesis, step, attempt, response)
            if ended == _DONE:
                return None
            if ended is not None:
                return ended
        self._conclude(hid, None, "step_limit")
        return None

    # -- one model answer ---------------------------------------------------------------

    def _decide(
        self, hypothesis: Mapping[str, Any], step: int, attempt: int
    ) -> dict[str, Any] | None:
        hid = hypothesis["id"]
        log = self._log
        if (step, attempt) == (1, 1) and log.get(hid, 1, 1, "decision") is None:
            first = first_query_decision(hypothesis, epoch(self._checkpoints))
            if first is not None and self._operation_check(first["response"]):
                first = None  # a project.query with research off now: the model asks
            if first is not None:
                # The interpretation proposed the first query to test this hypothesis:
                # it is step 1, run without asking the model again.
                log.put(hid, 1, 1, "decision", first)
                self._hook(f"{hid}-1-1-decision")
                return first

        def new_call() -> dict[str, Any]:
            version = CURRENT_PROJECT_VERSION if self._research else CURRENT_VERSION
            return {"prompt_version": version, "context": self._context(hypothesis, step, attempt)}

        slot = CallSlot(
            get=lambda event: log.get(hid, step, attempt, event),
            put=lambda event, record: log.put(hid, step, attempt, event, record),
            hook=f"{hid}-{step}-{attempt}",
            account=hid,
            key=f"{hid}:{step}:{attempt}",
        )
        plan = CallPlan(
            new_call=new_call,
            messages=lambda call: build_messages(call["prompt_version"], call["context"]),
            answer=lambda call: self._step_schema(hid, call),
            recover=lambda call, reply: self._recover(hypothesis, call, reply, step, attempt),
            invalid_count=self._invalid_count,
            asking=lambda: self._say(hid, f"{hid} step {step}: asking the model"),
            what="investigation",
            ends_on_exhausted_budget=True,
        )
        return self._calls.decide(slot, plan)

    def _recover(
        self,
        hypothesis: Mapping[str, Any],
        call: Mapping[str, Any],
        reply: Mapping[str, Any],
        step: int,
        attempt: int,
    ) -> dict[str, Any]:
        hid = hypothesis["id"]
        visible = frozenset(_citable(call["context"]))
        if _reads_facts(call["context"]):
            # Version 2 answers may cite the case build's facts by P-ID.
            facts = case_facts(load_package(self._root))
            visible |= frozenset(facts.by_id if facts is not None else ())
        contract = ResponseContract(
            hypothesis_id=hid,
            visible_evidence_ids=visible,
            known_columns=self._known_columns(),
            extra_checks=(self._operation_check,),
            # A conclusion's citations must resolve in the stored evidence.
            citations=self._citation_resolver().problem,
            schema=RESPONSE_SCHEMA_V2 if _answers_v2(call["context"]) else RESPONSE_SCHEMA,
        )
        left = self._settings.invalid_response_limit - self._invalid_count()

        def repair_provider(prompt: str, excerpt: Mapping[str, Any] | None) -> ProviderReply:
            # Recovery may ask again after a restart (its records and the
            # decision are separate files): a stored answer is the answer.
            key = f"{hid}:{step}:{attempt}:repair"
            answer = repair_schema(excerpt) if excerpt is not None else None
            stored = self._log.get(hid, step, attempt, "repair")
            if stored is None:
                self._budget.reserve_once(hid, self._repair_units(prompt), key)
                result = self._model.chat(
                    [{"role": "user", "content": prompt}], answer=answer, formats=self._formats
                )
                stored = {
                    "chat": result.to_record(),
                    "prompt_sha256": sha256_hex(text_bytes(prompt)),
                }
                self._log.put(hid, step, attempt, "repair", stored)
                self._hook(f"{hid}-{step}-{attempt}-repair")
            self._budget.settle_answer(key, stored["chat"])
            return structured_reply(stored["chat"], answer)

        recovery_context = RecoveryContext(
            prompt_id=call["prompt_version"],
            hypothesis=hypothesis["statement"],
            previous_result=_previous_result(call["context"]),
            # Call records are keyed by content: the step key keeps two attempts
            # apart whose answers happen to be byte-identical.
            call_key=f"{hid}:{step}:{attempt}",
            response_format=reply["chat"].get("response_format"),
        )
        limits = RecoveryLimits(
            invalid_responses_left=max(left, 0),
            max_response_bytes=self._settings.max_response_bytes,
        )
        # A repair planned before a crash (or a transport failure) for this very
        # answer is carried out from its stored plan, re-checked, never re-planned.
        pending = pending_repair(self._audit)
        if pending is not None:
            result = resume_repair(
                pending,
                contract=contract,
                policy=self._policy,
                context=recovery_context,
                provider=repair_provider,
                audit_store=self._audit,
                limits=limits,
            )
            charged = result.invalid_responses + 1  # the original answer was invalid too
        else:
            result = recover_response(
                structured_reply(reply["chat"], self._step_schema(hid, call)).text,
                contract=contract,
                policy=self._policy,
                context=recovery_context,
                provider=repair_provider,
                audit_store=self._audit,
                limits=limits,
            )
            charged = result.invalid_responses
        decision: dict[str, Any] = {
            "status": result.status,
            "response": result.response,
            "reason": result.reason,
            "hint": result.hint,
            "violations": list(result.violations),
            "applied_rules": [rule.rule for rule in result.applied_rules],
            "notes": [note.to_mapping() for note in result.notes_for_next_call],
            "feedback": list(result.feedback),
            "invalid_responses": charged,
            "epoch": self._epoch(),
        }
        if not result.accepted:
            self._say(hid, f"{hid} step {step}: answer rejected ({result.reason})")
        return decision

    def _repair_units(self, prompt: str) -> int:
        if self._tokens is None:
            return len(prompt) // 3 + 2048  # the estimate of earlier versions
        messages = [{"role": "user", "content": prompt}]
        return self._calls.units(messages, "repair")

    def _step_schema(self, hid: str, call: Mapping[str, Any]) -> AnswerSchema:
        visible = _citable(call["context"])
        # The prompt version says whether the step could use project.query.
        research = call["prompt_version"] in PROJECT_PROMPT_VERSIONS
        sources = {s["source_ref"]: s["role"] for s in call["context"]["sources"]}
        payloads = {e["evidence_id"]: e["payload"] for e in call["context"]["evidence"]}
        return step_schema(
            hid,
            visible,
            research=research,
            sources=sources,
            payloads=payloads,
            case_facts=_reads_facts(call["context"]),
            version2=_answers_v2(call["context"]),
        )

    def _operation_check(self, response: Mapping[str, Any]) -> list[str]:
        step = response["next"]
        if step.get("operation") == "project.query" and self._research is None:
            return ["project_research_disabled"]
        return []

    # -- dispatch -----------------------------------------------------------------------

    def _dispatch(
        self, hypothesis: Mapping[str, Any], step: int, attempt: int, response: Mapping[str, Any]
    ) -> str | None:
        hid = hypothesis["id"]
        if self._log.get(hid, step, attempt, "dispatch") is not None:
            return None
        plan = response["next"]
        key = f"{hid}:{step}:{attempt}:dispatch"
        try:
            self._budget.reserve_once(hid, self._settings.dispatch_cost, key)
        except BudgetError as err:
            if err.code in {"budget_insufficient", "budget_account_terminal"}:
                self._conclude(hid, None, "budget_exhausted")
                return _DONE
            raise
        package = load_package(self._root)
        generation = package.generation
        self._say(hid, f"{hid} step {step}: {plan['operation']}")
        try:
            taken = self._run_plan(hid, step, attempt, plan, package, generation)
        except ResearchUnavailable as err:
            self._checkpoints.advance(
                BLOCKED,
                code=RESEARCH_UNAVAILABLE,
                resume_state=INVESTIGATION,
                hypothesis=hid,
                step=step,
                # The call itself: a rationale is the model's comment, not part of it.
                plan={k: v for k, v in plan.items() if k != "rationale"},
                reservation=key,
                cause=err.code,
                # provider, reason (and a password variable's name): typed fields only.
                **cause_fields(err),
            )
            self._checkpoints.sync_manifest()
            self._hook(f"{hid}-{step}-{attempt}-blocked")
            return RESEARCH_UNAVAILABLE
        except (ResearchError, VbaError) as err:
            if isinstance(err, EvidenceError) and err.code != "case_changed":
                raise
            self._budget.release(key)
            self._checkpoints.record_technical_rejection(err.code, hypothesis=hid, step=step)
            # The code, and what the tool said was wrong in typed fields (never values):
            # the model is told as the CLI would tell an operator.
            refused = {"rejected": err.code, "refusal": refusal_record(err)}
            self._log.put(hid, step, attempt, "dispatch", refused)
            self._hook(f"{hid}-{step}-{attempt}-dispatch")
            return None
        self._budget.settle_once(key, self._settings.dispatch_cost)
        self._log.put(hid, step, attempt, "dispatch", taken)
        self._hook(f"{hid}-{step}-{attempt}-dispatch")
        return None

    def _run_plan(
        self,
        hid: str,
        step: int,
        attempt: int,
        plan: Mapping[str, Any],
        package: Any,
        generation: int,
    ) -> dict[str, Any]:
        step_key = f"{hid}/{step}/{attempt}"

        def current_generation() -> int:
            return load_package(self._root).generation

        if plan["operation"] == CASE_FACTS_OPERATION:
            # Answered here from the revision's enrichment index; a bad argument is
            # a typed refusal like a tool's.
            index = load_index(package)
            if index is None:
                raise ToolError("unknown_operation", "the case has no enrichment facts")
            taken = self._evidence.take_facts(
                plan["arguments"],
                facts_query(index, plan["arguments"]),
                package.case["project_research"]["index"],
                hypothesis_id=hid,
                step_key=step_key,
                generation=generation,
                current_generation=current_generation,
            )
        elif plan["operation"] == "project.query":
            assert self._research is not None
            capture = self._research.capture(plan["arguments"])
            taken = self._evidence.take_capture(
                capture,
                hypothesis_id=hid,
                step_key=step_key,
                generation=generation,
                current_generation=current_generation,
            )
        else:
            manifest = package.manifest
            request = request_batch(
                manifest,
                [
                    {
                        "request_id": f"Q{step:03d}{attempt:02d}",
                        "hypothesis_id": hid,
                        "action_id": f"{hid}-{step}-{attempt}",
                        "operation": plan["operation"],
                        "arguments": plan["arguments"],
                    }
                ],
            )
            result = self._router.query(self._root, request)
            taken = self._evidence.take_router_result(
                request,
                result,
                hypothesis_id=hid,
                step_key=step_key,
                generation=generation,
                current_generation=current_generation,
            )
        self._hook(f"{hid}-{step}-{attempt}-evidence")
        # "new" is a fact of the record (this step took it), not of this process:
        # a rerun after a kill finds the record its step wrote and says the same.
        return {"evidence_id": taken.evidence_id, "new": taken.record["step_key"] == step_key}

    # -- budget ---------------------------------------------------------------------------

    def _say(self, hid: str, text: str) -> None:
        # The figure comes from the journal this run writes, read at the moment
        # of the line: the budget the hypothesis has left to reserve.
        left = self._budget.account(hid).available
        self._progress(f"{text} | budget left {left}")

    # -- endings ------------------------------------------------------------------------

    def _conclude(self, hid: str, response: Mapping[str, Any] | None, reason: str) -> None:
        outcome = self._log.outcome(hid)
        if outcome is None:
            outcome = {"hypothesis_id": hid, "reason": reason}
            if response is not None:
                outcome.update(
                    assessment=response["assessment"],
                    confidence=response["confidence"],
                    evidence=response["evidence"],
                    summary=response["next"]["summary"],
                )
                citations = self._resolved_citations(response["evidence"])
                if citations is not None:
                    outcome["citations"] = citations
            else:
                outcome.update(
                    assessment="undetermined", confidence=None, evidence=[], summary=None
                )
            self._log.put_outcome(hid, outcome)
            self._hook(f"{hid}-outcome")
        self._complete_conclusion(hid, outcome)

    def _complete_conclusion(self, hid: str, outcome: Mapping[str, Any]) -> None:
        """The rest of a conclusion whose outcome file (its commit point) exists:
        the account closed, then ``hypothesis_done``. Each part is skipped when
        done, so a start after a kill anywhere in between finishes it once."""
        self._close_account(hid, outcome)
        if not self._hypothesis_done(hid):
            self._checkpoints.advance(INVESTIGATION, event="hypothesis_done", hypothesis=hid)
            self._say(hid, f"{hid}: {outcome['assessment']} ({outcome['reason']})")

    def _close_account(self, hid: str, outcome: Mapping[str, Any]) -> None:
        if not self._budget.account(hid).terminal:
            status = "concluded" if outcome["reason"] == "concluded" else "exhausted"
            self._budget.close_account(hid, status)

    def _block_invalid(self, hid: str, step: int) -> str:
        self._checkpoints.advance(
            BLOCKED,
            code=INVALID_LLM_RESPONSES,
            resume_state=INVESTIGATION,
            hypothesis=hid,
            step=step,
        )
        self._checkpoints.sync_manifest()
        return INVALID_LLM_RESPONSES

    # -- state derived from the records --------------------------------------------------

    def _hypothesis_done(self, hid: str) -> bool:
        return any(
            c.payload.get("event") == "hypothesis_done" and c.payload.get("hypothesis") == hid
            for c in self._checkpoints.history()
        )

    def _epoch(self) -> int:
        return epoch(self._checkpoints)

    def _invalid_count(self) -> int:
        decisions = (
            self._log.get(hid, step, attempt, event) or {}
            for hid, step, attempt, event in self._log.events()
            if event == "decision"
        )
        return invalid_count(decisions, self._epoch())

    def _known_columns(self) -> dict[str, list[str]]:
        package = load_package(self._root)
        index = load_index(package)
        columns: dict[str, set[str]] = {}
        for fact in (index or {}).get("facts", []):
            if fact["kind"] == "project_rows":
                for row in fact["rows"]:
                    columns.setdefault(fact["table"], set()).update(row)
        return {table: sorted(names) for table, names in columns.items()}

    def _context(self, hypothesis: Mapping[str, Any], step: int, attempt: int) -> dict[str, Any]:
        """The stored context of a new call (``investigation_v3`` /
        ``investigation_project_v4``): the case brief, the ledger of the whole case's
        evidence and its newest answers, scaled to the token budget (case_brief.py)."""
        package = load_package(self._root)
        hid = hypothesis["id"]
        sources = [
            {"source_ref": e["source_ref"], "role": e["role"], "member": e["member"]}
            for e in package.case["source_context"] + package.case["database_context"]
        ]
        ledger = []
        answers = []
        for record in self._evidence.records():
            payload = self._evidence.payload(record)
            ledger.append(
                {"evidence_id": record["evidence_id"], "line": ledger_line(record, payload)}
            )
            operation, request = shown_request(record)
            answers.append(
                {
                    "evidence_id": record["evidence_id"],
                    "hypothesis_id": record["hypothesis_id"],
                    "kind": record["kind"],
                    "operation": operation,
                    "request": request,
                    "payload": payload,
                }
            )
        index = load_index(package) if self._research is not None else None
        roles = {s["source_ref"]: s["role"] for s in sources}
        context: dict[str, Any] = {
            "case_id": package.case_id,
            "analysis_revision": package.analysis_revision,
            "report": {
                "title": package.case["report"]["title"],
                "text": package.case["report"]["text"],
            },
            "hypothesis": {"id": hid, "statement": hypothesis["statement"]},
            "other_hypotheses": [
                {"id": h["id"], "statement": h["statement"]}
                for h in package.case["hypotheses"]
                if h["id"] != hid
            ],
            "sources": sources,
            "operations": available_operations(
                research=self._research is not None, sources=roles, case_facts=index is not None
            ),
            "ledger": ledger,
            "evidence": [],
            "step": step,
            "attempt": attempt,
            "max_steps": self._settings.max_steps,
        }
        brief = brief_of(index)
        if brief is not None:
            brief["allowed"] = self._readable
            # What the case's source searches could not read, once for the case (each
            # answer's view only counts its own).
            brief["unsearched"] = unsearched_note(a["payload"] for a in answers)
            context["brief"] = brief
        feedback, notes = self._previous_feedback(hid, step, attempt)
        if feedback:
            context["feedback"] = feedback
        if notes:
            context["recovery_notes"] = notes
        version = CURRENT_PROJECT_VERSION if self._research else CURRENT_VERSION
        return fit(
            context,
            build=lambda c: build_messages(version, c),
            budget=self._tokens,
            index=index,
            answers=answers,
        )

    def _resolved_citations(self, evidence: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """Each citation with the hash of its value and its origin, so a reader can
        check it without re-running anything; None for an answer accepted before
        citations were checked whose citation does not resolve (it is kept as it was)."""
        resolver = self._citation_resolver()
        try:
            return [resolver.resolve(entry).to_mapping() for entry in evidence]
        except EvidenceError as err:
            if err.code != "citation_unresolved":
                raise
            return None

    def _citation_resolver(self) -> CitationResolver:
        package = load_package(self._root)
        members = {
            e["source_ref"]: e["member"]
            for e in package.case["source_context"] + package.case["database_context"]
        }
        return CitationResolver(self._evidence, members, case_facts(package))

    def _previous_feedback(
        self, hid: str, step: int, attempt: int
    ) -> tuple[list[str], list[dict[str, str]]]:
        """Feedback for this attempt: the last rejection's hint, or the last dispatch refusal;
        and the recovery notes of the last accepted answer."""
        events = [e for e in self._log.events(hid) if (e[1], e[2]) < (step, attempt)]
        feedback: list[str] = []
        notes: list[dict[str, str]] = []
        for _h, s, a, event in reversed(events):
            record = self._log.get(hid, s, a, event) or {}
            if event == "decision" and record.get("status") == "rejected":
                if record.get("epoch", 0) != self._epoch():
                    # After an operator resume the model sees why it was stopped,
                    # so the prompt differs from the one it kept failing on.
                    feedback.append(
                        "An operator resumed this investigation after it was stopped by "
                        "repeated rejected answers; fix what the feedback below names."
                    )
                line = f"Your previous answer was rejected ({record['reason']})."
                if record.get("hint"):
                    line += f" {record['hint']}"
                feedback.append(line)
                feedback += record.get("feedback", [])
                break
            if event == "dispatch" and "rejected" in record:
                # A record of an earlier version holds the code only.
                feedback.append(refusal_text(record.get("refusal") or {"code": record["rejected"]}))
                break
            if event == "decision" and record.get("status") == "accepted":
                notes = record.get("notes", [])
                break
        return feedback, notes


def case_facts(package: Any) -> CaseFacts | None:
    """The revision's enrichment facts, citable by P-ID (None without an index)."""
    index = load_index(package)
    if index is None:
        return None
    return CaseFacts.of(package.case["project_research"]["index"], index)


def first_query_decision(
    hypothesis: Mapping[str, Any], current_epoch: int
) -> dict[str, Any] | None:
    """Step 1 of a hypothesis the case interpreter proposed: its first query, as an
    accepted decision that says where it comes from (``from_interpretation``: the
    call record the interpretation was accepted from). None for a hypothesis
    without one (an operator's)."""
    origin = hypothesis.get("origin")
    if not isinstance(origin, Mapping):
        return None
    first = origin.get("first_query")
    if not isinstance(first, Mapping):
        return None
    step = {
        "kind": "tool",
        "operation": first["operation"],
        "arguments": first["arguments"],
        "rationale": "The first query the case interpretation proposed to test this "
        "hypothesis; run as step 1 without asking the model again.",
    }
    return {
        "status": "accepted",
        "response": {
            "hypothesis_id": hypothesis["id"],
            "assessment": "undetermined",
            "confidence": 0,
            "evidence": [],
            "next": step,
        },
        "reason": None,
        "hint": None,
        "violations": [],
        "applied_rules": [],
        "notes": [],
        "feedback": [],
        "invalid_responses": 0,
        "epoch": current_epoch,
        "from_interpretation": origin.get("call_record_sha256"),
    }


def _reads_facts(context: Mapping[str, Any]) -> bool:
    """The call offered ``case.facts`` (investigation-response-v2)."""
    return CASE_FACTS_OPERATION in context.get("operations", ())


def _answers_v2(context: Mapping[str, Any]) -> bool:
    """The call's answers are checked against investigation-response-v2: every call of
    the versions with a case-wide ledger (``investigation_v3``, ``_project_v4`` and ``_v5``);
    a stored call of an older version keeps version 1."""
    return "ledger" in context or _reads_facts(context)


def _citable(context: Mapping[str, Any]) -> list[str]:
    """The E-IDs an answer may cite: every one of the case's ledger (version 3 on),
    else the evidence the prompt showed."""
    if "ledger" in context:
        return [entry["evidence_id"] for entry in context["ledger"]]
    return [e["evidence_id"] for e in context["evidence"]]


def _previous_result(context: Mapping[str, Any]) -> str:
    if not context["evidence"]:
        return ""
    # Which evidence came last and from what operation: the repair prompt's
    # binding, kept short (its arguments are in the evidence, not needed to
    # restructure an answer).
    last = context["evidence"][-1]
    request = last["request"]
    operation = request.get("operation") or f"project.query {request.get('kind', '')}".strip()
    return f"{last['evidence_id']} ({operation})"


__all__ = ["ChatModel", "InvestigationController", "Research", "RunOutcome", "query_sha256"]
