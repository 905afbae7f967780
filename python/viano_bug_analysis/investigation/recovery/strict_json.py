"""The strict JSON parse for LLM responses: :mod:`viano_bug_analysis.jsonio`.

Recovery keeps this name for its callers; the rules (duplicate keys at every
depth, no ``NaN``/``Infinity``/overflow, ASCII digits only, no lone
surrogates, at most :data:`~viano_bug_analysis.jsonio.MAX_DEPTH` levels) and
the failure codes are those of the one strict parser of the package.
"""

from __future__ import annotations

from viano_bug_analysis.jsonio import (
    DUPLICATE_KEY,
    INVALID_STRING,
    MAX_DEPTH,
    NON_FINITE_NUMBER,
    NOT_UTF8,
    NUMBER_TOO_LONG,
    SYNTAX_ERROR,
    TOO_DEEP,
    TOO_LARGE,
    FailureCode,
    JsonFailure,
    JsonValue,
    Parsed,
    strict_parse,
)


def parse_strict(text: str) -> Parsed | JsonFailure:
    """Parses ``text`` as exactly one strict JSON value, or says why it cannot.

    Surrounding JSON whitespace is allowed, anything else around the value is
    a ``syntax_error``.
    """
    return strict_parse(text)


__all__ = [
    "DUPLICATE_KEY",
    "INVALID_STRING",
    "MAX_DEPTH",
    "NON_FINITE_NUMBER",
    "NOT_UTF8",
    "NUMBER_TOO_LONG",
    "SYNTAX_ERROR",
    "TOO_DEEP",
    "TOO_LARGE",
    "FailureCode",
    "JsonFailure",
    "JsonValue",
    "Parsed",
    "parse_strict",
]
