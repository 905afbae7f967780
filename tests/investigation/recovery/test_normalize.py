"""Recovery policy 1: every normalization rule, every refusal, and the response schema."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from viano_bug_analysis.investigation.recovery import (
    RECOVERY_MARKER,
    schema_has_marker,
)
from viano_bug_analysis.investigation.recovery.normalize import (
    ENCODED_NOT_OBJECT,
    FILTER_AMBIGUOUS_COLUMN,
    FILTER_INVALID_COLUMN,
    FILTER_UNKNOWN_COLUMN,
    FILTER_UNKNOWN_OPERATOR,
    INPUT_TOO_LARGE,
    MAX_INPUT_BYTES,
    MAX_NORMALIZATIONS,
    NOT_AN_OBJECT,
    NOT_ENCODED_JSON,
    NOT_UTF8,
    RULE_DECODE_ARGUMENTS,
    RULE_DECODE_EVIDENCE,
    RULE_DECODE_NEXT,
    RULE_DECODE_RESPONSE,
    RULE_FILTER_LABELLED,
    RULE_FILTER_TRIPLE,
    RULE_IDS,
    RULE_STRIP_FENCE,
    TOO_MANY_NORMALIZATIONS,
    AppliedRule,
    NormalizationError,
    NormalizationOutcome,
    Refusal,
    normalize_response,
)
from viano_bug_analysis.schemas import fast_validator, load_schema

SCHEMA = "investigation-response-v1"
FILTERS = "/next/arguments/filters"


def rows_query(filters: Any, table: str = "Logs") -> dict[str, Any]:
    return {
        "kind": "database.rows",
        "table": table,
        "columns": ["id", "name"],
        "filters": filters,
        "offset": 0,
        "limit": 20,
    }


def response(arguments: Any = None, evidence: Any = None) -> dict[str, Any]:
    return {
        "hypothesis_id": "H1",
        "assessment": "undetermined",
        "confidence": 0.4,
        "evidence": (
            [{"evidence_id": "E1", "role": "supports", "reference": "/rows/0/name"}]
            if evidence is None
            else evidence
        ),
        "next": {
            "kind": "tool",
            "operation": "project.query",
            "arguments": (
                rows_query([{"column": "id", "operator": "eq", "value": 1}])
                if arguments is None
                else arguments
            ),
        },
    }


def recover(text: str, **kwargs: Any) -> NormalizationOutcome:
    return normalize_response(text, schema_marker=True, policy_version=1, **kwargs)


def valid(candidate: Any) -> bool:
    return bool(fast_validator(SCHEMA).is_valid(candidate))


# --- the schema ---------------------------------------------------------------


def test_the_response_schema_carries_the_marker() -> None:
    schema = load_schema(SCHEMA)
    assert schema[RECOVERY_MARKER] == 1
    assert schema_has_marker(schema)
    assert schema_has_marker(load_schema("project-query-v1"))
    assert not schema_has_marker(load_schema("investigation-request-v1"))
    assert not schema_has_marker({RECOVERY_MARKER: True})


def test_the_embedded_schemas_are_exact_copies() -> None:
    defs = load_schema(SCHEMA)["$defs"]
    for name in ("project-query-v1", "investigation-request-v1"):
        assert defs[name] == load_schema(name), f"regenerate the copy of {name}"


def test_the_schema_accepts_every_kind_of_next_step() -> None:
    assert valid(response())
    lookup = {"source_ref": "db", "filters": {"id": 1}, "offset": 0, "limit": 5}
    snapshot = response()
    snapshot["next"] = {"kind": "tool", "operation": "database.lookup", "arguments": lookup}
    assert valid(snapshot)
    conclusion = response(evidence=[])
    conclusion["next"] = {"kind": "conclusion", "summary": "The item id is never checked."}
    assert valid(conclusion)
    lines = response(evidence=[{"evidence_id": "E12", "role": "context", "reference": "L3-L9"}])
    assert valid(lines)


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.update(extra=1),
        lambda r: r.update(confidence=1.5),
        lambda r: r.update(assessment="likely"),
        lambda r: r["evidence"][0].update(evidence_id="E0"),
        lambda r: r["evidence"][0].update(role="proves"),
        lambda r: r["evidence"][0].update(reference="row 3"),
        lambda r: r["evidence"][0].update(note="x"),
        lambda r: r["next"].update(extra=1),
        lambda r: r["next"].update(operation="source.delete"),
        lambda r: r["next"]["arguments"].update(extra=1),
        lambda r: r["next"]["arguments"].update(filters=["id", "eq", 1]),
        lambda r: r["next"]["arguments"]["filters"][0].update(operator="like"),
        lambda r: r["next"].update(
            operation="database.lookup",
            arguments={"source_ref": "db", "filters": {"id": 1}, "offset": 0, "limit": 0},
        ),
        lambda r: r.update(next={"kind": "conclusion", "summary": "x", "arguments": {}}),
    ],
)
def test_the_schema_rejects_anything_outside_the_contract(change: Any) -> None:
    candidate = response()
    change(candidate)
    assert not valid(candidate)


# --- policy gate --------------------------------------------------------------


@pytest.mark.parametrize(("marker", "version"), [(False, 1), (True, 0), (True, 2), (False, 0)])
def test_without_marker_and_policy_1_the_text_is_parsed_as_is(marker: bool, version: int) -> None:
    fenced = "```json\n" + json.dumps(response()) + "\n```"
    outcome = normalize_response(fenced, schema_marker=marker, policy_version=version)
    assert outcome.normalized is None
    assert outcome.error == NormalizationError("syntax_error", "", 0)
    assert outcome.applied_rules == ()
    plain = normalize_response(json.dumps(response()), schema_marker=marker, policy_version=version)
    assert plain == NormalizationOutcome(original=json.dumps(response()), normalized=response())


def test_an_untouched_response_applies_no_rule() -> None:
    text = json.dumps(response())
    assert recover(text) == NormalizationOutcome(original=text, normalized=response())


# --- fences ---------------------------------------------------------------------


@pytest.mark.parametrize("opening", ["```", "```json", "```json  "])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_one_outer_fence_is_removed(opening: str, newline: str) -> None:
    body = json.dumps(response(), indent=2).replace("\n", newline)
    text = f"\n  {opening}{newline}{body}{newline}```\n"
    outcome = recover(text)
    assert outcome.normalized == response()
    assert outcome.applied_rules == (AppliedRule(RULE_STRIP_FENCE, ""),)
    assert outcome.original == text


@pytest.mark.parametrize(
    "text",
    [
        "```python\n{}\n```",
        "```JSON5\n{}\n```",
        "```json\n```json\n{}\n```\n```",
        "```json\n{}\n```\n```json\n{}\n```",
        "Here is my answer:\n```json\n{}\n```",
        "```json\n{}\n```\nHope this helps.",
        "```json {} ```",
        "~~~json\n{}\n~~~",
    ],
)
def test_other_fences_and_prose_are_not_repaired(text: str) -> None:
    outcome = recover(text.replace("{}", json.dumps(response())))
    assert outcome.normalized is None
    assert outcome.error is not None and outcome.error.code == "syntax_error"
    assert RULE_STRIP_FENCE not in outcome.rule_ids


def test_prose_around_json_is_rejected() -> None:
    outcome = recover("I think: " + json.dumps(response()))
    assert outcome.error == NormalizationError("syntax_error", "", 0)


def test_an_error_offset_inside_a_fence_counts_in_the_original_text() -> None:
    text = '```json\n{"a": 1,}\n```'
    outcome = recover(text)
    assert outcome.error == NormalizationError("syntax_error", "", text.index("}"))
    assert outcome.rule_ids == (RULE_STRIP_FENCE,)


# --- duplicate keys and non-finite numbers ----------------------------------------


def test_duplicate_keys_three_levels_deep_are_never_repaired() -> None:
    text = json.dumps(response()).replace('"table": "Logs"', '"table": "Logs", "table": "Logs"')
    outcome = recover(text)
    assert outcome.normalized is None
    assert outcome.error == NormalizationError(
        "duplicate_key", "", text.index('{"kind": "database.rows"')
    )


def test_duplicate_keys_inside_an_encoded_object_are_an_error() -> None:
    candidate = response()
    candidate["next"]["arguments"] = '{"kind": "database.rows", "kind": "database.rows"}'
    outcome = recover(json.dumps(candidate))
    assert outcome.error == NormalizationError("duplicate_key", "/next/arguments", 0)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_rejected(constant: str) -> None:
    text = json.dumps(response()).replace('"confidence": 0.4', f'"confidence": {constant}')
    outcome = recover(text)
    assert outcome.normalized is None
    assert outcome.error is not None and outcome.error.code == "non_finite_number"


# --- once-encoded objects -----------------------------------------------------------


def test_a_once_encoded_whole_response_is_decoded() -> None:
    outcome = recover(json.dumps(json.dumps(response())))
    assert outcome.normalized == response()
    assert outcome.rule_ids == (RULE_DECODE_RESPONSE,)


def test_a_fenced_encoded_response_gets_both_rules_in_order() -> None:
    outcome = recover("```\n" + json.dumps(json.dumps(response())) + "\n```")
    assert outcome.normalized == response()
    assert outcome.rule_ids == (RULE_STRIP_FENCE, RULE_DECODE_RESPONSE)


def test_a_twice_encoded_response_is_not_decoded_twice() -> None:
    outcome = recover(json.dumps(json.dumps(json.dumps(response()))))
    assert outcome.normalized is None
    assert outcome.error == NormalizationError(NOT_AN_OBJECT, "")
    assert outcome.applied_rules == ()


@pytest.mark.parametrize("text", ['"the hypothesis holds"', "[1, 2]", "42", "null"])
def test_a_response_that_is_no_object_is_rejected(text: str) -> None:
    assert recover(text).error == NormalizationError(NOT_AN_OBJECT, "")


def test_encoded_next_arguments_are_decoded() -> None:
    candidate = response()
    candidate["next"]["arguments"] = json.dumps(candidate["next"]["arguments"])
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == response()
    assert outcome.applied_rules == (AppliedRule(RULE_DECODE_ARGUMENTS, "/next/arguments"),)
    assert valid(outcome.normalized)


def test_twice_encoded_next_arguments_stay_a_string() -> None:
    candidate = response()
    candidate["next"]["arguments"] = json.dumps(json.dumps(candidate["next"]["arguments"]))
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == candidate
    assert outcome.applied_rules == ()
    assert outcome.refusals == (Refusal(ENCODED_NOT_OBJECT, "/next/arguments"),)
    assert not valid(outcome.normalized)


def test_an_encoded_next_step_is_decoded() -> None:
    candidate = response()
    candidate["next"] = json.dumps(candidate["next"])
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == response()
    assert outcome.rule_ids == (RULE_DECODE_NEXT,)


def test_an_encoded_evidence_object_is_decoded() -> None:
    item = {"evidence_id": "E2", "role": "contradicts", "reference": "L10"}
    candidate = response(evidence=[json.dumps(item), item])
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == response(evidence=[item, item])
    assert outcome.applied_rules == (AppliedRule(RULE_DECODE_EVIDENCE, "/evidence/0"),)


def test_prose_instead_of_an_evidence_object_is_not_reinterpreted() -> None:
    candidate = response(evidence=["E1 shows the item is never checked"])
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == candidate
    assert outcome.refusals == (Refusal(NOT_ENCODED_JSON, "/evidence/0"),)
    assert not valid(outcome.normalized)


def test_strings_at_other_positions_are_never_decoded() -> None:
    candidate = response()
    candidate["next"]["arguments"]["filters"][0]["value"] = '{"a": 1}'
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == candidate
    assert outcome.applied_rules == ()


# --- primitive filters ------------------------------------------------------------


def test_a_flat_triple_becomes_a_filter_list() -> None:
    candidate = response(rows_query(["id", "eq", 1]))
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == response()
    assert outcome.applied_rules == (AppliedRule(RULE_FILTER_TRIPLE, FILTERS),)
    assert valid(outcome.normalized)


def test_a_labelled_list_becomes_a_filter_list() -> None:
    candidate = response(rows_query(["column", "id", "operator", "eq", "value", 1]))
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == response()
    assert outcome.applied_rules == (AppliedRule(RULE_FILTER_LABELLED, FILTERS),)


def test_the_wolpertinger_filter_of_the_first_real_run_is_normalized() -> None:
    candidate = response(rows_query([["name", "contains", "Wolpertinger"], ["id", "gt", 5]]))
    outcome = recover(json.dumps(candidate), known_columns={"Logs": ["id", "name"]})
    expected = [
        {"column": "name", "operator": "contains", "value": "Wolpertinger"},
        {"column": "id", "operator": "gt", "value": 5},
    ]
    assert outcome.normalized == response(rows_query(expected))
    assert outcome.applied_rules == (
        AppliedRule(RULE_FILTER_TRIPLE, FILTERS + "/0"),
        AppliedRule(RULE_FILTER_TRIPLE, FILTERS + "/1"),
    )
    assert valid(outcome.normalized)


def test_filters_in_a_count_query_and_an_in_list_are_normalized() -> None:
    arguments = {"kind": "database.count", "table": "Logs", "filters": ["id", "in", [1, 2]]}
    outcome = recover(json.dumps(response(arguments)))
    assert outcome.normalized is not None
    assert outcome.normalized["next"]["arguments"]["filters"] == [
        {"column": "id", "operator": "in", "value": [1, 2]}
    ]


def test_like_is_never_translated_and_percent_never_stripped() -> None:
    candidate = response(rows_query([["LogTitle", "like", "%Wolpertinger%"]]))
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == candidate
    assert outcome.applied_rules == ()
    assert outcome.refusals == (Refusal(FILTER_UNKNOWN_OPERATOR, FILTERS + "/0"),)
    assert not valid(outcome.normalized)


@pytest.mark.parametrize("operator", ["like", "LIKE", "EQ", "=", "between", "regexp", 1, None])
def test_unknown_operators_are_refused(operator: Any) -> None:
    candidate = response(rows_query(["id", operator, 1]))
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == candidate
    assert outcome.refusals == (Refusal(FILTER_UNKNOWN_OPERATOR, FILTERS),)


@pytest.mark.parametrize(
    ("column", "reason"),
    [
        ("Log Title", FILTER_INVALID_COLUMN),
        ("1id", FILTER_INVALID_COLUMN),
        ("id\n", FILTER_INVALID_COLUMN),
        ("a" * 65, FILTER_INVALID_COLUMN),
        (7, FILTER_INVALID_COLUMN),
        ("value", FILTER_AMBIGUOUS_COLUMN),
        ("eq", FILTER_AMBIGUOUS_COLUMN),
    ],
)
def test_columns_that_are_not_unambiguously_valid_are_refused(column: Any, reason: str) -> None:
    candidate = response(rows_query([column, "eq", 1]))
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == candidate
    assert outcome.refusals == (Refusal(reason, FILTERS),)


def test_a_column_outside_the_known_columns_is_refused() -> None:
    candidate = response(rows_query(["title", "eq", "x"]))
    outcome = recover(json.dumps(candidate), known_columns={"Logs": ["id", "name"]})
    assert outcome.normalized == candidate
    assert outcome.refusals == (Refusal(FILTER_UNKNOWN_COLUMN, FILTERS),)


def test_a_known_column_named_like_a_label_is_unambiguous() -> None:
    candidate = response(rows_query(["value", "eq", "x"]))
    outcome = recover(json.dumps(candidate), known_columns={"Logs": ["key", "value"]})
    assert outcome.rule_ids == (RULE_FILTER_TRIPLE,)


def test_known_columns_of_another_table_do_not_apply() -> None:
    candidate = response(rows_query(["title", "eq", "x"]))
    outcome = recover(json.dumps(candidate), known_columns={"Other": ["id"]})
    assert outcome.rule_ids == (RULE_FILTER_TRIPLE,)


@pytest.mark.parametrize(
    "filters",
    [
        ["id", "eq"],
        ["id", "eq", 1, 2],
        ["col", "id", "op", "eq", "val", 1],
        ["id", "eq", 1, "name", "eq", 2],
        ["id", "eq", {"nested": 1}],
    ],
)
def test_other_list_shapes_are_left_for_the_contract_check(filters: list[Any]) -> None:
    candidate = response(rows_query(filters))
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == candidate
    assert outcome.applied_rules == ()
    assert not valid(outcome.normalized)


def test_filters_are_only_normalized_in_project_queries() -> None:
    candidate = response()
    candidate["next"] = {
        "kind": "tool",
        "operation": "database.lookup",
        "arguments": {"source_ref": "db", "filters": ["id", "eq", 1], "offset": 0, "limit": 5},
    }
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == candidate
    assert outcome.applied_rules == ()


def test_encoded_arguments_with_flat_filters_get_both_rules() -> None:
    candidate = response(json.dumps(rows_query(["id", "eq", 1])))
    outcome = recover(json.dumps(candidate))
    assert outcome.normalized == response()
    assert outcome.rule_ids == (RULE_DECODE_ARGUMENTS, RULE_FILTER_TRIPLE)


# --- limits -----------------------------------------------------------------------


def evidence_items(count: int) -> list[str]:
    item = {"evidence_id": "E1", "role": "context", "reference": ""}
    return [json.dumps(item)] * count


def test_sixteen_normalizations_are_allowed() -> None:
    outcome = recover(json.dumps(response(evidence=evidence_items(MAX_NORMALIZATIONS))))
    assert outcome.normalized is not None
    assert outcome.rule_ids == (RULE_DECODE_EVIDENCE,) * MAX_NORMALIZATIONS


def test_seventeen_normalizations_are_rejected() -> None:
    outcome = recover(json.dumps(response(evidence=evidence_items(MAX_NORMALIZATIONS + 1))))
    assert outcome.normalized is None
    assert outcome.error == NormalizationError(TOO_MANY_NORMALIZATIONS, "/evidence/16")
    assert len(outcome.applied_rules) == MAX_NORMALIZATIONS


def padded(size: int) -> str:
    text = json.dumps(response())
    return text[:-1] + " " * (size - len(text.encode("utf-8"))) + "}"


def test_exactly_65536_bytes_are_accepted() -> None:
    text = padded(MAX_INPUT_BYTES)
    assert len(text.encode("utf-8")) == MAX_INPUT_BYTES
    assert recover(text).normalized == response()


def test_65537_bytes_are_rejected_not_cut() -> None:
    text = padded(MAX_INPUT_BYTES + 1)
    outcome = recover(text)
    assert outcome.normalized is None
    assert outcome.error == NormalizationError(INPUT_TOO_LARGE, "")
    assert outcome.original == text


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    candidate = response()
    candidate["next"]["arguments"]["filters"][0]["value"] = "ä" * 32_768
    assert recover(json.dumps(candidate, ensure_ascii=False)).error == NormalizationError(
        INPUT_TOO_LARGE, ""
    )


def test_a_lone_surrogate_is_not_utf8() -> None:
    assert recover("\ud800").error == NormalizationError(NOT_UTF8, "")


def test_errors_carry_no_content() -> None:
    secret = "Wolpertinger"
    texts = [
        f"I think {secret}",
        '{"' + secret + '": 1, "' + secret + '": 2}',
        json.dumps(json.dumps(secret)),
        f"```python\n{secret}\n```",
    ]
    for text in texts:
        outcome = recover(text)
        assert outcome.error is not None
        assert secret not in repr(outcome.error)
        assert secret not in repr(outcome.refusals) + repr(outcome.applied_rules)


def test_rule_ids_are_stable() -> None:
    assert RULE_IDS == (
        "strip_outer_fence",
        "decode_encoded_response",
        "decode_encoded_next",
        "decode_encoded_next_arguments",
        "decode_encoded_evidence",
        "filter_from_triple",
        "filter_from_labelled_list",
    )


# --- properties ---------------------------------------------------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_filter_values = _scalars | st.lists(_scalars, min_size=1, max_size=3)
_columns = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True).filter(
    lambda c: c not in {"eq", "ne", "lt", "le", "gt", "ge", "in", "column", "operator", "value"}
)
_filters = st.lists(
    st.fixed_dictionaries(
        {
            "column": _columns,
            "operator": st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "contains", "in"]),
            "value": _filter_values,
        }
    ),
    min_size=1,
    max_size=4,
)
_evidence = st.lists(
    st.fixed_dictionaries(
        {
            "evidence_id": st.integers(1, 999).map(lambda n: f"E{n}"),
            "role": st.sampled_from(["supports", "contradicts", "context"]),
            "reference": st.sampled_from(["", "/rows/0", "L3", "L3-L9"]),
        }
    ),
    max_size=4,
)


def typed_scalars(value: Any) -> Counter[tuple[str, str]]:
    """The multiset of (type, value) of every scalar; labels in flat filters excluded."""
    found: Counter[tuple[str, str]] = Counter()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            if len(node) == 6 and node[0::2] == ["column", "operator", "value"]:
                node = node[1::2]
            for child in node:
                walk(child)
        else:
            found[(type(node).__name__, json.dumps(node))] += 1

    walk(value)
    return found


def written_as(unit: dict[str, Any], shape: str) -> Any:
    if shape == "triple":
        return [unit["column"], unit["operator"], unit["value"]]
    if shape == "labelled":
        return ["column", unit["column"], "operator", unit["operator"], "value", unit["value"]]
    return unit


@st.composite
def disguised(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """A well-formed response and a text with some of the slips the rules undo."""
    filters = draw(_filters)
    evidence = draw(_evidence)
    clean = response(rows_query(filters), evidence=evidence)
    messy = copy.deepcopy(clean)
    flat = [written_as(f, draw(st.sampled_from(["object", "triple", "labelled"]))) for f in filters]
    if len(flat) == 1 and isinstance(flat[0], list) and draw(st.booleans()):
        flat = flat[0]
    messy["next"]["arguments"]["filters"] = flat
    messy["evidence"] = [json.dumps(e) if draw(st.booleans()) else e for e in evidence]
    if draw(st.booleans()):
        messy["next"]["arguments"] = json.dumps(messy["next"]["arguments"])
    if draw(st.booleans()):
        messy["next"] = json.dumps(messy["next"])
    text = json.dumps(messy)
    if draw(st.booleans()):
        text = json.dumps(text)
    if draw(st.booleans()):
        text = draw(st.sampled_from(["```\n", "```json\n"])) + text + "\n```"
    return clean, text


@given(disguised())
def test_normalization_undoes_the_slips_and_never_changes_a_scalar(
    case: tuple[dict[str, Any], str],
) -> None:
    clean, text = case
    outcome = recover(text)
    assert outcome.error is None, outcome.error
    assert outcome.normalized == clean
    assert typed_scalars(outcome.normalized) == typed_scalars(clean)
    assert recover(text) == outcome  # deterministic


_json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=25,
)


@given(st.dictionaries(st.sampled_from(["next", "evidence", "x", "arguments"]), _json_values))
def test_a_normalized_candidate_keeps_every_scalar_of_the_parsed_original(
    original: dict[str, Any],
) -> None:
    outcome = recover(json.dumps(original))
    if outcome.normalized is not None and not outcome.applied_rules:
        assert outcome.normalized == original
    if outcome.normalized is not None:
        before = typed_scalars(_decode_known_strings(original))
        assert typed_scalars(outcome.normalized) == before


def _decode_known_strings(value: dict[str, Any]) -> dict[str, Any]:
    # Reference for the decode rules: what a once-encoded object at a known
    # position holds, counted as its scalars.
    result = copy.deepcopy(value)
    if isinstance(result.get("evidence"), list):
        result["evidence"] = [_object_or_same(item) for item in result["evidence"]]
    if "next" in result:
        result["next"] = _object_or_same(result["next"])
        step = result["next"]
        if isinstance(step, dict) and "arguments" in step:
            step["arguments"] = _object_or_same(step["arguments"])
    return result


def _object_or_same(value: Any) -> Any:
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        return decoded if isinstance(decoded, dict) else value
    return value


@given(st.text(max_size=300))
def test_fuzzed_text_never_raises_and_is_deterministic(text: str) -> None:
    outcome = recover(text)
    assert (outcome.normalized is None) != (outcome.error is None)
    assert outcome.original == text
    assert recover(text) == outcome
    assert set(outcome.rule_ids) <= set(RULE_IDS)
