"""The one JSON mechanism of the package: a strict parse and a canonical encoding.

Parsing (:func:`strict_parse`, :func:`strict_loads`)
====================================================

Exactly one JSON value (RFC 8259), surrounded by nothing but JSON whitespace,
with these refusals that ``json.loads`` does not make:

* a key repeated in one object, at any depth (``duplicate_key``);
* ``NaN``, ``Infinity``, ``-Infinity``, and a number that overflows to
  infinity such as ``1e400`` (``non_finite_number``);
* an integer with more digits than Python converts (``number_too_long``);
* any digit that is not ASCII ``0-9``: ``0.٣٥``, ``2０`` and ``1e१`` are
  ``syntax_error`` (``json.scanner.NUMBER_RE`` uses the Unicode ``\\d``);
* a lone surrogate in a string or key, escaped (``"\\ud83d"``) or raw
  (``invalid_string``): it is not a Unicode scalar value, cannot be written
  as UTF-8 and breaks every later stage. A correctly paired escape
  (``"\\ud83d\\ude00"``) is one character and fine;
* nesting of more than ``max_depth`` arrays/objects (``too_deep``), counted
  while parsing, not by catching ``RecursionError``. The default
  :data:`MAX_DEPTH` (64) is chosen so that every later stage (schema
  validation, repair admission, preservation checks, splice, orjson's own
  limit of 254 levels) handles any accepted value;
* bytes that are not UTF-8 (``not_utf8``; a byte order mark is not JSON
  whitespace, so it is a ``syntax_error`` at offset 0);
* input larger than ``max_bytes`` UTF-8 bytes (``too_large``).

A failure is a :class:`JsonFailure` with a stable ``code`` and an ``offset``:
the character offset into the text (for ``not_utf8`` on bytes input, the byte
offset; for ``too_large``, 0). For ``duplicate_key`` it is the start of the
object holding the repeated key, for ``invalid_string`` the opening quote of
the string. It never carries any part of the text. :func:`strict_loads` raises
it as :class:`JsonDecodeError` (code ``json_<reason>``).

The parser is iterative and linear in the input: every step consumes input,
strings are scanned by the standard library's C scanner, and the number
pattern cannot backtrack. Valid input takes a fast path first: the C
``json.loads`` with hooks for the rules it lacks (duplicate keys, constants,
overflow), with linear checks for what no hook sees (any surrogate before,
the nesting depth after). Whatever it does not accept goes through the exact parser, which
alone decides failures and their offsets; a property test checks that both
paths agree.

Encoding (:func:`canonical_bytes`)
==================================

The one serialization for everything that is hashed or sent:

* UTF-8, no byte order mark, no whitespace outside strings;
* object keys sorted by code point (which is UTF-8 byte order);
* strings escaped minimally: ``\\"``, ``\\\\``, ``\\b \\f \\n \\r \\t`` and
  lowercase ``\\u00XX`` for the other controls below U+0020; everything else,
  ``/``, U+007F and U+2028 included, is written as is;
* integers exact, of any size (``2**70`` is ``1180591620717411303424``);
* floats as orjson writes them: the shortest text that reads back as the same
  double, e.g. ``1e+16``, ``1e-7``, ``0.0001``, ``-0.0``, ``1.0``;
* ``NaN``/``Infinity`` (orjson would silently write ``null``), lone
  surrogates, non-string keys, other types and nesting deeper than
  :data:`MAX_ENCODE_DEPTH` raise :class:`JsonEncodeError`.

One variant, :func:`ordered_bytes`, is the same encoding with object keys in
the order they were inserted: for a body whose key order means something to
its reader (a JSON Schema sent to a server that compiles ``properties`` into
a grammar in the order given). Its bytes are as deterministic as the value's
construction; they are never what a stored hash is taken of.

This is ``orjson.dumps(value, option=OPT_SORT_KEYS)`` wherever orjson can
encode the value, so hashes stored before this module existed (case
packages, research requests, evidence) do not change. For integers beyond
64 bits and nesting beyond orjson's limit an exact encoder takes over and
produces the bytes orjson would have produced (a property test checks it).

It is **not** RFC 8785 (JCS): JCS sorts keys by UTF-16 code units (we sort by
code point, which differs only for keys outside the BMP versus U+E000-U+FFFF),
writes numbers as ECMAScript does (``100`` for the float ``100.0``, which we
write ``100.0``; ``10000000000000000`` for ``1e16``, which we write
``1e+16``) and knows only IEEE 754 doubles, so it cannot carry an integer
beyond 2**53 exactly; we write integers exactly and keep ``1`` and ``1.0``
apart. Over the case domain (no floats, integers within +-(2**53 - 1)) with
keys inside the BMP the bytes are exactly JCS, so any JCS library can check
those hashes; tests/test_jsonio.py checks both the agreement and each
difference against the ``rfc8785`` package (docs/json.md).
"""

from __future__ import annotations

import hashlib
import json
import json.decoder
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Final, Literal, TypeAlias

import orjson

from viano_bug_analysis.errors import JsonDecodeError, JsonEncodeError

JsonValue: TypeAlias = "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None"

MAX_DEPTH: Final = 64
"""Default nesting limit of the parse (arrays and objects; a scalar has depth 0)."""

MAX_BYTES: Final = 32 * 1024 * 1024
"""Default size limit of the parse, in UTF-8 bytes."""

MAX_ENCODE_DEPTH: Final = 1024
"""Nesting limit of :func:`canonical_bytes` (row snapshots may nest 512 levels)."""

FailureCode = Literal[
    "syntax_error",
    "duplicate_key",
    "non_finite_number",
    "number_too_long",
    "too_deep",
    "invalid_string",
    "not_utf8",
    "too_large",
]

SYNTAX_ERROR: Final = "syntax_error"
DUPLICATE_KEY: Final = "duplicate_key"
NON_FINITE_NUMBER: Final = "non_finite_number"
NUMBER_TOO_LONG: Final = "number_too_long"
TOO_DEEP: Final = "too_deep"
INVALID_STRING: Final = "invalid_string"
NOT_UTF8: Final = "not_utf8"
TOO_LARGE: Final = "too_large"


@dataclass(frozen=True, slots=True)
class JsonFailure:
    """Why a text is not strict JSON, and where (an offset, never content)."""

    code: FailureCode
    offset: int


@dataclass(frozen=True, slots=True)
class Parsed:
    """A successful strict parse."""

    value: JsonValue


def strict_parse(
    text: str | bytes, *, max_depth: int = MAX_DEPTH, max_bytes: int = MAX_BYTES
) -> Parsed | JsonFailure:
    """Parses ``text`` as exactly one strict JSON value, or says why not."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        data = bytes(text)
        if len(data) > max_bytes:
            return JsonFailure(TOO_LARGE, 0)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            return JsonFailure(NOT_UTF8, error.start)
    elif len(text) > max_bytes or (
        len(text) * 4 > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes
    ):
        return JsonFailure(TOO_LARGE, 0)
    value = _fast_parse(text, max_depth)
    if value is not _MISS:
        return Parsed(value)
    try:
        return Parsed(_parse(text, max_depth))
    except _Reject as reject:
        return JsonFailure(reject.code, reject.offset)


def strict_loads(
    text: str | bytes, *, max_depth: int = MAX_DEPTH, max_bytes: int = MAX_BYTES
) -> JsonValue:
    """:func:`strict_parse`, raising :class:`JsonDecodeError` on failure."""
    result = strict_parse(text, max_depth=max_depth, max_bytes=max_bytes)
    if isinstance(result, JsonFailure):
        raise JsonDecodeError(result)
    return result.value


def line_column(text: Any, offset: int, newline: Any = "\n") -> dict[str, int]:
    """The 1-based line and column of ``offset`` in ``text`` (str, or bytes with b"\n")."""
    line_start = text.rfind(newline, 0, offset) + 1
    return {"line": text.count(newline, 0, offset) + 1, "column": offset - line_start + 1}


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def canonical_sha256(value: Any, *, max_depth: int = MAX_ENCODE_DEPTH) -> str:
    """Lowercase hex SHA-256 of ``canonical_bytes(value)``."""
    return sha256_hex(canonical_bytes(value, max_depth=max_depth))


# --- parsing -------------------------------------------------------------------------

_WHITESPACE = re.compile(r"[ \t\n\r]*")
# ASCII digits only; every part is anchored by a different character class,
# so a match cannot backtrack.
_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LITERALS: Final = (("null", None), ("true", True), ("false", False))
_NON_FINITE: Final = ("NaN", "Infinity", "-Infinity")

# The standard library's C string scanner; typeshed does not declare it.
_scan_string: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


class _Reject(Exception):
    def __init__(self, code: FailureCode, offset: int) -> None:
        super().__init__(code)
        self.code: FailureCode = code
        self.offset = offset


class _Object:
    """An object being parsed: where it starts, and the key awaiting its value."""

    __slots__ = ("key", "start", "value")

    def __init__(self, start: int, key: str) -> None:
        self.start = start
        self.key = key
        self.value: dict[str, Any] = {}


def _string(text: str, start: int) -> tuple[str, int]:
    try:
        value, end = _scan_string(text, start + 1, True)
    except json.JSONDecodeError as error:
        raise _Reject(SYNTAX_ERROR, error.pos) from None
    # Paired escapes are already joined, so any surrogate left is a lone one.
    if _SURROGATE.search(value) is not None:
        raise _Reject(INVALID_STRING, start)
    return value, end


def _key(text: str, index: int) -> tuple[str, int]:
    """Reads ``"key" :`` at ``index``; returns the key and the start of its value."""
    if not text.startswith('"', index):
        raise _Reject(SYNTAX_ERROR, index)
    key, index = _string(text, index)
    index = _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]
    if not text.startswith(":", index):
        raise _Reject(SYNTAX_ERROR, index)
    return key, _WHITESPACE.match(text, index + 1).end()  # type: ignore[union-attr]


def _scalar(text: str, index: int) -> tuple[Any, int]:
    if text.startswith('"', index):
        return _string(text, index)
    for literal, value in _LITERALS:
        if text.startswith(literal, index):
            return value, index + len(literal)
    for constant in _NON_FINITE:
        if text.startswith(constant, index):
            raise _Reject(NON_FINITE_NUMBER, index)
    match = _NUMBER.match(text, index)
    if match is None:
        raise _Reject(SYNTAX_ERROR, index)
    integer, fraction, exponent = match.groups()
    if fraction is None and exponent is None:
        try:
            return int(integer), match.end()
        except ValueError:  # more digits than int() converts
            raise _Reject(NUMBER_TOO_LONG, index) from None
    number = float(match.group())
    if number in (float("inf"), float("-inf")):
        raise _Reject(NON_FINITE_NUMBER, index)
    return number, match.end()


def _parse(text: str, max_depth: int) -> Any:
    skip = _WHITESPACE.match
    end = len(text)
    stack: list[_Object | list[Any]] = []
    index = skip(text, 0).end()  # type: ignore[union-attr]
    while True:
        # A value starts at ``index``.
        if index >= end:
            raise _Reject(SYNTAX_ERROR, index)
        char = text[index]
        value: Any
        if char == "{" or char == "[":
            if len(stack) >= max_depth:
                raise _Reject(TOO_DEEP, index)
            start = index
            index = skip(text, index + 1).end()  # type: ignore[union-attr]
            if char == "{":
                if text.startswith("}", index):
                    value, index = {}, index + 1
                else:
                    key, index = _key(text, index)
                    stack.append(_Object(start, key))
                    continue
            elif text.startswith("]", index):
                value, index = [], index + 1
            else:
                stack.append([])
                continue
        else:
            value, index = _scalar(text, index)
        # ``value`` is complete: hand it to the open containers, closing them
        # as long as their closing bracket follows.
        while True:
            index = skip(text, index).end()  # type: ignore[union-attr]
            if not stack:
                if index != end:
                    raise _Reject(SYNTAX_ERROR, index)
                return value
            top = stack[-1]
            if isinstance(top, list):
                top.append(value)
                closer = "]"
            else:
                if top.key in top.value:
                    raise _Reject(DUPLICATE_KEY, top.start)
                top.value[top.key] = value
                closer = "}"
            if text.startswith(",", index):
                index = skip(text, index + 1).end()  # type: ignore[union-attr]
                if not isinstance(top, list):
                    top.key, index = _key(text, index)
                break
            if not text.startswith(closer, index):
                raise _Reject(SYNTAX_ERROR, index)
            stack.pop()
            value = top if isinstance(top, list) else top.value
            index += 1


# --- the fast path ---------------------------------------------------------------------

_MISS: Final = object()
# Any escape of a surrogate, paired or not: the C scanner joins pairs and keeps
# lone halves, so such texts are left to the exact parser.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# The C parser recurses once per level. Below this many levels that is safe
# whatever the interpreter's recursion limit is set to; beyond, the levels are
# counted first.
_C_SAFE_DEPTH: Final = 500
_STRING_LITERAL = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


class _Refused(Exception):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Refused
    return result


def _no_constant(_name: str) -> Any:
    raise _Refused


def _finite_float(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise _Refused
    return number


def _fast_parse(text: str, max_depth: int) -> Any:
    """The value of ``text`` if it is strict JSON the C parser can take, else ``_MISS``.

    It never decides a failure: anything unusual is a miss and goes to the
    exact parser. The depth of what the C parser built is measured afterwards;
    input that could take it beyond :data:`_C_SAFE_DEPTH` levels never reaches it.
    """
    if "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None:
        return _MISS
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a raw lone surrogate
            return _MISS
    if text.count("[") + text.count("{") > _C_SAFE_DEPTH and _nesting(text) > _C_SAFE_DEPTH:
        return _MISS
    try:
        value = json.loads(
            text,
            object_pairs_hook=_unique_object,
            parse_constant=_no_constant,
            parse_float=_finite_float,
        )
    except (_Refused, ValueError, RecursionError):
        return _MISS
    return value if not _deeper_than(value, max_depth) else _MISS


def _nesting(text: str) -> int:
    """An upper bound of the nesting the C parser can reach: the running count
    of brackets outside string literals (linear regex passes, no recursion)."""
    brackets = _NOT_A_BRACKET.sub("", _STRING_LITERAL.sub("", text))
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


def _deeper_than(root: Any, max_depth: int) -> bool:
    """Whether ``root`` nests more than ``max_depth`` arrays/objects (iterative)."""
    pending = [(root, 1)] if isinstance(root, (dict, list)) else []
    while pending:
        value, depth = pending.pop()
        if depth > max_depth:
            return True
        for item in value.values() if isinstance(value, dict) else value:
            if isinstance(item, (dict, list)):
                pending.append((item, depth + 1))
    return False


# --- encoding ------------------------------------------------------------------------

_ORJSON_DEPTH: Final = 254  # orjson refuses deeper nesting ("Recursion limit reached")
_ORJSON_INT = range(-(2**63), 2**64)


def canonical_bytes(value: Any, *, max_depth: int = MAX_ENCODE_DEPTH) -> bytes:
    """The canonical JSON encoding of ``value`` (see the module docstring)."""
    return _encode(value, max_depth, sort_keys=True)


def ordered_bytes(value: Any, *, max_depth: int = MAX_ENCODE_DEPTH) -> bytes:
    """:func:`canonical_bytes` with object keys in insertion order."""
    return _encode(value, max_depth, sort_keys=False)


def _encode(value: Any, max_depth: int, *, sort_keys: bool) -> bytes:
    option = orjson.OPT_SORT_KEYS if sort_keys else 0
    if max_depth >= _ORJSON_DEPTH:
        # orjson refuses on its own lone surrogates, non-string keys, integers
        # beyond 64 bits, nesting beyond 254 and most foreign types; what it
        # writes without a word instead (NaN and infinities as null, enums,
        # UUIDs, dates, dataclasses, tuples) does not read back equal to the
        # value. So bytes that read back equal are the ones the validating walk
        # below would accept and hand to orjson, at a fifth of its cost.
        try:
            data = orjson.dumps(value, option=option)
        except TypeError:  # orjson.JSONEncodeError: the walk says why, or encodes exactly
            pass
        else:
            if orjson.loads(data) == value:
                return data
    depth, exact_needed = _check(value, max_depth)
    if depth <= _ORJSON_DEPTH and not exact_needed:
        return orjson.dumps(value, option=option)
    return _encode_exact(value, sort_keys=sort_keys)


def _check(root: Any, max_depth: int) -> tuple[int, bool]:
    """Walks ``root`` iteratively; returns its depth and whether an integer is
    beyond orjson's 64-bit range. Raises :class:`JsonEncodeError`."""
    deepest = 0
    big = False
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        value, depth = stack.pop()
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, str):
            if _SURROGATE.search(value) is not None:
                raise _encode_error("json_invalid_string", "a string holds a lone surrogate", depth)
            continue
        if isinstance(value, int):
            big = big or value not in _ORJSON_INT
            continue
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise _encode_error("json_non_finite_number", "NaN or infinity", depth)
            continue
        if isinstance(value, (dict, list, tuple)):
            depth += 1
            if depth > max_depth:
                raise _encode_error("json_too_deep", "nesting too deep", depth)
            deepest = max(deepest, depth)
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise _encode_error("json_non_string_key", "a key is not a string", depth)
                    if _SURROGATE.search(key) is not None:
                        raise _encode_error(
                            "json_invalid_string", "a key holds a lone surrogate", depth
                        )
                    stack.append((item, depth))
            else:
                stack.extend((item, depth) for item in value)
            continue
        raise _encode_error("json_unsupported_type", "a value of a type JSON does not have", depth)
    return deepest, big


def _encode_exact(root: Any, *, sort_keys: bool) -> bytes:
    """Iterative encoder for what orjson refuses (big integers, deep nesting).

    Every scalar except a big integer is still written by orjson, so the
    bytes are the ones orjson would produce.
    """
    out: list[bytes] = []
    # Items are values to write, or bytes to emit as they are.
    todo: list[Any] = [root]
    while todo:
        value = todo.pop()
        if isinstance(value, bytes):
            out.append(value)
        elif isinstance(value, dict):
            keys = sorted(value) if sort_keys else list(value)
            pieces: list[Any] = [b"{"]
            for position, key in enumerate(keys):
                if position:
                    pieces.append(b",")
                pieces.append(orjson.dumps(key) + b":")
                pieces.append(_Item(value[key]))
            pieces.append(b"}")
            todo.extend(reversed(pieces))
        elif isinstance(value, (list, tuple)):
            pieces = [b"["]
            for position, item in enumerate(value):
                if position:
                    pieces.append(b",")
                pieces.append(_Item(item))
            pieces.append(b"]")
            todo.extend(reversed(pieces))
        elif isinstance(value, _Item):
            todo.append(value.value)
        elif isinstance(value, int) and not isinstance(value, bool) and value not in _ORJSON_INT:
            out.append(str(int(value)).encode("ascii"))
        else:
            out.append(orjson.dumps(value))
    return b"".join(out)


class _Item:
    """Wraps a value on the encoder's stack so that a ``bytes`` value is never
    mistaken for output (values are JSON types only, but stay explicit)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _encode_error(code: str, reason: str, depth: int) -> JsonEncodeError:
    return JsonEncodeError(
        code, f"value cannot be written as canonical JSON: {reason}", {"depth": depth}
    )


__all__ = [
    "DUPLICATE_KEY",
    "INVALID_STRING",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_ENCODE_DEPTH",
    "NON_FINITE_NUMBER",
    "NOT_UTF8",
    "NUMBER_TOO_LONG",
    "SYNTAX_ERROR",
    "TOO_DEEP",
    "TOO_LARGE",
    "FailureCode",
    "JsonDecodeError",
    "JsonEncodeError",
    "JsonFailure",
    "JsonValue",
    "Parsed",
    "canonical_bytes",
    "canonical_sha256",
    "line_column",
    "ordered_bytes",
    "sha256_hex",
    "strict_loads",
    "strict_parse",
]
