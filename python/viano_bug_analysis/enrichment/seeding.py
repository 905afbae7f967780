"""Seeding: the case's own mentions become facts and first lookups; untyped IDs
and names are asked as candidates of each type that could hold them.

A part of ``Enricher`` (engine.py): the state it works on is the enricher's,
declared once in ``state.EnricherState``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from viano_bug_analysis.enrichment import candidates
from viano_bug_analysis.enrichment.extract import Extraction
from viano_bug_analysis.enrichment.state import EnricherState
from viano_bug_analysis.enrichment.work import (
    ROWS_POINTER,
    Work,
)
from viano_bug_analysis.project_research import Capture


class Seeding(EnricherState):
    # -- candidates: untyped IDs and names ------------------------------------------------

    def _typed_untyped(self, found: Extraction) -> set[tuple[str, int]]:
        """Asks each untyped ID's tables once (IN lists); the (type, ID) pairs it exists as."""
        probes, dropped = candidates.untyped_probes(self._profile, found.untyped)
        if dropped:
            found.drop("untyped", dropped)
        where_found: dict[int, list[dict[str, Any]]] = {}
        for probe in probes:
            answer = self._probe(probe)
            if answer is None:
                continue
            capture, rows = answer
            for entity_id, index in candidates.found_ids(probe, rows).items():
                where_found.setdefault(entity_id, []).append(
                    {
                        "entity_type": probe.entity_type,
                        "table": probe.table,
                        "column": probe.column,
                        "provenance": self._log.provenance(
                            capture, f"{ROWS_POINTER}/{index}/{probe.column}"
                        ),
                    }
                )
        entities: set[tuple[str, int]] = set()
        for untyped in found.untyped:
            places = [
                p
                for p in where_found.get(untyped.entity_id, [])
                if p["entity_type"] in untyped.entity_types
            ]
            types = sorted({p["entity_type"] for p in places})
            entities.update((t, untyped.entity_id) for t in types)
            self._log.fact(
                "case_untyped_mention",
                entity_id=untyped.entity_id,
                where=dict(untyped.where),
                asked_as=list(untyped.entity_types),
                found_as=types,
                found_in=places,
                statement=(
                    "the case names this ID without its type; it exists as the types in found_as"
                    if types
                    else "the case names this ID without its type; no table asked holds it"
                ),
            )
        return entities

    def _typed_names(
        self,
        found: Extraction,
        client_asked: Collection[str] = (),
        client_matched: Collection[str] = (),
    ) -> set[tuple[str, int]]:
        """Asks every name column once (IN lists); the entities a name is exact for.

        ``client_asked``, ``client_matched``: the names (casefolded) the client data was
        asked and the ones it has (``client_lookups``): a name it has is found, one it was
        asked for is asked."""
        probes, unanswerable, dropped = candidates.name_probes(self._profile, found.names)
        unanswerable = [n for n in unanswerable if n.name.casefold() not in client_asked]
        if dropped:
            found.drop("names", dropped)
        matches: dict[str, list[dict[str, Any]]] = {}
        for probe in probes:
            answer = self._probe(probe)
            if answer is None:
                continue
            capture, rows = answer
            for name, indexes in candidates.found_names(probe, rows).items():
                for index in indexes:
                    row = rows[index]
                    matches.setdefault(name, []).append(
                        {
                            "entity_type": probe.entity_type,
                            "entity_id": row.get(probe.id_column),
                            "name": row.get(probe.column),
                            "table": probe.table,
                            "provenance": self._log.provenance(
                                capture, f"{ROWS_POINTER}/{index}/{probe.column}"
                            ),
                        }
                    )
        entities: set[tuple[str, int]] = set()
        not_found: list[str] = []
        for named in found.names:
            found_for = matches.get(named.name.casefold(), [])
            if not found_for:
                if named not in unanswerable and named.name.casefold() not in client_matched:
                    not_found.append(named.name)
                continue
            distinct = sorted({(m["entity_type"], m["entity_id"]) for m in found_for}, key=repr)
            followed = len(distinct) <= self._profile.limits.name_fanout
            if followed:
                entities.update(
                    (t, i) for t, i in distinct if type(i) is int and not isinstance(i, bool)
                )
            self._log.fact(
                "project_name_match",
                name=named.name,
                where=dict(named.where),
                match="exact",
                matches=found_for,
                ambiguous=len(distinct) > 1,
                followed=followed,
                candidate=True,
                statement="the case gives this name without an ID; these entities carry "
                "exactly this name (ignoring case)"
                + ("" if followed else "; too many to follow, only listed"),
            )
        if not_found or unanswerable:
            self._log.fact(
                "case_name_candidates",
                asked=len(found.names) - len(unanswerable),
                not_found=not_found,
                not_asked=[n.name for n in unanswerable],
                statement="phrases of the report asked as names: the ones listed carry no "
                "entity's exact name in the columns asked (not_asked: no name column "
                "for their type)",
            )
        return entities

    def _probe(self, probe: candidates.Probe) -> tuple[Capture, list[dict[str, Any]]] | None:
        if not probe.values:
            return None
        purpose = {
            "kind": "candidate_lookup",
            "entity_type": probe.entity_type,
            "column": probe.column,
            "count": len(probe.values),
        }
        capture = self._capture_of(Work(0, probe.query, probe.table, None, purpose))
        if capture is None:
            return None
        result = capture.result["result"]
        if not result["complete_filtered_rows"]:
            self._log.fact(
                "project_context_coverage",
                reason="rows_page_limit",
                table=probe.table,
                purpose=purpose,
                returned=len(result["rows"]),
                statement="more rows match than one page; candidates may be found in rows not read",
            )
        return capture, list(result["rows"])

    def _dropped(self, what: str, count: int) -> None:
        self._log.fact(
            "project_context_coverage",
            reason="candidates_dropped",
            what=what,
            count=count,
            statement=f"{count} {what} of the case inputs were not looked up: a bound of the "
            "enrichment profile (mentions_per_rule, candidates_per_query) was reached",
        )
