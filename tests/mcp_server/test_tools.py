"""A refused call's text line says each thing once; its structured content is the CLI's line."""

from __future__ import annotations

from typing import Any

import pytest

from viano_bug_analysis.errors import McpError, VbaError
from viano_bug_analysis.mcp_server.tools import _refused, error_content
from viano_bug_analysis.project_research.service import OPERATORS, validate_query


def refusal_of(query: dict[str, Any]) -> VbaError:
    with pytest.raises(VbaError) as raised:
        validate_query(query)
    return raised.value


ROWS = {
    "kind": "database.rows",
    "database": "world",
    "table": "creature_template",
    "columns": ["entry"],
    "limit": 1,
    "offset": 0,
}


@pytest.mark.parametrize(
    "query",
    [
        {**ROWS, "filters": [{"column": "entry", "operator": "like", "value": 1}]},
        {**ROWS, "kind": "database.everything"},
    ],
    ids=["operator", "kind"],
)
def test_the_allowed_list_and_the_pointer_appear_once(query: dict[str, Any]) -> None:
    error = refusal_of(query)
    outcome = _refused(error)
    assert outcome.is_error
    assert outcome.structured == error_content(error)  # the same code, pointer and hint as the CLI
    assert isinstance(error.details["hint"], str)
    assert outcome.text.count("allowed:") == 1
    assert outcome.text.count(error.details["path"]) == 1


def test_the_operator_refusal_lists_every_operator() -> None:
    error = refusal_of({**ROWS, "filters": [{"column": "entry", "operator": "like", "value": 1}]})
    text = _refused(error).text
    assert error.code in text
    assert all(operator in text for operator in OPERATORS)


def test_a_pointer_or_hint_the_message_does_not_say_is_added() -> None:
    error = McpError("mcp_arguments_invalid", "too long", {"path": "/a", "hint": "shorten it"})
    assert _refused(error).text == "refused: mcp_arguments_invalid: too long (at /a); shorten it"


def test_a_longer_pointer_in_the_message_is_not_the_pointer() -> None:
    error = McpError("mcp_arguments_invalid", "value at /ab is wrong", {"path": "/a"})
    assert _refused(error).text.endswith("(at /a)")


@pytest.mark.parametrize("recorded", [True, False])
def test_the_result_dict_is_the_sdk_model_in_json_form(recorded: bool) -> None:
    import mcp_types as types

    from viano_bug_analysis.mcp_server.audit import Recorded
    from viano_bug_analysis.mcp_server.server import META_KEY, to_result
    from viano_bug_analysis.mcp_server.tools import Outcome

    outcome = Outcome({"a": None, "b": [1, {"c": "d"}]}, "text", is_error=not recorded)
    if recorded:
        outcome.recorded = Recorded(3, "0" * 64, "1" * 64, None, 1)
    wire = to_result(outcome)
    model = types.CallToolResult.model_validate(wire)
    assert model.structured_content == outcome.structured and model.is_error is not recorded
    dumped = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert dumped.pop("resultType") == "complete"
    assert dumped == wire
    assert (META_KEY in (model.meta or {})) is recorded
