"""The pure parts of the repair call: prompt, splice, preservation, re-validation."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viano_bug_analysis.investigation.recovery.admission import admit_repair
from viano_bug_analysis.investigation.recovery.repair import (
    FILTER_POSITION_CHANGED,
    INVALID_POINTER,
    NAMED_MAPPING_LOST,
    OUTSIDE_PATH_CHANGED,
    PATH_MISSING,
    PROMPT_ID,
    REPAIR_TOO_LARGE,
    REPLY_NOT_JSON,
    REPLY_NOT_REPLACEMENT,
    ROOT_TARGET,
    SCALAR_MULTISET_CHANGED,
    ContractViolation,
    RepairBinding,
    RepairError,
    build_repair_prompt,
    check_preservation,
    evaluate_repair,
    parse_replacement,
    revalidate,
    same,
    splice,
    value_at,
)
from viano_bug_analysis.schemas import load_schema

FILTERS = "/next/arguments/filters"


def response(filters: Any, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "hypothesis_id": "H2",
        "assessment": "undetermined",
        "confidence": 0.35,
        "evidence": [
            {"evidence_id": "E3", "role": "supports", "reference": "/rows/0/LogTitle"},
            {"evidence_id": "E5", "role": "context", "reference": "L12-L20"},
        ],
        "next": {
            "kind": "tool",
            "operation": "project.query",
            "arguments": {
                "kind": "database.rows",
                "table": "Logs",
                "columns": ["id", "LogTitle", "Created"],
                "filters": filters,
                "offset": 0,
                "limit": 20,
            },
        },
    }
    base.update(changes)
    return base


FLAT = ["name", "contains", "Wolpertinger", "id", "gt", 100]
GOOD = [
    {"column": "name", "operator": "contains", "value": "Wolpertinger"},
    {"column": "id", "operator": "gt", "value": 100},
]
BINDING = RepairBinding(
    hypothesis_id="H2",
    hypothesis="The import writes a log entry with the wrong title for Wolpertinger items.",
    previous_result="database.rows on Logs returned 3 rows (E3); line 12-20 of import.py (E5).",
    visible_evidence_ids=("E3", "E5"),
)


def reply(replacement: Any) -> str:
    return json.dumps({"replacement": replacement})


# --- splice -----------------------------------------------------------------


def test_splice_replaces_exactly_the_path_and_leaves_the_input() -> None:
    original = response(FLAT)
    kept = copy.deepcopy(original)
    repaired = splice(original, FILTERS, GOOD)
    assert original == kept
    assert repaired["next"]["arguments"]["filters"] == GOOD
    assert splice(repaired, FILTERS, FLAT) == original


def test_splice_follows_list_indices_and_escapes() -> None:
    doc = {"a/b": [{"~x": 1}]}
    assert splice(doc, "/a~1b/0/~0x", 2) == {"a/b": [{"~x": 2}]}
    assert value_at(doc, "/a~1b/0/~0x") == 1


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("", ROOT_TARGET),
        ("next", INVALID_POINTER),
        ("/nope", PATH_MISSING),
        ("/evidence/9", PATH_MISSING),
        ("/evidence/01", INVALID_POINTER),
        ("/evidence/x", INVALID_POINTER),
        ("/confidence/0", PATH_MISSING),
        ("/a~2", INVALID_POINTER),
    ],
)
def test_splice_refuses_paths_that_do_not_exist(path: str, code: str) -> None:
    with pytest.raises(RepairError) as raised:
        splice(response(FLAT), path, 1)
    assert raised.value.code == code


# --- preservation -----------------------------------------------------------


def test_a_pure_regrouping_preserves_everything() -> None:
    original = response(FLAT)
    assert check_preservation(original, splice(original, FILTERS, GOOD), FILTERS) == []


def test_labels_of_a_labelled_list_are_structure_not_values() -> None:
    original = response(["column", "id", "operator", "eq", "value", 1])
    repaired = splice(original, FILTERS, [{"column": "id", "operator": "eq", "value": 1}])
    assert check_preservation(original, repaired, FILTERS) == []
    wrong = splice(original, FILTERS, [{"column": "id", "operator": "eq", "value": "value"}])
    assert SCALAR_MULTISET_CHANGED in check_preservation(original, wrong, FILTERS)


def test_a_swap_of_column_and_value_is_rejected() -> None:
    original = response(["LogTitle", "contains", "Wolpertinger"])
    swapped = [{"column": "Wolpertinger", "operator": "contains", "value": "LogTitle"}]
    repaired = splice(original, FILTERS, swapped)
    # The multiset of scalars is the same; only the positions give it away.
    assert check_preservation(original, repaired, FILTERS) == [FILTER_POSITION_CHANGED]
    assert not revalidate(repaired)  # the contract alone would have let it through


def test_a_changed_value_is_rejected() -> None:
    original = response(["name", "contains", "Wolpertinger"])
    changed = [{"column": "name", "operator": "contains", "value": "Wolper"}]
    violations = check_preservation(original, splice(original, FILTERS, changed), FILTERS)
    assert SCALAR_MULTISET_CHANGED in violations
    assert FILTER_POSITION_CHANGED in violations


@pytest.mark.parametrize(
    "replacement",
    [
        [{"column": "id", "operator": "eq", "value": 1.0}],  # int became float
        [{"column": "id", "operator": "eq", "value": "1"}],  # int became string
        [{"column": "id", "operator": "eq", "value": True}],  # int became bool
    ],
)
def test_a_scalar_keeps_its_type(replacement: Any) -> None:
    original = response(["id", "eq", 1])
    violations = check_preservation(original, splice(original, FILTERS, replacement), FILTERS)
    assert SCALAR_MULTISET_CHANGED in violations


def test_a_scalar_keeps_its_multiplicity() -> None:
    original = response(["id", "in", [1, 1, 2]])
    fewer = [{"column": "id", "operator": "in", "value": [1, 2]}]
    assert SCALAR_MULTISET_CHANGED in check_preservation(
        original, splice(original, FILTERS, fewer), FILTERS
    )


def test_an_added_filter_is_rejected() -> None:
    original = response(["id", "eq", 1])
    more = [
        {"column": "id", "operator": "eq", "value": 1},
        {"column": "name", "operator": "contains", "value": "x"},
    ]
    assert SCALAR_MULTISET_CHANGED in check_preservation(
        original, splice(original, FILTERS, more), FILTERS
    )


def test_a_named_scalar_mapping_must_not_disappear() -> None:
    original = response({"id": 7})
    rewritten = [{"column": "id", "operator": "eq", "value": 7}]
    violations = check_preservation(original, splice(original, FILTERS, rewritten), FILTERS)
    assert NAMED_MAPPING_LOST in violations


def test_anything_outside_the_path_stays_exactly() -> None:
    original = response(FLAT)
    repaired = splice(original, FILTERS, GOOD)
    repaired["confidence"] = 0.9
    assert check_preservation(original, repaired, FILTERS) == [OUTSIDE_PATH_CHANGED]
    repaired = splice(original, FILTERS, GOOD)
    repaired["evidence"].append({"evidence_id": "E9", "role": "supports", "reference": "/"})
    assert check_preservation(original, repaired, FILTERS) == [OUTSIDE_PATH_CHANGED]
    repaired = splice(original, FILTERS, GOOD)
    repaired["next"]["arguments"]["limit"] = 20.0  # same number, other JSON type
    assert check_preservation(original, repaired, FILTERS) == [OUTSIDE_PATH_CHANGED]


def test_a_missing_path_is_a_violation() -> None:
    original = response(FLAT)
    gone = copy.deepcopy(original)
    del gone["next"]["arguments"]["filters"]
    assert check_preservation(original, gone, FILTERS) == [PATH_MISSING]


def test_same_compares_json_types() -> None:
    assert same({"a": [1, "x", None]}, {"a": [1, "x", None]})
    assert not same(1, 1.0)
    assert not same(1, True)
    assert not same([1], [1, 1])
    assert not same({"a": 1}, {"b": 1})


# --- revalidation -----------------------------------------------------------


def test_revalidate_uses_the_whole_original_contract() -> None:
    assert revalidate(response(GOOD)) == []
    errors = revalidate(response(FLAT))
    assert ContractViolation(f"{FILTERS}/0", "type") in errors
    bad = response(GOOD, confidence=1.5)
    assert ContractViolation("/confidence", "maximum") in revalidate(bad)


def test_revalidate_resolves_through_the_matching_alternative() -> None:
    unknown = response(GOOD)
    unknown["next"]["operation"] = "shell.exec"
    assert revalidate(unknown) == [ContractViolation("/next", "unknown_action")]
    wrong_query_kind = response(GOOD)
    wrong_query_kind["next"]["arguments"]["kind"] = "database.drop"
    paths = {v.path for v in revalidate(wrong_query_kind)}
    assert "/next/arguments/kind" in paths


# --- the reply ---------------------------------------------------------------


def test_parse_replacement_takes_only_the_replacement_object() -> None:
    assert parse_replacement(reply(GOOD)) == GOOD
    for text, code in [
        ('{"replacement": 1', REPLY_NOT_JSON),
        ('{"replacement": 1, "replacement": 2}', REPLY_NOT_JSON),
        ('```json\n{"replacement": 1}\n```', REPLY_NOT_JSON),
        ('{"replacement": 1, "note": "x"}', REPLY_NOT_REPLACEMENT),
        ("[1]", REPLY_NOT_REPLACEMENT),
        ('{"filters": []}', REPLY_NOT_REPLACEMENT),
        ('{"replacement": "' + "x" * 70_000 + '"}', REPAIR_TOO_LARGE),
    ]:
        with pytest.raises(RepairError) as raised:
            parse_replacement(text)
        assert raised.value.code == code
        assert "x" * 10 not in str(raised.value)  # no content in the error


def test_evaluate_repair_accepts_a_faithful_regrouping() -> None:
    original = response(FLAT)
    outcome = evaluate_repair(original, FILTERS, reply(GOOD))
    assert outcome.accepted
    assert outcome.repaired == response(GOOD)
    assert original == response(FLAT)


@pytest.mark.parametrize(
    ("replacement", "violation"),
    [
        (
            [
                {"column": "name", "operator": "contains", "value": "Wolpert"},
                {"column": "id", "operator": "gt", "value": 100},
            ],
            SCALAR_MULTISET_CHANGED,
        ),
        (
            [
                {"column": "Wolpertinger", "operator": "contains", "value": "name"},
                {"column": "id", "operator": "gt", "value": 100},
            ],
            FILTER_POSITION_CHANGED,
        ),
        (
            [{"column": "name", "operator": "contains", "value": "Wolpertinger"}],
            SCALAR_MULTISET_CHANGED,
        ),
    ],
)
def test_evaluate_repair_rejects_changed_query_values(replacement: Any, violation: str) -> None:
    outcome = evaluate_repair(response(FLAT), FILTERS, reply(replacement))
    assert not outcome.accepted
    assert outcome.repaired is None
    assert violation in outcome.violations


def test_evaluate_repair_rejects_a_preserving_but_invalid_result() -> None:
    # Same scalars in the same places, but still not the contract's shape.
    shuffled = [["name", "contains", "Wolpertinger"], ["id", "gt", 100]]
    outcome = evaluate_repair(response(FLAT), FILTERS, reply(shuffled))
    assert outcome.violations == ("contract_violation",)


def test_evaluate_repair_rejects_broken_replies() -> None:
    assert evaluate_repair(response(FLAT), FILTERS, "not json").violations == (REPLY_NOT_JSON,)


# --- the prompt --------------------------------------------------------------

WOLPERTINGER_TEXT = json.dumps(response(["LogTitle", "contains", "Wolpertinger"]), indent=2)


def test_the_repair_prompt_holds_only_its_four_parts() -> None:
    admission = admit_repair(response(FLAT))
    assert admission.admitted and admission.schema_excerpt is not None
    text = json.dumps(response(FLAT), indent=2)
    prompt = build_repair_prompt(text, admission.target, admission.schema_excerpt, BINDING)
    assert PROMPT_ID in prompt
    # Only the value at the path is repeated, canonically; the rest cannot change.
    assert f"Value at the error path: {_compact(FLAT)}" in prompt
    assert "/rows/0/LogTitle" not in prompt and '"confidence"' not in prompt
    assert f"Error path: {FILTERS}" in prompt
    assert '"required":["column","operator","value"]' in prompt
    # The excerpt keeps the structure, not the prose or the bounds of single values.
    assert '"description"' not in prompt and '"maxItems"' not in prompt
    assert BINDING.hypothesis in prompt and BINDING.previous_result in prompt
    assert "E3, E5" in prompt
    assert '"replacement"' in prompt
    assert "only" in prompt
    # Deterministic.
    assert prompt == build_repair_prompt(text, admission.target, admission.schema_excerpt, BINDING)


def test_the_repair_prompt_refuses_oversized_responses_and_the_root() -> None:
    with pytest.raises(RepairError) as raised:
        build_repair_prompt("x" * 65_537, FILTERS, {}, BINDING)
    assert raised.value.code == REPAIR_TOO_LARGE
    with pytest.raises(RepairError) as raised:
        build_repair_prompt("{}", "", {}, BINDING)
    assert raised.value.code == ROOT_TARGET


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def normal_investigation_prompt(response_text_example: str) -> str:
    """A stand-in for the regular investigation prompt of one step (fixture only)."""
    schema = load_schema("investigation-response-v1")
    operations = _compact(schema["$defs"]["investigation-request-v1"]["$defs"])
    query = schema["$defs"]["project-query-v1"]["$defs"]
    queries = _compact({"query": query["query"], "filter": query["filter"]})
    evidence_rows = "\n".join(
        f"E{i}: Logs row id={100 + i}, LogTitle='Import Wolpertinger batch {i}', "
        f"Created='2024-03-0{i} 10:1{i}:00', Level='warning', Source='ImportService'"
        for i in range(1, 6)
    )
    code_lines = "\n".join(
        f"L{n}: {line}"
        for n, line in enumerate(
            [
                "def write_log(item, session):",
                "    title = item.display_name or item.name",
                "    if item.kind == 'creature':",
                "        title = title.split(' ')[0]",
                "    entry = Log(LogTitle=title, Level='warning')",
                "    session.add(entry)",
                "    return entry",
            ]
            * 3,
            start=12,
        )
    )
    return "\n\n".join(
        [
            "You investigate one hypothesis about a reported bug in a read-only snapshot "
            "of the project. Assess the hypothesis against the visible evidence only, "
            "cite evidence by its E-ID with its role and a reference into it, state your "
            "confidence from 0 to 1, and choose exactly one next step: one read-only tool "
            "call or a conclusion. Do not invent evidence IDs. Do not repeat a query "
            "whose result is already visible. Prefer the smallest query that can "
            "distinguish the hypothesis from its alternatives. Answer with exactly one "
            "JSON object and nothing else.",
            "Case: Users report that the import of catalogue items shows the wrong title "
            "in the activity log for items whose name contains a space (for example "
            "'Wolpertinger Deluxe'). The log shows only the first word. Version 4.2.1, "
            "MariaDB snapshot taken 2024-03-06, source commit 9f3c2e1.",
            "Hypotheses:\nH1: The UI truncates long titles.\nH2: "
            + BINDING.hypothesis
            + "\nH3: The database column LogTitle is too short.",
            "Current hypothesis: H2. Budget: 6 of 12 tool calls left.",
            "Visible evidence:\n" + evidence_rows + "\nE5: import.py\n" + code_lines,
            "Previous result: " + BINDING.previous_result,
            "Snapshot operations and their arguments (JSON Schema):\n" + operations,
            "ProjectResearch queries (operation project.query, JSON Schema):\n" + queries,
            "Filters: a list of {column, operator, value}; operators eq, ne, lt, le, gt, "
            "ge, contains, in; several filters are AND-combined.",
            "Response format: {hypothesis_id, assessment (supported|refuted|undetermined), "
            "confidence, evidence [{evidence_id, role (supports|contradicts|context), "
            "reference}], next}. Example:\n" + response_text_example,
        ]
    )


def test_the_repair_prompt_is_much_smaller_than_a_normal_call() -> None:
    flat_text = json.dumps(response(FLAT), indent=2)
    admission = admit_repair(response(FLAT))
    assert admission.schema_excerpt is not None
    repair = build_repair_prompt(flat_text, admission.target, admission.schema_excerpt, BINDING)
    normal = normal_investigation_prompt(WOLPERTINGER_TEXT)
    # The seed's fixture: 2,199 vs 10,353 characters (ratio 0.21). This
    # fixture measures 2,859 vs 12,935 characters (ratio 0.22).
    assert len(repair) < 0.3 * len(normal)
    # The repair prompt carries no case interpretation, code or raw evidence.
    for absent in ("Case:", "def write_log", "LogTitle='Import", "Hypotheses:", "H3"):
        assert absent not in repair


# --- property: accepted repairs keep the typed scalars ----------------------

_scalar = st.one_of(
    st.integers(-(10**6), 10**6),
    st.text(alphabet="abcXYZ_% ", min_size=1, max_size=8),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
_triple = st.tuples(
    st.sampled_from(["id", "name", "LogTitle"]),
    st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]),
    _scalar,
)


@settings(deadline=None)
@given(st.lists(_triple, min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_accepted_repairs_keep_the_multiset_of_typed_scalars(
    triples: list[tuple[str, str, Any]], rng: Any
) -> None:
    flat = [item for triple in triples for item in triple]
    original = response(flat)
    objects = [{"column": c, "operator": o, "value": v} for c, o, v in triples]
    candidates = [objects, list(reversed(objects))]
    # A tampered candidate: one value swapped into a column or changed.
    tampered = copy.deepcopy(objects)
    index = rng.randrange(len(tampered))
    tampered[index]["column"], tampered[index]["value"] = (
        tampered[index]["value"],
        tampered[index]["column"],
    )
    candidates.append(tampered)
    for candidate in candidates:
        outcome = evaluate_repair(original, FILTERS, reply(candidate))
        if outcome.accepted:
            assert outcome.repaired is not None
            before = sorted(json.dumps([type(x).__name__, x]) for x in flat)
            after_filters = outcome.repaired["next"]["arguments"]["filters"]
            after = sorted(
                json.dumps([type(x).__name__, x])
                for item in after_filters
                for x in (item["column"], item["operator"], item["value"])
            )
            assert before == after
