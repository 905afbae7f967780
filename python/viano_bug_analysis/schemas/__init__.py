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


@cache
def _fast_validator(name: str) -> jsonschema_rs.Draft202012Validator:
    return jsonschema_rs.Draft202012Validator(load_schema(name))


@cache
def _validator(name: str) -> Validator:
    schema = load_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return StrictPatternValidator(schema)


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
# validator class with one keyword replaced.
StrictPatternValidator: type[Validator] = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator, {"pattern": _strict_pattern}
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
    "fast_validator",
    "load_schema",
    "schema_validator",
]
