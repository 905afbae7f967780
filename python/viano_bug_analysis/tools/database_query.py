"""Exact, typed lookups in packaged database snapshots (see docs/row-snapshots.md).

``DatabaseQueryTool.load`` turns the verified bytes of one package member
into a ``LoadedTable``: a neutral ``viano-database-snapshot`` document, a raw
array of row objects, or (role ``schema_descriptor``) a project's own schema
descriptor that a trusted adapter maps to a ``schema_only`` document. The
tool itself knows no project: adapters such as
``viano_bug_analysis.profiles.vcore.db_tools.normalize_schema_descriptor`` are
passed in.

Queries never coerce (``true``, ``1``, ``"1"`` and ``1.0`` are four values),
every referenced column must be known before anything is searched, and each
returned row carries the JSON Pointer of the stored row, whatever the
projection. A ``schema_only`` table has no rows: its lookups answer
``total: 0`` together with ``coverage: "schema_only"`` so that nobody reads
the empty answer as proof that a row is missing.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from viano_bug_analysis.errors import RowSnapshotError, VbaError
from viano_bug_analysis.schema_errors import allowed_names
from viano_bug_analysis.snapshot.rows import RowPage, RowTable
from viano_bug_analysis.tools.database_snapshot import (
    FORMAT,
    SnapshotShape,
    parse_snapshot,
    validate_snapshot,
)
from viano_bug_analysis.tools.errors import ToolError, wrap_core_error

SchemaAdapter = Callable[[dict[str, Any]], dict[str, Any]]
"""Maps a project's native schema descriptor to a neutral ``schema_only`` document."""

ROLES = ("database_snapshot", "schema_descriptor")

_SCALAR_TYPES = (type(None), bool, int, float, str)
_SHA256 = re.compile(r"[0-9a-f]{64}")

_NOTES = {
    "partial": (
        "partial snapshot: only some rows were packaged, so a row that is not "
        "found here may still exist in the database"
    ),
    "unknown": "coverage unknown: a row that is not found here may still exist in the database",
    "schema_only": (
        "schema only: no rows were packaged, so the absence of a row is not "
        "evidence that it is missing from the database"
    ),
    "complete_snapshot": (
        "complete snapshot: every row at packaging time, a point-in-time claim "
        "of the packager and not a live query"
    ),
}


@dataclass(frozen=True, slots=True)
class LoadedTable:
    """One validated snapshot member, ready for queries; immutable and shareable.

    ``kind`` is ``document`` or ``array`` for members with rows and
    ``schema_only`` for a descriptor without rows. ``declared_columns`` is
    ``None`` for a raw array. ``pointer_prefix`` is what every row pointer
    starts with: ``/rows`` in a document, the empty string in a raw array.
    """

    sha256: str
    table: str | None
    coverage: str
    kind: str
    declared_columns: tuple[dict[str, Any], ...] | None
    row_count: int
    pointer_prefix: str
    _rows: RowTable | None = field(repr=False, compare=False)
    _known: tuple[str, ...] = field(repr=False, compare=False)

    def known_columns(self) -> list[str]:
        """Column names a query may use, in declared (or first-seen) order."""
        return list(self._known)

    def check_columns(self, names: Sequence[str], *, argument: str) -> None:
        """Raise ``unknown_column`` for the first name this table does not know."""
        if isinstance(names, str) or not isinstance(names, Sequence):
            _invalid_argument(argument, "must be a list of column names")
        known = set(self._known)
        for index, name in enumerate(names):
            if not isinstance(name, str):
                _invalid_argument(argument, "column names must be strings", index=index)
            if name not in known:
                raise ToolError(
                    "unknown_column",
                    f"{argument}[{index}] is not a known column of this snapshot",
                    {
                        "argument": argument,
                        "index": index,
                        "column": name,
                        **allowed_names(self._known),
                    },
                )

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary: identity, coverage, columns and what absence means."""
        if self.declared_columns is not None:
            columns = [dict(column) for column in self.declared_columns]
        else:
            columns = [{"name": name, "type": None} for name in self._known]
        return {
            "table": self.table,
            "coverage": self.coverage,
            "kind": self.kind,
            "columns": columns,
            "row_count": self.row_count,
            "note": _NOTES[self.coverage],
        }

    def lookup(
        self,
        filters: Mapping[str, Any],
        columns: Sequence[str] | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> dict[str, Any]:
        """Rows whose every filter column holds exactly the given JSON scalar."""
        if not isinstance(filters, Mapping) or not filters:
            _invalid_argument("filters", "must be a non-empty map of column to value")
        items = list(filters.items())
        self.check_columns([name for name, _ in items], argument="filters")
        if columns is not None:
            self.check_columns(columns, argument="columns")
        for index, (name, value) in enumerate(items):
            _require_scalar(value, argument="filters", index=index, column=name)
        _require_page(offset, limit)
        if self._rows is None:
            return self._result(None, offset, limit, references=False)
        try:
            page = self._rows.lookup(
                dict(items), columns=_projection(columns), offset=offset, limit=limit
            )
        except VbaError as err:
            raise wrap_core_error(err, "invalid_argument", "the lookup was refused") from err
        return self._result(page, offset, limit, references=False)

    def find_references(
        self,
        value: Any,
        search_columns: Sequence[str],
        columns: Sequence[str] | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> dict[str, Any]:
        """Rows where any of ``search_columns`` equals ``value``; asserts no foreign key."""
        self.check_columns(search_columns, argument="search_columns")
        if not search_columns:
            _invalid_argument("search_columns", "must name at least one column")
        if columns is not None:
            self.check_columns(columns, argument="columns")
        _require_scalar(value, argument="value")
        _require_page(offset, limit)
        if self._rows is None:
            return self._result(None, offset, limit, references=True)
        try:
            page = self._rows.find_references(
                value,
                list(search_columns),
                columns=_projection(columns),
                offset=offset,
                limit=limit,
            )
        except VbaError as err:
            raise wrap_core_error(err, "invalid_argument", "the search was refused") from err
        return self._result(page, offset, limit, references=True)

    def _result(
        self, page: RowPage | None, offset: int, limit: int, *, references: bool
    ) -> dict[str, Any]:
        rows: list[dict[str, Any]] = []
        if page is not None:
            for hit in page.hits:
                row: dict[str, Any] = {"pointer": hit.pointer, "row": hit.row}
                if references:
                    row["matched_columns"] = list(hit.matched_columns)
                rows.append(row)
        return {
            "coverage": self.coverage,
            "total": page.total if page is not None else 0,
            "offset": offset,
            "limit": limit,
            "truncated": page.truncated if page is not None else False,
            "next_offset": page.next_offset if page is not None else None,
            "rows": rows,
        }


class DatabaseQueryTool:
    """Loads and caches snapshot members; one instance can serve many batches.

    ``adapter`` maps a project's native schema descriptor to a neutral
    ``schema_only`` document (role ``schema_descriptor``); without one, only
    descriptors already in the neutral format are accepted. ``max_rows``
    bounds the rows of one member when ``load`` is called without its own
    limit (the router always passes its ``ToolLimits.database_rows``);
    ``cache_size`` is the number of parsed members kept, keyed by their
    verified SHA-256 and role (0 disables it).
    """

    def __init__(
        self,
        adapter: SchemaAdapter | None = None,
        *,
        max_rows: int = 100_000,
        cache_size: int = 32,
    ) -> None:
        if adapter is not None and not callable(adapter):
            _invalid_argument("adapter", "must be callable")
        _require_count(max_rows, "max_rows")
        _require_count(cache_size, "cache_size")
        self._adapter = adapter
        self._max_rows = max_rows
        self._cache_size = cache_size
        self._cache: OrderedDict[tuple[str, str], LoadedTable] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def adapter(self) -> SchemaAdapter | None:
        return self._adapter

    @property
    def max_rows(self) -> int:
        return self._max_rows

    def cached(self, sha256: str, *, role: str) -> LoadedTable | None:
        """The table already loaded for this hash and role, or ``None``.

        Lets a caller skip reading a member's bytes again; it should still
        verify that the member matches ``sha256`` before using the table.
        """
        if not isinstance(sha256, str):
            return None
        key = (sha256.lower(), role)
        with self._lock:
            table = self._cache.get(key)
            if table is not None:
                self._cache.move_to_end(key)
            return table

    def load(
        self, data: bytes, *, role: str, sha256: str, max_rows: int | None = None
    ) -> LoadedTable:
        """Validate one member whose bytes the caller has verified against ``sha256``.

        The cache trusts that promise: the same hash and role always map to
        the same table, so a cached entry can never be stale. ``max_rows``
        replaces the tool's own row limit for this call: the router passes
        its ``ToolLimits.database_rows``, so one limits object governs every
        layer whichever tool it was given.
        """
        limit = self._max_rows if max_rows is None else max_rows
        _require_count(limit, "max_rows")
        if role not in ROLES:
            raise ToolError("unknown_role", "the member role cannot be queried as a database")
        if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256.lower()):
            _invalid_argument("sha256", "must be 64 hexadecimal digits")
        if not isinstance(data, bytes):
            _invalid_argument("data", "must be bytes")
        cached = self.cached(sha256, role=role)
        if cached is not None:
            check_row_limit(cached, limit)
            return cached
        key = (sha256.lower(), role)
        if role == "database_snapshot":
            table = self._load_snapshot(data, key[0], limit)
        else:
            table = self._load_descriptor(data, key[0])
        if self._cache_size:
            with self._lock:
                self._cache[key] = table
                self._cache.move_to_end(key)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return table

    def _load_snapshot(self, data: bytes, sha256: str, max_rows: int) -> LoadedTable:
        rows = parse_snapshot(data)
        # Checked before the header is validated: a huge member costs no more work.
        _check_rows(rows.row_count, max_rows)
        return _loaded(sha256, rows, validate_snapshot(rows))

    def _load_descriptor(self, data: bytes, sha256: str) -> LoadedTable:
        descriptor = _parse_descriptor(data)
        if descriptor.get("format") == FORMAT:
            # Already neutral: no adapter needed, but it must describe a schema only.
            if descriptor.get("coverage") != "schema_only":
                raise ToolError(
                    "descriptor_not_schema_only",
                    "a schema descriptor in the neutral format must have coverage schema_only",
                    {"pointer": "/coverage"},
                )
            document = data
        else:
            document = self._adapt(descriptor)
        rows = parse_snapshot(document)
        return _loaded(sha256, rows, validate_snapshot(rows))

    def _adapt(self, descriptor: dict[str, Any]) -> bytes:
        if self._adapter is None:
            raise ToolError(
                "adapter_missing",
                "no schema descriptor adapter is configured for this project",
            )
        try:
            neutral = self._adapter(descriptor)
        except ToolError:
            raise
        except Exception as err:
            raise ToolError(
                "adapter_failed",
                "the schema descriptor adapter failed",
                {"exception": type(err).__name__},
            ) from err
        if not isinstance(neutral, dict):
            raise ToolError(
                "adapter_invalid_output",
                "the adapter did not return a JSON object",
                {"what": "not an object"},
            )
        if neutral.get("coverage") != "schema_only":
            raise ToolError(
                "adapter_invalid_output",
                "the adapter must return a document with coverage schema_only",
                {"what": "coverage is not schema_only", "pointer": "/coverage"},
            )
        try:
            # Round-trip through the same validator as any packaged document.
            return json.dumps(neutral, allow_nan=False, ensure_ascii=False).encode()
        except (TypeError, ValueError) as err:
            raise ToolError(
                "adapter_invalid_output",
                "the adapter returned a value that is not JSON",
                {"what": "not JSON"},
            ) from err


def check_row_limit(table: LoadedTable, max_rows: int) -> None:
    """Raise ``snapshot_too_many_rows`` when ``table`` has more rows than ``max_rows``.

    A cached table was admitted under the limit of whoever loaded it first;
    every use checks it again under its own limit.
    """
    _check_rows(table.row_count, max_rows)


def _check_rows(rows: int, max_rows: int) -> None:
    if rows > max_rows:
        raise ToolError(
            "snapshot_too_many_rows",
            "the snapshot has more rows than the configured limit",
            {"limit": max_rows, "rows": rows},
        )


def _loaded(sha256: str, rows: RowTable, shape: SnapshotShape) -> LoadedTable:
    schema_only = shape.coverage == "schema_only"
    return LoadedTable(
        sha256=sha256,
        table=shape.table,
        coverage=shape.coverage,
        kind="schema_only" if schema_only else rows.kind,
        declared_columns=shape.declared_columns,
        row_count=rows.row_count,
        pointer_prefix="/rows" if rows.kind == "document" else "",
        _rows=None if schema_only else rows,
        _known=shape.known_columns,
    )


def _parse_descriptor(data: bytes) -> dict[str, Any]:
    # The core parser rejects invalid JSON and duplicate keys at any depth
    # with the same codes as a snapshot; the stdlib then builds the whole
    # object (the core keeps a descriptor's "rows" apart from its header).
    try:
        checked = RowTable.parse(data)
    except RowSnapshotError as err:
        raise wrap_core_error(
            err, "snapshot_invalid", "the schema descriptor is not valid JSON"
        ) from err
    if checked.kind != "document":
        raise ToolError(
            "descriptor_invalid", "a schema descriptor must be a JSON object", {"pointer": ""}
        )
    descriptor: dict[str, Any] = json.loads(data)
    return descriptor


def _projection(columns: Sequence[str] | None) -> list[str] | None:
    return None if columns is None else list(columns)


def _require_scalar(
    value: object, *, argument: str, index: int | None = None, column: str | None = None
) -> None:
    finite = not isinstance(value, float) or math.isfinite(value)
    if type(value) in _SCALAR_TYPES and finite:
        return
    details: dict[str, Any] = {"argument": argument}
    if index is not None:
        details["index"] = index
    if column is not None:
        details["column"] = column
    raise ToolError(
        "invalid_filter_value",
        f"{argument} must hold JSON scalars (null, boolean, number or string)",
        details,
    )


def _require_page(offset: object, limit: object) -> None:
    _require_count(offset, "offset")
    _require_count(limit, "limit")


def _require_count(value: object, argument: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        _invalid_argument(argument, "must be a non-negative integer")


def _invalid_argument(argument: str, what: str, *, index: int | None = None) -> NoReturn:
    details: dict[str, Any] = {"argument": argument, "what": what}
    if index is not None:
        details["index"] = index
    raise ToolError("invalid_argument", f"invalid argument: {argument} {what}", details)
