"""The enrichment index is read back with the one strict parser and facts are
compared by their canonical bytes, so a DECIMAL value beyond 64 bits reaches
the prompt exactly (orjson.loads made it a float)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from tests.facts.sample import index as index_of
from viano_bug_analysis.case.package import CasePackage
from viano_bug_analysis.investigation.project_context import load_index, project_prompt_context
from viano_bug_analysis.jsonio import canonical_bytes

BIG = 2**70 + 1  # not a double: a float cannot hold it


def _rows_fact(fact_id: str) -> dict[str, Any]:
    return {
        "fact_id": fact_id,
        "kind": "project_rows",
        "statement": "rows",
        "table": "creature",
        "filters": [{"column": "guid", "operator": "eq", "value": BIG}],
        "complete_filtered_rows": True,
        "rows": [{"guid": BIG, "name": "Élan"}],
        "provenance": {"capture_sha256": "a" * 64, "pointer": "/rows/0"},
    }


def _package(tmp_path: Path) -> CasePackage:
    # A whole index: it is checked against enrichment-index-v1 when read.
    index = index_of([_rows_fact("P1"), _rows_fact("P2")])
    (tmp_path / "index.json").write_bytes(canonical_bytes(index))
    case = {"project_research": {"index": {"path": "index.json"}}}
    return cast(CasePackage, SimpleNamespace(path=tmp_path, case=case))


def test_an_integer_beyond_64_bits_stays_exact(tmp_path: Path) -> None:
    index = load_index(_package(tmp_path))
    assert index is not None
    assert index["facts"][0]["rows"][0]["guid"] == BIG
    assert isinstance(index["facts"][0]["rows"][0]["guid"], int)


def test_a_repeated_result_with_a_big_integer_is_left_out(tmp_path: Path) -> None:
    context = project_prompt_context(_package(tmp_path))
    assert context is not None
    assert [fact["fact_id"] for fact in context["facts"]] == ["P1"]
    assert context["left_out"]["duplicate_results"] == ["P2"]
    assert context["facts"][0]["rows"][0]["guid"] == BIG
