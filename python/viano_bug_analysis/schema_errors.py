"""The one mapper from a JSON Schema failure to what a user is told.

Every schema check of the package (investigation requests, research queries,
case specs, manifests, snapshot headers) asks the compiled validator for a
yes/no first and, only for a rejected document, picks the first error in
document order with the precise validator and describes it here as a
``Violation``: the JSON Pointer of the value at fault, the rule, the property
at fault and, where they are few, the allowed alternatives. Callers turn it
into their own typed error; they never format a ``jsonschema`` error
themselves, so the wording cannot drift between schemas.

What is echoed: pointers, property names taken from the schema, and the
alternatives and bounds the schema itself states. A name taken from the
document (an unknown property) is echoed only when it looks like a field
name; no value of the document is ever repeated, since it may be content.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema
from jsonschema.protocols import Validator

MAX_ALTERNATIVES = 16
"""Alternatives are listed only when there are at most this many."""

MAX_ALLOWED_NAMES = 40
"""Names of the contract (columns, tables) a refusal lists before it only counts."""

_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")

_JSON_TYPES = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    tuple: "array",
    dict: "object",
}


@dataclass(frozen=True, slots=True)
class Violation:
    """One schema failure, described without any value of the document.

    ``pointer`` names the value at fault: for a missing or unknown property it
    is the pointer the property has (or would have), not its parent object.
    """

    pointer: str
    rule: str
    message: str
    property: str | None = None
    allowed: tuple[str, ...] | None = None
    bound: int | float | None = None  # the schema's number for a size or value bound

    def details(self) -> dict[str, Any]:
        """The JSON-ready details every caller attaches to its typed error; a bound
        rule names its number as ``maximum`` or ``minimum``."""
        details: dict[str, Any] = {"path": self.pointer, "rule": self.rule}
        if self.property is not None:
            details["property"] = self.property
        if self.allowed is not None:
            details["allowed"] = list(self.allowed)
        if self.bound is not None:
            side = "maximum" if self.rule in _UPPER_BOUNDS else "minimum"
            details[side] = self.bound
        return details


def allowed_names(names: Sequence[str]) -> dict[str, Any]:
    """The ``allowed`` details of a refusal naming a thing of the contract (a column,
    a table): the first ``MAX_ALLOWED_NAMES`` names, and ``allowed_total`` when
    there are more."""
    details: dict[str, Any] = {"allowed": list(names[:MAX_ALLOWED_NAMES])}
    if len(names) > MAX_ALLOWED_NAMES:
        details["allowed_total"] = len(names)
    return details


def looks_like_field(name: object) -> bool:
    """Whether a name taken from a document may be echoed (it looks like a field name)."""
    return isinstance(name, str) and _FIELD.fullmatch(name) is not None


def pointer(parts: Iterable[object]) -> str:
    """RFC 6901 JSON Pointer of a path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def first_error(validator: Validator, instance: Any) -> jsonschema.ValidationError | None:
    """The first error in document order (array indexes numerically), then by rule name.

    An error of ``oneOf``/``anyOf`` is replaced by its most relevant inner
    error, so that the description names a concrete property.
    """
    errors = sorted(validator.iter_errors(instance), key=_document_order)
    if not errors:
        return None
    error = errors[0]
    if error.context:
        error = jsonschema.exceptions.best_match([error])
    return error


def violation(
    error: jsonschema.ValidationError, prefix: Sequence[object] = (), *, name_unknown: bool = True
) -> Violation:
    """Describe ``error``; ``prefix`` is the path of the validated part in its document.

    ``name_unknown=False`` never echoes an unknown property's name, for
    documents whose keys may themselves be data (a packaged snapshot).
    """
    parts = [*prefix, *error.absolute_path]
    # A ``false`` subschema reports no keyword at all.
    rule = "false" if error.validator is None else str(error.validator)
    value: Any = error.validator_value
    instance = error.instance
    at = pointer(parts)
    where = at or "/"
    leaf = parts[-1] if parts and isinstance(parts[-1], str) else None
    if rule == "required" and isinstance(instance, Mapping):
        missing = [name for name in value if name not in instance]
        name = missing[0] if missing else None
        if name is None:
            return Violation(at, rule, f"a required property is missing at {where}")
        return Violation(
            pointer([*parts, name]),
            rule,
            f"missing required property {name!r} at {where}",
            property=name,
        )
    if rule in {"additionalProperties", "unevaluatedProperties"} and isinstance(instance, Mapping):
        return _unknown_property(error, parts, rule, name_unknown)
    if rule == "false":
        return Violation(at, rule, f"property {leaf!r} is not allowed here at {where}", leaf)
    if rule == "enum":
        allowed = _alternatives(value)
        text = f"value at {where} is not one of the allowed values"
        if allowed is not None:
            text += "; allowed: " + ", ".join(allowed)
        return Violation(at, rule, text, leaf, allowed)
    if rule == "const":
        allowed = _alternatives([value])
        text = f"value at {where} must be {allowed[0]}" if allowed else f"wrong value at {where}"
        return Violation(at, rule, text, leaf, allowed)
    if rule == "type":
        expected = [value] if isinstance(value, str) else list(value)
        got = _JSON_TYPES.get(type(instance), "unknown")
        if got == "number" and "integer" in expected:
            got = "a number with a fraction or exponent (integers are written without one)"
        text = f"value at {where} must be {' or '.join(expected)}, not {got}"
        return Violation(at, rule, text, leaf, tuple(expected))
    bound = value if rule in _UPPER_BOUNDS | _LOWER_BOUNDS and _is_number(value) else None
    if rule in _BOUND_WORDS:
        text = f"value at {where} {_BOUND_WORDS[rule]} {value}"
        return Violation(at, rule, text, leaf, bound=bound)
    if rule in _SIZE_BOUNDS:
        text = f"value at {where} {_size_words(rule, value)}"
        return Violation(at, rule, text, leaf, bound=bound)
    if rule == "pattern":
        return Violation(at, rule, f"string at {where} does not have the required form", leaf)
    if rule == "format":
        return Violation(at, rule, f"string at {where} is not a valid {value}", leaf)
    if rule == "uniqueItems":
        return Violation(at, rule, f"array at {where} has repeated items", leaf)
    if rule in {"oneOf", "anyOf"}:
        return _alternative_forms(error, at, rule, leaf)
    if rule == "not":
        return Violation(at, rule, f"value at {where} has a form that is not allowed", leaf)
    if rule == "dependentRequired" and isinstance(instance, Mapping):
        return Violation(at, rule, f"object at {where} lacks a property another one requires")
    return Violation(at, rule, f"value at {where} violates the rule {rule!r}", leaf)


def describe_first(
    validator: Validator, instance: Any, prefix: Sequence[object] = (), *, name_unknown: bool = True
) -> Violation | None:
    """``violation(first_error(...))``, or None when the precise validator accepts."""
    error = first_error(validator, instance)
    return None if error is None else violation(error, prefix, name_unknown=name_unknown)


def check(
    name: str, document: Any, prefix: Sequence[object] = (), *, name_unknown: bool = True
) -> Violation | None:
    """None when ``document`` satisfies the bundled schema ``name``, else its first violation.

    The compiled validator answers; only a refused document is described,
    by the precise validator of the whole schema. ``if``/``then`` branches
    report their inner errors at their own paths, so no split of the schema
    is needed to name the place.
    """
    from viano_bug_analysis.schemas import fast_validator, schema_validator

    if fast_validator(name).is_valid(document):
        return None
    found = describe_first(schema_validator(name), document, prefix, name_unknown=name_unknown)
    return found or disagreement(prefix)


def disagreement(prefix: Sequence[object] = ()) -> Violation:
    """What to say when the compiled validator refuses and the precise one accepts.

    The differential tests keep this unreachable; if it happens anyway the
    document is refused rather than guessed about.
    """
    return Violation(pointer(prefix), "schema", "document violates the schema")


_BOUND_WORDS = {
    "minimum": "must be at least",
    "maximum": "must be at most",
    "exclusiveMinimum": "must be greater than",
    "exclusiveMaximum": "must be less than",
    "multipleOf": "must be a multiple of",
}

_UPPER_BOUNDS = frozenset({"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"})
_LOWER_BOUNDS = frozenset({"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"})


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# Bounds on a size, with the unit counted (singular, plural).
_SIZE_BOUNDS = {
    "minLength": ("at least", "character", "characters"),
    "maxLength": ("at most", "character", "characters"),
    "minItems": ("at least", "item", "items"),
    "maxItems": ("at most", "item", "items"),
    "minProperties": ("at least", "property", "properties"),
    "maxProperties": ("at most", "property", "properties"),
}


def _size_words(rule: str, value: Any) -> str:
    bound, one, many = _SIZE_BOUNDS[rule]
    if bound == "at least" and value == 1:
        return "must not be empty"
    return f"must have {bound} {value} {one if value == 1 else many}"


def _unknown_property(
    error: jsonschema.ValidationError, parts: list[object], rule: str, name_unknown: bool
) -> Violation:
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    known = schema.get("properties", {})
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    extra = sorted(
        key for key in instance if key not in known and not any(p.search(key) for p in patterns)
    )
    allowed = _alternatives(sorted(known)) if known else None
    where = pointer(parts) or "/"
    name = extra[0] if name_unknown and extra and looks_like_field(extra[0]) else None
    if name is None:
        text = f"object at {where} has a property the contract does not define"
        at = pointer(parts)
    else:
        text = f"unknown property {name!r} at {where}"
        at = pointer([*parts, name])
    if allowed is not None:
        text += "; allowed properties: " + ", ".join(allowed)
    return Violation(at, rule, text, name, allowed)


def _alternative_forms(
    error: jsonschema.ValidationError, at: str, rule: str, leaf: str | None
) -> Violation:
    where = at or "/"
    # Alternatives that each only require one property ("zip" or "directory")
    # are named; other forms are too varied to list usefully.
    branches = error.validator_value if isinstance(error.validator_value, list) else []
    names = [
        branch["required"][0]
        for branch in branches
        if isinstance(branch, Mapping)
        and set(branch) == {"required"}
        and isinstance(branch["required"], list)
        and len(branch["required"]) == 1
    ]
    if not names or len(names) != len(branches):
        return Violation(at, rule, f"value at {where} matches none of the allowed forms", leaf)
    allowed = _alternatives(names)
    count = "exactly one" if rule == "oneOf" else "at least one"
    present = [n for n in names if isinstance(error.instance, Mapping) and n in error.instance]
    has = "none" if not present else "more than one"
    listed = ", ".join(allowed) if allowed else "the alternatives of the schema"
    text = f"object at {where} must have {count} of the properties {listed}; it has {has}"
    return Violation(at, rule, text, leaf, allowed)


def _alternatives(values: Iterable[Any]) -> tuple[str, ...] | None:
    listed = list(values)
    if not listed or len(listed) > MAX_ALTERNATIVES:
        return None
    return tuple(v if isinstance(v, str) else _json_text(v) for v in listed)


def _json_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _document_order(error: jsonschema.ValidationError) -> tuple[list[tuple[int, int, str]], str]:
    path = [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path]
    return path, str(error.validator)


__all__ = [
    "MAX_ALLOWED_NAMES",
    "MAX_ALTERNATIVES",
    "Violation",
    "allowed_names",
    "check",
    "describe_first",
    "disagreement",
    "first_error",
    "pointer",
    "violation",
]
