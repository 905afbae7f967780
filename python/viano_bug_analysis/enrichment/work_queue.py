"""Queue and budget: one query at a time within max_queries, breadth first; what
the budget left out is counted in one query_budget fact.

A part of ``Enricher`` (engine.py): the state it works on is the enricher's,
declared once in ``state.EnricherState``.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.enrichment.state import EnricherState
from viano_bug_analysis.enrichment.work import (
    Work,
    describe,
    query_key,
    work_class,
)
from viano_bug_analysis.project_research import Capture


class QueueAndBudget(EnricherState):
    def _ask(self, work: Work) -> StepOutcome | None:
        """Runs one query (None when the stage's share of max_queries is spent: a coverage
        fact says so)."""
        if len(self._queries) >= self._limit:
            self._skip(work, "max_queries")
            self._left_out_by(self._stage, work.purpose)
            return None
        self._progress(f"query {len(self._queries) + 1}: {describe(work)}")
        outcome = self._run(work.query)
        self._done[query_key(work.query)] = outcome
        if work.table is not None:
            self._database_asked += 1
            if outcome.capture is None:
                code = str(outcome.refused_code)
                self._database_refused[code] = self._database_refused.get(code, 0) + 1
        self._queries.append(
            {
                "step": outcome.step,
                "query_sha256": outcome.query_sha256,
                "capture_sha256": outcome.capture.sha256 if outcome.capture else None,
                "refused_code": outcome.refused_code,
                "depth": work.depth,
                "purpose": work.purpose,
            }
        )
        return outcome

    def _capture_of(self, work: Work) -> Capture | None:
        """Asks ``work`` now: its capture, or None when the budget is spent (a fact says
        so) or the query was refused (counted per target)."""
        outcome = self._ask(work)
        if outcome is None:
            return None
        if outcome.capture is None:
            self._refused(work, outcome)
            return None
        return outcome.capture

    # -- queue --------------------------------------------------------------------------

    def _enqueue(self, work: Work) -> None:
        key = query_key(work.query)
        # Pending first: a query a phase asked while the map still had it queued is
        # answered for the map when the queue reaches it (its target fact comes then).
        if key in self._pending:
            self._pending[key].origins.extend(work.origins)
            return
        if key in self._done:
            # Asked before: the same answer, and the same target fact, for this origin.
            for origin in work.origins:
                self._relationship_fact(origin, work, self._done[key], self._targets.get(key))
            return
        self._pending[key] = work
        heapq.heappush(self._queue, (work.depth, work_class(work), next(self._order), work))

    def _skip(self, work: Work, reason: str) -> None:
        kept = ""
        if self._reserve:
            kept = f" ({self._reserve} of them kept for the build phases)"
        self._log.fact(
            "project_context_coverage",
            reason=reason,
            purpose=work.purpose,
            query=work.query,
            statement=f"not queried: the {reason} bound of the enrichment profile was "
            f"reached{kept}; the project context is incomplete here",
        )

    def _drain(self, *, keep_rest: bool) -> None:
        """Asks the queue in order; ``keep_rest``: stop at the stage's share, the rest
        stays queued. An answer a phase got meanwhile is the map's too, at no cost."""
        while self._queue:
            work = self._queue[0][-1]
            key = query_key(work.query)
            done = self._done.get(key)
            if done is None and keep_rest and len(self._queries) >= self._limit:
                return
            heapq.heappop(self._queue)
            del self._pending[key]
            outcome = done if done is not None else self._ask(work)
            if outcome is not None:
                self._answered(work, outcome)

    def _rest_of_the_map(self) -> None:
        """The queue on what the asking phases left of the reserve; rows read now come
        after the rules and script files and are not checked by them (a fact says so)."""
        before = len(self._log.facts)
        self._drain(keep_rest=False)
        late = [f for f in self._log.facts[before:] if f["kind"] == "project_rows"]
        if late:
            self._log.fact(
                "project_context_coverage",
                reason="read_after_phases",
                count=len(late),
                facts=[f["fact_id"] for f in late],
                statement=f"{len(late)} lookups of the reference map were asked on the part "
                "of the build phases' reserve they left, after them: the consistency rules "
                "and the script-file candidates did not check these rows",
            )

    def _left_out_by(self, stage: str, purpose: Mapping[str, Any]) -> None:
        kinds = self._left_out.setdefault(stage, {})
        kind = str(purpose.get("kind"))
        kinds[kind] = kinds.get(kind, 0) + 1
        if isinstance(purpose.get("rule"), str):
            self._rules_left_out.add(purpose["rule"])

    def _budget_fact(self) -> None:
        """One fact for everything max_queries left out, by stage and purpose."""
        if not self._left_out:
            return
        counts = {stage: sum(kinds.values()) for stage, kinds in self._left_out.items()}
        fields: dict[str, Any] = {
            "max_queries": self._profile.limits.max_queries,
            "reserved_for_phases": self._reserve,
            "asked": len(self._queries),
            "count": sum(counts.values()),
            "not_asked": {
                stage: dict(sorted(kinds.items()))
                for stage, kinds in sorted(self._left_out.items())
            },
        }
        if self._rules_left_out:
            fields["rules_not_checked"] = sorted(self._rules_left_out)
        parts = [
            f"{counts[stage]} of {name}"
            for stage, name in (
                ("reference_map", "the reference map"),
                ("phases", "the build phases"),
            )
            if stage in counts
        ]
        self._log.fact(
            "project_context_coverage",
            reason="query_budget",
            **fields,
            statement=f"the query budget (max_queries {self._profile.limits.max_queries}, "
            f"{self._reserve} of them kept for the build phases) ran out: "
            f"{' and '.join(parts)} queries were not asked (by purpose in not_asked); nothing "
            "is known of them",
        )
