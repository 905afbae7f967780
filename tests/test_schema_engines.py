"""Both schema engines agree on every document, for every bundled schema (issue 11, point 21).

The compiled validator (jsonschema-rs) answers yes/no and the precise one
(jsonschema) is asked only for a rejected document, to name the error. If
they disagreed, a document could be accepted that the precise rules refuse,
or refused with no error to name. Documents are generated from each schema
(so that many are valid) and then mutated at random places with values
chosen to probe the differences between the engines: integral floats,
integers beyond 64 bits, ``-0.0``, booleans where numbers go, trailing
newlines against anchored patterns, unknown and missing properties.

Lone surrogates are left out: every entry point refuses them before schema
validation (``jsonio``), and the compiled engine cannot take them.
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.project_research.research_fakes import FakeDatabase, FakeGit, make_config
from tests.project_research.test_service import VALID as RESEARCH_QUERIES
from tests.test_schema_errors import REQUEST
from viano_bug_analysis.project_research import ProjectResearch, ResearchError, validate_query
from viano_bug_analysis.project_research.captures import Capture
from viano_bug_analysis.schema_errors import describe_first
from viano_bug_analysis.schemas import (
    available_schemas,
    fast_validator,
    load_schema,
    schema_validator,
)

SAMPLE_SPEC = Path(__file__).resolve().parents[1] / "samples" / "bug-20" / "case-spec.json"
V1_CAPTURES = Path(__file__).resolve().parent / "fixtures" / "project-captures-v1"
MAX_DEPTH = 6

PROBES: list[Any] = [
    0,
    1,
    -1,
    10,
    2**31,
    2**63,
    2**64,
    2**70,
    -(2**70),
    0.0,
    -0.0,
    1.0,
    10.0,
    1e16,
    1.5,
    -2.5,
    True,
    False,
    None,
    "",
    "x",
    "H1",
    "H1\n",
    "a\nb",
    "src-001",
    "0" * 64,
    "é",
    [],
    [1],
    ["x"],
    {},
    {"zz_extra": 1},
]


def _ids(node: Any, found: dict[str, Any] | None = None) -> dict[str, Any]:
    """Embedded schema resources by ``$id`` (the response schema embeds two)."""
    found = {} if found is None else found
    if isinstance(node, dict):
        if isinstance(node.get("$id"), str):
            found[node["$id"]] = node
        for child in node.values():
            _ids(child, found)
    elif isinstance(node, list):
        for child in node:
            _ids(child, found)
    return found


def _resolve(root: dict[str, Any], ref: str, top: dict[str, Any]) -> Any:
    resource, _, fragment = ref.partition("#")
    node: Any = _ids(top)[resource] if resource else root
    for part in fragment.removeprefix("/").split("/") if fragment else []:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _merged(node: dict[str, Any], root: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    # allOf branches (and $ref siblings) contribute properties; if/then is left
    # to the mutations, which switch discriminators among the schema's constants.
    merged = {k: v for k, v in node.items() if k not in {"allOf", "$ref"}}
    parts = list(node.get("allOf", []))
    if "$ref" in node:
        parts.append(_resolve(root, node["$ref"], top))
    for part in parts:
        part = _merged(part, root, top) if isinstance(part, dict) else {}
        for key in ("properties",):
            if key in part:
                merged[key] = {**part[key], **merged.get(key, {})}
        if "required" in part:
            merged["required"] = sorted(set(merged.get("required", [])) | set(part["required"]))
        for key, value in part.items():
            merged.setdefault(key, value)
    return merged


def _chain(node: dict[str, Any]) -> list[Any]:
    """An ``if``/``then``/``else`` chain over one discriminator as the ``allOf``
    branches it equals (investigation-result-v1 chains its operations so that
    a validator stops at the matching one)."""
    links: list[Any] = []
    link: Any = node
    while isinstance(link, dict) and "if" in link and "then" in link:
        links.append({"if": link["if"], "then": link["then"]})
        link = link.get("else")
    return links


def _discriminated(node: dict[str, Any], root: dict[str, Any], top: dict[str, Any]) -> list[Any]:
    """One schema per ``if {X: const} then ...`` branch of ``allOf``, with X fixed.

    Without this almost no generated request, query or response would be
    valid: their shape is chosen by a discriminator property.
    """
    simple, rest = [], []
    for item in [*node.get("allOf", []), *_chain(node)]:
        props = item.get("if", {}).get("properties", {}) if isinstance(item, dict) else {}
        if "then" in item and len(props) == 1 and "const" in next(iter(props.values())):
            simple.append(item)
        else:
            rest.append(item)
    branches = []
    for item in simple:
        name, condition = next(iter(item["if"]["properties"].items()))
        then = item["then"]
        if "$ref" in then:
            then = _resolve(root, then["$ref"], top)
        base = {k: v for k, v in node.items() if k not in {"allOf", "if", "then", "else"}}
        properties = {**base.get("properties", {}), **then.get("properties", {})}
        properties[name] = {"const": condition["const"]}
        required = sorted({*base.get("required", []), *then.get("required", []), name})
        branch = {**base, **{k: v for k, v in then.items() if k not in {"properties", "required"}}}
        branch.update(properties=properties, required=required, allOf=rest)
        branch.pop("$id", None)
        branches.append(branch)
    return branches


def _regex(pattern: str) -> st.SearchStrategy[str]:
    try:
        re.compile(pattern)
    except re.error:
        return st.text(max_size=8)
    # Generated as ECMA-262 reads the anchor; mutations probe the trailing newline.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return st.from_regex(pattern).filter(lambda s: len(s) <= 200)


def from_schema(
    node: Any, root: dict[str, Any], depth: int = 0, top: dict[str, Any] | None = None
) -> st.SearchStrategy[Any]:
    """Documents shaped by ``node`` (mostly valid; never guaranteed to be)."""
    if not isinstance(node, dict):
        return st.sampled_from(PROBES)
    top = node if top is None else top
    if isinstance(node.get("$id"), str):
        root = node  # a fragment reference inside an embedded resource is relative to it
    if "$ref" in node:
        target = _resolve(root, node["$ref"], top)
        resource_id = node["$ref"].partition("#")[0]
        resource = _ids(top)[resource_id] if resource_id else root
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return from_schema(
            {**rest, **target} if isinstance(target, dict) else target, resource, depth, top
        )
    branches = _discriminated(node, root, top)
    if branches:
        return st.one_of([from_schema(branch, root, depth, top) for branch in branches])
    node = _merged(node, root, top)
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    for key in ("oneOf", "anyOf"):
        if key in node:
            rest = {k: v for k, v in node.items() if k != key}
            return st.one_of(
                [from_schema({**rest, **branch}, root, depth, top) for branch in node[key]]
            )
    types = node.get("type")
    if types is None:
        types = "object" if "properties" in node else ["string", "integer", "null", "boolean"]
    if isinstance(types, list):
        return st.one_of([from_schema({**node, "type": t}, root, depth, top) for t in types])
    if depth > MAX_DEPTH:
        return st.sampled_from(PROBES)
    if types == "object":
        return _object(node, root, depth, top)
    if types == "array":
        items = node.get("items", True)
        low = node.get("minItems", 0)
        high = min(node.get("maxItems", low + 2), low + 2)
        return st.lists(from_schema(items, root, depth + 1, top), min_size=low, max_size=high)
    if types == "string":
        if "pattern" in node:
            return _regex(node["pattern"])
        low = node.get("minLength", 0)
        return st.text(min_size=low, max_size=max(low, min(node.get("maxLength", 8), 8)))
    if types == "integer":
        low = node.get("minimum", -(2**70))
        high = node.get("maximum", 2**70)
        return st.integers(min_value=low, max_value=high) | st.sampled_from([low, high])
    if types == "number":
        return st.floats(allow_nan=False, allow_infinity=False) | st.integers()
    if types == "boolean":
        return st.booleans()
    return st.none()


def _object(
    node: dict[str, Any], root: dict[str, Any], depth: int, top: dict[str, Any]
) -> st.SearchStrategy[Any]:
    properties: dict[str, Any] = node.get("properties", {})
    required = [name for name in node.get("required", []) if name in properties]
    optional = [name for name in properties if name not in required]
    extra = node.get("additionalProperties", True)

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        names = required + [name for name in optional if draw(st.booleans())]
        document = {
            name: draw(from_schema(properties[name], root, depth + 1, top)) for name in names
        }
        if not properties and isinstance(extra, dict):
            keys = draw(st.lists(st.sampled_from(["a", "ID", "name"]), max_size=2, unique=True))
            for key in keys:
                document[key] = draw(from_schema(extra, root, depth + 1, top))
        return document

    return build()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


def _constants(node: Any) -> list[Any]:
    found: list[Any] = []
    if isinstance(node, dict):
        if "const" in node:
            found.append(node["const"])
        found += node.get("enum", []) if isinstance(node.get("enum"), list) else []
        for child in node.values():
            found += _constants(child)
    elif isinstance(node, list):
        for child in node:
            found += _constants(child)
    return [c for c in found if not isinstance(c, (dict, list))]


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[Any], name: str) -> Any:
    document = copy.deepcopy(draw(base))
    constants = _schema_constants(name)
    # Copied: a probe is shared, and an appended-to probe would grow into a cycle.
    values = (
        st.sampled_from(PROBES) | (st.sampled_from(constants) if constants else st.nothing())
    ).map(copy.deepcopy)
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        paths = _paths(document)
        path = draw(st.sampled_from(paths))
        if not path:
            if draw(st.integers(0, 9)) == 0:
                document = draw(values)
            continue
        parent: Any = document
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "delete", "add", "retype"]))
        leaf = parent[path[-1]]
        if action == "retype":
            # The same number written differently: where the engines' number rules differ.
            if isinstance(leaf, int) and not isinstance(leaf, bool) and abs(leaf) < 2**53:
                parent[path[-1]] = float(leaf)
            elif isinstance(leaf, float) and leaf.is_integer() and abs(leaf) < 2**53:
                parent[path[-1]] = int(leaf)
            elif isinstance(leaf, str):
                parent[path[-1]] = leaf + "\n"
        elif action == "replace":
            parent[path[-1]] = draw(values)
        elif action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["zz_extra", "text", "limit", "ID"]))] = draw(values)
        else:
            parent.append(draw(values))
    return document


@cache
def _schema_constants(name: str) -> list[Any]:
    return _constants(load_schema(name))


@cache
def _research_results() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as directory:
        research = ProjectResearch(
            make_config(Path(directory)), git=FakeGit(), database=FakeDatabase()
        )
        # The references kind needs a profile's map over a real schema; its
        # answers are generated and checked in tests/enrichment/test_reference_query.py.
        return [
            research.query(query)
            for kind, queries in RESEARCH_QUERIES.items()
            if kind != "references"
            for query in queries
        ]


@cache
def _stored_v1_captures() -> list[dict[str, Any]]:
    # Captures the code before project-result-v2 stored (tests/fixtures/project-captures-v1).
    return [
        dict(Capture.from_bytes(path.read_bytes(), path.stem).document)
        for path in sorted(V1_CAPTURES.glob("*.json"))
    ]


def _seeds(name: str) -> list[Any]:
    if name == "project-result-v2":
        return _research_results()
    if name == "project-capture-v2":
        return [dict(Capture.from_result(result).document) for result in _research_results()]
    if name == "project-result-v1":
        return [capture["result"] for capture in _stored_v1_captures()]
    if name == "project-capture-v1":
        return _stored_v1_captures()
    if name == "references-v1":
        return [
            capture["result"]["result"]
            for capture in _stored_v1_captures()
            if capture["request"]["kind"] == "references"
        ]
    if name == "investigation-request-v1":
        return [REQUEST]
    if name == "project-query-v1":
        return [query for queries in RESEARCH_QUERIES.values() for query in queries]
    if name == "case-spec-v1":
        return [json.loads(SAMPLE_SPEC.read_text())]
    return []


def documents(name: str) -> st.SearchStrategy[Any]:
    schema = load_schema(name)
    base = from_schema(schema, schema)
    seeds = _seeds(name)
    if seeds:
        base = base | st.sampled_from(seeds)
    return mutated(base, name)


def _agree(name: str, document: Any) -> None:
    fast = fast_validator(name).is_valid(document)
    precise = next(iter(schema_validator(name).iter_errors(document)), None) is None
    assert fast == precise, (name, document)
    if not fast:
        # Every refusal has an error to name.
        assert describe_first(schema_validator(name), document) is not None


@pytest.mark.parametrize("name", available_schemas())
def test_the_engines_agree_on_generated_documents(name: str) -> None:
    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(documents(name))
    def check(document: Any) -> None:
        _agree(name, document)

    check()


SCHEMA_CODES = {"query_invalid", "unknown_field", "kind_unknown", "operator_unknown"}


@settings(max_examples=300, deadline=None)
@given(documents("project-query-v1"))
def test_validate_query_refuses_exactly_what_the_engines_refuse(document: Any) -> None:
    # The research service asks the compiled validator, then names the error.
    accepted = fast_validator("project-query-v1").is_valid(document)
    try:
        validate_query(document)
    except ResearchError as err:
        if isinstance(document, dict):
            assert (err.code in SCHEMA_CODES) != accepted, (err.code, document)
    else:
        assert accepted, document


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer"}, 10.0),
        ({"type": ["integer", "null"]}, 0.0),
        ({"const": 1}, 1.0),
        ({"enum": [1, "a"]}, 1.0),
        ({"properties": {"n": {"type": "integer"}}}, {"n": 1e1}),
    ],
)
def test_an_integral_float_is_not_an_integer_in_either_engine(schema: Any, value: Any) -> None:
    from viano_bug_analysis.schemas import compiled_validator, precise_validator

    assert not compiled_validator(schema).is_valid(value)
    assert not precise_validator(schema).is_valid(value)
