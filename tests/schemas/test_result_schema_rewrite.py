"""investigation-result-v1 as served to MCP clients: written without ``$ref``
and with its per-operation result schemas in one ``if``/``then``/``else``
chain, it accepts exactly what its earlier form (``$defs`` and ``$ref``, an
``allOf`` of six ``if``/``then``) accepted (issue 15, the MCP overhead).

The rewrite exists because the SDK's client checks every structuredContent
against the outputSchema with the pure Python ``jsonschema``, whose cost is
one step per schema applied: each ``$ref`` is a second step and a lookup, and
an ``allOf`` tries all six discriminators for every result where the chain
stops at the matching one. The earlier form is kept as a fixture; both are
asked by the three engines that meet this schema: ours (precise and
compiled) and the plain ``Draft202012Validator`` the SDK client builds.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.validators import validator_for
from referencing import Registry

from tests.test_schema_engines import from_schema, mutated
from tests.tools.package_factory import build_package
from tests.tools.test_router import DESCRIPTOR, ROWS, SOURCE, find_text, lookup, read_context
from viano_bug_analysis.profiles.vcore.db_tools import normalize_schema_descriptor
from viano_bug_analysis.schemas import compiled_validator, load_schema, precise_validator
from viano_bug_analysis.tools.database_query import DatabaseQueryTool
from viano_bug_analysis.tools.router import InvestigationToolRouter

NAME = "investigation-result-v1"
EARLIER = Path(__file__).resolve().parents[1] / "fixtures" / f"{NAME}.refs.schema.json"

Check = Callable[[Any], bool]


@cache
def _checks() -> list[tuple[str, Check, Check]]:
    """(engine, earlier form, current form) for each engine."""
    earlier, current = json.loads(EARLIER.read_text()), load_schema(NAME)

    def sdk(schema: dict[str, Any]) -> Check:
        # As mcp.client.session.ClientSession builds it for an outputSchema.
        validator = validator_for(schema)(schema, registry=Registry())
        return lambda document: bool(validator.is_valid(document))

    def precise(schema: dict[str, Any]) -> Check:
        validator = precise_validator(schema)
        return lambda document: bool(validator.is_valid(document))

    def compiled(schema: dict[str, Any]) -> Check:
        validator = compiled_validator(schema)
        return lambda document: bool(validator.is_valid(document))

    return [
        (name, make(earlier), make(current))
        for name, make in (("sdk jsonschema", sdk), ("precise", precise), ("compiled", compiled))
    ]


def _agree(document: Any) -> set[bool]:
    """Asserts that both forms agree in each engine; returns the verdicts.

    The plain engine may differ from ours (it takes ``1.0`` for an integer and
    lets ``$`` match before a final newline); each engine must agree with itself.
    """
    verdicts = set()
    for engine, earlier, current in _checks():
        before, after = earlier(document), current(document)
        assert before == after, (engine, before, after, document)
        verdicts.add(after)
    return verdicts


@cache
def _real_results() -> tuple[dict[str, Any], ...]:
    """Router answers over all six operations (the mixed batch of the router tests)."""
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        package = build_package(
            Path(directory),
            sources={"src/a.cpp": SOURCE, "src/b.cpp": b"int main() { return 0; }\n"},
            database={
                "quest_template.rows.json": ROWS,
                "quest_template.schema.json": DESCRIPTOR,
            },
        )
        src, db, schema = (
            package.refs[m]
            for m in ("src/a.cpp", "quest_template.rows.json", "quest_template.schema.json")
        )
        router = InvestigationToolRouter(
            database_tool=DatabaseQueryTool(normalize_schema_descriptor)
        )
        batches = [
            package.request(
                find_text([src, package.refs["src/b.cpp"]], "KilledMonsterCredit"),
                {
                    "operation": "source.find_symbol",
                    "arguments": {
                        "source_refs": [src],
                        "symbol": "SpellHit",
                        "offset": 0,
                        "limit": 5,
                    },
                },
                read_context(src, 1, 7),
                {"operation": "database.describe", "arguments": {"source_ref": schema}},
                lookup(db, {"ID": 90001}, columns=["LogTitle"]),
                {
                    "operation": "database.find_references",
                    "arguments": {
                        "source_ref": db,
                        "search_columns": ["ID"],
                        "value": 1,
                        "offset": 0,
                        "limit": 10,
                    },
                },
            ),
            package.request(find_text([src], "no such text")),
            package.request(lookup(db, {"ID": 1}, limit=1)),
        ]
        return tuple(router.query(package.path, batch) for batch in batches)


def test_real_results_of_every_operation_pass_both_forms() -> None:
    results = _real_results()
    operations = {item["operation"] for result in results for item in result["results"]}
    assert len(operations) == 6
    for result in results:
        assert _agree(result) == {True}


def _swapped(result: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    document = copy.deepcopy(result)
    change(document["results"][0])
    return document


@pytest.mark.parametrize(
    "change",
    [
        # The discriminator decides the branch: another operation's result is refused.
        lambda item: item.update(operation="database.lookup"),
        lambda item: item.update(operation="source.read_context"),
        # An item without operation: the earlier allOf applied all six branches,
        # the chain only the first; ``required`` refuses it in both.
        lambda item: item.pop("operation"),
        lambda item: item.update(operation="source.find_everything"),
        lambda item: item["result"].pop("matches"),
        lambda item: item["result"]["matches"][0].update(source_ref="../etc"),
        lambda item: item["result"]["sources"][0].update(sha256="0" * 63),
    ],
)
def test_a_result_outside_its_branch_is_refused_by_both_forms(
    change: Callable[[dict[str, Any]], None],
) -> None:
    assert _agree(_swapped(_real_results()[0], change)) == {False}


def _documents() -> st.SearchStrategy[Any]:
    earlier, current = json.loads(EARLIER.read_text()), load_schema(NAME)
    base = (
        from_schema(earlier, earlier)
        | from_schema(current, current)
        | st.sampled_from(_real_results())
    )
    return mutated(base, NAME)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(_documents())
def test_both_forms_agree_on_generated_and_mutated_documents(document: Any) -> None:
    _agree(document)


def test_the_served_form_has_no_reference_and_no_allof_of_branches() -> None:
    # What the rewrite is for: a client's jsonschema takes one step per value.
    text = json.dumps(load_schema(NAME))
    assert '"$ref"' not in text
    assert '"allOf"' not in text
