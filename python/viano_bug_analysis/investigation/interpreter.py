"""The CaseInterpreter: the first LLM phase, from a bug report to hypotheses.

    interpreter = CaseInterpreter("packages/BUG-77", model=ChatClient(config.llm),
                                  settings=config.settings, research_enabled=True)
    outcome = interpreter.run()   # InterpretationOutcome: state, revision, hypotheses

It asks the model (prompt ``case_interpretation_v1``) for 1..8 hypotheses
about the report, each a falsifiable statement with what would refute it,
the case facts it rests on by label, and a first query that would test it.
The answer goes through the investigation's own recovery flow (strict
parse; with policy 1 the deterministic normalization; no repair call) and
its contract: the ``case-interpretation-v1`` schema, labels the prompt
showed, and a first query that is a valid tool step and that the router's
preflight accepts without running it (a ``project.query`` only when
research is enabled, checked against its schema; nothing live is asked).
A rejected answer is told what was wrong in the next attempt and counts
against the invalid-response limit; at the limit the case blocks
(``INVALID_LLM_RESPONSES``) like an investigation, and an operator resume
continues with the last rejection's feedback.

The accepted hypotheses become a new case revision: the case of the
interpreted revision with every hypothesis it has kept byte for byte (an
operator's hypotheses keep their IDs, text and order), followed by the new
ones under the next free IDs, each with its ``origin`` (``case_interpreter``,
the prompt version, the SHA-256 of the call record the answer was accepted
from, the interpreted revision, what would refute it, its labels and its
first query). The manifest then commits the package to that revision.

Durable steps, in order, each written once (``after_step`` is called after
each): the checkpoint ``interpretation_started``; per attempt ``NN-call``
(the prompt version and context, before the request), the budget
reservation, ``NN-reply`` (the commit point of the request: it is never sent
again), the settlement from the stored tokens, the call record(s),
``NN-decision``; then the new revision's ``inputs.json`` (when the
interpreted revision has one) and ``case.json``, the manifest (the commit
point of the interpretation), the account closed and the checkpoint
``interpreted``. A run killed after any of them is finished by the next run
exactly once: no request lost or sent twice, nothing charged twice.

An edited report (``interpretation_state``: the current revision's title or
text differs from the revision the hypotheses were proposed on) is refused
with ``report_changed_since_interpretation`` unless ``reinterpret``: then a
concluded case is reopened (checkpoint ``reopened`` with that reason), the
current revision is interpreted as above, and its new revision keeps only
the operator's hypotheses before the new ones, which take IDs no revision or
record has used; the ``interpreted`` checkpoint names the replaced ones
(``superseded``). Their outcomes, steps and the earlier verdict stay.

The interpreter never diagnoses and never sees an investigation's answer:
its prompt holds no evidence, no assessment and no outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.case.canonical import canonical_bytes as case_bytes
from viano_bug_analysis.case.canonical import sha256_hex as case_sha256
from viano_bug_analysis.case.lock import BUILD_LOCK, INVESTIGATION_LOCK, package_lock
from viano_bug_analysis.case.package import CasePackage, load_package, revision_case
from viano_bug_analysis.durable import PackageLayout, compact_json
from viano_bug_analysis.errors import CaseError, InterpretationError, ToolError
from viano_bug_analysis.investigation.answer_schema import (
    interpretation_schema,
    structured_reply,
)
from viano_bug_analysis.investigation.budget import BudgetManager
from viano_bug_analysis.investigation.case_brief import brief_of, fit_interpretation
from viano_bug_analysis.investigation.checkpoints import (
    BLOCKED,
    CONCLUDED,
    INVALID_LLM_RESPONSES,
    INVESTIGATION,
    REOPENED,
    CheckpointStore,
)
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.interpretation_prompt import (
    MAX_HYPOTHESES,
    PROJECT_OPERATION,
    PROMPT_VERSION,
    PROMPT_VERSIONS,
    REPORT_LABEL,
    build_messages,
    label_order,
    max_hypotheses,
)
from viano_bug_analysis.investigation.interpretation_state import (
    REPORT_CHANGED,
    interpretation_state,
    is_proposed,
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
from viano_bug_analysis.investigation.recovery import (
    CallRecordStore,
    RecoveryContext,
    RecoveryLimits,
    ResponseContract,
    recover_response,
)
from viano_bug_analysis.investigation.recovery.normalize import normalize_response
from viano_bug_analysis.investigation.recovery.repair import (
    RESPONSE_SCHEMA,
    SNAPSHOT_OPERATIONS,
    next_alternative,
)
from viano_bug_analysis.investigation.steps import (
    StepLog,
    check_writable,
    is_decision,
    is_reply,
    not_a_record,
)
from viano_bug_analysis.investigation.token_budget import TokenBudget
from viano_bug_analysis.schema_errors import check, describe_first
from viano_bug_analysis.schemas import schema_validator
from viano_bug_analysis.tools.batch import request_batch
from viano_bug_analysis.tools.router import InvestigationToolRouter

INTERPRETATION_SCHEMA = "case-interpretation-v1"
ORIGIN = "case_interpreter"
STARTED = "interpretation_started"
INTERPRETED = "interpreted"
EVENTS = ("call", "reply", "decision")
MAX_ATTEMPTS = 99  # file names hold two digits; the invalid-response limit ends far sooner

# Codes of the interpreter's own checks (``violations`` after ``check_failed``).
UNKNOWN_LABEL = "unknown_label"
REPEATS_HYPOTHESIS = "repeats_hypothesis"
TOO_MANY_HYPOTHESES = "too_many_hypotheses"
FIRST_QUERY_UNKNOWN = "first_query_unknown_operation"
FIRST_QUERY_INVALID = "first_query_invalid"
FIRST_QUERY_REFUSED = "first_query_refused"
FIRST_QUERY_NOT_STORABLE = "first_query_not_storable"
PROJECT_RESEARCH_DISABLED = "project_research_disabled"

Progress = Callable[[str], None]
StepHook = Callable[[str], None]


@dataclass(frozen=True)
class InterpretationOutcome:
    state: str  # "interpreted" (now or before) or "blocked"
    code: str | None  # the blocking code
    revision: int  # the package's analysis revision at the end
    hypotheses: list[dict[str, Any]] = field(default_factory=list)  # the proposed ones
    new: bool = False  # this run committed the revision


@dataclass(frozen=True)
class _Problem:
    code: str
    text: str


class CaseInterpreter:
    def __init__(
        self,
        package_path: Any,
        *,
        model: ChatModel,
        settings: InvestigationSettings,
        research_enabled: bool = False,
        router: InvestigationToolRouter | None = None,
        progress: Progress | None = None,
        after_step: StepHook | None = None,
        reinterpret: bool = False,
        token_budget: TokenBudget | None = None,
    ) -> None:
        """``reinterpret``: a case whose report changed after its interpretation
        (``interpretation_state``) is interpreted again for the current revision
        (without it that case is refused with ``report_changed_since_interpretation``).
        A case whose interpretation is current is not asked again either way."""
        self._layout = PackageLayout(package_path)
        self._reinterpret = reinterpret
        self._root = self._layout.root
        self._model = model
        self._settings = settings
        self._research = research_enabled
        self._router = router or InvestigationToolRouter()
        self._progress = progress or (lambda _text: None)
        self._hook = after_step or (lambda _point: None)
        self._tokens = token_budget  # the context window requests must fit, when known

    def run(self) -> InterpretationOutcome:
        """Interprets the case's current revision, or finishes an interrupted interpretation.

        Holds the build lock (it writes a revision) and the investigation lock
        (it writes the checkpoint log, the budget journal and call records);
        a second run, build or investigation is refused with ``package_busy``.
        """
        with (
            package_lock(self._root, BUILD_LOCK, "build"),
            package_lock(self._root, INVESTIGATION_LOCK, "investigation"),
        ):
            self._checkpoints = CheckpointStore(self._layout)
            self._budget = BudgetManager(self._layout)
            self._audit = CallRecordStore(self._layout)
            return self._run()

    # -- the phase ----------------------------------------------------------------------

    def _run(self) -> InterpretationOutcome:
        package = load_package(self._root)
        state = interpretation_state(package)
        if state.report_changed and not self._reinterpret:
            raise report_changed_error(package, state)  # before anything is written
        check_writable(self._layout)  # before a paid call
        current = self._checkpoints.current()
        if current is not None:
            self._checkpoints.sync_manifest()
        proposed = [h for h in package.case["hypotheses"] if is_proposed(h)]
        if proposed and not state.report_changed:
            # Committed before (this run was killed after the manifest, or the
            # case is already interpreted): complete the rest, ask nothing.
            assert state.interpreted_revision is not None
            self._complete(state.interpreted_revision, package)
            return InterpretationOutcome(INTERPRETED, None, package.analysis_revision, proposed)
        if current is not None and current.state == BLOCKED:
            code = current.blocked.code if current.blocked else None
            return InterpretationOutcome(BLOCKED, code, package.analysis_revision)
        revision = package.analysis_revision
        if current is not None and current.state == CONCLUDED:
            if not state.report_changed:
                raise InterpretationError(
                    "interpretation_after_conclusion",
                    "the investigation of this case has concluded; add a hypothesis with a new "
                    "case revision (vba case build) and run vba investigate",
                    {"analysis_revision": package.analysis_revision},
                )
            # The report was edited after the verdict: the one move out of
            # `concluded`, tied to the revision that carries the new text.
            self._checkpoints.advance(
                INVESTIGATION,
                event=REOPENED,
                analysis_revision=revision,
                reason=REPORT_CHANGED,
                interpreted_revision=state.interpreted_revision,
            )
            self._checkpoints.sync_manifest()
            self._hook("reopened")
        self._policy = stored_policy(
            StepLog(self._layout), self._settings, lambda: self._hook("policy")
        )
        self._calls = ModelCallStep(
            model=self._model,
            budget=self._budget,
            formats=PackageFormats(self._layout),
            settings=self._settings,
            tokens=self._tokens,
            hook=self._hook,
        )
        self._account = f"interpretation-r{revision:04d}"
        if self._account not in {a.account for a in self._budget.accounts()}:
            self._budget.open_account(self._account, self._settings.budget_per_hypothesis)
        if not self._has_event(STARTED, revision):
            self._checkpoints.advance(INVESTIGATION, event=STARTED, analysis_revision=revision)
            self._checkpoints.sync_manifest()
            self._hook("started")
        log = _InterpretationLog(self._layout, revision)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            decision = self._decide(log, package, attempt)
            if decision is None:
                return self._block(revision)
            if decision["status"] == "accepted":
                return self._commit(package, decision)
        return self._block(revision)

    # -- one model answer ---------------------------------------------------------------

    def _decide(
        self, log: _InterpretationLog, package: CasePackage, attempt: int
    ) -> dict[str, Any] | None:
        slot = CallSlot(
            get=lambda event: log.get(attempt, event),
            put=lambda event, record: log.put(attempt, event, record),
            hook=f"{attempt:02d}",
            account=self._account,
            key=f"{self._account}:{attempt}",
        )
        plan = CallPlan(
            new_call=lambda: {
                "prompt_version": PROMPT_VERSION,
                "context": self._context(package, log, attempt),
            },
            messages=lambda call: build_messages(call["context"], call["prompt_version"]),
            answer=lambda call: self._answer_schema(call["context"]),
            recover=lambda call, reply: self._recover(call["context"], reply["chat"], attempt),
            invalid_count=lambda: invalid_count(log.decisions(), epoch(self._checkpoints)),
            asking=lambda: self._progress(f"interpretation attempt {attempt}: asking the model"),
            what="interpretation",
        )
        return self._calls.decide(slot, plan)

    def _recover(
        self, context: Mapping[str, Any], chat: Mapping[str, Any], attempt: int
    ) -> dict[str, Any]:
        problems: list[_Problem] = []
        raw = structured_reply(chat, self._answer_schema(context)).text

        def checks(response: Mapping[str, Any]) -> list[str]:
            problems[:] = self._check(context, response)
            return [p.code for p in problems]

        contract = ResponseContract(
            hypothesis_id="",
            visible_evidence_ids=frozenset(),
            extra_checks=(checks,),
            schema=INTERPRETATION_SCHEMA,
        )

        def no_repair(_prompt: str, _excerpt: object) -> str:  # never repairable
            raise AssertionError("no repair call for the case interpretation")

        result = recover_response(
            raw,
            contract=contract,
            policy=self._policy,
            context=RecoveryContext(
                prompt_id=PROMPT_VERSION,
                hypothesis="",
                previous_result="",
                call_key=f"{self._account}:{attempt}",
                response_format=chat.get("response_format"),
            ),
            provider=no_repair,
            audit_store=self._audit,
            limits=RecoveryLimits(
                invalid_responses_left=1, max_response_bytes=self._settings.max_response_bytes
            ),
        )
        records = {r.seq: r.sha256 for r in self._audit.list()}
        decision: dict[str, Any] = {
            "status": result.status,
            "response": result.response,
            "reason": result.reason,
            "violations": list(result.violations),
            "applied_rules": [rule.rule for rule in result.applied_rules],
            "notes": [],
            "invalid_responses": result.invalid_responses,
            "epoch": epoch(self._checkpoints),
            "call_record_sha256": records[result.record_seqs[-1]],
        }
        if not result.accepted:
            decision["feedback"] = self._feedback(raw, result.reason or "", problems)
            self._progress(f"interpretation attempt {attempt}: answer rejected ({result.reason})")
        return decision

    def _answer_schema(self, context: Mapping[str, Any]) -> AnswerSchema:
        # From the stored call context, so a resumed run sends the same schema.
        facts = context["facts"]
        sources = {
            f["label"]: f["kind"] for f in facts if f["kind"] not in (REPORT_LABEL, "project_fact")
        }
        labels = [f["label"] for f in facts]
        return interpretation_schema(
            research=self._research,
            labels=labels,
            sources=sources,
            max_hypotheses=max_hypotheses(context),
        )

    # -- the contract beyond the schema ---------------------------------------------------

    def _check(self, context: Mapping[str, Any], response: Mapping[str, Any]) -> list[_Problem]:
        labels = {fact["label"] for fact in context["facts"]}
        kept = {_plain(h["statement"]) for h in context["kept_hypotheses"]}
        seen: set[str] = set()
        problems: list[_Problem] = []
        allowed = max_hypotheses(context)
        if len(response["hypotheses"]) > allowed:
            problems.append(
                _Problem(
                    TOO_MANY_HYPOTHESES,
                    f"/hypotheses has {len(response['hypotheses'])} items; propose at most "
                    f"{allowed}, the most plausible first",
                )
            )
        manifest = load_package(self._root).manifest
        for index, hypothesis in enumerate(response["hypotheses"]):
            at = f"/hypotheses/{index}"
            unknown = [label for label in hypothesis["rests_on"] if label not in labels]
            if unknown:
                problems.append(
                    _Problem(
                        UNKNOWN_LABEL,
                        f"{at}/rests_on: {len(unknown)} label(s) were not shown; use only the "
                        f"labels of the facts list: {_some(sorted(labels, key=label_order))}",
                    )
                )
            statement = _plain(hypothesis["statement"])
            if statement in kept or statement in seen:
                problems.append(
                    _Problem(
                        REPEATS_HYPOTHESIS,
                        f"{at}/statement repeats another hypothesis; propose a different one",
                    )
                )
            seen.add(statement)
            problems += self._check_query(at, index, hypothesis["first_query"], manifest)
        return problems

    def _check_query(
        self, at: str, index: int, query: Mapping[str, Any], manifest: Mapping[str, Any]
    ) -> list[_Problem]:
        """The first query as a next step of investigation-response-v1, then the preflight."""
        where = f"{at}/first_query"
        step = {"kind": "tool", **query}
        allowed = [*SNAPSHOT_OPERATIONS, *([PROJECT_OPERATION] if self._research else [])]
        if query["operation"] == PROJECT_OPERATION and not self._research:
            text = f"{where}/operation: project.query is not available (no live project research)"
            return [_Problem(PROJECT_RESEARCH_DISABLED, f"{text}; allowed: {', '.join(allowed)}")]
        reference = next_alternative(step)
        if reference is None or query["operation"] not in allowed:
            text = f"{where}/operation is not an operation; allowed: {', '.join(allowed)}"
            return [_Problem(FIRST_QUERY_UNKNOWN, text)]
        validator = schema_validator(RESPONSE_SCHEMA).evolve(schema={"$ref": reference})
        violation = describe_first(validator, step, ["hypotheses", index, "first_query"])
        if violation is not None:
            return [_Problem(FIRST_QUERY_INVALID, violation.message)]
        try:
            case_bytes(dict(query))
        except CaseError:
            text = (
                f"{where}/arguments: a number with a fraction, or an integer beyond 2^53, "
                "cannot be stored in the case; use an integer or a string"
            )
            return [_Problem(FIRST_QUERY_NOT_STORABLE, text)]
        if query["operation"] == PROJECT_OPERATION:
            return []  # checked against project-query-v1 above; nothing live is asked
        hypothesis_id = f"H{index + 1}"
        request = request_batch(
            manifest,
            [
                {
                    "request_id": f"Q{index + 1:04d}",
                    "hypothesis_id": hypothesis_id,
                    "action_id": f"first-query-{index + 1}",
                    "operation": query["operation"],
                    "arguments": query["arguments"],
                }
            ],
        )
        try:
            self._router.preflight(
                self._root, request, proposed_hypotheses=frozenset({hypothesis_id})
            )
        except ToolError as err:
            # The router's messages name no value of the request (its guarantee).
            text = f"{where}: the tool refuses it ({err.code}: {err.message})"
            return [_Problem(FIRST_QUERY_REFUSED, text)]
        return []

    def _feedback(self, raw: str, reason: str, problems: list[_Problem]) -> list[str]:
        """What the next attempt is told: pointers, rules and alternatives, no answer text."""
        if reason == "check_failed" and problems:
            return [p.text for p in problems[:6]]
        if reason == "contract_violation":
            outcome = normalize_response(
                raw,
                schema_marker=True,
                policy_version=self._policy.response_recovery_version,
                known_columns=None,
            )
            violation = check(INTERPRETATION_SCHEMA, outcome.normalized)
            if violation is not None:
                return [violation.message]
        return [
            f"the answer was refused before its content was read ({reason}); answer with "
            "exactly one JSON object in the form shown, with no text around it"
        ]

    # -- the revision -------------------------------------------------------------------

    def _commit(self, package: CasePackage, decision: Mapping[str, Any]) -> InterpretationOutcome:
        """The accepted hypotheses as a new revision, committed by the manifest."""
        revision = package.analysis_revision
        new_revision = revision + 1
        # A reinterpretation (the report changed since the hypotheses were
        # proposed) replaces the interpreter's hypotheses: they answer the earlier
        # text, and their outcomes stay in the history under their own IDs.
        # Operator hypotheses are kept either way.
        kept = _kept(package)
        first = _next_free_id(package, self._layout)
        proposed = []
        for offset, item in enumerate(decision["response"]["hypotheses"]):
            proposed.append(
                {
                    "id": f"H{first + offset}",
                    "statement": item["statement"],
                    "origin": {
                        "by": ORIGIN,
                        "prompt_version": PROMPT_VERSION,
                        "call_record_sha256": decision["call_record_sha256"],
                        "interpreted_revision": revision,
                        "refuted_if": item["refuted_if"],
                        "rests_on": list(item["rests_on"]),
                        "first_query": dict(item["first_query"]),
                    },
                }
            )
        case = dict(package.case)
        case["analysis_revision"] = new_revision
        case["hypotheses"] = [*kept, *proposed]
        files = self._layout.files
        inputs = files.read(PackageLayout.revision_inputs(revision))
        if inputs is not None:
            # The same raw inputs: a rebuild from the same spec finds nothing new.
            files.write_once(PackageLayout.revision_inputs(new_revision), inputs)
            self._hook("inputs-written")
        data = case_bytes(case)
        case_rel = PackageLayout.revision_case(new_revision)
        files.write_once(case_rel, data)
        self._hook("case-written")
        manifest = dict(package.manifest)
        manifest.update(
            analysis_revision=new_revision,
            generation=package.generation + 1,
            case={"path": case_rel.as_posix(), "sha256": case_sha256(data)},
        )
        files.replace(PackageLayout.MANIFEST, case_bytes(manifest))
        self._hook("manifest-written")
        self._complete(revision, load_package(self._root))
        return InterpretationOutcome(INTERPRETED, None, new_revision, proposed, new=True)

    def _complete(self, revision: int, package: CasePackage) -> None:
        """After the manifest: the account closed, then the ``interpreted`` checkpoint."""
        account = f"interpretation-r{revision:04d}"
        opened = account in {a.account for a in self._budget.accounts()}
        if opened and not self._budget.account(account).terminal:
            self._budget.close_account(account, "concluded")
            self._hook("account-closed")
        current = self._checkpoints.current()
        # A case blocked or concluded since keeps its state; the revision is the record.
        if (
            not self._has_event(INTERPRETED, revision)
            and current is not None
            and current.state == INVESTIGATION
        ):
            ids = [h["id"] for h in package.case["hypotheses"] if is_proposed(h)]
            superseded = [
                h["id"]
                for h in revision_case(package, revision)["hypotheses"]
                if is_proposed(h) and h["id"] not in ids
            ]
            fields: dict[str, Any] = {"superseded": superseded} if superseded else {}
            self._checkpoints.advance(
                INVESTIGATION,
                event=INTERPRETED,
                analysis_revision=revision,
                new_revision=package.analysis_revision,
                hypotheses=ids,
                **fields,
            )
            self._checkpoints.sync_manifest()
            self._hook("interpreted")

    def _block(self, revision: int) -> InterpretationOutcome:
        self._checkpoints.advance(
            BLOCKED,
            code=INVALID_LLM_RESPONSES,
            resume_state=INVESTIGATION,
            phase="interpretation",
            analysis_revision=revision,
        )
        self._checkpoints.sync_manifest()
        self._hook("blocked")
        return InterpretationOutcome(BLOCKED, INVALID_LLM_RESPONSES, revision)

    # -- the prompt context ---------------------------------------------------------------

    def _context(
        self, package: CasePackage, log: _InterpretationLog, attempt: int
    ) -> dict[str, Any]:
        case = package.case
        facts: list[dict[str, Any]] = [{"label": REPORT_LABEL, "kind": REPORT_LABEL}]
        facts += [
            {"label": e["source_ref"], "kind": e["role"], "member": e["member"]}
            for e in case["source_context"] + case["database_context"]
        ]
        operations = [*SNAPSHOT_OPERATIONS]
        index = None
        if self._research:
            operations.append(PROJECT_OPERATION)
            index = load_index(package)
        if len(facts) == 1 and not self._research:
            raise InterpretationError(
                "interpretation_without_sources",
                "the case has no snapshot sources and research is not enabled: no first query "
                "could test a hypothesis",
                {"analysis_revision": package.analysis_revision},
            )
        context: dict[str, Any] = {
            "case_id": package.case_id,
            "analysis_revision": package.analysis_revision,
            "report": {"title": case["report"]["title"], "text": case["report"]["text"]},
            "kept_hypotheses": [
                {"id": h["id"], "statement": h["statement"]} for h in _kept(package)
            ],
            "facts": facts,
            "operations": operations,
            "attempt": attempt,
        }
        if self._settings.max_hypotheses != MAX_HYPOTHESES:
            # Only where it narrows the contract: a default context stays as
            # every context before the setting was (same prompt, same bytes).
            context["max_hypotheses"] = self._settings.max_hypotheses
        previous = log.get(attempt - 1, "decision") if attempt > 1 else None
        if previous is not None and previous.get("feedback"):
            context["feedback"] = previous["feedback"]
        brief = brief_of(index)
        if brief is not None and index is not None:
            context["brief"] = brief
            # Scaled to the budget; the facts shown are the labels a hypothesis may
            # rest on (the investigation can read the others).
            fit_interpretation(
                context,
                build=lambda c: build_messages(c, PROMPT_VERSION),
                budget=self._tokens,
                index=index,
            )
            facts += [{"label": f, "kind": "project_fact"} for f in brief["shown"]]
        return context

    # -- state derived from the records --------------------------------------------------

    def _has_event(self, event: str, revision: int) -> bool:
        return any(
            c.payload.get("event") == event and c.payload.get("analysis_revision") == revision
            for c in self._checkpoints.history()
        )


class _InterpretationLog:
    """``analysis/interpretation/r<rev>/NN-<event>.json``: write-once, read back strictly."""

    def __init__(self, layout: PackageLayout, revision: int) -> None:
        self._files = layout.files
        self._dir = PackageLayout.interpretation(revision)

    def get(self, attempt: int, event: str) -> dict[str, Any] | None:
        rel = self._dir / _name(attempt, event)
        record = self._files.read_document(rel)
        if record is not None and not _SHAPES[event](record):
            raise not_a_record(rel, f"not an interpretation {event} record")
        return record

    def put(self, attempt: int, event: str, record: Any) -> None:
        self._files.write_once(self._dir / _name(attempt, event), compact_json(record))

    def decisions(self) -> list[dict[str, Any]]:
        found = []
        for attempt in range(1, MAX_ATTEMPTS + 1):
            decision = self.get(attempt, "decision")
            if decision is None:
                break
            found.append(decision)
        return found


def _name(attempt: int, event: str) -> str:
    if not (1 <= attempt <= MAX_ATTEMPTS and event in EVENTS):
        raise ValueError("invalid interpretation log key")
    return f"{attempt:02d}-{event}.json"


def _is_call(record: dict[str, Any]) -> bool:
    return record.get("prompt_version") in PROMPT_VERSIONS and isinstance(
        record.get("context"), dict
    )


def _is_decision(record: dict[str, Any]) -> bool:
    return is_decision(record) and isinstance(record.get("call_record_sha256"), str)


_SHAPES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "call": _is_call,
    "reply": is_reply,
    "decision": _is_decision,
}


def _kept(package: CasePackage) -> list[dict[str, Any]]:
    """The hypotheses a new interpretation keeps: all of a case not interpreted yet
    (or whose interpretation is current); the operator's when the report changed."""
    hypotheses: list[dict[str, Any]] = package.case["hypotheses"]
    if not interpretation_state(package).report_changed:
        return hypotheses
    return [h for h in hypotheses if not is_proposed(h)]


def _next_free_id(package: CasePackage, layout: PackageLayout) -> int:
    """The first hypothesis number no revision and no record has used: an ID is
    never given twice, so a stored outcome, step or account answers one statement."""
    taken = {int(h["id"][1:]) for h in package.case["hypotheses"]}
    taken |= {int(hid[1:]) for hid, _step, _attempt, _event in StepLog(layout).events()}
    for revision in range(1, package.analysis_revision):
        try:
            taken |= {int(h["id"][1:]) for h in revision_case(package, revision)["hypotheses"]}
        except CaseError as err:
            if err.code != "case_missing":
                raise
    return max(taken, default=0) + 1


def _some(labels: list[str], shown: int = 16) -> str:
    """The labels a model may use, the first ``shown`` of them (they are the
    program's own names: source refs and fact IDs, never answer text)."""
    text = ", ".join(labels[:shown])
    return text + (f" and {len(labels) - shown} more" if len(labels) > shown else "")


def _plain(statement: str) -> str:
    return " ".join(statement.casefold().split())


__all__ = ["CaseInterpreter", "ChatModel", "InterpretationOutcome"]
