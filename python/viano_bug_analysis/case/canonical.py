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

This is :func:`viano_bug_analysis.jsonio.canonical_bytes` (the one encoding
of the package) narrowed to this value domain; over it, it is exactly
``json.dumps`` with sorted keys, ``(",", ":")`` separators and
``ensure_ascii=False``, UTF-8 encoded (a property test checks that both agree) and
exactly RFC 8785 (JCS) for keys inside the BMP (tests/test_jsonio.py checks
it against the ``rfc8785`` package). :func:`parse_json` is
:func:`viano_bug_analysis.jsonio.strict_parse` with this module's depth limit
and its own fixed reason phrases; :func:`sha256_hex` is jsonio's.
"""

from __future__ import annotations

import codecs
from typing import Any, Final

from viano_bug_analysis import jsonio
from viano_bug_analysis.errors import CaseError, JsonRejected
from viano_bug_analysis.jsonio import JsonEncodeError, JsonFailure, sha256_hex

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
        return jsonio.canonical_bytes(value)
    except JsonEncodeError:
        # The walk admitted every type, so only invalid Unicode is left.
        raise _not_canonical("a string is not valid Unicode (lone surrogate)", "") from None


def sha256_canonical(value: Any) -> str:
    """Lowercase hex SHA-256 of ``canonical_bytes(value)``."""
    return sha256_hex(canonical_bytes(value))


# Fixed phrases, part of the documented reasons of manifest_invalid,
# case_invalid and spec_invalid; every other failure is "not valid JSON".
_REASONS: Final = {
    jsonio.DUPLICATE_KEY: "duplicate object key",
    jsonio.NON_FINITE_NUMBER: "NaN or Infinity is not JSON",
    jsonio.TOO_DEEP: "nesting too deep",
    jsonio.INVALID_STRING: "a string is not valid Unicode (lone surrogate)",
    jsonio.NOT_UTF8: "not valid UTF-8",
}


def parse_json(data: bytes) -> Any:
    """Strict JSON parsing of UTF-8 bytes (:func:`jsonio.strict_parse`, at most
    ``MAX_DEPTH`` levels); a refusal is ``JsonRejected`` with a fixed reason.

    Floats are parsed (as ``float``) so that callers can report them as
    non-canonical values rather than as syntax errors.
    """
    # Named apart from the other syntax errors: a BOM is the one thing an
    # editor adds without being asked.
    if data.startswith(codecs.BOM_UTF8):
        raise JsonRejected("starts with a byte order mark")
    # The callers bound the size of what they read, each with its own limit.
    outcome = jsonio.strict_parse(data, max_depth=MAX_DEPTH, max_bytes=len(data))
    if isinstance(outcome, JsonFailure):
        raise JsonRejected(_REASONS.get(outcome.code, "not valid JSON"))
    return outcome.value


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
