"""Drift tests: the filter operators and identifier patterns exist once, in vocabulary.py.

The JSON Schemas cannot import Python, so every operator ``enum`` and every
identifier-shaped ``pattern`` in every schema (the source copies under
``schemas/`` and the packaged ones) must equal the Python definition. The
Python sources must not define their own copy: a literal operator list or a
compiled identifier pattern outside vocabulary.py fails here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis import vocabulary
from viano_bug_analysis.enrichment import profile
from viano_bug_analysis.investigation import prompts
from viano_bug_analysis.investigation.llm import config as llm_config
from viano_bug_analysis.investigation.recovery import admission, normalize
from viano_bug_analysis.project_research import config, service

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "viano_bug_analysis"
SCHEMA_FILES = sorted((ROOT / "schemas").glob("*.schema.json")) + sorted(
    (PACKAGE / "schemas").glob("*.schema.json")
)
OPERATOR_LISTS = {
    vocabulary.FILTER_OPERATORS,
    vocabulary.EQUALITY_OPERATORS,
    vocabulary.ORDERED_OPERATORS,
    vocabulary.RULE_OPERATORS,
}
IDENTIFIER_PATTERNS = {
    vocabulary.schema_pattern(vocabulary.IDENTIFIER_PATTERN),
    vocabulary.schema_pattern(vocabulary.SYMBOL_PATTERN),
    vocabulary.schema_pattern(vocabulary.ENV_NAME_PATTERN),
}


def _walk(node: Any, pointer: str = "") -> Iterator[tuple[str, str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield pointer, key, value
            yield from _walk(value, f"{pointer}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{pointer}/{index}")


def _schema_values(keyword: str) -> list[tuple[str, str, Any]]:
    found = []
    for path in SCHEMA_FILES:
        document = json.loads(path.read_bytes())
        for pointer, key, value in _walk(document):
            if key == keyword:
                found.append((str(path.relative_to(ROOT)), pointer, value))
    return found


def test_both_schema_copies_are_read() -> None:
    assert len(SCHEMA_FILES) >= 2 * 12
    assert {p.name for p in SCHEMA_FILES if p.parent.name == "schemas"} >= {
        "project-query-v1.schema.json",
        "investigation-response-v1.schema.json",
    }


def test_every_operator_enum_in_every_schema_is_the_python_list() -> None:
    operators = set(vocabulary.FILTER_OPERATORS)
    enums = [
        (where, pointer, tuple(value))
        for where, pointer, value in _schema_values("enum")
        if isinstance(value, list) and operators & {v for v in value if isinstance(v, str)}
    ]
    # project-query-v1, project-query-v2 (generated from v1), v1's copy inside
    # investigation-response-v1, v2's inside investigation-response-v2 and the
    # enrichment profile's filters, twice each (schemas/ and the package's copies).
    full = {where for where, _, value in enums if value == vocabulary.FILTER_OPERATORS}
    assert len([e for e in enums if e[2] == vocabulary.FILTER_OPERATORS]) == 10
    assert {"schemas/enrichment-profile-v1.schema.json"} <= full
    assert [e for e in enums if e[2] not in OPERATOR_LISTS] == []


def test_every_identifier_pattern_in_every_schema_is_the_python_pattern() -> None:
    shaped = [
        (where, pointer, value)
        for where, pointer, value in _schema_values("pattern")
        if isinstance(value, str) and value.startswith("^[A-Za-z_]")
    ]
    assert len(shaped) >= 15
    assert [s for s in shaped if s[2] not in IDENTIFIER_PATTERNS] == []


@pytest.mark.parametrize(
    ("text", "identifier", "symbol"),
    [
        ("player_id", True, True),
        ("_x$1", True, False),
        ("a" * 64, True, True),
        ("a" * 65, False, True),
        ("id\n", False, False),
        ("1id", False, False),
        ("", False, False),
        ("naïve", False, False),
        (7, False, False),
    ],
)
def test_the_patterns_mean_what_the_schemas_mean(
    text: object, identifier: bool, symbol: bool
) -> None:
    assert vocabulary.is_identifier(text) is identifier
    assert vocabulary.is_symbol(text) is symbol
    for pattern, expected in [
        (vocabulary.IDENTIFIER_PATTERN, identifier),
        (vocabulary.SYMBOL_PATTERN, symbol),
    ]:
        # The schema form, as a JSON Schema validator applies it (``search``;
        # Python's ``$`` also matches before a final newline, which jsonschema
        # accepts too, so the newline case is the Python checks' job).
        if isinstance(text, str) and not text.endswith("\n"):
            schema_match = re.search(vocabulary.schema_pattern(pattern), text) is not None
            assert schema_match is expected


def test_the_python_users_hold_the_one_definition() -> None:
    one_set = frozenset(vocabulary.FILTER_OPERATORS)
    assert one_set == normalize.FILTER_OPERATORS
    assert one_set == profile.OPERATORS
    assert service.OPERATORS is vocabulary.FILTER_OPERATORS
    assert admission.OPERATOR_HINT == vocabulary.OPERATOR_HINT
    # Patterns by their text: re.compile caches, so a copy would be the same
    # object; the source scan below is what finds a copy.
    assert config.IDENTIFIER.pattern == vocabulary.IDENTIFIER_PATTERN
    assert config._ENV_NAME.pattern == vocabulary.ENV_NAME_PATTERN
    assert llm_config._ENV_NAME.pattern == vocabulary.ENV_NAME_PATTERN


def test_the_prompt_names_every_operator_and_no_other() -> None:
    listed = prompts._PROJECT_OPERATION.split("Operators: ", 1)[1].split('There is no "like"')[0]
    without_notes = re.sub(r"\([^)]*\)", "", listed.replace("\n", " "))
    named = tuple(item.split()[0] for item in without_notes.split(",") if item.strip())
    assert named == vocabulary.FILTER_OPERATORS


_OPERATOR_LIST = re.compile(r"""["']eq["'],\s*["']ne["'],\s*["']lt["']""")
# The identifier and the environment variable name, compiled as a copy.
_COMPILED_IDENTIFIER = re.compile(
    r"""re\.compile\(\s*r?["']\^?\[A-Za-z_\]\[A-Za-z0-9_\$?\]\{0,(63|127)\}"""
)


def _sources() -> Iterator[tuple[str, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "vocabulary.py":
            yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def test_no_python_module_defines_its_own_operator_list() -> None:
    assert [where for where, text in _sources() if _OPERATOR_LIST.search(text)] == []


def test_no_python_module_compiles_its_own_identifier_pattern() -> None:
    assert [where for where, text in _sources() if _COMPILED_IDENTIFIER.search(text)] == []
