"""Answers: each answered query becomes facts (rows, entities, texts, source
lines, constants, empty results); a refusal is counted per target.

A part of ``Enricher`` (engine.py): the state it works on is the enricher's,
declared once in ``state.EnricherState``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from viano_bug_analysis.enrichment import references
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.enrichment.profile import (
    EntityLookup,
    Scalar,
)
from viano_bug_analysis.enrichment.state import EnricherState
from viano_bug_analysis.enrichment.work import (
    MATCHES_POINTER,
    ROWS_POINTER,
    Refusal,
    Work,
    match_view,
    query_key,
)
from viano_bug_analysis.project_research import Capture


class Answers(EnricherState):
    # -- answers ------------------------------------------------------------------------

    def _answered(self, work: Work, outcome: StepOutcome) -> None:
        capture = outcome.capture
        if capture is None:
            self._refused(work, outcome)
            for origin in work.origins:
                self._relationship_fact(origin, work, outcome)
            return
        target_fact: str | None
        if work.table is not None:
            target_fact = self._rows(work, capture)
        elif work.purpose["kind"] == "constant_search":
            target_fact = self._constant_hits(work, capture)
        else:
            target_fact = self._source_hits(work, capture)
        self._targets[query_key(work.query)] = target_fact
        for origin in work.origins:
            self._relationship_fact(origin, work, outcome, target_fact)

    def _refused(self, work: Work, outcome: StepOutcome) -> None:
        # One fact per refused table (or symbol source) and code: a missing
        # table refuses every lookup of it for the same reason.
        target: dict[str, Any] = (
            {"table": work.table} if work.table is not None else {"source": work.query["kind"]}
        )
        key = repr((sorted(target.items()), outcome.refused_code))
        refusal = self._refusals.setdefault(key, Refusal(outcome.refused_code, target))
        if work.purpose not in refusal.purposes:
            refusal.purposes.append(work.purpose)
        # A query a phase was refused, then the map's own: one query, counted once.
        if outcome.query_sha256 not in refusal.queries:
            refusal.queries.append(outcome.query_sha256)

    def _rows(self, work: Work, capture: Capture) -> str | None:
        assert work.table is not None
        result = capture.result["result"]
        rows: list[dict[str, Any]] = result["rows"]
        provenance = self._log.provenance(capture, ROWS_POINTER)
        if not rows:
            empty = self._log.fact(
                "project_empty_result",
                table=work.table,
                filters=work.query["filters"],
                purpose=work.purpose,
                provenance=provenance,
                statement=f"none in this table: no {work.table} row matches these filters. "
                "This is a finding about this table only, not proof that the entity is "
                "missing or that no other mechanism exists",
            )
            self._empty.add(empty)
            return empty
        if not result["complete_filtered_rows"]:
            self._log.fact(
                "project_context_coverage",
                reason="rows_page_limit",
                table=work.table,
                filters=work.query["filters"],
                returned=len(rows),
                statement="more rows match than rows_per_query; only the first page was read",
            )
        texts = self._profile.text_columns(work.table)
        shown_rows: list[dict[str, Any]] = [dict(row) for row in rows]
        rows_fact = self._log.fact(
            "project_rows",
            table=work.table,
            filters=work.query["filters"],
            purpose=work.purpose,
            rows=shown_rows,
            complete_filtered_rows=result["complete_filtered_rows"],
            provenance=provenance,
        )
        for index, row in enumerate(rows):
            for column, text in texts.items():
                value = row.get(column)
                if not isinstance(value, str) or not value.strip():
                    continue
                text_fact = self._log.fact(
                    "project_description",
                    table=work.table,
                    source_column=column,
                    role=text.role,
                    text=value,
                    row_fact=rows_fact,
                    provenance=self._log.provenance(capture, f"{ROWS_POINTER}/{index}/{column}"),
                    statement="text of the project data: it describes the intended mechanics, "
                    "not an action the server performed",
                )
                # The rows fact keeps a reference, not a second copy of the text.
                shown_rows[index][column] = {"text_ref": text_fact}
            if work.lookup is not None and work.lookup.table == work.table:
                self._entity_fact(work.lookup, row, capture, index)
        for index, row in enumerate(rows):
            self._follow(work, row, capture, index)
        return rows_fact

    def _entity_fact(
        self, lookup: EntityLookup, row: Mapping[str, Any], capture: Capture, index: int
    ) -> None:
        name = row.get(lookup.name_column) if lookup.name_column else None
        fields: dict[str, Any] = {
            "entity_type": lookup.entity_type,
            "entity_id": row.get(lookup.column),
            "runtime_observed": False,
            "provenance": self._log.provenance(capture, f"{ROWS_POINTER}/{index}/{lookup.column}"),
        }
        # A name only ever comes from the name column, never from the ID itself.
        if isinstance(name, str) and name.strip():
            fields["name"] = name
            fields["name_provenance"] = self._log.provenance(
                capture, f"{ROWS_POINTER}/{index}/{lookup.name_column}"
            )
        self._log.fact("project_entity", **fields)

    def _source_hits(self, work: Work, capture: Capture) -> str:
        result = capture.result["result"]
        matches = [match_view(m) for m in result["matches"]]
        provenance = self._log.provenance(capture, MATCHES_POINTER)
        if not matches:
            return self._log.fact(
                "project_empty_result",
                source=work.query["kind"],
                symbol=work.query["symbol"],
                purpose=work.purpose,
                provenance=provenance,
                statement="no line at the pinned commit names this symbol as a whole word",
            )
        # coverage.complete reads the same in both result versions: the first and
        # only page, and no file left unsearched that could hide a line.
        if not capture.result["coverage"]["complete"]:
            self._log.fact(
                "project_context_coverage",
                reason="source_hits_limit",
                symbol=work.query["symbol"],
                returned=len(matches),
                statement="more lines name this symbol than symbol_hits; only the first page "
                "was read"
                if result["truncated"]
                else "some files could not be searched (too large, not UTF-8 or not in this "
                "clone); lines naming this symbol in them are not listed",
            )
        return self._log.fact(
            "project_source_hits",
            symbol=work.query["symbol"],
            total=result["total"],
            matches=matches,
            purpose=work.purpose,
            provenance=provenance,
        )

    def _constant_hits(self, work: Work, capture: Capture) -> str | None:
        """Only lines assigning the ID to a constant of the type's prefixes count.

        ``MAX_THINGS = 91001`` carries the same literal and says nothing about
        the quest, so it is dropped rather than reported as a candidate.
        """
        purpose = work.purpose
        typed = references.constant_pattern(purpose["prefixes"], purpose["entity_id"])
        result = capture.result["result"]
        if not capture.result["coverage"]["complete"]:
            self._log.fact(
                "project_context_coverage",
                reason="source_hits_limit",
                text=work.query["text"],
                returned=len(result["matches"]),
                statement="more lines carry this literal than symbol_hits; only the first page "
                "was checked for typed constants",
            )
        last: str | None = None
        for index, m in enumerate(result["matches"]):
            found = typed.search(m["text"])
            if found is None:
                continue
            last = self._log.fact(
                "project_source_constant",
                entity_type=purpose["entity_type"],
                entity_id=purpose["entity_id"],
                constant=found.group("name") or found.group("defined"),
                match=match_view(m),
                provenance=self._log.provenance(capture, f"{MATCHES_POINTER}/{index}"),
                statement="a C++ constant of this entity type's prefix is assigned this ID; "
                "where the constant is used is not shown by this line",
            )
        return last

    # -- small helpers -------------------------------------------------------------------

    def _rows_query(
        self,
        table: str,
        columns: Sequence[str],
        column: str,
        value: Scalar,
        extra: Sequence[Any],
    ) -> dict[str, Any]:
        filters = [{"column": column, "operator": "eq", "value": value}]
        filters += [{"column": f.column, "operator": f.operator, "value": f.value} for f in extra]
        query: dict[str, Any] = {
            "kind": "database.rows",
            "table": table,
            "columns": list(columns),
            "filters": filters,
            "offset": 0,
            "limit": self._profile.limits.rows_per_query,
        }
        if self._profile.database is not None:
            query["database"] = self._profile.database
        return query
