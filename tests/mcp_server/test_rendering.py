"""The text content: the answer itself, compact and bounded, for text-only clients."""

from __future__ import annotations

from typing import Any

from tests.mcp_server.conftest import find_text, lookup, source_batch
from tests.tools.package_factory import BuiltPackage, build_package
from viano_bug_analysis.mcp_server.rendering import (
    MAX_TEXT_LINES,
    render_case_query,
    render_project_query,
)
from viano_bug_analysis.profiles import load_profile


def query(package: BuiltPackage, *items: dict[str, Any]) -> dict[str, Any]:
    return load_profile("vcore").router().query(package.path, source_batch(package, *items))


def test_hits_lines_and_rows_are_in_the_text(package: BuiltPackage) -> None:
    read = {
        "operation": "source.read_context",
        "arguments": {"source_ref": package.refs["src/npc.cpp"], "start_line": 1, "end_line": 2},
    }
    result = query(package, find_text(package, "KilledMonsterCredit"), read, lookup(package, 2))
    text = render_case_query(result).splitlines()
    ref = package.refs["src/npc.cpp"]
    assert f"  {ref}:2: void npc_wolpertinger::JustDied() {{ KilledMonsterCredit(91001); }}" in text
    assert "  1: // quest credit" in text
    assert '  /1 {"entry":2,"name":"Boar"}' in text
    assert text[1].startswith("Q0001 source.find_text: 1 of 1")
    assert result["batch_sha256"][:16] in text[0]


def test_the_text_is_bounded(tmp_path: Any) -> None:
    source = b"".join(b"hit %d\n" % i for i in range(3 * MAX_TEXT_LINES))
    package = build_package(tmp_path, sources={"src/npc.cpp": source})
    items = []
    for page in range(6):
        item = find_text(package, "hit")
        item["arguments"] = {**item["arguments"], "limit": 100, "offset": 100 * page}  # type: ignore[dict-item]
        items.append(item)
    text = render_case_query(query(package, *items)).splitlines()
    assert len(text) == MAX_TEXT_LINES + 1
    assert text[-1].endswith("more line(s): see the structured content")


def test_project_answers_render_their_items() -> None:
    result = {
        "query": {"kind": "database.rows"},
        "origin": {"kind": "database", "database": "cata_world", "snapshot_id": "s@1"},
        "coverage": {"complete": True},
        "result": {
            "total": 1,
            "returned": 1,
            "next_offset": None,
            "columns": ["entry", "name"],
            "rows": [{"entry": 90002, "name": "Wild Wolpertinger"}],
        },
    }
    text = render_project_query(result, "ab" * 32).splitlines()
    assert (
        text[0]
        == "database.rows at database cata_world snapshot s@1: complete; capture " + "ab" * 8
    )
    assert '  {"entry":90002,"name":"Wild Wolpertinger"}' in text
