"""Small stand-ins for GitSource and MariaDbSource with the same methods.

They record every call and answer with fixed, realistic result shapes, so the
service, capture and CLI tests run without git or a database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from viano_bug_analysis.project_research.config import ResearchConfig, load_config
from viano_bug_analysis.project_research.errors import ResearchError, ResearchUnavailable
from viano_bug_analysis.project_research.git_coverage import COVERAGE_GAPS

COMMIT = "0123456789abcdef0123456789abcdef01234567"
URL = "https://git.example.invalid/vcore.git"
SNAPSHOT = "cata_world@2026-11-01"
PASSWORD_MARKER = "ZZ_DB_PASSWORD_MARKER_ZZ"
BLOB = "a" * 40
SHA = "b" * 64

CONFIG_TOML = f"""
[source]
repository = "vcore.git"
url = "{URL}"
commit = "{COMMIT}"

[database]
host = "127.0.0.1"
port = 33079
user = "viano_reader"
password_env = "VBA_FAKE_DB_PASSWORD"
snapshot_id = "{SNAPSHOT}"

[database.allow]
cata_world = ["creature_template", "quest_template"]
"""


def write_config(directory: Path, text: str = CONFIG_TOML) -> Path:
    path = directory / "project.toml"
    path.write_text(text, encoding="utf-8")
    return path


def make_config(directory: Path, text: str = CONFIG_TOML) -> ResearchConfig:
    return load_config(write_config(directory, text))


def _page(items: Sequence[Any], offset: int, limit: int) -> dict[str, Any]:
    page = list(items[offset : offset + limit])
    truncated = offset + len(page) < len(items)
    return {
        "offset": offset,
        "limit": limit,
        "returned": len(page),
        "total": len(items),
        "truncated": truncated,
        "next_offset": offset + len(page) if truncated else None,
    }


def _skipped(paths: list[tuple[str, str]]) -> dict[str, Any]:
    by_reason: dict[str, int] = {}
    for _, reason in paths:
        by_reason[reason] = by_reason.get(reason, 0) + 1
    return {
        "total": len(paths),
        "by_reason": dict(sorted(by_reason.items())),
        "paths": [{"path": p, "reason": r} for p, r in paths],
        "paths_truncated": False,
    }


class FakeGit:
    """GitSource's methods and result shapes over a tiny in-memory tree.

    ``skipped`` lists (path, reason) pairs the fake reports as not searched;
    ``cut`` makes every returned line ``text_truncated``.
    """

    def __init__(
        self,
        *,
        hits: int = 3,
        skipped: Sequence[tuple[str, str]] = (),
        cut: bool = False,
        fail: Exception | None = None,
    ) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.hits = hits
        self.skipped = list(skipped)
        self.cut = cut
        self.fail = fail
        self.closed = False

    @property
    def origin(self) -> dict[str, Any]:
        return {"kind": "git", "url": URL, "commit": COMMIT}

    def _record(self, name: str, **args: Any) -> None:
        self.calls.append((name, args))
        if self.fail is not None:
            raise self.fail

    def _hits(self, name: str, offset: int, limit: int, **args: Any) -> dict[str, Any]:
        self._record(name, offset=offset, limit=limit, **args)
        matches = [
            {
                "path": f"src/f{i}.cpp",
                "blob": BLOB,
                "sha256": SHA,
                "line": i + 1,
                "text": "x",
                "text_truncated": self.cut,
            }
            for i in range(self.hits)
        ]
        return {
            "origin": self.origin,
            **_page(matches, offset, limit),
            "files_searched": 10,
            "files_unsearched": sum(1 for _, reason in self.skipped if reason in COVERAGE_GAPS),
            "skipped": _skipped(self.skipped),
            "matches": matches[offset : offset + limit],
        }

    def files(
        self, *, text: str, path_prefix: str | None, offset: int, limit: int
    ) -> dict[str, Any]:
        self._record("files", text=text, path_prefix=path_prefix, offset=offset, limit=limit)
        files = [{"path": f"src/f{i}.cpp", "blob": BLOB, "size": 10} for i in range(self.hits)]
        return {
            "origin": self.origin,
            **_page(files, offset, limit),
            "skipped": _skipped(self.skipped),
            "files": files[offset : offset + limit],
        }

    def search(
        self,
        *,
        text: str,
        case_sensitive: bool,
        path_prefix: str | None,
        offset: int,
        limit: int,
        whole_word: bool = False,
    ) -> dict[str, Any]:
        return self._hits(
            "search",
            offset,
            limit,
            text=text,
            case_sensitive=case_sensitive,
            path_prefix=path_prefix,
            **({"whole_word": True} if whole_word else {}),
        )

    def symbol(
        self, *, symbol: str, path_prefix: str | None, offset: int, limit: int
    ) -> dict[str, Any]:
        return self._hits("symbol", offset, limit, symbol=symbol, path_prefix=path_prefix)

    def registration(
        self, *, symbol: str, path_prefix: str | None, offset: int, limit: int
    ) -> dict[str, Any]:
        result = self._hits("registration", offset, limit, symbol=symbol, path_prefix=path_prefix)
        return {**result, "purpose": "registration_check_start", "note": "lexical"}

    def schema(self, *, text: str, case_sensitive: bool, offset: int, limit: int) -> dict[str, Any]:
        return self._hits("schema", offset, limit, text=text, case_sensitive=case_sensitive)

    def read(self, *, path: str, start_line: int, end_line: int) -> dict[str, Any]:
        self._record("read", path=path, start_line=start_line, end_line=end_line)
        lines = [
            {"line": n, "text": f"line {n}", "text_truncated": self.cut}
            for n in range(start_line, end_line + 1)
        ]
        return {
            "origin": self.origin,
            "path": path,
            "blob": BLOB,
            "sha256": SHA,
            "size": 100,
            "line_count": end_line,
            "start_line": start_line,
            "end_line": end_line,
            "lines": lines,
        }

    def revision(self, *, revision: str) -> dict[str, Any]:
        """Every revision is the pinned commit's ancestor by 3 commits."""
        self._record("revision", revision=revision)
        return {
            "origin": self.origin,
            "revision": revision,
            "pinned_commit": COMMIT,
            "resolution": "resolved",
            "commit": revision.ljust(40, "0"),
            "candidate_count": 1,
            "candidates": [],
            "relation": "ancestor",
            "pinned_only": 3,
            "reported_only": 0,
            "merge_bases": [revision.ljust(40, "0")],
            "commits_visited": 4,
            "walk_limit": 1000,
            "walk_finished": True,
            "walk_stopped_by": None,
        }

    def changes(
        self,
        *,
        since: str,
        terms: Sequence[str],
        path_prefix: str | None,
        offset: int,
        limit: int,
    ) -> dict[str, Any]:
        """One commit after ``since`` adds one line naming the first term."""
        self._record("changes", since=since, terms=list(terms), path_prefix=path_prefix)
        commits = [
            {
                "commit": "c" * 40,
                "summary": "Fix the quest",
                "summary_truncated": False,
                "author_time": "2024-01-01T00:00:00Z",
                "changes_total": 1,
                "changes_truncated": False,
                "changes": [
                    {
                        "path": "sql/updates/1.sql",
                        "side": "added",
                        "line": 1,
                        "text": f"-- {terms[0]}",
                        "text_truncated": False,
                        "blob": BLOB,
                        "term": terms[0],
                    }
                ],
            }
        ]
        page = commits[offset : offset + limit]
        return {
            "origin": self.origin,
            "total": 1,
            "offset": offset,
            "limit": limit,
            "returned": len(page),
            "truncated": False,
            "next_offset": None,
            "since": since,
            "pinned_commit": COMMIT,
            "terms": list(terms),
            "path_prefix": path_prefix,
            "relation": "ancestor",
            "range_commits": 3,
            "commits_examined": 3,
            "commits_visited": 4,
            "blobs_compared": 2,
            "limits": {"walk_commits": 1000, "commits": 100, "blobs": 100},
            "examined_in_full": True,
            "examination_gaps": [],
            "skipped": {"total": 0, "by_reason": {}, "paths": [], "paths_truncated": False},
            "commits": page,
        }

    def close(self) -> None:
        self.closed = True


ROWS = [
    {"entry": 1, "name": "Wolpertinger", "speed": "1.2500"},
    {"entry": 2, "name": "Wild Wolpertinger", "speed": None},
    {"entry": 3, "name": "100% _odd_ 'name'", "speed": "0.0000"},
]


class FakeDatabase:
    """MariaDbSource's methods over one in-memory table of three rows."""

    def __init__(
        self,
        *,
        snapshot_id: str = SNAPSHOT,
        allow: Mapping[str, Sequence[str]] | None = None,
        fail: Exception | None = None,
        **settings: Any,
    ) -> None:
        self.snapshot_id = snapshot_id
        self.allow = dict(allow or {"cata_world": ["creature_template", "quest_template"]})
        self.settings = settings  # what the service passed (password included, for the tests)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fail = fail
        self.closed = False

    def origin(self, database: str) -> dict[str, Any]:
        if database not in self.allow:
            raise ResearchError("table_not_allowed", "not allowed", {"database": database})
        return {"kind": "database", "database": database, "snapshot_id": self.snapshot_id}

    def _resolve(self, database: str | None, table: str) -> str:
        for name, tables in self.allow.items():
            if (database is None or database == name) and table in tables:
                return name
        if database is not None:
            raise ResearchError("table_not_allowed", "not allowed", {"table": table})
        return sorted(self.allow)[0]

    def _call(self, name: str, **args: Any) -> None:
        self.calls.append((name, args))
        if self.fail is not None:
            raise self.fail

    def tables(
        self, *, name_contains: str | None, database: str | None, offset: int, limit: int
    ) -> dict[str, Any]:
        self._call(
            "tables", name_contains=name_contains, database=database, offset=offset, limit=limit
        )
        found = [
            {"database": db, "table": t}
            for db, tables in sorted(self.allow.items())
            if database in (None, db)
            for t in sorted(tables)
            if not name_contains or name_contains.casefold() in t.casefold()
        ]
        return {
            "database": database,
            "name_contains": name_contains,
            "tables": found[offset : offset + limit],
            **_page(found, offset, limit),
            "missing": [],
        }

    def schema(self, *, database: str | None, table: str) -> dict[str, Any]:
        self._call("schema", database=database, table=table)
        return {
            "database": self._resolve(database, table),
            "table": table,
            "columns": [
                {
                    "name": "entry",
                    "type": "int(10) unsigned",
                    "nullable": False,
                    "key": "PRI",
                    "default": None,
                    "extra": "",
                    "ordinal": 1,
                }
            ],
            "primary_key": ["entry"],
            "indexes": [{"name": "PRIMARY", "unique": True, "columns": ["entry"]}],
        }

    @staticmethod
    def _matching(filters: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        rows = ROWS
        for item in filters:
            if item["operator"] == "contains":
                rows = [r for r in rows if item["value"] in str(r.get(item["column"]))]
            elif item["operator"] == "eq":
                rows = [r for r in rows if r.get(item["column"]) == item["value"]]
        return rows

    def rows(
        self,
        *,
        database: str | None,
        table: str,
        columns: Sequence[str],
        filters: Sequence[Mapping[str, Any]],
        offset: int,
        limit: int,
    ) -> dict[str, Any]:
        self._call(
            "rows",
            database=database,
            table=table,
            columns=list(columns),
            filters=[dict(f) for f in filters],
            offset=offset,
            limit=limit,
        )
        matching = [{c: r.get(c) for c in columns} for r in self._matching(filters)]
        page = _page(matching, offset, limit)
        del page["total"]
        return {
            "database": self._resolve(database, table),
            "table": table,
            "columns": list(columns),
            "filters": [dict(f) for f in filters],
            **page,
            "rows": matching[offset : offset + limit],
            "order": ["entry"],
            "complete_filtered_rows": offset == 0 and not page["truncated"],
        }

    def count(
        self, *, database: str | None, table: str, filters: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        self._call("count", database=database, table=table, filters=[dict(f) for f in filters])
        return {
            "database": self._resolve(database, table),
            "table": table,
            "filters": [dict(f) for f in filters],
            "count": len(self._matching(filters)),
        }

    def close(self) -> None:
        self.closed = True


def unavailable(provider: str = "database", reason: str = "connection_refused") -> Exception:
    return ResearchUnavailable(provider, reason)
