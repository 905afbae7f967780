"""The enrichment profile is checked by its bundled schema and the one TOML loader.

Its keys are named as the operator wrote them, a position in an array of
tables included (``extract[1].pattern``), and what the schema cannot state
(an entity type without a lookup, a pattern that does not compile) stays a
``profile_invalid`` at the same key.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from viano_bug_analysis.enrichment import parse_profile, vcore_profile
from viano_bug_analysis.enrichment.profile import Limits
from viano_bug_analysis.errors import EnrichmentError
from viano_bug_analysis.schema_errors import check
from viano_bug_analysis.schemas import available_schemas, load_schema

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "viano_bug_analysis"
BASE = 'format = "viano-enrichment-profile"\nformat_version = 1\nprofile = "p"\n'
ENTITY = '[entities.quest]\ntable = "q"\ncolumn = "ID"\ncolumns = ["ID", "T"]\nname_column = "T"\n'
FIRST = '[[extract]]\nentity_type = "quest"\nin = "report.metadata"\nkey = "quest_id"\n'
REF = 'name = "r"\ntable = "q"\ncolumn = "ID"\n'


def _refused(text: str) -> EnrichmentError:
    with pytest.raises(EnrichmentError) as caught:
        parse_profile(text.encode())
    assert caught.value.code == "profile_invalid"
    return caught.value


@pytest.mark.parametrize(
    ("second", "key"),
    [
        ('entity_type = "quest"\nin = "report.metadata"\nkey = 5\n', "extract[1].key"),
        (
            'entity_type = "quest"\nin = "report.metadata"\nkey = "a"\nbogus = 1\n',
            "extract[1].bogus",
        ),
        ('in = "report.text"\npattern = "(1)"\n', "extract[1].entity_type"),
        ('entity_type = "quest"\nin = "attachments"\npattern = "(1)"\n', "extract[1].members"),
        ('entity_type = "quest"\nin = "report.text"\npattern = "(1"\n', "extract[1].pattern"),
        ('entity_type = "quest"\nin = "elsewhere"\npattern = "(1)"\n', "extract[1].in"),
    ],
)
def test_a_fault_inside_the_second_extract_rule_names_its_position(second: str, key: str) -> None:
    err = _refused(BASE + ENTITY + FIRST + "[[extract]]\n" + second)
    assert err.details["key"] == key


def test_a_nested_array_of_tables_names_every_position() -> None:
    text = (
        BASE
        + ENTITY
        + "[[references]]\n"
        + REF
        + 'holds = "quest"\n[[references]]\n'
        + REF
        + 'holds = "quest"\n'
        + 'when = [{column = "ID", operator = "eq", value = 1}, {column = "ID", value = 2}]\n'
    )
    assert _refused(text).details["key"] == "references[1].when[1].operator"


def test_a_bad_item_of_a_list_of_values_names_the_list() -> None:
    text = BASE + '[entities.quest]\ntable = "q"\ncolumn = "ID"\ncolumns = ["ID", "a b"]\n'
    assert _refused(text).details["key"] == "entities.quest.columns"


def test_a_toml_syntax_error_gives_line_and_column() -> None:
    err = _refused(BASE + ENTITY + FIRST + '[[extract]]\nentity_type = "quest\n')
    assert (err.details["key"], err.details["line"]) == ("", 14)
    assert err.details["column"] >= 1


@pytest.mark.parametrize(
    ("text", "key"),
    [
        # Keys that were accepted and then ignored: refused, like every unknown key.
        (
            BASE + ENTITY + '[[extract]]\nentity_type = "quest"\nin = "report.text"\n'
            'pattern = "(1)"\nkey = "a"\n',
            "extract[0].key",
        ),
        (
            BASE + ENTITY + "[[references]]\n" + REF + 'holds = "quest"\n'
            'filters = [{column = "c", operator = "eq", value = 1}]\n',
            "references[0].filters",
        ),
        (BASE + "[limits]\nrows_per_query = 0\n", "limits.rows_per_query"),
        (
            BASE + ENTITY + '[[references]]\nname = "r"\ntable = "q"\nholds = "quest"\n',
            "references[0].column",
        ),
        (BASE + ENTITY + "[[references]]\n" + REF + 'holds = "nothing"\n', "references[0].holds"),
        (
            BASE + ENTITY + "[[references]]\n" + REF + 'holds = "quest"\nsymbol = true\n',
            "references[0].holds",
        ),
        (
            BASE + ENTITY + "[[references]]\n" + REF + 'holds = "quest"\ntable2 = 1\n',
            "references[0].table2",
        ),
        (
            BASE + ENTITY + '[[references]]\nname = "r"\ntable = "elsewhere"\ncolumn = "c"\n'
            'holds = "quest"\n',
            "references[0].table",
        ),
        (
            BASE + ENTITY + "[[references]]\n" + REF + 'holds = "quest"\n'
            'when = [{column = "Missing", operator = "eq", value = 1}]\n',
            "references[0].when[0].column",
        ),
        (
            BASE
            + ENTITY
            + "[[references]]\n"
            + REF
            + 'holds = "quest"\n[[references]]\n'
            + REF
            + 'holds = "quest"\n',
            "references[1].name",
        ),
        (BASE + ENTITY + '[tables.q]\ncolumns = ["ID"]\n', "tables.q"),
        (
            BASE + ENTITY + "[[relationships]]\n" + 'relation = "r"\n',
            "relationships",
        ),
    ],
)
def test_what_only_code_or_only_the_schema_can_see_names_the_key(text: str, key: str) -> None:
    assert _refused(text).details["key"] == key


def test_the_bundled_profile_satisfies_its_schema() -> None:
    document = tomllib.loads((PACKAGE / "profiles" / "vcore" / "enrichment.toml").read_text())
    assert check("enrichment-profile-v1", document) is None
    profile = vcore_profile()
    assert {
        "quest",
        "creature",
        "gameobject",
        "item",
        "spell",
        "area",
        "areatrigger",
        "creature_spawn",
        "gameobject_spawn",
    } <= set(profile.entities)


def test_the_schema_is_bundled_and_lists_what_the_profile_dataclasses_hold() -> None:
    assert "enrichment-profile-v1" in available_schemas()
    schema = load_schema("enrichment-profile-v1")
    assert set(schema["properties"]["limits"]["properties"]) == set(Limits.__dataclass_fields__)
