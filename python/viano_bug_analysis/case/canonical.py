"""Canonical JSON: one byte string per value, so that a hash identifies content.

The rule (see docs/case-package-v1.md for the full text):

* allowed values: objects with string keys, arrays, strings, integers in
  ``[-(2**53 - 1), 2**53 - 1]``, ``true``, ``false``, ``null``; at most
  ``MAX_DEPTH`` levels of nesting. No floats at all.
* UTF-8 without a byte order mark; no whitespace outside strings;
* object keys sorted by Unicode code point;
* strings escaped minimally: ``\\"``, ``\\\\``, ``\\b \\f \\n \\r \\t`` and
  ``\\u00XX`` (lowercase hex) for the other control characters below U+0020;
  everything else, including ``/``, U+007F and U+2028, is written as is.

This is exactly ``json.dumps(value, sort_keys=True, separators=(",", ":"),
ensure_ascii=False).encode()`` over that value domain, and we produce it
with ``orjson.dumps(value, option=OPT_SORT_KEYS)``, which gives the same
bytes faster (a property test checks that both agree).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson

from viano_bug_analysis.errors import CaseError

MAX_SAFE_INTEGER = 2**53 - 1
MAX_DEPTH = 128


def canonical_bytes(value: Any) -> bytes:
    """The canonical JSON encoding of ``value``.

    Raises ``CaseError("case_not_canonical_value")`` for floats, integers
    outside the safe range, non-string keys, values of other types, lone
    surrogates in strings and nesting deeper than ``MAX_DEPTH``.
    """
    _check_value(value)
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        # The walk admitted every type, so only invalid Unicode is left.
        raise _not_canonical("a string is not valid Unicode (lone surrogate)", "") from None


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_canonical(value: Any) -> str:
    """Lowercase hex SHA-256 of ``canonical_bytes(value)``."""
    return sha256_hex(canonical_bytes(value))


class JsonRejected(ValueError):
    """``parse_json`` refused its input; ``reason`` is a fixed phrase without content."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_json(data: bytes) -> Any:
    """Strict JSON parsing of UTF-8 bytes: duplicate keys, NaN/Infinity, a byte
    order mark and invalid UTF-8 are rejected with ``JsonRejected``.

    Floats are parsed (as ``float``) so that callers can report them as
    non-canonical values rather than as syntax errors.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise JsonRejected("not valid UTF-8") from None
    if text.startswith("\ufeff"):
        raise JsonRejected("starts with a byte order mark")
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except JsonRejected:
        raise
    except RecursionError:
        raise JsonRejected("nesting too deep") from None
    except ValueError:
        # JSONDecodeError, or an integer with too many digits; the stdlib
        # message may quote content, so it is dropped.
        raise JsonRejected("not valid JSON") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise JsonRejected("duplicate object key")
    return result


def _no_constant(_name: str) -> Any:
    raise JsonRejected("NaN or Infinity is not JSON")


def _check_value(root: Any) -> None:
    # Iterative, so that deep input costs no Python recursion; the path is a
    # linked tuple and only turned into a JSON Pointer on error.
    stack: list[tuple[Any, int, Any]] = [(root, 0, None)]
    while stack:
        value, depth, path = stack.pop()
        if value is None or isinstance(value, (bool, str)):
            continue
        if isinstance(value, int):
            if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                raise _not_canonical("integer outside the safe range", _pointer(path))
            continue
        if isinstance(value, float):
            raise _not_canonical("floats are not allowed", _pointer(path))
        if isinstance(value, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                raise _not_canonical("nesting too deep", _pointer(path))
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise _not_canonical("object keys must be strings", _pointer(path))
                    stack.append((item, depth + 1, (path, key)))
            else:
                stack.extend((item, depth + 1, (path, i)) for i, item in enumerate(value))
            continue
        raise _not_canonical("value of a type JSON does not have", _pointer(path))


def _pointer(path: Any) -> str:
    parts: list[str] = []
    while path is not None:
        path, part = path
        parts.append(str(part).replace("~", "~0").replace("/", "~1"))
    return "".join("/" + part for part in reversed(parts))


def _not_canonical(reason: str, pointer: str) -> CaseError:
    return CaseError(
        "case_not_canonical_value",
        f"value cannot be written as canonical JSON: {reason}",
        {"reason": reason, "pointer": pointer},
    )


__all__ = [
    "MAX_DEPTH",
    "MAX_SAFE_INTEGER",
    "JsonRejected",
    "canonical_bytes",
    "parse_json",
    "sha256_canonical",
    "sha256_hex",
]
