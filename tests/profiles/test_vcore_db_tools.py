"""The Vcore adapter: wowsrc-native schema descriptors to neutral schema_only documents."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from viano_bug_analysis.profiles.vcore.db_tools import normalize_schema_descriptor
from viano_bug_analysis.tools.database_query import DatabaseQueryTool, LoadedTable
from viano_bug_analysis.tools.database_snapshot import snapshot_schema
from viano_bug_analysis.tools.errors import ToolError

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "bug-20" / "db" / "quest_template.schema.json"
GENERIC_MODULES = [
    REPO / "python" / "viano_bug_analysis" / "tools" / name
    for name in ("database_query.py", "database_snapshot.py")
]


def native(**changes: Any) -> dict[str, Any]:
    descriptor: dict[str, Any] = {
        "table": "creature_loot",
        "columns": [
            {"column_name": "Entry", "column_type": "int(10) unsigned", "is_nullable": "NO"},
            {"column_name": "Item", "column_type": "int(10)", "column_key": "MUL"},
        ],
    }
    descriptor.update(changes)
    return descriptor


def load_descriptor(descriptor: dict[str, Any]) -> LoadedTable:
    data = json.dumps(descriptor).encode()
    tool = DatabaseQueryTool(normalize_schema_descriptor)
    return tool.load(data, role="schema_descriptor", sha256=hashlib.sha256(data).hexdigest())


def invalid(descriptor: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        normalize_schema_descriptor(descriptor)  # type: ignore[arg-type]
    assert info.value.code == "descriptor_invalid"
    return info.value


# --- the mapping ----------------------------------------------------------------


def test_bug20_sample_descriptor() -> None:
    descriptor = json.loads(SAMPLE.read_bytes())
    neutral = normalize_schema_descriptor(descriptor)
    assert neutral["format"] == "viano-database-snapshot"
    assert neutral["format_version"] == 1
    assert neutral["table"] == "quest_template"
    assert neutral["coverage"] == "schema_only"
    assert "rows" not in neutral
    assert neutral["columns"][:3] == [
        {"name": "ID", "type": "int(10) unsigned", "nullable": False, "key": "PRI"},
        {"name": "QuestType", "type": "tinyint(3) unsigned", "nullable": False},
        {"name": "LogTitle", "type": "text", "nullable": True},
    ]
    assert [column["name"] for column in neutral["columns"]] == [
        column["column_name"] for column in descriptor["columns"]
    ]
    jsonschema.validate(neutral, snapshot_schema())


def test_bug20_sample_through_the_tool() -> None:
    data = SAMPLE.read_bytes()
    tool = DatabaseQueryTool(normalize_schema_descriptor)
    table = tool.load(data, role="schema_descriptor", sha256=hashlib.sha256(data).hexdigest())
    assert (table.table, table.coverage, table.kind) == (
        "quest_template",
        "schema_only",
        "schema_only",
    )
    assert "RequiredNpcOrGo1" in table.known_columns()
    result = table.lookup({"ID": 90001}, ["LogTitle"])
    assert (result["total"], result["coverage"]) == (0, "schema_only")
    assert "not evidence" in table.describe()["note"]


def test_optional_members_are_kept_only_when_present() -> None:
    assert normalize_schema_descriptor(native())["columns"] == [
        {"name": "Entry", "type": "int(10) unsigned", "nullable": False},
        {"name": "Item", "type": "int(10)", "key": "MUL"},
    ]


def test_an_empty_column_key_means_no_key() -> None:
    columns = [{"column_name": "a", "column_type": "int", "column_key": "", "is_nullable": "YES"}]
    assert normalize_schema_descriptor(native(columns=columns))["columns"] == [
        {"name": "a", "type": "int", "nullable": True}
    ]


def test_other_members_are_ignored() -> None:
    columns = [{"column_name": "a", "column_type": "int", "ordinal_position": 1, "extra": "x"}]
    neutral = normalize_schema_descriptor(native(columns=columns, engine="InnoDB", rows=[{}]))
    assert neutral["columns"] == [{"name": "a", "type": "int"}]
    assert set(neutral) == {"format", "format_version", "table", "columns", "coverage"}


def test_the_descriptor_is_not_modified() -> None:
    descriptor = native()
    before = copy.deepcopy(descriptor)
    normalize_schema_descriptor(descriptor)
    assert descriptor == before


# --- table ownership is never inferred ------------------------------------------


def test_schema_table_matches_never_chooses_the_table() -> None:
    descriptor = native(schema_table_matches=["quest_template", "quest_template_addon"])
    assert normalize_schema_descriptor(descriptor)["table"] == "creature_loot"
    assert load_descriptor(descriptor).table == "creature_loot"


def test_misleading_names_ids_and_rankings_never_choose_the_table() -> None:
    descriptor = native(
        file="db/quest_template.schema.json",
        source_path="/srv/wowsrc/sql/quest_template_addon.sql",
        table_id=4,
        entry=90001,
        artifact_ranking=[{"table": "quest_template", "score": 0.99}],
    )
    assert normalize_schema_descriptor(descriptor)["table"] == "creature_loot"
    assert load_descriptor(descriptor).table == "creature_loot"


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"schema_table_matches": ["quest_template"]},
        {"file": "quest_template.schema.json", "table_id": 12},
    ],
)
def test_a_descriptor_without_table_is_refused(extra: dict[str, Any]) -> None:
    descriptor = native(**extra)
    del descriptor["table"]
    assert invalid(descriptor).details["pointer"] == "/table"


def test_the_sample_file_name_does_not_matter() -> None:
    descriptor = json.loads(SAMPLE.read_bytes())
    descriptor["table"] = "quest_template_addon"
    assert load_descriptor(descriptor).table == "quest_template_addon"


# --- invalid shapes -------------------------------------------------------------


@pytest.mark.parametrize(
    ("descriptor", "pointer"),
    [
        ([], ""),
        ("quest_template", ""),
        (native(table=""), "/table"),
        (native(table=7), "/table"),
        (native(table=None), "/table"),
        (native(columns=None), "/columns"),
        (native(columns={"column_name": "a"}), "/columns"),
        (native(columns=[]), "/columns"),
        (native(columns=["a"]), "/columns/0"),
        (native(columns=[{"column_type": "int"}]), "/columns/0/column_name"),
        (native(columns=[{"column_name": "", "column_type": "int"}]), "/columns/0/column_name"),
        (native(columns=[{"column_name": "a"}]), "/columns/0/column_type"),
        (native(columns=[{"column_name": "a", "column_type": 3}]), "/columns/0/column_type"),
        (
            native(columns=[{"column_name": "a", "column_type": "t", "is_nullable": "yes"}]),
            "/columns/0/is_nullable",
        ),
        (
            native(columns=[{"column_name": "a", "column_type": "t", "is_nullable": True}]),
            "/columns/0/is_nullable",
        ),
        (
            native(columns=[{"column_name": "a", "column_type": "t", "column_key": None}]),
            "/columns/0/column_key",
        ),
    ],
)
def test_invalid_shapes_name_the_pointer(descriptor: object, pointer: str) -> None:
    assert invalid(descriptor).details["pointer"] == pointer


def test_missing_columns_is_refused() -> None:
    descriptor = native()
    del descriptor["columns"]
    assert invalid(descriptor).details["pointer"] == "/columns"


def test_duplicate_column_names_are_refused_by_the_generic_rules() -> None:
    columns = [{"column_name": "a", "column_type": "int"}] * 2
    with pytest.raises(ToolError) as info:
        load_descriptor(native(columns=columns))
    assert info.value.code == "snapshot_duplicate_column"


def test_generic_code_knows_nothing_of_wowsrc() -> None:
    for module in GENERIC_MODULES:
        text = module.read_text(encoding="utf-8")
        for word in ("wowsrc", "column_name", "is_nullable", "schema_table_matches", "quest"):
            assert word not in text, (module.name, word)
