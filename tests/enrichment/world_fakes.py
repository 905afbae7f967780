"""An in-memory world database and source tree answering like ProjectResearch.

``database.rows`` filters rows of ``tables`` (eq, ne, in, gt, ge, lt, le,
contains); ``source.search`` finds a literal, ``source.symbol`` a whole word,
in ``files``, below ``path_prefix``, in path order. Every answer is a capture
with the result shape the engine reads.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import orjson

from viano_bug_analysis.enrichment.journal import StepOutcome

CREATURE = {
    "entry": 0,
    "name": "Fixture",
    "subname": "",
    "gossip_menu_id": 0,
    "npcflag": 0,
    "KillCredit1": 0,
    "AIName": "",
    "ScriptName": "",
}
GAMEOBJECT = {"entry": 0, "type": 2, "name": "Fixture Object", "AIName": "", "ScriptName": ""}
QUEST = {
    "ID": 0,
    "LogTitle": "Fixture Quest",
    "StartItem": 0,
    "RewardNextQuest": 0,
    "Flags": 0,
    **{f"RequiredNpcOrGo{n}": 0 for n in range(1, 5)},
    **{f"RequiredNpcOrGoCount{n}": 0 for n in range(1, 5)},
    **{f"RequiredItemId{n}": 0 for n in range(1, 7)},
    **{f"RequiredItemCount{n}": 0 for n in range(1, 7)},
}
SPAWN = {"guid": 0, "id": 0, "map": 0, "zoneId": 0, "areaId": 0, "ScriptName": ""}


def creature(entry: int, **columns: Any) -> dict[str, Any]:
    return {**CREATURE, "entry": entry, **columns}


def gameobject(entry: int, **columns: Any) -> dict[str, Any]:
    return {**GAMEOBJECT, "entry": entry, **columns}


def quest(quest_id: int, **columns: Any) -> dict[str, Any]:
    return {**QUEST, "ID": quest_id, **columns}


def spawn(guid: int, entry: int, **columns: Any) -> dict[str, Any]:
    return {**SPAWN, "guid": guid, "id": entry, **columns}


def _holds(row: Mapping[str, Any], f: Mapping[str, Any]) -> bool:
    value, wanted, operator = row.get(f["column"]), f["value"], f["operator"]
    if operator == "eq":
        return bool(value == wanted)
    if operator == "ne":
        return bool(value != wanted)
    if operator == "in":
        return value in wanted
    if operator == "contains":
        return isinstance(value, str) and str(wanted) in value
    if value is None:
        return False
    return bool(
        {"gt": value > wanted, "ge": value >= wanted, "lt": value < wanted, "le": value <= wanted}[
            operator
        ]
    )


class FakeWorld:
    def __init__(
        self,
        tables: Mapping[str, list[dict[str, Any]]],
        files: Mapping[str, str] | None = None,
    ) -> None:
        self.tables = tables
        self.files = dict(files or {})
        self.asked: list[dict[str, Any]] = []

    def __call__(self, query: Mapping[str, Any]) -> StepOutcome:
        self.asked.append(dict(query))
        digest = hashlib.sha256(orjson.dumps(query, option=orjson.OPT_SORT_KEYS)).hexdigest()
        if query["kind"] == "database.rows":
            rows = [
                {c: row.get(c) for c in query["columns"] if c in row}
                for row in self.tables.get(query["table"], [])
                if all(_holds(row, f) for f in query["filters"])
            ]
            limit = query["limit"]
            result: dict[str, Any] = {
                "rows": rows[:limit],
                "complete_filtered_rows": len(rows) <= limit,
            }
        else:
            result = self._source(query)
        # Shaped as project-result-v2: only coverage says complete.
        complete = result.get("complete_filtered_rows", not result.get("truncated"))
        answer = {
            "format_version": 2,
            "query": dict(query),
            "coverage": {"complete": bool(complete)},
            "result": result,
        }
        capture = SimpleNamespace(sha256=digest, result=answer, origin={"provider": "fake"})
        return StepOutcome(len(self.asked), digest, capture, None, False)  # type: ignore[arg-type]

    def _source(self, query: Mapping[str, Any]) -> dict[str, Any]:
        if query["kind"] == "source.symbol":
            pattern = rf"(?<![A-Za-z0-9_]){re.escape(query['symbol'])}(?![A-Za-z0-9_])"
        else:
            pattern = re.escape(query["text"])
        found = re.compile(pattern).search

        prefix = query.get("path_prefix") or ""
        matches = [
            {
                "path": path,
                "line": number,
                "blob": hashlib.sha1(content.encode()).hexdigest(),
                "sha256": hashlib.sha256(content.encode()).hexdigest(),
                "text": line,
                "text_truncated": False,
            }
            for path, content in sorted(self.files.items())
            if path.startswith(prefix)
            for number, line in enumerate(content.splitlines(), 1)
            if found(line)
        ]
        page = matches[: query["limit"]]
        return {
            "matches": page,
            "total": len(matches),
            "files_unsearched": 0,
            "truncated": len(page) < len(matches),
        }
