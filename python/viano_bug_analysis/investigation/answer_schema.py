"""The answer schemas sent to a server that constrains its output (response_format).

One generator, from the same bundled schemas the contract checks
(``investigation-response-v1``, ``case-interpretation-v1``), so the answer
shape is written down once. What it produces:

* every ``$ref`` inlined (servers resolve references unevenly);
* ``oneOf`` as ``anyOf`` (the alternatives of ``next`` exclude each other by
  their constants, so nothing is lost);
* an ``allOf`` of ``if``/``then`` branches that select by one property's
  constant (the project queries by ``kind``, a filter by ``operator``) as an
  ``anyOf`` of one variant per branch;
* the step's own binding: the hypothesis ID as a constant, one citation form
  per visible E-ID with the references that resolve in its answer, ``next``
  as the operations the step may use (the snapshot operations with the
  case's own refs, ``project.query`` when research is on) and the
  conclusion; the interpretation's ``rests_on`` as the labels shown;
* nothing a grammar-compiling server reads differently from the contract:
  no pattern that can match a character JSON escapes (:func:`_wire_safe`)
  and no length or count bound above :data:`GRAMMAR_MAX_REPEAT`. The schema
  goes out with its keys in this order (``jsonio.ordered_bytes``): each
  variant's discriminating constant first.

With ``strict=True`` it also applies OpenAI's strict subset: every object
lists every property as required (an optional one admits ``null`` as well,
which :func:`drop_strict_nulls` takes out of an answer again before the
contract sees it), ``additionalProperties`` is false everywhere, constants
are one-value enums and the keywords strict mode refuses (lengths,
``uniqueItems``, property counts and names) are left out; the contract checks
them after the answer arrives. A node the subset cannot describe (an open
mapping such as ``database.lookup``'s ``filters``, or a value of any type)
makes the schema not expressible: :func:`strict_form` then returns ``None``
and the caller sends the portable schema with ``strict: false``.

The schema constrains form only. An answer that holds it still goes through
the strict parse, the contract and the citation check.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Final

from viano_bug_analysis.investigation.evidence import citable_pointers, line_items
from viano_bug_analysis.investigation.interpretation_prompt import PROJECT_OPERATION, label_order
from viano_bug_analysis.investigation.llm.response_format import AnswerSchema
from viano_bug_analysis.investigation.recovery.flow import ProviderReply
from viano_bug_analysis.investigation.recovery.repair import (
    CASE_FACTS_OPERATION,
    RESPONSE_SCHEMA,
    RESPONSE_SCHEMA_V2,
    SNAPSHOT_OPERATIONS,
)
from viano_bug_analysis.investigation.recovery.strict_json import JsonFailure, parse_strict
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.schemas import load_schema
from viano_bug_analysis.tools.router import DATABASE_ROLES, SOURCE_OPERATIONS, SOURCE_ROLES

INTERPRETATION_SCHEMA: Final = "case-interpretation-v1"
# Prose is left out too: the prompt carries the rules, and a schema is compiled
# into a grammar on every call by some servers, so its size counts.
_ANNOTATIONS: Final = frozenset(
    {"$schema", "$id", "$defs", "title", "description", "$comment", "examples", "default"}
)
_STRICT_DROPPED: Final = frozenset(
    {
        "minLength",
        "maxLength",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "patternProperties",
    }
)
_MAX_DEPTH: Final = 64
# The largest maxLength / maxItems sent. llama.cpp's converter writes a bound
# of n as n nested optional rules, and its grammar parser refuses a nesting
# of about a thousand ("exceeds sane defaults"; llama-cpp-python 0.3.36 then
# loses the worker, measured at 1024 with 1000 still taken). A larger bound
# is left out of the sent schema: the contract checks it on the answer.
GRAMMAR_MAX_REPEAT: Final = 256
# The most JSON Pointers one citation's reference is bound to; an answer with
# more nodes leaves the reference a plain string.
MAX_CITABLE_POINTERS: Final = 256


class _NotExpressible(Exception):
    """The strict subset cannot describe a node of the schema."""


def answer_schema(name: str, portable: dict[str, Any]) -> AnswerSchema:
    return AnswerSchema(name, portable, strict_form(portable))


# -- the schemas of the calls ------------------------------------------------------------


def step_schema(
    hypothesis_id: str,
    visible_evidence_ids: Collection[str],
    *,
    research: bool,
    sources: Mapping[str, str],
    payloads: Mapping[str, Any] | None = None,
    case_facts: bool = False,
    version2: bool | None = None,
) -> AnswerSchema:
    """The answer schema of one investigation step.

    ``version2``: the step's answers are checked against investigation-response-v2
    (every call of ``investigation_v3`` / ``investigation_project_v4`` and ``_v5``: whole_word,
    client.records); default: when ``case_facts``.

    ``case_facts``: the step may read facts of the case build (``case.facts``,
    investigation-response-v2; the calls of ``investigation_project_v4`` with an
    enrichment index). A visible ID without a payload (evidence listed in the
    ledger but not shown in full) may be cited with any reference; the resolver
    decides.

    ``sources`` maps each of the case's ``source_ref`` to its role: a snapshot
    operation's refs become an enum of the refs of the roles it reads (the
    router refuses any other, ``unknown_source_ref`` / ``wrong_role``), and an
    operation with no such ref is left out. ``payloads`` (E-ID → the answer
    the step shows) binds each citation's reference to what resolves in that
    answer: its JSON Pointers as an enum (up to :data:`MAX_CITABLE_POINTERS`;
    beyond, any string), and line references only where it shows lines.
    """
    v2 = case_facts if version2 is None else version2
    document = load_schema(RESPONSE_SCHEMA_V2 if v2 else RESPONSE_SCHEMA)
    root = _Inliner(document).inline(document)
    properties = root["properties"]
    properties["hypothesis_id"] = {"type": "string", "const": hypothesis_id}
    evidence = properties["evidence"]
    plain_item = copy.deepcopy(evidence["items"])
    visible = sorted(visible_evidence_ids, key=_evidence_order)
    if not visible:
        evidence["maxItems"] = 0  # nothing can be cited yet
    elif payloads is None:
        evidence["items"]["properties"]["evidence_id"] = {"type": "string", "enum": visible}
    else:
        item = evidence.pop("items")
        evidence["items"] = {
            "anyOf": [
                _citation(item, e, payloads[e]) if e in payloads else _cited(item, e)
                for e in visible
            ]
        }
    if case_facts:
        # A fact of the case build, by its P-ID (the contract checks it exists and
        # the resolver that the reference resolves in it).
        fact = plain_item
        fact["properties"]["evidence_id"] = {"type": "string", "pattern": "^P[1-9][0-9]*$"}
        items = evidence.get("items")
        cited = items["anyOf"] if isinstance(items, dict) and "anyOf" in items else None
        if cited is not None:
            cited.append(fact)
        elif not visible:
            evidence.pop("maxItems", None)
            evidence["items"] = fact
        else:
            evidence["items"] = {"anyOf": [items, fact]}
    allowed = set(_operations(research, case_facts=case_facts))
    variants = []
    for variant in properties["next"]["anyOf"]:
        if _const(variant["properties"]["kind"]) == "conclusion":
            variants.append(variant)
            continue
        operation = _const(variant["properties"]["operation"])
        if operation in allowed and _bind_refs(variant, operation, sources):
            variants.append(variant)
    properties["next"] = {"anyOf": variants}
    return answer_schema("investigation_step", root)


def interpretation_schema(
    *,
    research: bool,
    labels: Collection[str],
    sources: Mapping[str, str],
    max_hypotheses: int | None = None,
) -> AnswerSchema:
    """The case interpretation's answer schema: its first queries are the tool
    steps of ``investigation-response-v1`` (operation and arguments), bound to
    the case's ``sources`` as a step's are; ``rests_on`` is an enum of the fact
    ``labels`` the prompt shows (the interpreter refuses any other); at most
    ``max_hypotheses`` hypotheses where the configuration narrows the
    contract's eight (the interpreter refuses more)."""
    document = load_schema(INTERPRETATION_SCHEMA)
    root = _Inliner(document).inline(document)
    step = step_schema("H1", (), research=research, sources=sources)
    queries = []
    for variant in step.portable["properties"]["next"]["anyOf"]:
        if _const(variant["properties"]["kind"]) == "conclusion":
            continue
        query = copy.deepcopy(variant)
        query["properties"] = {key: query["properties"][key] for key in ("operation", "arguments")}
        query["required"] = ["operation", "arguments"]
        queries.append(query)
    hypotheses = root["properties"]["hypotheses"]
    if max_hypotheses is not None:
        hypotheses["maxItems"] = min(hypotheses["maxItems"], max_hypotheses)
    hypothesis = hypotheses["items"]
    hypothesis["properties"]["first_query"] = {"anyOf": queries}
    rests_on = hypothesis["properties"]["rests_on"]
    _enum_items(rests_on, sorted(set(labels), key=label_order))
    return answer_schema("case_interpretation", root)


def repair_schema(excerpt: Mapping[str, Any]) -> AnswerSchema:
    """The repair reply: ``{"replacement": <the value the excerpt describes>}``."""
    document = load_schema(RESPONSE_SCHEMA)
    value = _Inliner(document).inline(dict(excerpt))
    portable = {
        "type": "object",
        "additionalProperties": False,
        "required": ["replacement"],
        "properties": {"replacement": value},
    }
    return answer_schema("format_repair", portable)


def _cited(item: Mapping[str, Any], evidence_id: str) -> dict[str, Any]:
    bound = copy.deepcopy(dict(item))
    bound["properties"]["evidence_id"] = {"type": "string", "const": evidence_id}
    return bound


def _citation(item: Mapping[str, Any], evidence_id: str, payload: Any) -> dict[str, Any]:
    """The citation item of one evidence ID, its reference bound to its answer."""
    bound = copy.deepcopy(dict(item))
    properties = bound["properties"]
    properties["evidence_id"] = {"type": "string", "const": evidence_id}
    pointers = citable_pointers(payload, MAX_CITABLE_POINTERS)
    if pointers is None:
        return bound  # too many to list: any string, the resolver decides
    forms: list[dict[str, Any]] = [{"type": "string", "enum": pointers}]
    if line_items(payload):
        forms.append({"type": "string", "pattern": _line_reference_pattern()})
    properties["reference"] = forms[0] if len(forms) == 1 else {"anyOf": forms}
    return bound


def _line_reference_pattern() -> str:
    # The contract's own: the member of "reference" that is not a JSON Pointer.
    forms = load_schema(RESPONSE_SCHEMA)["$defs"]["reference"]["anyOf"]
    (pattern,) = [f["pattern"] for f in forms if f["pattern"].startswith("^L")]
    return str(pattern)


def _bind_refs(variant: dict[str, Any], operation: str, sources: Mapping[str, str]) -> bool:
    """Narrows a snapshot operation's refs to the case's refs of the roles it
    reads; False when the case has none (the operation cannot succeed)."""
    if operation not in SNAPSHOT_OPERATIONS:
        return True  # project.query names no snapshot
    roles = SOURCE_ROLES if operation in SOURCE_OPERATIONS else DATABASE_ROLES
    refs = sorted(ref for ref, role in sources.items() if role in roles)
    if not refs:
        return False
    schema = variant["properties"]["arguments"]
    # Arguments with a switch (whole_word) are an anyOf of variants: bind each.
    for arguments in [m["properties"] for m in schema.get("anyOf", ())] or [schema["properties"]]:
        if "source_ref" in arguments:
            arguments["source_ref"] = {"type": "string", "enum": refs}
        if "source_refs" in arguments:
            _enum_items(arguments["source_refs"], refs)
    return True


def _enum_items(array: dict[str, Any], values: list[str]) -> None:
    """An array of unique strings as an array of the allowed ``values``: with
    ``uniqueItems`` it can hold each once, which bounds its length for a
    server whose grammar cannot express uniqueness."""
    array["items"] = {"type": "string", "enum": values}
    if array.get("uniqueItems") is True:
        array["maxItems"] = min(array.get("maxItems", len(values)), len(values))


def available_operations(
    *, research: bool, sources: Mapping[str, str], case_facts: bool = False
) -> list[str]:
    """The operations a step of this case can use, in schema order: the snapshot
    operations with a source of a role they read, and ``project.query`` with research
    (what ``step_schema`` offers, for the prompt to list the same)."""
    names = []
    for operation in _operations(research, case_facts=case_facts):
        if operation in SNAPSHOT_OPERATIONS:
            roles = SOURCE_ROLES if operation in SOURCE_OPERATIONS else DATABASE_ROLES
            if not any(role in roles for role in sources.values()):
                continue
        names.append(operation)
    return names


def _operations(research: bool, *, case_facts: bool = False) -> Iterable[str]:
    yield from SNAPSHOT_OPERATIONS
    if research:
        yield PROJECT_OPERATION
    if case_facts:
        yield CASE_FACTS_OPERATION


def _evidence_order(evidence_id: str) -> tuple[int, str]:
    digits = evidence_id[1:]
    return (int(digits) if digits.isdigit() else 0, evidence_id)


def _const(schema: Mapping[str, Any]) -> Any:
    if "const" in schema:
        return schema["const"]
    values = schema.get("enum")
    return values[0] if isinstance(values, list) and len(values) == 1 else None


# -- inlining ---------------------------------------------------------------------------


class _Inliner:
    """Resolves ``$ref`` against the bundled document (and the documents it
    embeds under ``$defs`` with their own ``$id``), and rewrites combinators."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._documents: dict[str, Mapping[str, Any]] = {}
        pending = [document]
        while pending:
            node = pending.pop()
            if isinstance(node.get("$id"), str):
                self._documents[node["$id"]] = node
            pending.extend(v for v in node.get("$defs", {}).values() if isinstance(v, dict))
        self._root = document

    def inline(self, schema: Any) -> Any:
        return self._node(schema, self._root, 0)

    def _node(self, schema: Any, base: Mapping[str, Any], depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise ValueError("schema nesting too deep to inline (a cycle?)")
        if isinstance(schema, list):
            return [self._node(item, base, depth + 1) for item in schema]
        if not isinstance(schema, dict):
            return schema
        if isinstance(schema.get("$id"), str):
            base = self._documents.get(schema["$id"], schema)
        if "$ref" in schema:
            target, target_base = self._resolve(schema["$ref"], base)
            resolved = self._node(target, target_base, depth + 1)
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            if rest:
                return _merge(resolved, self._node(rest, base, depth + 1))
            return resolved
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in _ANNOTATIONS or key.startswith("x-"):
                continue
            if key in ("properties", "$defs"):
                out[key] = {k: self._node(v, base, depth + 1) for k, v in value.items()}
            elif key in ("items", "additionalProperties", "not", "if", "then", "else"):
                out[key] = self._node(value, base, depth + 1)
            elif key in ("anyOf", "oneOf", "allOf"):
                out["anyOf" if key == "oneOf" else key] = self._node(value, base, depth + 1)
            elif key == "pattern" and not _wire_safe(value):
                continue  # see _wire_safe
            elif key in ("maxLength", "maxItems") and value > GRAMMAR_MAX_REPEAT:
                continue  # see GRAMMAR_MAX_REPEAT
            else:
                out[key] = copy.deepcopy(value)
        if "allOf" in out:
            out = _fold_all_of(out)
        if any(member == {} for member in out.get("anyOf", ())):
            # A member left without rules (its pattern not sent) admits every
            # value, so the anyOf says nothing; kept, a converter reads the
            # member as "any JSON value" beside the sibling "type".
            del out["anyOf"]
        return out

    def _resolve(self, ref: str, base: Mapping[str, Any]) -> tuple[Any, Mapping[str, Any]]:
        address, _, fragment = ref.partition("#")
        document = self._documents[address] if address else base
        node: Any = document
        for token in [t for t in fragment.split("/") if t]:
            node = node[token.replace("~1", "/").replace("~0", "~")]
        return node, document


# Escapes that only ever match characters JSON writes as they are.
_SAFE_ESCAPES: Final = frozenset("dw.-$/_^")


def _wire_safe(pattern: Any) -> bool:
    """Whether every string ``pattern`` matches is written in JSON without escapes.

    A server that compiles a pattern into a grammar applies it to the JSON
    text between the quotes (llama.cpp's converter, llama-server and
    llama-cpp-python), not to the decoded string: a negated class such as
    ``[^\\r\\n]`` then admits a bare quote, the string never has to end and
    the rest of the answer is unconstrained (measured: every answer of
    SmolLM2 ran to max_tokens). No pattern reads the same on both sides once
    it can match a quote, a backslash or a control, so such a pattern is left
    out of the sent schema (the contract still checks it on the answer).
    A conservative scan, linear in the pattern: literals, positive classes,
    ``\\d`` and ``\\w`` only.
    """
    if not isinstance(pattern, str):
        return False
    in_class = False
    escaped = False
    for index, char in enumerate(pattern):
        if escaped:
            if char not in _SAFE_ESCAPES:
                return False
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"' or ord(char) < 0x20 or ord(char) > 0x7E:
            return False
        elif in_class:
            if char == "-" and 0 < index < len(pattern) - 1 and pattern[index - 1] != "[":
                low, high = ord(pattern[index - 1]), ord(pattern[index + 1])
                if low <= 0x22 <= high or low <= 0x5C <= high:
                    return False  # a range over the quote or the backslash
            in_class = char != "]"
        elif char == "[":
            if pattern[index + 1 : index + 2] == "^":
                return False
            in_class = True
        elif char == ".":
            return False
    return not escaped and not in_class


def _fold_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    """``allOf`` of discriminating ``if``/``then`` branches as an ``anyOf`` of variants;
    plain ``allOf`` members are merged in."""
    members = schema.pop("allOf")
    branches = [m for m in members if "if" in m]
    for member in members:
        if "if" not in member:
            schema = _merge(schema, member)
    if not branches:
        return schema
    variants = []
    covered: list[Any] = []
    key = None
    for branch in branches:
        condition = branch["if"]
        ((name, test),) = condition["properties"].items()
        if key not in (None, name) or "else" in branch:
            raise ValueError("only if/then branches on one property can be folded")
        key = name
        values = [test["const"]] if "const" in test else list(test["enum"])
        covered += values
        variant = _merge(copy.deepcopy(schema), branch["then"])
        variant.setdefault("properties", {})[name] = _narrow(schema, name, values)
        variants.append(variant)
    assert key is not None
    base = schema.get("properties", {}).get(key) or {}
    base_values = base.get("enum")
    if base.get("type") == "boolean" and base_values is None:
        base_values = [False, True]  # an optional switch: off (or absent) is the base schema
    if isinstance(base_values, list):
        rest = [v for v in base_values if v not in covered]
        if rest:  # values no branch adds a rule to: the base schema as it is
            variant = copy.deepcopy(schema)
            variant["properties"][key] = _narrow(schema, key, rest)
            variants.append(variant)
    elif key not in schema.get("required", ()):
        # Any other value, or none, is the base schema (the contract checks the rest).
        variants.append(copy.deepcopy(schema))
    return {"anyOf": variants}


def _narrow(schema: Mapping[str, Any], name: str, values: list[Any]) -> dict[str, Any]:
    narrowed = {
        k: v
        for k, v in (schema.get("properties", {}).get(name) or {}).items()
        if k not in ("enum", "const")
    }
    if len(values) == 1:
        narrowed["const"] = values[0]
    else:
        narrowed["enum"] = values
    return narrowed


def _merge(left: Any, right: Any) -> Any:
    """Both schemas at once (an ``allOf`` of two), for the forms the bundled schemas use."""
    if not left:
        return copy.deepcopy(right)
    if not right:
        return copy.deepcopy(left)
    merged = copy.deepcopy(left)
    for key, value in right.items():
        if key not in merged:
            merged[key] = copy.deepcopy(value)
        elif key == "properties":
            for name, sub in value.items():
                merged[key][name] = _merge(merged[key].get(name, {}), sub)
        elif key == "required":
            merged[key] = sorted(set(merged[key]) | set(value), key=list(merged[key] + value).index)
        elif key in ("minLength", "minItems", "minimum", "minProperties"):
            merged[key] = max(merged[key], value)
        elif key in ("maxLength", "maxItems", "maximum", "maxProperties"):
            merged[key] = min(merged[key], value)
        elif merged[key] != value:
            if key == "description":
                merged[key] = value  # the narrower schema's words
            elif key == "additionalProperties" and False in (merged[key], value):
                merged[key] = False
            else:
                raise ValueError(f"cannot merge two different {key!r} rules")
    return merged


# -- the strict subset ------------------------------------------------------------------


def strict_form(portable: Mapping[str, Any]) -> dict[str, Any] | None:
    """The strict-subset form of a portable schema, or None when it has no such form."""
    if portable.get("type") != "object":
        return None  # the subset needs an object at the root
    try:
        result: dict[str, Any] = _strict(portable, 0)
    except _NotExpressible:
        return None
    return result


def _strict(schema: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH or not isinstance(schema, dict) or not schema:
        raise _NotExpressible  # {} admits any value: the subset has no such node
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _STRICT_DROPPED:
            continue
        if key == "const":
            out["enum"] = [value]
        elif key == "anyOf":
            # A member that only adds a rule (a pattern) takes the parent's type.
            kind = {"type": schema["type"]} if "type" in schema else {}
            out[key] = [_strict({**kind, **item}, depth + 1) for item in value]
        elif key == "items":
            out[key] = _strict(value, depth + 1)
        elif key in ("properties", "additionalProperties", "required", "allOf", "not", "if"):
            continue  # handled below, or not part of the subset (folded before)
        else:
            out[key] = copy.deepcopy(value)
    if isinstance(out.get("type"), list):
        kinds = out.pop("type")
        return {"anyOf": [{**out, "type": kind} for kind in kinds]}
    if "allOf" in schema or "not" in schema or "if" in schema:
        raise _NotExpressible
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if not properties or schema.get("additionalProperties", True) is not False:
            raise _NotExpressible  # an open mapping
        required = set(schema.get("required", ()))
        out["type"] = "object"
        out["properties"] = {
            name: _strict(sub, depth + 1)
            if name in required
            else {"anyOf": [_strict(sub, depth + 1), {"type": "null"}]}
            for name, sub in properties.items()
        }
        out["required"] = list(properties)
        out["additionalProperties"] = False
    if "anyOf" in out:
        out.pop("type", None)  # the members carry it
    if not ({"type", "enum", "anyOf"} & set(out)):
        raise _NotExpressible
    return out


def structured_reply(chat: Mapping[str, Any], answer: AnswerSchema | None) -> ProviderReply:
    """A stored answer (``ChatResult.to_record()``) as recovery reads it.

    An answer to a strict schema loses the nulls of the optional properties it
    left out (:func:`drop_strict_nulls`); any other answer stays byte for byte
    what the server sent. Either way the strict parse, the contract and the
    citation check follow.
    """
    text = str(chat["content"])
    sent = chat.get("response_format")
    if answer is not None and isinstance(sent, dict) and sent.get("strict") is True:
        parsed = parse_strict(text)
        if not isinstance(parsed, JsonFailure):
            text = canonical_bytes(drop_strict_nulls(parsed.value, answer.portable)).decode()
    return ProviderReply(text, sent if isinstance(sent, dict) else None)


def drop_strict_nulls(value: Any, portable: Mapping[str, Any]) -> Any:
    """An answer to the strict form without the ``null`` of each optional property it
    left out (the strict form requires every property; the contract does not admit
    those nulls). Other values stay as they are."""
    return _denull(value, portable, 0)


def _denull(value: Any, schema: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH or not isinstance(schema, dict):
        return value
    if "anyOf" in schema and not isinstance(value, (str, int, float, bool, type(None))):
        for variant in schema["anyOf"]:
            candidate = _denull(value, variant, depth + 1)
            if _fits(candidate, variant):
                return candidate
        return value
    if isinstance(value, dict) and "properties" in schema:
        required = set(schema.get("required", ()))
        out = {}
        for key, item in value.items():
            sub = schema["properties"].get(key)
            if item is None and key not in required and sub is not None and not _admits_null(sub):
                continue
            out[key] = _denull(item, sub, depth + 1) if sub is not None else item
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_denull(item, schema["items"], depth + 1) for item in value]
    return value


def _fits(value: Any, schema: Mapping[str, Any]) -> bool:
    from viano_bug_analysis.schemas import compiled_validator

    return bool(compiled_validator(dict(schema)).is_valid(value))


def _admits_null(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_admits_null(v) for v in schema.get("anyOf", ()) if isinstance(v, dict))


__all__ = [
    "INTERPRETATION_SCHEMA",
    "AnswerSchema",
    "answer_schema",
    "available_operations",
    "drop_strict_nulls",
    "interpretation_schema",
    "repair_schema",
    "step_schema",
    "strict_form",
    "structured_reply",
]
