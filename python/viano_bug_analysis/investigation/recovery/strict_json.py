"""A strict JSON parse for LLM responses.

Python's ``json.loads`` is lenient in three ways that matter here: a repeated
key silently keeps the last value, ``NaN``/``Infinity`` are accepted, and a
number such as ``1e400`` quietly becomes ``inf``. Each of these would let a
malformed response pass as a different, valid-looking one, so this parse
rejects all of them, at every depth.

A failure is returned, not raised, as a :class:`JsonFailure` with a stable
``code`` and the character offset where the problem starts. It never carries
any part of the text: LLM output must not reach diagnostics or logs.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

JsonValue: TypeAlias = "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None"

FailureCode = Literal[
    "syntax_error", "duplicate_key", "non_finite_number", "number_too_long", "too_deep"
]

SYNTAX_ERROR: Final = "syntax_error"
DUPLICATE_KEY: Final = "duplicate_key"
NON_FINITE_NUMBER: Final = "non_finite_number"
NUMBER_TOO_LONG: Final = "number_too_long"
TOO_DEEP: Final = "too_deep"


@dataclass(frozen=True, slots=True)
class JsonFailure:
    """Why a text is not strict JSON, and where (a character offset, never content).

    For ``duplicate_key`` the offset is the start of the object that holds the
    repeated key; for the other codes it is where the parser stopped.
    """

    code: FailureCode
    offset: int


@dataclass(frozen=True, slots=True)
class Parsed:
    """A successful strict parse."""

    value: JsonValue


class _Reject(Exception):
    """Internal: carries a failure out of the parser's hooks."""

    def __init__(self, code: FailureCode, offset: int) -> None:
        super().__init__(code)
        self.code: FailureCode = code
        self.offset = offset


def parse_strict(text: str) -> Parsed | JsonFailure:
    """Parses ``text`` as exactly one JSON value, or says why it cannot.

    Surrounding JSON whitespace is allowed, anything else around the value is
    a ``syntax_error``.
    """
    scan = _make_scanner()
    try:
        value, end = scan(text, _skip_whitespace(text, 0))
    except _Reject as reject:
        return JsonFailure(reject.code, reject.offset)
    except StopIteration as stop:
        return JsonFailure(SYNTAX_ERROR, int(stop.value))
    except json.JSONDecodeError as error:
        return JsonFailure(SYNTAX_ERROR, error.pos)
    except RecursionError:
        return JsonFailure(TOO_DEEP, 0)
    end = _skip_whitespace(text, end)
    if end != len(text):
        return JsonFailure(SYNTAX_ERROR, end)
    return Parsed(value)


_WHITESPACE = " \t\n\r"

# The standard library's building blocks; typeshed does not declare them.
_parse_object: Callable[..., tuple[dict[str, Any], int]] = json.decoder.JSONObject  # type: ignore[attr-defined]
_parse_array: Callable[..., tuple[list[Any], int]] = json.decoder.JSONArray  # type: ignore[attr-defined]
_parse_string: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_NUMBER = json.scanner.NUMBER_RE


def _skip_whitespace(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index


def _make_scanner() -> Callable[[str, int], tuple[Any, int]]:
    """The pure-Python scanner of ``json.scanner``, made strict.

    It differs from the standard one in three points: every object goes
    through a pairs hook that rejects a repeated key (with the offset of its
    object), ``NaN``/``Infinity``/``-Infinity`` are rejected, and so is a
    number that overflows to infinity.
    """
    memo: dict[str, str] = {}

    def scan_once(text: str, index: int) -> tuple[Any, int]:
        try:
            char = text[index]
        except IndexError:
            raise StopIteration(index) from None
        if char == '"':
            return _parse_string(text, index + 1, True)
        if char == "{":
            return _parse_object(
                (text, index + 1), True, scan_once, None, _unique_pairs(index), memo
            )
        if char == "[":
            return _parse_array((text, index + 1), scan_once)
        for literal, value in _LITERALS:
            if text.startswith(literal, index):
                return value, index + len(literal)
        for constant in _NON_FINITE:
            if text.startswith(constant, index):
                raise _Reject(NON_FINITE_NUMBER, index)
        match = _NUMBER.match(text, index)
        if match is None:
            raise StopIteration(index)
        integer, fraction, exponent = match.groups()
        try:
            if fraction or exponent:
                number = float(integer + (fraction or "") + (exponent or ""))
                if not math.isfinite(number):
                    raise _Reject(NON_FINITE_NUMBER, index)
                return number, match.end()
            return int(integer), match.end()
        except ValueError:  # more digits than int() converts
            raise _Reject(NUMBER_TOO_LONG, index) from None

    return scan_once


_LITERALS: Final = (("null", None), ("true", True), ("false", False))
_NON_FINITE: Final = ("NaN", "Infinity", "-Infinity")


def _unique_pairs(start: int) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise _Reject(DUPLICATE_KEY, start)
            result[key] = value
        return result

    return build


__all__ = [
    "DUPLICATE_KEY",
    "NON_FINITE_NUMBER",
    "NUMBER_TOO_LONG",
    "SYNTAX_ERROR",
    "TOO_DEEP",
    "FailureCode",
    "JsonFailure",
    "JsonValue",
    "Parsed",
    "parse_strict",
]
