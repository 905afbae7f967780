"""Regression "BUG-20" on the bundled sample package (modelled on the seed's case).

Reads three lines of packaged C++ source, describes the quest table through
the Vcore adapter (a wowsrc-native descriptor) and looks up the stored quest
row through an explicit ID filter. It injects no fix and tests no reasoning:
it pins what the tools show.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.package_factory import tree_fingerprint
from viano_bug_analysis.case.create import create_package
from viano_bug_analysis.profiles.vcore.db_tools import normalize_schema_descriptor
from viano_bug_analysis.tools.database_query import DatabaseQueryTool
from viano_bug_analysis.tools.router import InvestigationToolRouter

SPEC = Path(__file__).resolve().parents[2] / "samples" / "bug-20" / "case-spec.json"


@pytest.fixture(scope="module")
def package_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return create_package(SPEC, tmp_path_factory.mktemp("bug20") / "package").path


def test_bug20_three_lines_schema_and_stored_row(package_path: Path) -> None:
    router = InvestigationToolRouter(database_tool=DatabaseQueryTool(normalize_schema_descriptor))
    before = tree_fingerprint(package_path)
    request = {
        "format": "viano-investigation-request",
        "format_version": 1,
        "case_id": "BUG-20",
        "package_id": "pkg-bug-20",
        "analysis_revision": 1,
        "requests": [
            {
                "request_id": "Q0001",
                "hypothesis_id": "H1",
                "action_id": "read-credit",
                "operation": "source.read_context",
                "arguments": {"source_ref": "src-001", "start_line": 37, "end_line": 39},
            },
            {
                "request_id": "Q0002",
                "hypothesis_id": "H2",
                "action_id": "describe-quest",
                "operation": "database.describe",
                "arguments": {"source_ref": "db-002"},
            },
            {
                "request_id": "Q0003",
                "hypothesis_id": "H2",
                "action_id": "quest-row",
                "operation": "database.lookup",
                "arguments": {
                    "source_ref": "db-001",
                    "filters": {"ID": 90001},
                    "offset": 0,
                    "limit": 10,
                },
            },
        ],
    }
    result = router.query(package_path, request)
    lines, described, quest = (item["result"] for item in result["results"])

    assert [line["line"] for line in lines["lines"]] == [37, 38, 39]
    assert "KilledMonsterCredit(NPC_WOLPERTINGER_CAUGHT)" in lines["lines"][2]["text"]
    assert not any(line["text_truncated"] for line in lines["lines"])

    assert described["table"] == "quest_template"
    assert described["coverage"] == "schema_only"
    columns = {c["name"]: c for c in described["columns"]}
    assert columns["ID"]["type"] == "int(10) unsigned"
    assert "RequiredNpcOrGo1" in columns

    assert quest["total"] == 1
    assert quest["rows"][0]["pointer"] == "/rows/1"
    assert quest["rows"][0]["row"]["RequiredNpcOrGo1"] == 90005
    # The decoy row stores the ID as the string "90001": typed equality skips it.
    assert all(row["row"]["ID"] == 90001 for row in quest["rows"])
    assert tree_fingerprint(package_path) == before
