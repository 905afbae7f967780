"""The client-data provider: records of the server's DBC/DB2 files, by ID, name or field.

Read-only, beside git and MariaDB (``[client_data] dbc_dir`` in the research
config; docs/client-data.md). Each file is read by the Rust core
(``_native.ClientTable``: every header count and string offset checked, a
hostile file a typed error) with the engine's own format string, derived at
the pinned commit by ``client_layouts``. A file is read once per process and
kept while its size and modification time stay the same; its ID index is
built on the first lookup by ID.

The world DB's override tables (``spell_dbc``, ``spelleffect_dbc``, ...) are
merged the way the lineage's ``DBCDatabaseLoader`` merges them: a row adds a
record for an ID the file does not have; an ID the file already has stops
the engine at start (an assertion), so such a row is reported as a conflict
beside the file's record. Columns the override format marks ``a`` (absent)
are 0 or the empty string, as the loader fills them. Every record names its
origin: the file, its SHA-256 and the record index, or the table and key of
the database row.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from viano_bug_analysis._native import ClientTable
from viano_bug_analysis.errors import ResearchError, ResearchUnavailable
from viano_bug_analysis.project_research.client_layouts import (
    ClientProfile,
    Layout,
    ReadText,
    TableSpec,
    check_layouts,
    derive_layout,
    enum_values,
)
from viano_bug_analysis.project_research.config import ClientDataConfig

KIND = "client.records"
PROVIDER = "client_data"
EFFECTS_TABLE = "spell_effect"
EFFECTS_PER_SPELL = 32
# How many matches a name or field lookup examines beyond the page (to say truncated).
_OVERRIDE_STATUS = {"table_not_allowed": "not_allowlisted", "table_not_found": "table_missing"}


def bundled_profile_path() -> Path:
    """The vcore client data profile shipped with the package."""
    return Path(__file__).resolve().parents[1] / "profiles" / "vcore" / "client_data.toml"


class ClientData:
    """Answers ``client.records`` over one dbc folder.

    ``read_text(path)`` reads a file of the engine source at the pinned
    commit; ``database()`` gives the database provider for the override
    tables (``None``: none configured, overrides reported as not read).
    """

    def __init__(
        self,
        config: ClientDataConfig,
        profile: ClientProfile,
        read_text: ReadText,
        *,
        commit: str,
        url: str,
        database: Callable[[], Any] | None = None,
    ) -> None:
        self.config = config
        self.profile = profile
        self._read_text = read_text
        self._commit = commit
        self._url = url
        self._database = database
        self._layouts: dict[str, Layout] = {}
        self._enums: dict[str, dict[int, str]] = {}
        self._tables: dict[Path, tuple[tuple[int, int], ClientTable]] = {}
        self._lock = threading.Lock()

    # --- layouts and files ---------------------------------------------------------------

    def spec(self, table: str) -> TableSpec:
        spec = self.profile.tables.get(table)
        if spec is None:
            raise ResearchError(
                "entity_type_unknown",
                "the client data profile has no such table",
                {"argument": "table", "allowed": sorted(self.profile.tables)},
            )
        return spec

    def layout(self, table: str) -> Layout:
        with self._lock:
            if table not in self._layouts:
                self._layouts[table] = derive_layout(self.spec(table), self._read_text)
            return self._layouts[table]

    def enum(self, name: str) -> Mapping[int, str]:
        with self._lock:
            if name not in self._enums:
                spec = self.profile.enums[name]
                self._enums[name] = enum_values(self._read_text(spec.path), spec.symbol) or {}
            return self._enums[name]

    def file(self, layout: Layout, read: dict[str, str]) -> ClientTable:
        """The opened file of ``layout`` (cached while unchanged); ``read`` gets its SHA-256."""
        table = self._open(layout)
        read[layout.spec.file] = table.sha256
        return table

    def _open(self, layout: Layout) -> ClientTable:
        path = self.config.dbc_dir / layout.spec.file
        try:
            stat = path.stat()
        except OSError:
            raise ResearchUnavailable(
                PROVIDER,
                "client_file_missing",
                f"the dbc folder has no readable {layout.spec.file}",
                {"file": layout.spec.file},
            ) from None
        key = (stat.st_size, stat.st_mtime_ns)
        with self._lock:
            cached = self._tables.get(path)
            if cached is not None and cached[0] == key:
                return cached[1]
        table = ClientTable.open(path, layout.format, self.config.max_file_bytes)
        with self._lock:
            self._tables[path] = (key, table)
        return table

    def origin(self, read: Mapping[str, str]) -> dict[str, Any]:
        """The answer's origin: the engine commit of the layouts and every file ``read``."""
        files = [{"file": f, "sha256": s} for f, s in sorted(read.items())]
        return {"kind": PROVIDER, "url": self._url, "commit": self._commit, "files": files}

    def check(self) -> dict[str, Any]:
        """``vba profile check``'s client data section (``client_layouts.check_layouts``)."""
        return check_layouts(self.profile, self._read_text)

    # --- the kind ------------------------------------------------------------------------

    def records(self, query: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The answer to one validated ``client.records`` query, and its origin."""
        read: dict[str, str] = {}  # file -> SHA-256 of every file this answer rests on
        layout = self.layout(query["table"])
        offset, limit = query["offset"], query["limit"]
        lookup = _Lookup(self, layout, read)
        if "ids" in query:
            found, missing = lookup.by_ids(query["ids"])
            total = len(found)
        elif "name" in query:
            found, missing = lookup.by_name(query["name"], offset + limit + 1), []
            total = len(found)
        else:
            found = lookup.by_field(query["field"], query["values"], offset + limit + 1)
            missing, total = [], len(found)
        page = found[offset : offset + limit]
        if layout.spec.table == "spell" and EFFECTS_TABLE in self.profile.tables:
            self._add_effects(page, read)
        truncated = total > offset + len(page)
        result = {
            "table": layout.spec.table,
            "file": layout.spec.file,
            "layout": {
                "format": layout.format,
                "format_symbol": layout.spec.format_symbol,
                "struct": layout.spec.struct_symbol,
                "columns": dict(layout.columns),
            },
            "overrides": lookup.override_status,
            "records": page,
            "missing_ids": missing,
            "offset": offset,
            "limit": limit,
            "returned": len(page),
            "truncated": truncated,
            "next_offset": offset + len(page) if truncated else None,
        }
        return result, self.origin(read)

    def _add_effects(self, spells: list[dict[str, Any]], read: dict[str, str]) -> None:
        ids = [record["id"] for record in spells]
        if not ids:
            return
        lookup = _Lookup(self, self.layout(EFFECTS_TABLE), read)
        effects = lookup.by_field("spell_id", ids, EFFECTS_PER_SPELL * len(ids))
        for spell in spells:
            spell["effects"] = [e for e in effects if e["fields"].get("spell_id") == spell["id"]][
                :EFFECTS_PER_SPELL
            ]


class _Lookup:
    """One table's records for one query: the file's, then the override table's."""

    def __init__(self, source: ClientData, layout: Layout, read: dict[str, str]) -> None:
        self.source = source
        self.layout = layout
        self.spec = layout.spec
        self.table = source.file(layout, read)
        self.override_status: dict[str, Any] = {"table": self.spec.override_table, "status": "none"}
        self._override_columns: dict[str, str] | None = None

    # --- file records ---------------------------------------------------------------------

    def _record(self, index: int) -> dict[str, Any]:
        names = list(self.layout.columns)
        values = self.table.values(index, [self.layout.columns[n] for n in names])
        fields = dict(zip(names, values, strict=True))
        return self._shape(
            fields,
            {
                "source": "file",
                "file": self.spec.file,
                "sha256": self.table.sha256,
                "record": index,
            },
        )

    def _shape(self, fields: dict[str, Any], origin: dict[str, Any]) -> dict[str, Any]:
        for name, value in fields.items():
            if isinstance(value, float) and not math.isfinite(value):
                fields[name] = repr(value)  # "nan", "inf", "-inf": JSON has no such number
        for name in self.layout.signed:
            value = fields.get(name)
            if isinstance(value, int) and value >= 1 << 31:
                fields[name] = value - (1 << 32)
        for (table, name), enum in self.source.profile.field_enums.items():
            if table == self.spec.table and name in fields:
                fields[f"{name}_name"] = self.source.enum(enum).get(fields[name])
        id_value = fields.get("id")
        return {"id": id_value, "fields": fields, "origin": origin}

    def by_ids(self, ids: Sequence[int]) -> tuple[list[dict[str, Any]], list[int]]:
        wanted = list(dict.fromkeys(ids))
        indices = self.table.find_ids(wanted)
        found = {i: self._record(x) for i, x in zip(wanted, indices, strict=True) if x is not None}
        absent = [i for i in wanted if i not in found]
        for row in self._override_rows("id", absent + list(found)):
            self._merge(found, row)
        records = [found[i] for i in wanted if i in found]
        return records, [i for i in wanted if i not in found]

    def by_name(self, name: str, cap: int) -> list[dict[str, Any]]:
        if self.spec.name_field is None:
            raise ResearchError(
                "unknown_field",
                "this table has no name field",
                {"argument": "name", "table": self.spec.table},
            )
        column = self.layout.columns[self.spec.name_field]
        return [self._record(i) for i in self.table.find_string(column, name, cap)]

    def by_field(self, field: str, values: Sequence[int], cap: int) -> list[dict[str, Any]]:
        column = self.layout.columns.get(field)
        if column is None or self.layout.format[column] not in "nidb":
            raise ResearchError(
                "unknown_field",
                "not an integer field of this table",
                {"argument": "field", "allowed": self._integer_fields()},
            )
        unsigned = [v & 0xFFFFFFFF for v in values]
        records = [self._record(i) for i in self.table.find_uint(column, unsigned, cap)]
        by_id = {r["id"]: r for r in records}
        for row in self._override_rows(field, list(values)):
            self._merge(by_id, row)
        return list(by_id.values())[:cap]

    def _integer_fields(self) -> list[str]:
        return sorted(n for n, c in self.layout.columns.items() if self.layout.format[c] in "nidb")

    # --- the override table ---------------------------------------------------------------

    def _merge(self, found: dict[Any, dict[str, Any]], row: dict[str, Any]) -> None:
        existing = found.get(row["id"])
        if existing is None:
            found[row["id"]] = row
        elif existing["origin"]["source"] == "file":
            # DBCDatabaseLoader::Load asserts on an ID the file has: the server would not start.
            existing["override_conflict"] = row["origin"]

    def _override_rows(self, field: str, values: list[int]) -> list[dict[str, Any]]:
        if not self.spec.override_table or not values:
            return []
        if self.source._database is None:
            self.override_status["status"] = "not_configured"
            return []
        columns = self._sql_columns()
        if columns is None or field not in columns:
            return []
        db = self.source._database()
        try:
            answer = db.rows(
                database=None,
                table=self.spec.override_table,
                columns=sorted(set(columns.values())),
                filters=[{"column": columns[field], "operator": "in", "value": values}],
                offset=0,
                limit=min(len(values) * EFFECTS_PER_SPELL, 100),
            )
        except ResearchError as err:
            self.override_status["status"] = _OVERRIDE_STATUS.get(err.code, "unavailable")
            return []
        # More matching rows than one page: the records list only the first ones.
        self.override_status["status"] = "read_partial" if answer.get("truncated") else "read"
        rows = []
        for row in answer["rows"]:
            fields = {name: row.get(sql) for name, sql in columns.items()}
            key = {columns["id"]: fields["id"]} if "id" in columns else {}
            origin = {
                "source": "database",
                "database": answer["database"],
                "table": answer["table"],
                "key": key,
            }
            for name, column in self.layout.columns.items():
                if name not in fields:  # absent from the override format: the loader's 0 or ""
                    fields[name] = "" if self.layout.format[column] == "s" else 0
            rows.append(self._shape(fields, origin))
        return rows

    def _sql_columns(self) -> dict[str, str] | None:
        """field -> the override table's column, by the override format's positions."""
        if self._override_columns is not None:
            return self._override_columns
        fmt = self.layout.override_format
        if fmt is None or self.source._database is None:
            return None
        db = self.source._database()
        try:
            schema = db.schema(database=None, table=self.spec.override_table)
        except ResearchError as err:
            self.override_status["status"] = _OVERRIDE_STATUS.get(err.code, "unavailable")
            return None
        names = [c["name"] for c in sorted(schema["columns"], key=lambda c: c["ordinal"])]
        positions = sql_positions(fmt, self.layout.format)
        self._override_columns = {
            field: names[positions[column]]
            for field, column in self.layout.columns.items()
            if column in positions and positions[column] < len(names)
        }
        return self._override_columns


def sql_positions(override_format: str, file_format: str) -> dict[int, int]:
    """file column -> SQL column position, as ``DBCDatabaseLoader::Load`` walks them.

    A ``p`` column takes the next SQL column; the counter moves on only for
    the letters the loader converts (``f n i b d``), so a ``p`` over another
    letter reuses the position. ``a`` columns take none.
    """
    positions: dict[int, int] = {}
    sql = 0
    for column, mark in enumerate(override_format):
        if mark != "p" or column >= len(file_format):
            continue
        letter = file_format[column]
        if letter in "fnibd":
            if letter != "d":
                positions[column] = sql
            sql += 1
    return positions
