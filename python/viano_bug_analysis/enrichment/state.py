"""The state one enrichment run works on, declared once for the parts of ``Enricher``.

``Enricher`` (engine.py) is put together from its jobs, each a module of its
own: seeding (seeding.py), the queue and the query budget (work_queue.py),
the answers (answers.py), the reference traversal (traversal.py), the client
data lookups (client_lookups.py); the fact
log is an object of its own (fact_log.py). Each part reads and changes the
one state below; the methods one part calls on another are declared here
for the type checker only.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from viano_bug_analysis.enrichment import candidates
from viano_bug_analysis.enrichment.extract import Extraction
from viano_bug_analysis.enrichment.fact_log import FactLog
from viano_bug_analysis.enrichment.journal import StepOutcome
from viano_bug_analysis.enrichment.profile import EnrichmentProfile, EntityLookup, Scalar
from viano_bug_analysis.enrichment.work import Origin, Progress, Refusal, RunQuery, Work
from viano_bug_analysis.project_research import Capture


class EnricherState:
    _profile: EnrichmentProfile
    _run: RunQuery
    _capture_path: Callable[[str], str]
    _progress: Progress
    _log: FactLog
    _queries: list[dict[str, Any]]
    # (depth, class, order, work): breadth first, and within one depth the
    # entities themselves before the rows naming them (``work_class``).
    _queue: list[tuple[int, int, int, Work]]
    _order: itertools.count[int]
    _pending: dict[str, Work]  # query key -> queued work
    _done: dict[str, StepOutcome]  # query key -> answer
    _targets: dict[str, str | None]  # query key -> the fact its answer gave
    _relationships: int
    # (relation, table, column) -> how many values meaning "no reference"
    _ignored: dict[tuple[str, str, str], int]
    _refusals: dict[str, Refusal]
    _expanded: set[tuple[str, tuple[str, Any]]]
    _empty: set[str]  # project_empty_result fact IDs
    _database_asked: int
    _database_refused: dict[str, int]  # refusal code -> queries
    # The share of max_queries kept for the asking phases, and the bound of the
    # stage now running (the map's: max_queries less the reserve).
    _reserve: int
    _limit: int
    _stage: str
    # stage -> purpose kind -> queries not asked for max_queries; rule IDs not checked.
    _left_out: dict[str, dict[str, int]]
    _rules_left_out: set[str]
    # [client_data]: True configured, False not (one coverage fact), None not said (no fact).
    _client_data: bool | None
    _client_described: set[tuple[str, int]]  # (type, ID) asked in the client data

    if TYPE_CHECKING:

        def _typed_untyped(self, found: Extraction) -> set[tuple[str, int]]: ...

        def _typed_names(
            self,
            found: Extraction,
            client_asked: Collection[str] = (),
            client_matched: Collection[str] = (),
        ) -> set[tuple[str, int]]: ...

        def _probe(
            self, probe: candidates.Probe
        ) -> tuple[Capture, list[dict[str, Any]]] | None: ...

        def _dropped(self, what: str, count: int) -> None: ...

        def _client_types(self) -> list[str]: ...

        def _client_wants(self) -> int: ...

        def _client_names(
            self, found: Extraction
        ) -> tuple[set[tuple[str, int]], set[str], set[str]]: ...

        def _client_records(self) -> None: ...

        def _client_not_configured(self) -> None: ...

        def _ask(self, work: Work) -> StepOutcome | None: ...

        def _capture_of(self, work: Work) -> Capture | None: ...

        def _enqueue(self, work: Work) -> None: ...

        def _skip(self, work: Work, reason: str) -> None: ...

        def _drain(self, *, keep_rest: bool) -> None: ...

        def _rest_of_the_map(self) -> None: ...

        def _left_out_by(self, stage: str, purpose: Mapping[str, Any]) -> None: ...

        def _budget_fact(self) -> None: ...

        def _answered(self, work: Work, outcome: StepOutcome) -> None: ...

        def _refused(self, work: Work, outcome: StepOutcome) -> None: ...

        def _rows(self, work: Work, capture: Capture) -> str | None: ...

        def _entity_fact(
            self, lookup: EntityLookup, row: Mapping[str, Any], capture: Capture, index: int
        ) -> None: ...

        def _source_hits(self, work: Work, capture: Capture) -> str: ...

        def _constant_hits(self, work: Work, capture: Capture) -> str | None: ...

        def _rows_query(
            self,
            table: str,
            columns: Sequence[str],
            column: str,
            value: Scalar,
            extra: Sequence[Any],
        ) -> dict[str, Any]: ...

        def _follow(
            self, work: Work, row: Mapping[str, Any], capture: Capture, index: int
        ) -> None: ...

        def _entity_links(
            self,
            entity_type: str,
            value: Any,
            depth: int,
            capture_sha256: str | None,
            pointer: str | None,
            *,
            mentioned: bool = False,
        ) -> None: ...

        def _constant_search(self, entity_type: str, value: Any, depth: int) -> None: ...

        def _admitted(self, origin: Origin, depth: int) -> bool: ...

        def _forward(self, origin: Origin, depth: int) -> None: ...

        def _reverse(self, origin: Origin, depth: int) -> None: ...

        def _relationship_fact(
            self,
            origin: Origin,
            work: Work | None,
            outcome: StepOutcome | None,
            target: str | None = None,
            *,
            entity_type: str | None = None,
            value: Any = None,
        ) -> None: ...

        def _missing(self, origin: Origin, work: Work, empty: str | None) -> None: ...

        def _origin_view(self, origin: Origin) -> dict[str, Any]: ...


__all__ = ["EnricherState"]
