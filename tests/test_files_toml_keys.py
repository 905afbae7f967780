"""The one TOML loader names the key at fault the way the operator wrote it.

A position is part of the key when a key follows it (an array of tables:
``extract[1].key``); the item of a list of values is named by its list
(``database.allow.cata_world``), so the rule holds for every configuration.
"""

from __future__ import annotations

from typing import Any

import pytest

from viano_bug_analysis.files import check_config


class Refused(Exception):
    def __init__(self, details: dict[str, Any]) -> None:
        super().__init__("refused")
        self.details = details


def _refuse(reason: str, message: str, details: dict[str, Any]) -> Refused:
    return Refused(details)


def _key(document: dict[str, Any], schema: str) -> str:
    with pytest.raises(Refused) as caught:
        check_config(document, schema=schema, what="the file", refuse=_refuse)
    key: str = caught.value.details["key"]
    return key


def test_a_key_inside_an_array_of_tables_carries_its_position() -> None:
    rule = {"entity_type": "quest", "in": "report.metadata", "key": "quest_id"}
    document = {
        "format": "viano-enrichment-profile",
        "format_version": 1,
        "profile": "p",
        "extract": [rule, {**rule, "key": 5}],
    }
    assert _key(document, "enrichment-profile-v1") == "extract[1].key"


def test_an_item_of_a_list_of_values_is_named_by_its_list() -> None:
    document = {
        "format": "viano-enrichment-profile",
        "format_version": 1,
        "profile": "p",
        "entities": {"quest": {"table": "q", "column": "ID", "columns": ["ID", "a b"]}},
    }
    assert _key(document, "enrichment-profile-v1") == "entities.quest.columns"
