"""project-query-v2 and the client_records tool's arguments are generated from v1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from viano_bug_analysis.schemas import load_schema

ROOT = Path(__file__).resolve().parents[2]


def test_the_generated_schemas_are_current() -> None:
    script = ROOT / "scripts" / "project_query_v2.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_version_2_is_version_1_plus_whole_word_and_one_kind() -> None:
    v1, v2 = load_schema("project-query-v1"), load_schema("project-query-v2")
    assert v2["properties"]["kind"]["enum"] == [*v1["properties"]["kind"]["enum"], "client.records"]
    changed = {"client.records", "source.search", "source.symbol"}
    assert {k: v for k, v in v2["$defs"]["query"].items() if k not in changed} == {
        k: v for k, v in v1["$defs"]["query"].items() if k not in changed
    }
    search_v1, search_v2 = (
        v1["$defs"]["query"]["source.search"],
        v2["$defs"]["query"]["source.search"],
    )
    assert set(search_v2["properties"]) - set(search_v1["properties"]) == {"whole_word"}
    assert search_v2["required"] == search_v1["required"]  # every v1 search is a v2 search
    assert "client.records" not in v1["properties"]["kind"]["enum"]  # stored prompts list v1
