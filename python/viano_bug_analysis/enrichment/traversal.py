"""Reference traversal: the profile's reference map followed forward from a value
read and in reverse from an entity, with the relationship facts it states.

A part of ``Enricher`` (engine.py): the state it works on is the enricher's,
declared once in ``state.EnricherState``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.enrichment import references
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.enrichment.state import EnricherState
from viano_bug_analysis.enrichment.work import (
    ROWS_POINTER,
    SYMBOL,
    Origin,
    Work,
    reference_purpose,
    typed,
)
from viano_bug_analysis.project_research import Capture


class Traversal(EnricherState):
    # -- the reference map ----------------------------------------------------------------

    def _follow(self, work: Work, row: Mapping[str, Any], capture: Capture, index: int) -> None:
        """Forward: every map entry on this table whose column names an entity in this row."""
        assert work.table is not None
        key_columns = self._profile.key_of(work.table)
        # The entry a reverse lookup asked names, in each row, the entity it was asked
        # for: following it forward again would only lead back.
        came_by = (
            work.purpose.get("relation") if work.purpose.get("direction") == "reverse" else None
        )
        for ref in self._profile.references:
            if ref.table != work.table or ref.column not in row or ref.name == came_by:
                continue
            if not references.when_holds(ref, row):
                continue
            origin = Origin(
                ref,
                work.table,
                {c: row.get(c) for c in key_columns},
                row[ref.column],
                capture.sha256,
                f"{ROWS_POINTER}/{index}/{ref.column}",
            )
            self._forward(origin, work.depth + 1)

    def _entity_links(
        self,
        entity_type: str,
        value: Any,
        depth: int,
        capture_sha256: str | None,
        pointer: str | None,
        *,
        mentioned: bool = False,
    ) -> None:
        """Reverse: the rows naming this entity, asked whatever its own table says.

        A mentioned entity is asked by every map entry holding its type (up to
        reverse_per_entity); an entity only reached, by its part_of entries (its
        own rows). Once per entity: a second path to the same ID adds nothing new.
        """
        seen = (entity_type, typed(value))
        if seen in self._expanded:
            return
        self._expanded.add(seen)
        self._constant_search(entity_type, value, depth)
        if isinstance(value, bool) or not isinstance(value, int):
            return
        chosen = references.holders(self._profile, entity_type, part_of_only=not mentioned)
        limit = self._profile.limits.reverse_per_entity
        if len(chosen) > limit:
            self._log.fact(
                "project_context_coverage",
                reason="reverse_references_limit",
                entity_type=entity_type,
                entity_id=value,
                count=len(chosen) - limit,
                not_asked=[ref.name for ref in chosen[limit:]],
                statement="map entries holding this type were not asked for this entity: the "
                "reverse_per_entity bound of the enrichment profile was reached",
            )
        for ref in chosen[:limit]:
            origin = Origin(ref, None, {}, value, capture_sha256, pointer, entity_type)
            self._reverse(origin, depth + 1)

    def _constant_search(self, entity_type: str, value: Any, depth: int) -> None:
        """Search the ID where a constant of the type's prefixes is assigned it.

        ProjectResearch searches literal text only, so the ID's digits are
        asked (any spacing around ``=`` then still matches) and the prefix and
        the assignment are checked on each returned line (``_constant_hits``).
        """
        entity = self._profile.entities[entity_type]
        prefixes = entity.constant_prefixes
        if not prefixes or isinstance(value, bool) or not isinstance(value, int):
            return
        query: dict[str, Any] = {
            "kind": "source.search",
            "text": str(value),
            "case_sensitive": True,
            "offset": 0,
            "limit": self._profile.limits.symbol_hits,
        }
        if entity.constant_path_prefix is not None:
            query["path_prefix"] = entity.constant_path_prefix
        purpose = {
            "kind": "constant_search",
            "entity_type": entity_type,
            "entity_id": value,
            "prefixes": list(prefixes),
        }
        self._enqueue(Work(depth, query, None, None, purpose))

    def _admitted(self, origin: Origin, depth: int) -> bool:
        """The bounds and ignore_values, each cut stated as a coverage fact."""
        ref = origin.reference
        if typed(origin.value) in {typed(v) for v in ref.ignore_values}:
            key = (ref.name, ref.table, ref.column)
            self._ignored[key] = self._ignored.get(key, 0) + 1
            return False
        origin_fact = {"relation": ref.name, "from": self._origin_view(origin)}
        for reason, over in (
            ("max_relationships", self._relationships >= self._profile.limits.max_relationships),
            ("max_depth", depth > self._profile.limits.max_depth),
        ):
            if over:
                self._log.fact(
                    "project_context_coverage",
                    reason=reason,
                    **origin_fact,
                    statement=f"reference not followed: the {reason} bound was reached; "
                    "the project context is incomplete here",
                )
                return False
        self._relationships += 1
        return True

    def _forward(self, origin: Origin, depth: int) -> None:
        """From a row's column to what it names: a source symbol, or an entity."""
        ref, value = origin.reference, origin.value
        if not self._admitted(origin, depth):
            return
        if ref.symbol:
            if not isinstance(value, str) or not SYMBOL.fullmatch(value):
                self._log.fact(
                    "project_context_coverage",
                    reason="not_a_symbol",
                    relation=ref.name,
                    **{"from": self._origin_view(origin)},
                    statement="the value cannot be searched as a source symbol",
                )
                return
            query = {
                "kind": "source.symbol",
                "symbol": value,
                "offset": 0,
                "limit": self._profile.limits.symbol_hits,
            }
            work = Work(depth, query, None, None, reference_purpose(ref, "forward"))
            work.origins.append(origin)
            self._enqueue(work)
            return
        reached = references.named(ref, value)
        if not reached:
            self._log.fact(
                "project_context_coverage",
                reason="not_an_id",
                relation=ref.name,
                **{"from": self._origin_view(origin)},
                statement="the value names no integer ID and is not followed",
            )
            return
        for entity_type, entity_id in reached:
            # The sign may pick the type (RequiredNpcOrGo: negative is a gameobject) or
            # carry a meaning of its own (PrevQuestID: taken); the ID is the magnitude.
            entity = self._profile.entities[entity_type]
            if entity.table is not None:
                query = self._rows_query(entity.table, entity.columns, entity.column, entity_id, ())
                work = Work(depth, query, entity.table, entity, reference_purpose(ref, "forward"))
                work.origins.append(origin)
                self._enqueue(work)
            else:
                # No table of its own (a spell): what it reaches are its part_of rows.
                self._relationship_fact(
                    origin, None, None, entity_type=entity_type, value=entity_id
                )
            self._entity_links(entity_type, entity_id, depth, origin.capture_sha256, origin.pointer)

    def _reverse(self, origin: Origin, depth: int) -> None:
        """From an entity to the rows of one map entry that name it."""
        ref, value = origin.reference, origin.value
        assert origin.entity_type is not None
        if not self._admitted(origin, depth):
            return
        lookup = next((e for e in self._profile.entities.values() if e.table == ref.table), None)
        query = references.reverse_query(self._profile, ref, origin.entity_type, value)
        work = Work(depth, query, ref.table, lookup, reference_purpose(ref, "reverse"))
        work.origins.append(origin)
        self._enqueue(work)

    def _relationship_fact(
        self,
        origin: Origin,
        work: Work | None,
        outcome: StepOutcome | None,
        target: str | None = None,
        *,
        entity_type: str | None = None,
        value: Any = None,
    ) -> None:
        ref = origin.reference
        direction = "reverse" if origin.table is None else "forward"
        to: dict[str, Any] = {}
        if work is None or outcome is None:
            # An entity without a table of its own: reached, nothing asked for it here.
            to.update(entity_type=entity_type, value=value)
        else:
            to["query_sha256"] = outcome.query_sha256
            if work.table is not None:
                first = work.query["filters"][0]
                to.update(table=work.table, column=first["column"], value=first["value"])
            else:
                to.update(source=work.query["kind"], symbol=work.query["symbol"])
                to["value"] = origin.value
            held = work.lookup.entity_type if work.lookup is not None else None
            if direction == "forward" and held is None:
                held = ref.holds
            if held is not None:
                to["entity_type"] = held
            if outcome.capture is not None:
                to["capture_sha256"] = outcome.capture.sha256
                to["capture_path"] = self._capture_path(outcome.capture.sha256)
            if target is not None:
                to["fact"] = target
        fields: dict[str, Any] = {"relation": ref.name, "direction": direction}
        negative = type(origin.value) is int and origin.value < 0
        if ref.negative_means is not None and direction == "forward" and negative:
            fields["sign"] = ref.negative_means
        self._log.fact(
            "project_relationship",
            **fields,
            **{"from": self._origin_view(origin)},
            to=to,
            referenced_only=True,
            runtime_observed=False,
            statement=(
                "a reference of the profile's map in the project data; the referenced entity "
                "is not an observed runtime object and not a cause"
                if direction == "forward"
                else "rows of the project data that name this entity in a column the map says "
                "holds its type; not an observed runtime object and not a cause"
            ),
        )
        if (
            ref.expected
            and direction == "forward"
            and work is not None
            and work.lookup is not None
            and target in self._empty
        ):
            self._missing(origin, work, target)

    def _missing(self, origin: Origin, work: Work, empty: str | None) -> None:
        assert work.lookup is not None and work.table is not None
        self._log.fact(
            "project_missing_reference",
            reference=origin.reference.name,
            **{"from": self._origin_view(origin)},
            entity_type=work.lookup.entity_type,
            entity_id=work.query["filters"][0]["value"],
            looked_in={"table": work.table, "column": work.lookup.column},
            empty_fact=empty,
            statement="the row names an entity the map says must exist, and its table has no "
            "row for that ID",
        )

    def _origin_view(self, origin: Origin) -> dict[str, Any]:
        if origin.table is None:
            view: dict[str, Any] = {"entity_type": origin.entity_type, "entity_id": origin.value}
            if origin.capture_sha256 is not None:
                view.update(
                    capture_sha256=origin.capture_sha256,
                    capture_path=self._capture_path(origin.capture_sha256),
                    pointer=origin.pointer,
                )
            return view
        assert origin.capture_sha256 is not None
        # The row named by a key column other than the one followed, where it has one.
        column = origin.reference.column
        id_column = next((c for c in origin.key if c != column), column)
        return {
            "table": origin.table,
            "id_column": id_column,
            "id": origin.key.get(id_column),
            "key": dict(origin.key),
            "column": origin.reference.column,
            "value": origin.value,
            "capture_sha256": origin.capture_sha256,
            "capture_path": self._capture_path(origin.capture_sha256),
            "pointer": origin.pointer,
        }
