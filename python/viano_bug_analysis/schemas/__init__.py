"""The JSON Schemas bundled with the package.

The files here are byte-for-byte copies of the repository's ``schemas/``
directory, which is the source of truth. ``scripts/sync_schemas.py`` makes
the copies and ``tests/test_schema_drift.py`` fails when they drift apart.

Schemas are addressed by name without the suffix, for example
``load_schema("case-manifest-v1")`` reads ``case-manifest-v1.schema.json``.

``schema_validator`` differs from a plain ``Draft202012Validator`` in one
point: a ``pattern`` that ends in ``$`` matches only at the very end of the
string, as in ECMA-262. Python's ``re`` also lets ``$`` match before a final
newline, so with the plain validator ``"H1\n"`` would pass ``^H[1-9]$``.

Both engines (``schema_validator``/``precise_validator`` and
``fast_validator``/``compiled_validator``) also keep numbers exact where plain
JSON Schema does not: an ``integer`` is a number written without fraction or
exponent (``10`` is one, ``10.0`` and ``1e1`` are not, although JSON Schema
counts them), and a ``const``/``enum`` integer is never equal to a float
(``1.0`` does not match ``"const": 1``). The strict JSON parser keeps ``10.0``
a float, so the value the author wrote decides, not its numeric value.
Integers of any size stay exact.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
import jsonschema_rs
from jsonschema.protocols import Validator

from viano_bug_analysis.errors import InvalidArgumentError

SUFFIX = ".schema.json"
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,99}")


def available_schemas() -> list[str]:
    """Names of all bundled schemas, sorted."""
    files = resources.files(__name__).iterdir()
    return sorted(f.name[: -len(SUFFIX)] for f in files if f.name.endswith(SUFFIX))


def load_schema(name: str) -> dict[str, Any]:
    """A fresh copy of the bundled schema ``name`` (callers may change it freely)."""
    _check_name(name)
    parsed: dict[str, Any] = json.loads(_schema_text(name))
    return parsed


def schema_validator(name: str) -> Validator:
    """A shared Draft 2020-12 validator for the bundled schema ``name``.

    Built once per process; the schema itself is checked when first built.
    """
    _check_name(name)
    return _validator(name)


def fast_validator(name: str) -> jsonschema_rs.Draft202012Validator:
    """A compiled (Rust) validator for a quick yes/no on the bundled schema.

    It is 10-100x faster than ``schema_validator`` and agrees with it
    (``$`` matches only at the very end there too). Use it first; ask
    ``schema_validator`` only for the place of an error.
    """
    _check_name(name)
    return _fast_validator(name)


def precise_validator(schema: dict[str, Any]) -> Validator:
    """The precise (pure Python) validator of any schema, with this package's semantics."""
    return StrictPatternValidator(schema)


def compiled_validator(schema: dict[str, Any]) -> jsonschema_rs.Draft202012Validator:
    """The compiled validator of any schema, agreeing with ``precise_validator``."""
    return jsonschema_rs.Draft202012Validator(
        _mark_exact_numbers(schema), keywords={_EXACT_KEYWORD: _ExactNumbers}
    )


@cache
def _fast_validator(name: str) -> jsonschema_rs.Draft202012Validator:
    return compiled_validator(load_schema(name))


@cache
def _validator(name: str) -> Validator:
    schema = load_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return StrictPatternValidator(schema)


# -- exact numbers ---------------------------------------------------------------------------

_EXACT_KEYWORD = "x-vba-exact-numbers"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _exact_equal(a: Any, b: Any) -> bool:
    """JSON equality that keeps an integer and a float apart (``1 != 1.0``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_exact_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_exact_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _float_refused(node: dict[str, Any], instance: float) -> bool:
    """Whether the compiled engine must refuse a float it would accept at ``node``.

    The compiled engine counts a float with a zero fraction as an integer and
    as equal to an integer constant; these are exactly the places where the
    precise engine, with its exact type checker and equality, says no.
    """
    types = node.get("type")
    listed = [types] if isinstance(types, str) else types if isinstance(types, list) else []
    if "integer" in listed and "number" not in listed:
        return True
    if "const" in node and not _exact_equal(node["const"], instance):
        return True
    enum = node.get("enum")
    if isinstance(enum, list):
        return not any(_exact_equal(member, instance) for member in enum)
    return False


def _needs_exact_check(node: dict[str, Any]) -> bool:
    types = node.get("type")
    listed = [types] if isinstance(types, str) else types if isinstance(types, list) else []
    if "integer" in listed and "number" not in listed:
        return True
    if "const" in node and _is_int(node["const"]):
        return True
    enum = node.get("enum")
    return isinstance(enum, list) and any(_is_int(member) for member in enum)


def _mark_exact_numbers(schema: Any) -> Any:
    """A copy of ``schema`` with the exact-number keyword where a float could slip through."""
    if isinstance(schema, list):
        return [_mark_exact_numbers(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    marked = {key: _mark_exact_numbers(value) for key, value in schema.items()}
    if _needs_exact_check(schema):
        marked[_EXACT_KEYWORD] = True
    return marked


class _ExactNumbers:
    """Compiled-engine keyword: refuse a float where the node admits only integers."""

    def __init__(self, parent_schema: dict[str, Any], value: Any, schema_path: list[Any]) -> None:
        self._node = {k: v for k, v in parent_schema.items() if k in {"type", "const", "enum"}}

    def validate(self, instance: Any) -> None:
        if isinstance(instance, float) and _float_refused(self._node, instance):
            raise ValueError("a number with a fraction or exponent is not an integer")


def _exact_integer(checker: Any, instance: object) -> bool:
    return _is_int(instance)


def _exact_const(
    validator: Validator, const: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if not _exact_equal(const, instance):
        yield jsonschema.ValidationError("value is not the required constant")


def _exact_enum(
    validator: Validator, enums: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if not any(_exact_equal(member, instance) for member in enums):
        yield jsonschema.ValidationError("value is not one of the allowed values")


def _strict_pattern(
    validator: Validator, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    # The message leaves the instance out: it may be content.
    if validator.is_type(instance, "string") and not _compile(pattern).search(instance):
        yield jsonschema.ValidationError("string does not match the pattern")


@cache
def _compile(pattern: str) -> re.Pattern[str]:
    trailing_backslashes = len(pattern[:-1]) - len(pattern[:-1].rstrip("\\"))
    if pattern.endswith("$") and trailing_backslashes % 2 == 0:
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


# ``extend`` is untyped in types-jsonschema; the result is a Draft 2020-12
# validator class with ECMA-262 ``$`` and exact numbers.
StrictPatternValidator: type[Validator] = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    {"pattern": _strict_pattern, "const": _exact_const, "enum": _exact_enum},
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _exact_integer),
)


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        what = "schema name must be lowercase letters, digits and dashes"
        raise InvalidArgumentError("invalid_argument", f"invalid argument: {what}", {"what": what})


@cache
def _schema_text(name: str) -> str:
    resource = resources.files(__name__).joinpath(name + SUFFIX)
    if not resource.is_file():
        what = "no bundled schema has this name"
        raise InvalidArgumentError("invalid_argument", f"invalid argument: {what}", {"what": what})
    return resource.read_text(encoding="utf-8")


__all__ = [
    "SUFFIX",
    "StrictPatternValidator",
    "available_schemas",
    "compiled_validator",
    "fast_validator",
    "load_schema",
    "precise_validator",
    "schema_validator",
]
