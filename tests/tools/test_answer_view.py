"""answer_view: every answer kind rendered compactly, within its budget, nothing cut silently."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis.errors import ToolError
from viano_bug_analysis.project_research.captures import model_view
from viano_bug_analysis.tools.answer_view import (
    MAX_UNSEARCHED_PATHS,
    VIEW_KINDS,
    answer_view,
    unsearched_note,
)

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "project-captures-v1"
SHA = "b" * 64
BLOB = "a" * 40
HEX_RUN = re.compile(r"[0-9a-f]{40,}")


def stored_captures() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(CAPTURES.glob("*.json"))]


def search_body(count: int, *, total: int | None = None, offset: int = 0) -> dict[str, Any]:
    matches = [
        {
            "path": f"src/server/scripts/zone_{i % 7}.cpp",
            "blob": BLOB,
            "sha256": SHA,
            "line": 100 + i,
            "text": f"    creature->CastSpell(me, {26290 + i}, true); // step {i}",
            "text_truncated": False,
        }
        for i in range(count)
    ]
    total = count if total is None else total
    after = offset + count
    return {
        "total": total,
        "offset": offset,
        "limit": count or 1,
        "returned": count,
        "truncated": after < total,
        "next_offset": after if after < total else None,
        "files_searched": 3000,
        "files_unsearched": 22,
        "skipped": {
            "total": 25,
            "by_reason": {"too_large": 20, "missing": 2, "binary": 3},
            "paths": [{"path": f"sql/base/dump_{i}.sql", "reason": "too_large"} for i in range(20)]
            + [{"path": f"dep/lib_{i}.a", "reason": "binary"} for i in range(3)]
            + [{"path": f"data/missing_{i}.dbc", "reason": "missing"} for i in range(2)],
            "paths_truncated": False,
        },
        "matches": matches,
    }


SEARCH = {"kind": "source.search", "text": "26290", "case_sensitive": True, "offset": 0}


def test_every_stored_answer_has_a_view_without_hashes() -> None:
    seen = set()
    for capture in stored_captures():
        query = capture["request"]
        payload = model_view(capture["result"])
        view = answer_view("project.query", query, payload, max_chars=6000)
        seen.add(query["kind"])
        assert view.text
        assert SHA not in view.text and BLOB not in view.text
        # The whole document (as older callers hold it) gives the same view.
        assert answer_view("project.query", query, capture["result"], max_chars=6000) == view
    assert seen == VIEW_KINDS - {
        "source.find_text",
        "source.find_symbol",
        "source.read_context",
        "database.describe",
        "database.lookup",
        "database.find_references",
        "client.records",  # no stored v1 capture: client_records_body below
    }


def test_a_search_page_that_does_not_fit_leaves_whole_lines_out_and_says_how_to_ask() -> None:
    body = search_body(100)
    request = {**SEARCH, "limit": 100}
    view = answer_view("project.query", request, body, max_chars=2000)
    assert len(view.text) <= 2000
    assert not view.complete
    shown = [line for line in view.text.splitlines() if line.startswith("src/")]
    # Whole lines, in order, each with its path: the first ones of the page.
    assert shown == [f"{m['path']}:{m['line']}: {m['text']}" for m in body["matches"][: len(shown)]]
    assert view.continuation == {**request, "offset": len(shown)}
    assert f"offset {len(shown)}" in view.text


def test_the_next_page_is_named_when_the_page_fits() -> None:
    body = search_body(5, total=40)
    view = answer_view("project.query", {**SEARCH, "limit": 5}, body, max_chars=6000)
    assert view.complete
    assert view.continuation == {**SEARCH, "limit": 5, "offset": 5}
    assert "offset 5" in view.text


def test_unsearched_files_are_counted_not_listed() -> None:
    view = answer_view("project.query", {**SEARCH, "limit": 5}, search_body(5), max_chars=6000)
    assert "22 files that could hold a hit" in view.text
    assert "listed once in the case brief" in view.text
    assert "dump_0.sql" not in view.text


def test_unsearched_note_lists_each_file_once_for_the_case() -> None:
    note = unsearched_note([search_body(1), search_body(3), {"rows": []}])
    assert note is not None
    assert note.count("sql/base/dump_0.sql") == 1
    assert "data/missing_1.dbc (missing)" in note
    assert "dep/lib_0.a" not in note  # binary files cannot hide a hit
    assert unsearched_note([{"rows": []}]) is None


def test_unsearched_note_is_bounded() -> None:
    body = search_body(0)
    body["skipped"]["paths"] = [{"path": f"f{i:03}.sql", "reason": "too_large"} for i in range(99)]
    note = unsearched_note([body])
    assert note is not None
    assert (
        f"f{MAX_UNSEARCHED_PATHS - 1:03}.sql" in note and f"f{MAX_UNSEARCHED_PATHS:03}" not in note
    )
    assert f"and {99 - MAX_UNSEARCHED_PATHS} more" in note


def test_a_read_names_its_path_and_continues_at_the_first_line_left_out() -> None:
    lines = [
        {"line": n, "text": f"    int x{n} = {n};" * 3, "text_truncated": False}
        for n in range(10, 210)
    ]
    body = {"path": "src/a.cpp", "blob": BLOB, "sha256": SHA, "start_line": 10, "end_line": 209}
    body["lines"] = lines
    request = {"kind": "source.read", "path": "src/a.cpp", "start_line": 10, "end_line": 209}
    view = answer_view("project.query", request, body, max_chars=2000)
    assert view.text.startswith("src/a.cpp lines 10-209")
    assert not view.complete
    numbers = [int(m.group(1)) for m in re.finditer(r"^(\d+): ", view.text, re.M)]
    assert numbers == list(range(10, 10 + len(numbers)))
    assert view.continuation == {**request, "start_line": 10 + len(numbers)}


def test_long_lines_are_shortened_with_a_mark() -> None:
    body = search_body(1)
    body["matches"][0]["text"] = "x" * 5000
    view = answer_view("project.query", {**SEARCH, "limit": 1}, body, max_chars=2000)
    assert re.search(r"x…\[\+\d+ chars\]", view.text)
    assert len(view.text) <= 2000


def test_rows_are_a_table_with_one_header() -> None:
    rows = [{"entry": i, "name": f"Wolpertinger {i}", "subname": None} for i in range(3)]
    body = {
        "database": "cata_world",
        "table": "creature_template",
        "columns": ["entry", "name", "subname"],
        "filters": [],
        "offset": 0,
        "limit": 3,
        "rows": rows,
        "returned": 3,
        "truncated": False,
        "next_offset": None,
        "complete_filtered_rows": True,
    }
    request = {"kind": "database.rows", "table": "creature_template", "offset": 0, "limit": 3}
    view = answer_view("project.query", request, body, max_chars=2000)
    lines = view.text.splitlines()
    assert "# | entry | name | subname" in lines
    assert "2 | 2 | Wolpertinger 2 | NULL" in lines
    assert view.complete and view.continuation is None


def references_body(rows: int, lines: int) -> dict[str, Any]:
    def row(i: int) -> dict[str, Any]:
        full = {"ID": 90000 + i, "LogTitle": f"A quest title number {i}", "Flags": 8}
        return {"key": {"ID": 90000 + i}, "value": 90001, "row": full}

    entry_rows = [{**row(i), "capture_sha256": SHA, "pointer": f"/rows/{i}"} for i in range(rows)]
    refused = {
        "reference": "quest_addon",
        "table": "quest_template_addon",
        "column": "ID",
        "when": [],
        "negative_means": None,
        "list": False,
        "count": 0,
        "count_exact": False,
        "rows": [],
        "refused": "table_not_allowed",
    }
    hit = {
        "reference": "quest_reward_next_quest",
        "table": "quest_template",
        "column": "RewardNextQuest",
        "when": [],
        "negative_means": None,
        "list": False,
        "count": rows,
        "count_exact": True,
        "rows": entry_rows,
    }
    source_lines = [
        {
            "path": f"src/server/scripts/Kalimdor/zone_{i}.cpp",
            "line": 201 + i * 4315,
            "text": f"        QUEST_SOMETHING_{i} = 90001,",
            "text_truncated": False,
            "blob": BLOB,
            "sha256": SHA,
            "capture_sha256": SHA,
            "pointer": f"/result/matches/{i}",
        }
        for i in range(lines)
    ]
    return {
        "format": "viano-references",
        "format_version": 2,
        "profile": "vcore",
        "entity_type": "quest",
        "id": 90001,
        "shown": 50,
        "database": {
            "available": True,
            "total": rows,
            "total_exact": True,
            "refused": 20,
            "entries": [dict(refused) for _ in range(20)] + [hit],
        },
        "source": {
            "available": True,
            "origin": {"kind": "git", "url": "u", "commit": "c" * 40},
            "literal": {
                "text": "90001",
                "count": lines,
                "count_exact": True,
                "files_unsearched": 22,
                "literal_lines": lines,
                "lines_read": lines,
                "lines": source_lines,
                "captures": [SHA],
            },
            "constant_prefixes": ["QUEST_"],
            "constants": [],
        },
        "snapshots": None,
    }


REFERENCES = {"kind": "references", "entity_type": "quest", "id": 90001}


@pytest.mark.parametrize("max_chars", [2000, 6000])
def test_a_references_answer_shows_its_source_part_whatever_its_database_part(
    max_chars: int,
) -> None:
    body = references_body(rows=200, lines=3)
    view = answer_view("project.query", REFERENCES, body, max_chars=max_chars)
    assert len(view.text) <= max_chars + 200
    # Every source line is there, with its path (L201 is never shown without its file).
    for hit in body["source"]["literal"]["lines"]:
        assert f"{hit['path']}:{hit['line']}: " in view.text
    assert not view.complete
    assert view.continuation is not None and view.continuation["kind"] == "database.rows"
    assert "left out for room" in view.text


def test_a_line_number_is_never_shown_without_its_file() -> None:
    body = references_body(rows=2, lines=400)
    view = answer_view("project.query", REFERENCES, body, max_chars=2000)
    for found in re.finditer(r"^\s+(\S+):(\d+): ", view.text, re.M):
        assert found.group(1).startswith("src/")
    assert view.continuation is not None
    assert view.continuation["kind"] == "source.search"
    assert view.continuation["whole_word"] is True


SNAPSHOT_RESULTS: dict[str, dict[str, Any]] = {
    "source.find_text": {
        "sources_searched": 2,
        "sources": [{"source_ref": "src-1", "sha256": SHA, "matches": 1}],
        "total": 1,
        "offset": 0,
        "limit": 10,
        "truncated": False,
        "next_offset": None,
        "matches": [
            {"source_ref": "src-1", "sha256": SHA, "line": 7, "text": "x", "text_truncated": False}
        ],
    },
    "source.read_context": {
        "source_ref": "src-1",
        "sha256": SHA,
        "start_line": 7,
        "end_line": 8,
        "line_count": 2,
        "lines": [
            {"line": 7, "text": "a", "text_truncated": False},
            {"line": 8, "text": "b", "text_truncated": False},
        ],
    },
    "database.describe": {
        "source_ref": "db-1",
        "sha256": SHA,
        "table": "creature_template",
        "coverage": "complete",
        "kind": "rows",
        "columns": [{"name": "entry", "type": "int"}],
        "row_count": 2,
        "note": "every row of the table",
    },
    "database.lookup": {
        "source_ref": "db-1",
        "sha256": SHA,
        "table": "creature_template",
        "coverage": "complete",
        "total": 1,
        "offset": 0,
        "limit": 10,
        "truncated": False,
        "next_offset": None,
        "rows": [{"pointer": "/rows/1", "row": {"entry": 1, "name": "Wolpertinger"}}],
    },
}


@pytest.mark.parametrize("operation", sorted(SNAPSHOT_RESULTS))
def test_snapshot_answers_have_views_without_hashes(operation: str) -> None:
    payload = {"request_id": "Q1", "operation": operation, "result": SNAPSHOT_RESULTS[operation]}
    view = answer_view(operation, {"source_ref": "x"}, payload, max_chars=2000)
    assert view.text and SHA not in view.text
    if operation.startswith("source."):
        assert "src-1:7: x" in view.text or "7: a" in view.text


def test_a_snapshot_row_is_cited_under_result() -> None:
    payload = {"operation": "database.lookup", "result": SNAPSHOT_RESULTS["database.lookup"]}
    view = answer_view("database.lookup", {"source_ref": "db-1"}, payload, max_chars=2000)
    assert "/result/rows/<#>/row/<column>" in view.text
    assert "0 | 1 | Wolpertinger" in view.text


def test_an_unknown_kind_is_a_typed_error() -> None:
    with pytest.raises(ToolError) as info:
        answer_view("project.query", {"kind": "source.everything"}, {}, max_chars=2000)
    assert info.value.code == "unknown_operation"
    assert "references" in info.value.details["allowed"]


def client_records_body(count: int) -> dict[str, Any]:
    records = [
        {
            "id": 66900 + i,
            "fields": {"id": 66900 + i, "name": f"Detect Partygoer {i}"},
            "origin": {"source": "file", "file": "Spell.dbc", "sha256": SHA, "record": i},
            "effects": [
                {
                    "id": 1000 + i,
                    "fields": {"spell_id": 66900 + i, "aura": 6, "aura_name": "SPELL_AURA_X"},
                    "origin": {"source": "file", "file": "SpellEffect.dbc", "sha256": SHA},
                }
            ],
        }
        for i in range(count)
    ]
    return {
        "table": "spell",
        "file": "Spell.dbc",
        "records": records,
        "missing_ids": [5],
        "offset": 0,
        "limit": count,
        "returned": count,
        "truncated": False,
        "next_offset": None,
    }


def test_client_records_show_fields_and_effects_without_hashes() -> None:
    query = {"kind": "client.records", "table": "spell", "ids": [66900], "offset": 0, "limit": 20}
    view = answer_view("project.query", query, client_records_body(2), max_chars=2000)
    assert view.complete and view.continuation is None
    assert "0: id=66900 name=Detect Partygoer 0" in view.text
    assert "effect spell_id=66900 aura=6 aura_name=SPELL_AURA_X" in view.text
    assert "no record for IDs: 5" in view.text
    assert "/records/<#>/fields/<name>" in view.text
    assert not HEX_RUN.search(view.text)


def test_client_records_left_out_for_room_name_the_offset() -> None:
    query = {"kind": "client.records", "table": "spell", "ids": [1], "offset": 0, "limit": 50}
    view = answer_view("project.query", query, client_records_body(50), max_chars=600)
    assert not view.complete and view.continuation is not None
    assert view.continuation["offset"] > 0
    assert len(view.text) <= 600
