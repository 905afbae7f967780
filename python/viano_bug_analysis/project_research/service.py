"""`ProjectResearch`: one read-only query against the pinned commit or the database.

    research = ProjectResearch(load_config("config/project.local.toml"))
    result = research.query({"kind": "source.symbol", "symbol": "npc_wild_wolpertinger",
                             "offset": 0, "limit": 20})        # project-result-v2 dict
    capture = research.capture(query)                          # the same, as capture v2

One call answers one query, in this order:

1. validate the query (``validate_query``): a strict ``project-query-v2``
   document (compiled validator first; only a rejected query goes through
   the precise validator, which names the JSON Pointer of the first problem),
   then the configured page and row limits and the line order of a read;
2. build the provider it needs, on first use: the git source for
   ``source.*``, the database source for ``database.*`` (the database
   password is read only now). A kind whose provider is not configured is
   refused with ``provider_not_configured``;
3. run the provider and wrap its answer into a ``project-result-v2``
   document with the query, its SHA-256, the origin (git URL and commit, or
   database and operator-assigned snapshot ID) and the coverage: what the
   answer proves about the exact predicate (see docs/project-research-v1.md).
   ``coverage.complete`` is the only ``complete`` of a version 2 result
   (version 1 results, still read as stored: ``result_versions``).

Errors: ``ResearchError`` for a rejected query (codes below and the
providers' own), ``ResearchUnavailable`` when a provider cannot be reached;
it passes through unchanged so that the controller can block the case.
The service writes nothing: storing captures is the caller's business.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from viano_bug_analysis import vocabulary
from viano_bug_analysis.jsonio import (
    MAX_ENCODE_DEPTH,
    JsonEncodeError,
    canonical_bytes,
    canonical_sha256,
    strict_loads,
)
from viano_bug_analysis.project_research.captures import REFERENCES_KIND, Capture

if TYPE_CHECKING:
    from viano_bug_analysis.project_research.client_data import ClientData
from viano_bug_analysis.project_research.config import Limits, ResearchConfig
from viano_bug_analysis.project_research.errors import ResearchError
from viano_bug_analysis.project_research.git_coverage import COVERAGE_GAPS
from viano_bug_analysis.project_research.result_versions import CURRENT_VERSION
from viano_bug_analysis.schema_errors import Violation, check, pointer

# Version 2 is version 1 plus whole_word and client.records (scripts/project_query_v2.py).
QUERY_SCHEMA = "project-query-v2"
RESULT_SCHEMA = "project-result-v2"
SOURCE_KINDS = (
    "source.files",
    "source.search",
    "source.symbol",
    "source.registration",
    "source.schema",
    "source.read",
    "source.revision",
    "source.changes",
)
DATABASE_KINDS = ("database.tables", "database.schema", "database.rows", "database.count")
# REFERENCES_KIND is answered over both providers through a profile's
# reference map: the service alone has no map, so it refuses the kind;
# ``enrichment.reference_query`` wraps a service with one.
CLIENT_KINDS = ("client.records",)
KINDS = SOURCE_KINDS + DATABASE_KINDS + (REFERENCES_KIND,) + CLIENT_KINDS
OPERATORS = vocabulary.FILTER_OPERATORS
MAX_QUERY_BYTES = 64 << 10


class SourceProvider(Protocol):
    """What the service needs of the git source (``GitSource``)."""

    @property
    def origin(self) -> dict[str, Any]: ...

    def files(
        self, *, text: str, path_prefix: str | None, offset: int, limit: int
    ) -> dict[str, Any]: ...

    def search(
        self,
        *,
        text: str,
        case_sensitive: bool,
        path_prefix: str | None,
        offset: int,
        limit: int,
        whole_word: bool = False,
    ) -> dict[str, Any]: ...

    def symbol(
        self, *, symbol: str, path_prefix: str | None, offset: int, limit: int
    ) -> dict[str, Any]: ...

    def registration(
        self, *, symbol: str, path_prefix: str | None, offset: int, limit: int
    ) -> dict[str, Any]: ...

    def schema(
        self, *, text: str, case_sensitive: bool, offset: int, limit: int
    ) -> dict[str, Any]: ...

    def read(self, *, path: str, start_line: int, end_line: int) -> dict[str, Any]: ...

    def revision(self, *, revision: str) -> dict[str, Any]: ...

    def changes(
        self,
        *,
        since: str,
        terms: Sequence[str],
        path_prefix: str | None,
        offset: int,
        limit: int,
    ) -> dict[str, Any]: ...


class DatabaseProvider(Protocol):
    """What the service needs of the database source (``MariaDbSource``)."""

    snapshot_id: str

    def origin(self, database: str) -> dict[str, Any]: ...

    def tables(
        self, *, name_contains: str | None, database: str | None, offset: int, limit: int
    ) -> dict[str, Any]: ...

    def schema(self, *, database: str | None, table: str) -> dict[str, Any]: ...

    def rows(
        self,
        *,
        database: str | None,
        table: str,
        columns: Sequence[str],
        filters: Sequence[Mapping[str, Any]],
        offset: int,
        limit: int,
    ) -> dict[str, Any]: ...

    def count(
        self, *, database: str | None, table: str, filters: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]: ...

    def close(self) -> None: ...


# --- validation ------------------------------------------------------------------------------


def _plain(data: bytes) -> Any:
    """Plain JSON values back from canonical bytes (orjson.loads would turn an
    integer beyond 64 bits into a float)."""
    return strict_loads(data, max_depth=MAX_ENCODE_DEPTH, max_bytes=max(len(data), 1))


def _pointer(parts: Sequence[object]) -> str:
    return pointer(parts)


def _non_finite_path(value: Any, parts: tuple[object, ...] = ()) -> tuple[object, ...] | None:
    """Where a NaN or infinity sits: orjson would silently write it as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return parts
    if isinstance(value, Mapping):
        children: Any = value.items()
    elif isinstance(value, list | tuple):
        children = enumerate(value)
    else:
        return None
    for key, child in children:
        found = _non_finite_path(child, (*parts, key))
        if found is not None:
            return found
    return None


SYMBOL_HINT = (
    "a symbol starts with a letter or _; for a word that starts with a digit"
    " (a numeric ID) use source.search with whole_word true"
)


def _schema_error(found: Violation) -> ResearchError:
    details = found.details()
    if found.rule in {"additionalProperties", "unevaluatedProperties", "false"}:
        if found.property is not None:
            details["field"] = found.property  # the documented name of this detail
        return ResearchError("unknown_field", found.message, details)
    if found.rule == "enum" and found.pointer.endswith("/operator"):
        details["hint"] = "allowed: " + ", ".join(OPERATORS)
        return ResearchError("operator_unknown", found.message, details)
    if found.rule == "enum" and found.pointer == "/kind":
        details["hint"] = "allowed: " + ", ".join(KINDS)
        return ResearchError("kind_unknown", found.message, details)
    if found.rule == "pattern" and found.pointer == "/symbol":
        details["hint"] = SYMBOL_HINT
        return ResearchError("query_invalid", f"{found.message}; {SYMBOL_HINT}", details)
    return ResearchError("query_invalid", found.message, details)


def validate_query(query: Any, limits: Limits | None = None) -> dict[str, Any]:
    """``query`` as plain JSON once it satisfies project-query-v2 and the limits.

    Raises ``ResearchError`` with ``details["path"]`` (a JSON Pointer into the
    query): ``query_invalid``, ``unknown_field``, ``kind_unknown``,
    ``operator_unknown`` (with a ``hint`` listing the operators),
    ``query_too_large``, ``limit_exceeded``, ``line_range_invalid``.
    """
    limits = limits or Limits()
    if not isinstance(query, Mapping):
        raise ResearchError("query_invalid", "query must be a JSON object", {"path": ""})
    # Before encoding: the encoder refuses NaN too, but cannot say where it is.
    if (where := _non_finite_path(query)) is not None:
        raise ResearchError(
            "query_invalid", "numbers must be finite", {"path": _pointer(where), "rule": "type"}
        )
    try:
        raw = canonical_bytes(query)
    except JsonEncodeError as err:
        raise ResearchError(
            "query_invalid", "query is not a JSON document", {"path": "", "reason": err.code}
        ) from None
    if len(raw) > MAX_QUERY_BYTES:
        raise ResearchError(
            "query_too_large",
            f"query exceeds the query size limit of {MAX_QUERY_BYTES} bytes",
            {"path": "", "limit": MAX_QUERY_BYTES, "maximum": MAX_QUERY_BYTES, "size": len(raw)},
        )
    document: dict[str, Any] = _plain(raw)
    if (found := check(QUERY_SCHEMA, document)) is not None:
        raise _schema_error(found)
    _check_limits(document, limits)
    return document


def _check_limits(query: Mapping[str, Any], limits: Limits) -> None:
    if "limit" in query and query["limit"] > limits.page:
        raise ResearchError(
            "limit_exceeded",
            f"limit is larger than the configured page size; the maximum is {limits.page}",
            {"path": "/limit", "limit": limits.page, "maximum": limits.page},
        )
    if query["kind"] == "database.rows" and query["offset"] + query["limit"] > limits.rows:
        raise ResearchError(
            "limit_exceeded",
            f"offset + limit goes past the configured row window of {limits.rows} rows;"
            " narrow the filters",
            {"path": "/offset", "limit": limits.rows, "maximum": limits.rows},
        )
    if query["kind"] == "source.read" and query["end_line"] < query["start_line"]:
        raise ResearchError(
            "line_range_invalid", "end_line is before start_line", {"path": "/end_line"}
        )


def query_sha256(query: Mapping[str, Any]) -> str:
    """SHA-256 of the compact form of a query."""
    # canonical_bytes: integers beyond 64 bits exact, as a filter on a DECIMAL
    # or BIGINT UNSIGNED column may hold one.
    return canonical_sha256(query)


# --- coverage --------------------------------------------------------------------------------


def _paging(result: Mapping[str, Any], query: Mapping[str, Any]) -> dict[str, Any]:
    offset = int(query.get("offset", 0))
    next_offset = result.get("next_offset")
    total = result.get("total")
    returned = result.get("returned")
    return {
        "offset": offset,
        "limit": query.get("limit"),
        "returned": int(returned) if returned is not None else 0,
        "total": total if isinstance(total, int) else None,
        "next_offset": next_offset if isinstance(next_offset, int) else None,
    }


def configured_git_source(
    repository: str | os.PathLike[str],
    commit: str,
    *,
    url: str,
    limits: Limits,
    disk_cache: str | os.PathLike[str] | None = None,
) -> SourceProvider:
    """A git source bounded by the configuration's ``[limits]``: the one place that
    maps them onto ``GitSource`` (research's source; the upstream "already fixed?"
    reads). Imported on first use, like every provider."""
    from viano_bug_analysis.project_research.git_source import GitSource

    return GitSource(
        repository,
        commit,
        url=url,
        max_files=limits.files,
        max_file_bytes=limits.file_bytes,
        max_total_bytes=limits.total_bytes,
        max_line_chars=limits.line_chars,
        max_page=limits.page,
        timeout_s=limits.git_seconds,
        cache_bytes=limits.cache_bytes,
        disk_cache=disk_cache,
        disk_cache_bytes=limits.disk_cache_bytes,
    )


def coverage(query: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """What the provider's answer covers of the exact query (project-result-v2 ``coverage``).

    ``complete`` means every answer to the query's predicate is in this
    result: a first page without a further one and, for source searches, no
    file left unsearched for a reason that could hide a hit (too large, not
    UTF-8, unusable path); for a read, no line cut. Only then is an empty
    answer an absence proof within the commit or snapshot; a partial answer
    proves nothing about what it left out. A hit line cut for display still
    is a hit: ``lines_truncated`` counts those without lowering coverage.
    """
    kind = query["kind"]
    if kind == "source.revision":
        # Complete unless the walk stopped before the relation was known.
        return {"complete": result.get("walk_finished") is True}
    if kind == "source.changes":
        return _changes_coverage(query, result)
    if kind in SOURCE_KINDS:
        return _source_coverage(query, result)
    if kind == "database.rows":
        paging = _paging(result, query)
        complete = bool(result["complete_filtered_rows"])
        return {
            "complete": complete,
            "complete_filtered_rows": complete,
            **paging,
        }
    if kind in CLIENT_KINDS:
        # Every record the file and the override table have for the lookup, on one page:
        # an override table that was not read (fully) may add records.
        paging = _paging(result, query)
        overrides_read = result["overrides"]["status"] in ("none", "read")
        complete = paging["offset"] == 0 and paging["next_offset"] is None and overrides_read
        return {"complete": complete, **paging}
    if kind == "database.tables":
        paging = _paging(result, query)
        complete = paging["offset"] == 0 and paging["next_offset"] is None
        return {
            "complete": complete,
            **paging,
            "tables_missing": len(result.get("missing", ())),
        }
    return {"complete": True}  # database.schema and database.count answer in full


def _changes_coverage(query: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    paging = _paging(result, query)
    by_reason: Mapping[str, int] = (result.get("skipped") or {}).get("by_reason", {})
    whole = paging["offset"] == 0 and paging["next_offset"] is None
    return {
        "complete": whole and result.get("examined_in_full") is True,
        **paging,
        "files_skipped": sum(by_reason.values()),
        "files_unsearched": sum(n for r, n in by_reason.items() if r in COVERAGE_GAPS),
    }


def _source_coverage(query: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    if query["kind"] == "source.read":
        cut = sum(1 for line in result.get("lines", ()) if line.get("text_truncated"))
        return {"complete": cut == 0, "lines_truncated": cut}
    paging = _paging(result, query)
    skipped = result.get("skipped") or {}
    by_reason: Mapping[str, int] = skipped.get("by_reason", {})
    hiding = sum(n for reason, n in by_reason.items() if reason in COVERAGE_GAPS)
    # The provider's own count (source.files has none) can only add to the gaps.
    hiding = max(hiding, int(result.get("files_unsearched", 0)))
    hits = result.get("matches", ())
    whole = paging["offset"] == 0 and paging["next_offset"] is None
    return {
        "complete": whole and hiding == 0,
        **paging,
        "files_searched": result.get("files_searched"),
        "files_skipped": int(skipped.get("total", 0)),
        "files_unsearched": hiding,
        "lines_truncated": sum(1 for hit in hits if hit.get("text_truncated")),
    }


# --- the service -----------------------------------------------------------------------------


class ProjectResearch:
    """The read-only research service over the configured git commit and database.

    ``git`` and ``database`` replace the providers that would otherwise be
    built from ``config`` on first use (tests pass fakes with the same methods).
    """

    def __init__(
        self,
        config: ResearchConfig,
        *,
        git: SourceProvider | None = None,
        database: DatabaseProvider | None = None,
    ) -> None:
        self.config = config
        self._git = git
        self._database = database
        self._client: ClientData | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> ProjectResearch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Releases provider connections; later queries reconnect."""
        for provider in (self._database, self._git):
            close = getattr(provider, "close", None)
            if callable(close):
                close()

    def query(self, query: Mapping[str, Any]) -> dict[str, Any]:
        """Validates and answers ``query``; returns a project-result-v2 document."""
        document = validate_query(query, self.config.limits)
        kind = document["kind"]
        if kind == REFERENCES_KIND:
            raise _not_configured("reference_map")
        if kind in SOURCE_KINDS:
            result, origin = self._ask_source(document)
        elif kind in CLIENT_KINDS:
            result, origin = self.client_provider().records(document)
        else:
            result, origin = self._ask_database(document)
        answer = {
            "format": "viano-project-result",
            "format_version": CURRENT_VERSION,
            "query": document,
            "query_sha256": query_sha256(document),
            "origin": origin,
            "coverage": coverage(document, result),
            "result": result,
        }
        return frozen_result(answer)

    def capture(self, query: Mapping[str, Any]) -> Capture:
        """The answer to ``query`` as a capture v2 (not stored: see ``CaptureStore``)."""
        return Capture.from_result(self.query(query))

    # --- providers -----------------------------------------------------------------------

    def _ask_source(self, query: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        git = self.source_provider()
        kind = query["kind"]
        prefix = query.get("path_prefix")
        if kind == "source.files":
            result = git.files(
                text=query["text"], path_prefix=prefix, offset=query["offset"], limit=query["limit"]
            )
        elif kind == "source.search":
            result = git.search(
                text=query["text"],
                case_sensitive=query["case_sensitive"],
                path_prefix=prefix,
                offset=query["offset"],
                limit=query["limit"],
                whole_word=query.get("whole_word", False),
            )
        elif kind in ("source.symbol", "source.registration"):
            method = git.symbol if kind == "source.symbol" else git.registration
            result = method(
                symbol=query["symbol"],
                path_prefix=prefix,
                offset=query["offset"],
                limit=query["limit"],
            )
        elif kind == "source.schema":
            result = git.schema(
                text=query["text"],
                case_sensitive=query["case_sensitive"],
                offset=query["offset"],
                limit=query["limit"],
            )
        elif kind == "source.revision":
            result = git.revision(revision=query["revision"])
        elif kind == "source.changes":
            result = git.changes(
                since=query["since"],
                terms=query["terms"],
                path_prefix=prefix,
                offset=query["offset"],
                limit=query["limit"],
            )
        else:
            result = git.read(
                path=query["path"], start_line=query["start_line"], end_line=query["end_line"]
            )
        return result, dict(git.origin)

    def _ask_database(self, query: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        db = self.database_provider()
        kind = query["kind"]
        database = query.get("database")
        if kind == "database.tables":
            result = db.tables(
                name_contains=query.get("name_contains"),
                database=database,
                offset=query["offset"],
                limit=query["limit"],
            )
            if database is None:
                # Several databases may be listed: the origin names none of them.
                return result, {"kind": "database", "database": None, "snapshot_id": db.snapshot_id}
            return result, db.origin(database)
        if kind == "database.schema":
            result = db.schema(database=database, table=query["table"])
        elif kind == "database.rows":
            result = db.rows(
                database=database,
                table=query["table"],
                columns=query["columns"],
                filters=query["filters"],
                offset=query["offset"],
                limit=query["limit"],
            )
        else:
            result = db.count(database=database, table=query["table"], filters=query["filters"])
        # The provider resolved an omitted database from the allowlist.
        resolved = result.get("database") if isinstance(result, Mapping) else None
        if not isinstance(resolved, str):
            raise ResearchError(
                "provider_result_invalid",
                "the provider's answer does not name its database",
                {"path": "/result/database"},
            )
        return result, db.origin(resolved)

    def source_provider(self) -> SourceProvider:
        """The git source, built from the configuration on first use."""
        with self._lock:
            if self._git is None:
                source = self.config.source
                if source is None:
                    raise _not_configured("source")
                self._git = configured_git_source(
                    source.repository,
                    source.commit,
                    url=source.url,
                    limits=self.config.limits,
                    disk_cache=source.cache_dir,
                )
            return self._git

    def client_provider(self) -> ClientData:
        """The client-data source, built on first use (layouts from the git source)."""
        client = self.config.client_data
        if client is None:
            raise _not_configured("client_data")
        source = self.source_provider()
        with self._lock:
            if self._client is None:
                from viano_bug_analysis.project_research.client_data import (
                    ClientData,
                    bundled_profile_path,
                )
                from viano_bug_analysis.project_research.client_layouts import (
                    load_client_profile,
                    source_reader,
                )

                assert self.config.source is not None  # checked when the config was loaded
                database = self.database_provider if self.config.database is not None else None
                self._client = ClientData(
                    client,
                    load_client_profile(client.layouts or bundled_profile_path()),
                    source_reader(source),
                    commit=self.config.source.commit,
                    url=self.config.source.url,
                    database=database,
                )
            return self._client

    def database_provider(self) -> DatabaseProvider:
        """The database source, built on first use; only now is the password read."""
        with self._lock:
            if self._database is None:
                database = self.config.database
                if database is None:
                    raise _not_configured("database")
                from viano_bug_analysis.project_research.mariadb_source import MariaDbSource

                limits = self.config.limits
                self._database = MariaDbSource(
                    host=database.host,
                    port=database.port,
                    user=database.user,
                    password=database.read_password(),
                    allow=database.allow,
                    snapshot_id=database.snapshot_id,
                    max_rows=limits.rows,
                    max_page=limits.page,
                    statement_timeout_s=limits.statement_seconds,
                    connect_timeout_s=limits.connect_seconds,
                )
            return self._database


def _not_configured(provider: str) -> ResearchError:
    if provider == "reference_map":
        return ResearchError(
            "provider_not_configured",
            "this kind needs a profile's reference map; this research service was started "
            "without one (vba investigate and vba mcp add it from --profile)",
            {"provider": provider, "path": "/kind"},
        )
    section = f"[{provider}]" if provider in ("source", "client_data") else "[database]"
    return ResearchError(
        "provider_not_configured",
        f"this kind needs the {provider} provider; the configuration has no {section}",
        {"provider": provider},
    )


def frozen_result(answer: Mapping[str, Any]) -> dict[str, Any]:
    """The answer as plain JSON, checked against project-result-v2.

    The round trip freezes it: later changes to provider objects (caches)
    cannot change what is validated, returned and captured.
    """
    try:
        document: dict[str, Any] = _plain(canonical_bytes(answer))
    except JsonEncodeError:
        raise ResearchError(
            "provider_result_invalid", "the provider answered with a non-JSON value"
        ) from None
    if (found := check(RESULT_SCHEMA, document)) is not None:
        raise ResearchError(
            "provider_result_invalid",
            "the provider's answer violates project-result-v2",
            {"path": found.pointer, "rule": found.rule},
        )
    return document
