"""The pure parts of the small repair call ``investigation_format_repair_v1``.

After :mod:`.admission` has admitted a repair for one structural target, the
LLM gets a short prompt (:func:`build_repair_prompt`) with only the generated
response, the error path, the schema excerpt and a few binding data, and
returns ``{"replacement": ...}``. The program then splices that replacement
in at exactly the path (:func:`splice`), checks that nothing was invented,
lost or moved (:func:`check_preservation`) and re-validates the whole rebuilt
response against the original contract (:func:`revalidate`).

No network here, and nothing raised or returned carries response content:
errors hold a code and at most a JSON Pointer.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from viano_bug_analysis.investigation.recovery.normalize import FILTER_OPERATORS, MAX_INPUT_BYTES
from viano_bug_analysis.investigation.recovery.strict_json import JsonFailure, parse_strict
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.schemas import fast_validator, schema_validator

PROMPT_ID: Final = "investigation_format_repair_v1"
RESPONSE_SCHEMA: Final = "investigation-response-v1"
# Version 2 (the calls of investigation_project_v4 on): case.facts and P-ID citations.
RESPONSE_SCHEMA_V2: Final = "investigation-response-v2"
RESPONSE_SCHEMAS: Final = frozenset({RESPONSE_SCHEMA, RESPONSE_SCHEMA_V2})
CASE_FACTS_OPERATION: Final = "case.facts"

# Preservation violation codes.
PATH_MISSING: Final = "path_missing"
OUTSIDE_PATH_CHANGED: Final = "outside_path_changed"
SCALAR_MULTISET_CHANGED: Final = "scalar_multiset_changed"
NAMED_MAPPING_LOST: Final = "named_mapping_lost"
FILTER_POSITION_CHANGED: Final = "filter_position_changed"

# Repair error codes.
INVALID_POINTER: Final = "invalid_pointer"
ROOT_TARGET: Final = "root_target"
REPLY_NOT_JSON: Final = "reply_not_json"
REPLY_NOT_REPLACEMENT: Final = "reply_not_replacement"
REPAIR_TOO_LARGE: Final = "repair_too_large"

# Names of the ``next`` alternatives of the response schema, by operation.
SNAPSHOT_OPERATIONS: Final = (
    "source.find_text",
    "source.find_symbol",
    "source.read_context",
    "database.describe",
    "database.lookup",
    "database.find_references",
)
_FILTER_KEYS: Final = ("column", "operator", "value")


class RepairError(Exception):
    """A repair step that cannot go on; carries a code and a JSON Pointer, never content."""

    def __init__(self, code: str, path: str = "") -> None:
        super().__init__(code)
        self.code = code
        self.path = path


@dataclass(frozen=True, slots=True)
class ContractViolation:
    """One place where a response breaks the contract: a JSON Pointer and the keyword."""

    path: str
    keyword: str


@dataclass(frozen=True, slots=True)
class RepairBinding:
    """The few binding data a repair prompt may carry."""

    hypothesis_id: str
    hypothesis: str
    previous_result: str
    visible_evidence_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RepairOutcome:
    """The checked result of one repair reply: the rebuilt response or the reasons against it."""

    accepted: bool
    repaired: dict[str, Any] | None
    violations: tuple[str, ...]


# --- JSON Pointer -----------------------------------------------------------


def pointer_tokens(path: str) -> list[str]:
    """The reference tokens of an RFC 6901 JSON Pointer."""
    if path == "":
        return []
    if not path.startswith("/"):
        raise RepairError(INVALID_POINTER, "")
    tokens = path[1:].split("/")
    for token in tokens:
        rest = token.replace("~0", "").replace("~1", "")
        if "~" in rest:
            raise RepairError(INVALID_POINTER, "")
    return [token.replace("~1", "/").replace("~0", "~") for token in tokens]


def to_pointer(parts: Sequence[object]) -> str:
    """A JSON Pointer from path parts (keys and list indices)."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def _step(container: Any, token: str, path: str) -> tuple[Any, str | int]:
    if isinstance(container, dict):
        if token not in container:
            raise RepairError(PATH_MISSING, path)
        return container[token], token
    if isinstance(container, list):
        if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
            raise RepairError(INVALID_POINTER, path)
        index = int(token)
        if index >= len(container):
            raise RepairError(PATH_MISSING, path)
        return container[index], index
    raise RepairError(PATH_MISSING, path)


def value_at(document: Any, path: str) -> Any:
    """The value at a JSON Pointer; :class:`RepairError` if there is none."""
    current = document
    for token in pointer_tokens(path):
        current, _ = _step(current, token, path)
    return current


def splice(response: dict[str, Any], path: str, replacement: Any) -> dict[str, Any]:
    """A copy of ``response`` with exactly the value at ``path`` replaced.

    The path must already exist; the whole response (``""``) is never a target.
    The input is not changed.
    """
    tokens = pointer_tokens(path)
    if not tokens:
        raise RepairError(ROOT_TARGET, path)
    result: dict[str, Any] = json_copy(response)
    parent: Any = result
    for token in tokens[:-1]:
        parent, _ = _step(parent, token, path)
    _, key = _step(parent, tokens[-1], path)
    parent[key] = json_copy(replacement)
    return result


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value, without recursion (``copy.deepcopy`` recurses)."""
    if not isinstance(value, (dict, list)):
        return value
    root: Any = {} if isinstance(value, dict) else []
    pending: list[tuple[Any, Any]] = [(value, root)]
    while pending:
        source, target = pending.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if isinstance(item, (dict, list)):
                child: Any = {} if isinstance(item, dict) else []
                pending.append((item, child))
            else:
                child = item
            if isinstance(target, dict):
                target[key] = child
            else:
                target.append(child)
    return root


# --- Preservation -----------------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _is_scalar(value: Any) -> bool:
    return _kind(value) not in ("array", "object")


def same(left: Any, right: Any) -> bool:
    """Equality that also compares JSON types (``1``, ``1.0`` and ``true`` differ).

    Iterative: the comparison must not depend on Python's recursion limit.
    """
    pending = [(left, right)]
    while pending:
        a, b = pending.pop()
        if _kind(a) != _kind(b):
            return False
        if isinstance(a, dict):
            if a.keys() != b.keys():
                return False
            pending.extend((a[key], b[key]) for key in a)
        elif isinstance(a, list):
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif a != b:
            return False
    return True


Typed = tuple[str, bytes]


def _typed(value: Any) -> Typed:
    """A hashable typed form of a JSON value (scalars and scalar lists alike)."""
    # No depth limit here: the value was parsed already, and the encoder is iterative.
    return _kind(value), canonical_bytes(value, max_depth=sys.maxsize)


def _scalars(value: Any) -> Iterator[Typed]:
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            pending.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            # The labels of a labelled filter list are structure, not values.
            items = node[1::2] if _labelled(node) else node
            pending.extend(reversed(items))
        else:
            yield _typed(node)


def _labelled(items: list[Any]) -> bool:
    return (
        bool(items)
        and len(items) % 6 == 0
        and all(_is_scalar(item) or _is_scalar_list(item) for item in items)
        and all(tuple(items[i : i + 6 : 2]) == _FILTER_KEYS for i in range(0, len(items), 6))
    )


def _named_scalars(value: Any) -> Iterator[tuple[str, Typed]]:
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            children = []
            for key, item in node.items():
                if _is_scalar(item):
                    yield key, _typed(item)
                else:
                    children.append(item)
            pending.extend(reversed(children))
        elif isinstance(node, list):
            pending.extend(reversed(node))


Triple = tuple[Typed, Typed, Typed]


def filter_triples(value: Any) -> list[Triple]:
    """The recognizable filter triples in a value, in order.

    Recognized are filter objects ``{"column", "operator", "value"}``, flat
    triples ``[column, operator, value, ...]`` whose operator positions hold
    contract operators, and labelled lists ``["column", c, "operator", o,
    "value", v, ...]``. Lists nested in a list are looked at one by one.
    """
    found: list[Triple] = []
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            if set(node) == set(_FILTER_KEYS):
                found.append(
                    (_typed(node["column"]), _typed(node["operator"]), _typed(node["value"]))
                )
            else:
                pending.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            groups = flat_filter_groups(node)
            if groups is not None:
                found.extend((_typed(c), _typed(o), _typed(v)) for c, o, v in groups)
            else:
                pending.extend(reversed(node))
    return found


def flat_filter_groups(items: list[Any]) -> list[tuple[Any, Any, Any]] | None:
    """``items`` read as flat filters (triples or labelled sixes), or None if they are not."""
    if not items or not all(_is_scalar(item) or _is_scalar_list(item) for item in items):
        return None
    if _labelled(items):
        return [tuple(items[i + 1 : i + 6 : 2]) for i in range(0, len(items), 6)]
    if len(items) % 3 == 0 and all(
        isinstance(items[i], str)
        and isinstance(items[i + 1], str)
        and items[i + 1] in FILTER_OPERATORS
        for i in range(0, len(items), 3)
    ):
        return [(items[i], items[i + 1], items[i + 2]) for i in range(0, len(items), 3)]
    return None


def _is_scalar_list(value: Any) -> bool:
    return isinstance(value, list) and all(_is_scalar(item) for item in value)


def check_preservation(original: dict[str, Any], repaired: dict[str, Any], path: str) -> list[str]:
    """The preservation rules a repair at ``path`` breaks (violation codes, sorted; empty: none).

    Inside the path every scalar keeps its type and multiplicity, named scalar
    mappings (``key: scalar``) stay, and recognizable filter triples keep
    their column/operator/value positions. Outside the path nothing changes.
    """
    try:
        before = value_at(original, path)
        after = value_at(repaired, path)
        restored = splice(repaired, path, before)
    except RepairError:
        return [PATH_MISSING]
    violations: set[str] = set()
    if not same(restored, original):
        violations.add(OUTSIDE_PATH_CHANGED)
    if Counter(_scalars(before)) != Counter(_scalars(after)):
        violations.add(SCALAR_MULTISET_CHANGED)
    if Counter(_named_scalars(before)) - Counter(_named_scalars(after)):
        violations.add(NAMED_MAPPING_LOST)
    before_triples = filter_triples(before)
    if before_triples and Counter(before_triples) != Counter(filter_triples(after)):
        violations.add(FILTER_POSITION_CHANGED)
    return sorted(violations)


# --- The contract -----------------------------------------------------------


def contract_errors(response: Any, schema: str = RESPONSE_SCHEMA) -> list[ContractViolation]:
    """Every contract error of a response, resolved through the matching ``next`` alternative.

    A failed ``oneOf`` at ``/next`` is replaced by the errors of the
    alternative whose ``kind``/``operation`` matches; when none matches, the
    error is ``unknown_action`` at ``/next``. Sorted by path; no content.
    ``schema`` names another bundled response schema (the case interpretation's),
    whose errors are taken as they are.
    """
    if fast_validator(schema).is_valid(response):
        return []
    validator = schema_validator(schema)
    found: set[ContractViolation] = set()
    for error in validator.iter_errors(response):
        parts = list(error.absolute_path)
        if schema in RESPONSE_SCHEMAS and parts == ["next"] and error.validator == "oneOf":
            reference = next_alternative(response.get("next"), schema)
            if reference is None:
                found.add(ContractViolation("/next", "unknown_action"))
                continue
            sub = validator.evolve(schema={"$ref": reference})
            for inner in sub.iter_errors(response["next"]):
                path = to_pointer(["next", *inner.absolute_path])
                found.add(ContractViolation(path, str(inner.validator)))
            continue
        found.add(ContractViolation(to_pointer(parts), str(error.validator)))
    return sorted(found, key=lambda v: (v.path, v.keyword))


def next_alternative(step: Any, schema: str = RESPONSE_SCHEMA) -> str | None:
    """The ``$ref`` of the ``next`` alternative that ``kind``/``operation`` select in
    ``schema``, or None."""
    if not isinstance(step, dict):
        return None
    if step.get("kind") == "conclusion":
        return "#/$defs/next_conclusion"
    if step.get("kind") != "tool":
        return None
    operation = step.get("operation")
    if operation == "project.query":
        return "#/$defs/next_project_query"
    if operation == CASE_FACTS_OPERATION and schema == RESPONSE_SCHEMA_V2:
        return "#/$defs/next_case_facts"
    if isinstance(operation, str) and operation in SNAPSHOT_OPERATIONS:
        return f"#/$defs/next_snapshot/{operation}"
    return None


def revalidate(repaired: Any, schema: str = RESPONSE_SCHEMA) -> list[ContractViolation]:
    """The full original contract on a rebuilt response (empty: it holds)."""
    return contract_errors(repaired, schema)


# --- The call ---------------------------------------------------------------


def _compact(value: Any) -> str:
    return canonical_bytes(value).decode("utf-8")


_NOT_STRUCTURAL_KEYWORDS: Final = frozenset(
    {
        "description",
        "title",
        "$comment",
        "examples",
        "default",
        "x-viano-response-recovery",
        # Bounds and forms of single values: a restructuring keeps every value,
        # and the whole contract checks them again afterwards.
        "pattern",
        "format",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
    }
)
_COMBINATORS: Final = ("anyOf", "oneOf", "allOf")


def structural_excerpt(schema: Any) -> Any:
    """A schema excerpt reduced to its structure: no prose (descriptions,
    titles, comments) and no bounds or forms of single values (patterns,
    lengths, counts, ranges).

    The repair only restructures existing values; every rule left out here
    still holds, since the rebuilt response is checked against the whole
    contract.
    """
    if isinstance(schema, dict):
        kept = {
            key: structural_excerpt(value)
            for key, value in schema.items()
            if key not in _NOT_STRUCTURAL_KEYWORDS
        }
        for key in _COMBINATORS:  # alternatives that only differed in value forms
            if isinstance(kept.get(key), list) and all(item == {} for item in kept[key]):
                del kept[key]
        return kept
    if isinstance(schema, list):
        return [structural_excerpt(item) for item in schema]
    return schema


def build_repair_prompt(
    response_text: str, error_path: str, schema_excerpt: Any, binding: RepairBinding
) -> str:
    """The whole ``investigation_format_repair_v1`` prompt.

    It holds only the part of the generated response that is to be
    restructured (the value at the error path, as canonical JSON: the rest
    of the answer cannot change, so it is not repeated), the error path, the
    schema excerpt without its prose and the binding data: no case
    interpretation, code history, raw evidence or research instructions. A
    response over 65,536 UTF-8 bytes is never copied into a repair call
    (:class:`RepairError` ``repair_too_large``); one whose text is not a JSON
    object with a value at the path is ``reply_not_json`` / ``path_missing``.
    """
    pointer_tokens(error_path)  # checks the form
    if not error_path:
        raise RepairError(ROOT_TARGET, "")
    if len(response_text.encode("utf-8", "surrogatepass")) > MAX_INPUT_BYTES:
        raise RepairError(REPAIR_TOO_LARGE, "")
    parsed = parse_strict(response_text)
    if isinstance(parsed, JsonFailure):
        raise RepairError(REPLY_NOT_JSON, "")
    value = value_at(parsed.value, error_path)
    visible = ", ".join(binding.visible_evidence_ids) or "(none)"
    return "\n".join(
        [
            f"Prompt: {PROMPT_ID}",
            "The value at the error path of your previous answer has the wrong JSON "
            "structure. Restructure it to match the schema, keeping every value exactly "
            "(text, number, type, count; each filter's column, operator and value in place) "
            'and adding nothing. Reply with only a JSON object, its one key "replacement" '
            "holding the new value.",
            f"Hypothesis {binding.hypothesis_id}: {binding.hypothesis}",
            f"Previous result: {binding.previous_result or '(none)'}",
            f"Visible evidence IDs: {visible}",
            f"Error path: {error_path}",
            f"Schema: {_compact(structural_excerpt(schema_excerpt))}",
            f"Value at the error path: {_compact(value)}",
        ]
    )


def parse_replacement(reply_text: str) -> Any:
    """The ``replacement`` of a repair reply; strict JSON with exactly that one key."""
    if len(reply_text.encode("utf-8", "surrogatepass")) > MAX_INPUT_BYTES:
        raise RepairError(REPAIR_TOO_LARGE, "")
    parsed = parse_strict(reply_text)
    if isinstance(parsed, JsonFailure):
        raise RepairError(REPLY_NOT_JSON, "")
    value = parsed.value
    if not isinstance(value, dict) or set(value) != {"replacement"}:
        raise RepairError(REPLY_NOT_REPLACEMENT, "")
    return value["replacement"]


def evaluate_repair(
    original: dict[str, Any], path: str, reply_text: str, schema: str = RESPONSE_SCHEMA
) -> RepairOutcome:
    """Parse, splice, preservation check and full re-validation of one repair reply."""
    try:
        repaired = splice(original, path, parse_replacement(reply_text))
    except RepairError as error:
        return RepairOutcome(False, None, (error.code,))
    violations = check_preservation(original, repaired, path)
    if violations:
        return RepairOutcome(False, None, tuple(violations))
    errors = revalidate(repaired, schema)
    if errors:
        return RepairOutcome(False, None, ("contract_violation",))
    return RepairOutcome(True, repaired, ())


__all__ = [
    "CASE_FACTS_OPERATION",
    "FILTER_POSITION_CHANGED",
    "INVALID_POINTER",
    "NAMED_MAPPING_LOST",
    "OUTSIDE_PATH_CHANGED",
    "PATH_MISSING",
    "PROMPT_ID",
    "REPAIR_TOO_LARGE",
    "REPLY_NOT_JSON",
    "REPLY_NOT_REPLACEMENT",
    "RESPONSE_SCHEMAS",
    "RESPONSE_SCHEMA_V2",
    "ROOT_TARGET",
    "SCALAR_MULTISET_CHANGED",
    "SNAPSHOT_OPERATIONS",
    "ContractViolation",
    "RepairBinding",
    "RepairError",
    "RepairOutcome",
    "build_repair_prompt",
    "check_preservation",
    "contract_errors",
    "evaluate_repair",
    "filter_triples",
    "flat_filter_groups",
    "next_alternative",
    "parse_replacement",
    "revalidate",
    "same",
    "splice",
    "structural_excerpt",
    "to_pointer",
    "value_at",
]
