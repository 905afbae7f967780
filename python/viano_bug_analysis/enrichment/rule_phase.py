"""The build phase of the consistency rules: every ``[[rules]]`` entry over the rows the build read.

No broad scan: a rule looks only at rows of ``project_rows`` facts, and what
it asks beyond them is one targeted lookup per row and check (the same query
as the build's own lookup where there is one, which then costs nothing), one
symbol search per script name (the build's own), and one search per engine
rule for its anchor line. New queries are bounded by ``limits.rule_queries``
within the shared ``max_queries`` (the reference map keeps that many for the
phase, ``limits.phase_reserve``); what the bound leaves unchecked is a
coverage fact, what the spent budget leaves is counted in the build's
``query_budget`` fact. A hit states what the rows say, never that the bug lies there.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from viano_bug_analysis import vocabulary
from viano_bug_analysis.enrichment import references
from viano_bug_analysis.enrichment.engine import AskingPhase
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.enrichment.rules import Rule
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.project_research import query_sha256

if TYPE_CHECKING:
    from viano_bug_analysis.enrichment.engine import PhaseContext
    from viano_bug_analysis.enrichment.profile import EnrichmentProfile, Reference

ROWS_POINTER = "/result/result/rows"
MATCHES_POINTER = "/result/result/matches"


@dataclass(frozen=True)
class RowRead:
    """One row of a ``project_rows`` fact, with the pointer to it in its capture."""

    table: str
    row: Mapping[str, Any]
    key: dict[str, Any]
    provenance: dict[str, Any]

    def view(self) -> dict[str, Any]:
        return {"table": self.table, "key": dict(self.key), "provenance": dict(self.provenance)}


def rows_read(ctx: PhaseContext) -> list[RowRead]:
    """Every row the build read, once, in the order the build read it."""
    seen: set[bytes] = set()
    found: list[RowRead] = []
    for fact in ctx.facts:
        if fact.get("kind") != "project_rows":
            continue
        table = fact["table"]
        try:
            key_columns = ctx.profile.key_of(table)
        except KeyError:
            continue
        for index, row in enumerate(fact["rows"]):
            key = {c: row.get(c) for c in key_columns}
            marker = canonical_bytes([table, key])
            if marker in seen:
                continue
            seen.add(marker)
            provenance = {**fact["provenance"], "pointer": f"{ROWS_POINTER}/{index}"}
            found.append(RowRead(table, row, key, provenance))
    return found


class Asker:
    """``ctx.ask`` under a phase's own bound: answers the build already has are free."""

    def __init__(self, ctx: PhaseContext, limit: int, phase: str) -> None:
        self._ctx = ctx
        self._limit = limit
        self._phase = phase
        self._asked = 0
        self.exhausted = False  # max_queries was reached (the engine states what it cut)
        self.cut: dict[str, int] = {}  # purpose kind -> queries not asked

    def ask(self, query: Mapping[str, Any], purpose: Mapping[str, Any]) -> StepOutcome | None:
        known = query_sha256(query) in {q["query_sha256"] for q in self._ctx.queries}
        if not known and self._asked >= self._limit:
            kind = str(purpose.get("kind"))
            self.cut[kind] = self.cut.get(kind, 0) + 1
            return None
        if not known and self.exhausted:
            # The budget is spent: counted for the build's query_budget fact, and the phase
            # goes on with what the build has already asked (those answers cost nothing).
            self._ctx.not_asked(purpose)
            return None
        before = len(self._ctx.queries)
        outcome = self._ctx.ask(query, purpose)
        self._asked += len(self._ctx.queries) - before
        if outcome is None:
            self.exhausted = True
        return outcome

    def coverage(self) -> None:
        """One fact for what the phase's bound left unasked (max_queries has its own)."""
        if self.cut:
            self._ctx.fact(
                "project_context_coverage",
                reason=f"{self._phase}_queries",
                count=sum(self.cut.values()),
                purposes=dict(sorted(self.cut.items())),
                statement=f"checks of the {self._phase} phase were not made: its query bound "
                f"(limits.{self._phase}_queries) was reached; nothing is known of them",
            )


def rows_of(outcome: StepOutcome | None) -> tuple[list[dict[str, Any]], bool] | None:
    """The rows of an answer and whether they are all that match (None: not answered)."""
    if outcome is None or outcome.capture is None:
        return None
    result = outcome.capture.result["result"]
    return list(result["rows"]), bool(result["complete_filtered_rows"])


def matches_of(outcome: StepOutcome | None) -> tuple[list[dict[str, Any]], bool] | None:
    """The lines of a source answer and whether they are all there are."""
    if outcome is None or outcome.capture is None:
        return None
    # coverage.complete (the same in both result versions): the first and only
    # page, and no file left unsearched that could hide a line.
    answer = outcome.capture.result
    return list(answer["result"]["matches"]), bool(answer["coverage"]["complete"])


def symbol_query(ctx: PhaseContext, symbol: str) -> dict[str, Any]:
    """The build's own ``source.symbol`` query for a symbol reference (asked once)."""
    return {
        "kind": "source.symbol",
        "symbol": symbol,
        "offset": 0,
        "limit": ctx.profile.limits.symbol_hits,
    }


def match_view(m: Mapping[str, Any]) -> dict[str, Any]:
    return {k: m[k] for k in ("path", "line", "blob", "sha256", "text")}


@dataclass
class _Hit:
    entity_type: str | None
    entity_id: Any
    rows: list[dict[str, Any]]
    extra: dict[str, Any] = field(default_factory=dict)


class _RuleRun:
    def __init__(self, ctx: PhaseContext) -> None:
        self.ctx = ctx
        self.profile = ctx.profile
        self.asker = Asker(ctx, ctx.profile.limits.rule_queries, "rule")
        self.anchors: dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]] = {}

    def run(self) -> None:
        rows = rows_read(self.ctx)
        for rule in self.profile.rules:
            for read in rows:
                if read.table not in rule.tables or not all(c.holds(read.row) for c in rule.when):
                    continue
                for hit in self._check(rule, read):
                    self._state(rule, read, hit)
        self.asker.coverage()

    # -- the checks ---------------------------------------------------------------------

    def _check(self, rule: Rule, read: RowRead) -> Iterator[_Hit]:
        if rule.check == "match":
            yield self._own(rule, read, [read.view()])
        elif rule.check in ("rows", "no_rows"):
            yield from self._lookups(rule, read)
        elif rule.check == "exists":
            yield from self._exists(rule, read)
        else:
            yield from self._scripts(rule, read)

    def _lookups(self, rule: Rule, read: RowRead) -> Iterator[_Hit]:
        found: list[dict[str, Any]] = []
        for lookup in rule.lookups:
            value = read.row.get(lookup.value_of)
            if _ignored(value, self.profile.ignore_values):
                return  # the row names nothing to look up: the rule does not apply
            query = self.ctx.rows_query(lookup.table, lookup.column, value, lookup.filters)
            outcome = self.asker.ask(query, _purpose(rule, read))
            answer = rows_of(outcome)
            if answer is None:
                return  # not asked or refused: nothing known, nothing stated
            rows, complete = answer
            kept = [i for i, r in enumerate(rows) if all(c.holds(r) for c in lookup.when)]
            if not kept and not complete:
                return  # the page did not show every row: undetermined
            assert outcome is not None and outcome.capture is not None
            for index in kept:
                key = {c: rows[index].get(c) for c in self.profile.key_of(lookup.table)}
                provenance = self.ctx.provenance(outcome.capture, f"{ROWS_POINTER}/{index}")
                found.append({"table": lookup.table, "key": key, "provenance": provenance})
        if (rule.check == "rows") == (not found):
            yield self._own(rule, read, [read.view(), *found])

    def _exists(self, rule: Rule, read: RowRead) -> Iterator[_Hit]:
        for ref in self._references(rule, read):
            for entity_type, entity_id in references.named(ref, read.row.get(ref.column)):
                entity = self.profile.entities[entity_type]
                if entity.table is None or (rule.types and entity_type not in rule.types):
                    continue
                query = self.ctx.rows_query(entity.table, entity.column, entity_id)
                answer = rows_of(self.asker.ask(query, _purpose(rule, read)))
                if answer is not None and not answer[0]:
                    yield _Hit(
                        entity_type,
                        entity_id,
                        [read.view()],
                        {"reference": ref.name, "looked_in": {"table": entity.table}},
                    )

    def _scripts(self, rule: Rule, read: RowRead) -> Iterator[_Hit]:
        layout = self.profile.scripts
        if layout is None:
            return
        for ref in self._references(rule, read):
            symbol = read.row.get(ref.column)
            if _ignored(symbol, ref.ignore_values) or not isinstance(symbol, str):
                continue
            if not vocabulary.is_symbol(symbol):
                continue
            outcome = self.asker.ask(symbol_query(self.ctx, symbol), _purpose(rule, read))
            answer = matches_of(outcome)
            if answer is None:
                continue
            lines, complete = answer
            registering = [m for m in lines if layout.registers(m["text"], symbol)]
            assert outcome is not None and outcome.capture is not None
            source = self.ctx.provenance(outcome.capture, MATCHES_POINTER)
            if rule.check == "registered":
                if not registering and complete:
                    yield self._own(rule, read, [read.view()], symbol=symbol, source=source)
                continue
            defining = [match_view(m) for m in lines if layout.defines(m["text"], symbol)]
            if defining and complete and not any(layout.adds(m["text"], symbol) for m in lines):
                yield self._own(
                    rule, read, [read.view()], symbol=symbol, source=source, defined=defining
                )

    def _references(self, rule: Rule, read: RowRead) -> Iterator[Reference]:
        by_name = {r.name: r for r in self.profile.references}
        for name in rule.references:
            ref = by_name.get(name)
            if ref is not None and ref.table == read.table and references.when_holds(ref, read.row):
                yield ref

    # -- facts --------------------------------------------------------------------------

    def _own(self, rule: Rule, read: RowRead, rows: list[dict[str, Any]], **extra: Any) -> _Hit:
        entity_type, entity_id = self._entity_of(rule, read)
        return _Hit(entity_type, entity_id, rows, extra)

    def _entity_of(self, rule: Rule, read: RowRead) -> tuple[str | None, Any]:
        if rule.entity_type is None:
            return entity_of(self.profile, read)
        entity = self.profile.entities[rule.entity_type]
        return rule.entity_type, read.row.get(rule.entity_column or entity.column)

    def _state(self, rule: Rule, read: RowRead, hit: _Hit) -> None:
        engine_source, anchor_provenance = self._anchor(rule)
        fields: dict[str, Any] = {
            "rule": rule.id,
            "rule_kind": rule.kind,
            "check": rule.check,
            "entity_type": hit.entity_type,
            "entity_id": hit.entity_id,
            "rows": hit.rows,
            "engine_source": engine_source,
            **hit.extra,
        }
        if anchor_provenance is not None:
            fields["engine_source_provenance"] = anchor_provenance
        what = (
            "a check the engine makes when it loads the world database"
            if rule.kind == "engine"
            else "a heuristic: a pattern that often means a bug; the engine does not reject it"
        )
        self.ctx.fact("project_rule_hit", **fields, statement=f"{rule.statement} ({what})")

    def _anchor(self, rule: Rule) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The engine check's line at the pinned commit, searched once per rule."""
        if rule.anchor is None:
            return None, None
        if rule.id in self.anchors:
            return self.anchors[rule.id]
        query = {
            "kind": "source.search",
            "text": rule.anchor.text,
            "case_sensitive": True,
            "path_prefix": rule.anchor.path,
            "offset": 0,
            "limit": 1,
        }
        outcome = self.asker.ask(query, {"kind": "rule_anchor", "rule": rule.id})
        answer = matches_of(outcome)
        resolved: tuple[dict[str, Any] | None, dict[str, Any] | None] = (None, None)
        if answer is not None and answer[0]:
            assert outcome is not None and outcome.capture is not None
            pointer = f"{MATCHES_POINTER}/0"
            resolved = (match_view(answer[0][0]), self.ctx.provenance(outcome.capture, pointer))
        elif answer is not None:
            self.ctx.fact(
                "project_context_coverage",
                reason="rule_anchor_not_found",
                rule=rule.id,
                path=rule.anchor.path,
                statement="the engine check's log message was not found in this file at the "
                "pinned commit; the rule's hits carry no engine line",
            )
        self.anchors[rule.id] = resolved
        return resolved


def entity_of(profile: EnrichmentProfile, read: RowRead) -> tuple[str | None, Any]:
    """Whom a row read is about (``references.about``); (None, None) when the map says not."""
    found = references.about(profile, read.table, read.row)
    return (None, None) if found is None else found


def _rules(ctx: PhaseContext) -> None:
    if ctx.profile.rules:
        _RuleRun(ctx).run()


def _rule_queries(profile: EnrichmentProfile) -> int:
    return profile.limits.rule_queries if profile.rules else 0


# Evaluates the profile's ``[[rules]]`` on the rows the build read, on its share of
# max_queries (limits.rule_queries, kept from the reference map).
rules_phase = AskingPhase(_rules, _rule_queries)


def _purpose(rule: Rule, read: RowRead) -> dict[str, Any]:
    return {"kind": "rule_check", "rule": rule.id, "table": read.table, "key": dict(read.key)}


def _ignored(value: Any, ignore: Sequence[Any]) -> bool:
    typed = (type(value).__name__, value)
    return any(typed == (type(v).__name__, v) for v in ignore)


__all__ = [
    "Asker",
    "RowRead",
    "entity_of",
    "match_view",
    "matches_of",
    "rows_of",
    "rows_read",
    "rules_phase",
    "symbol_query",
]
