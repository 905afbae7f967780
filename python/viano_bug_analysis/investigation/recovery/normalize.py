"""Deterministic normalization of an investigation LLM response (recovery policy 1).

Only calls whose request schema carries ``"x-viano-response-recovery": 1``
and whose investigation runs with ``response_recovery_version = 1`` get these
rules; every other response is parsed strictly as it is. The rules fix a few
purely *structural* slips that models make often, and nothing else:

``strip_outer_fence``
    Exactly one outer Markdown code fence, without a language or with
    ``json``, around the whole response is removed.
``decode_encoded_response`` / ``decode_encoded_next`` /
``decode_encoded_next_arguments`` / ``decode_encoded_evidence``
    A JSON object that was JSON-encoded once into a string is decoded with the
    strict parse: as the whole response, or at ``next``, ``next.arguments`` or
    an item of ``evidence``. A string whose content is not an object (free
    text, a second encoding) stays as it is.
``filter_from_triple`` / ``filter_from_labelled_list``
    A ProjectResearch filter written as ``["id","eq",1]`` or
    ``["column","id","operator","eq","value",1]`` becomes
    ``{"column":"id","operator":"eq","value":1}``, but only when the column
    is unambiguously valid and the operator is one of the contract's.

Never repaired: prose around the JSON, syntax errors, duplicate keys,
non-finite numbers, unknown operators such as ``like`` (and ``%`` is never
stripped). No value is ever changed, dropped or added: the rules only move
values into the structure the contract asks for.

The result is only a *candidate*: the full contract check (schema, evidence,
budget, tool arguments) happens afterwards, elsewhere. Nothing here carries
response content into an error: errors hold a code, a JSON Pointer and at most
a character offset.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from viano_bug_analysis import vocabulary
from viano_bug_analysis.investigation.recovery.strict_json import JsonFailure, parse_strict

RECOVERY_POLICY_VERSION: Final = 1
"""The ``response_recovery_version`` these rules belong to."""

MAX_INPUT_BYTES: Final = 65_536
MAX_NORMALIZATIONS: Final = 16

RULE_STRIP_FENCE: Final = "strip_outer_fence"
RULE_DECODE_RESPONSE: Final = "decode_encoded_response"
RULE_DECODE_NEXT: Final = "decode_encoded_next"
RULE_DECODE_ARGUMENTS: Final = "decode_encoded_next_arguments"
RULE_DECODE_EVIDENCE: Final = "decode_encoded_evidence"
RULE_FILTER_TRIPLE: Final = "filter_from_triple"
RULE_FILTER_LABELLED: Final = "filter_from_labelled_list"

RULE_IDS: Final = (
    RULE_STRIP_FENCE,
    RULE_DECODE_RESPONSE,
    RULE_DECODE_NEXT,
    RULE_DECODE_ARGUMENTS,
    RULE_DECODE_EVIDENCE,
    RULE_FILTER_TRIPLE,
    RULE_FILTER_LABELLED,
)

# Error codes (besides the strict parse's own: syntax_error, duplicate_key,
# non_finite_number, number_too_long, too_deep).
INPUT_TOO_LARGE: Final = "input_too_large"
NOT_UTF8: Final = "not_utf8"
NOT_AN_OBJECT: Final = "not_an_object"
TOO_MANY_NORMALIZATIONS: Final = "too_many_normalizations"

# Reasons a rule looked at a place and left it alone.
ENCODED_NOT_OBJECT: Final = "encoded_not_object"
NOT_ENCODED_JSON: Final = "not_encoded_json"
FILTER_UNKNOWN_OPERATOR: Final = "filter_unknown_operator"
FILTER_INVALID_COLUMN: Final = "filter_invalid_column"
FILTER_AMBIGUOUS_COLUMN: Final = "filter_ambiguous_column"
FILTER_UNKNOWN_COLUMN: Final = "filter_unknown_column"
FILTER_INVALID_VALUE: Final = "filter_invalid_value"

FILTER_OPERATORS: Final = frozenset(vocabulary.FILTER_OPERATORS)
_FILTER_LABELS: Final = ("column", "operator", "value")
_FILTERED_QUERIES: Final = frozenset({"database.rows", "database.count"})
_FENCE_OPENING: Final = re.compile(r"```(?:json)?[ \t]*\r?\Z")
_OUTER_WHITESPACE: Final = " \t\r\n"


@dataclass(frozen=True, slots=True)
class AppliedRule:
    """One normalization: which rule, at which JSON Pointer of the result."""

    rule: str
    path: str


@dataclass(frozen=True, slots=True)
class Refusal:
    """A place a rule inspected and deliberately left unchanged, and why."""

    reason: str
    path: str


@dataclass(frozen=True, slots=True)
class NormalizationError:
    """Why no candidate came out: a code, a JSON Pointer and maybe a character offset.

    ``offset`` counts characters of the original text for a failure of the
    whole response, and characters of the decoded string content for a
    failure inside a once-encoded value (``path`` then names that value).
    """

    code: str
    path: str
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class NormalizationOutcome:
    """What the LLM call record keeps: the original, the candidate and the rules.

    Exactly one of ``normalized`` and ``error`` is set. After an error,
    ``applied_rules`` still lists the rules applied before it, for the audit.
    """

    original: str
    normalized: dict[str, Any] | None
    applied_rules: tuple[AppliedRule, ...] = ()
    error: NormalizationError | None = None
    refusals: tuple[Refusal, ...] = field(default=())

    @property
    def rule_ids(self) -> tuple[str, ...]:
        return tuple(applied.rule for applied in self.applied_rules)


def recovery_enabled(*, schema_marker: bool, policy_version: int) -> bool:
    """Whether the version-1 rules apply to a call."""
    return schema_marker and policy_version == RECOVERY_POLICY_VERSION


def normalize_response(
    text: str,
    *,
    schema_marker: bool,
    policy_version: int,
    known_columns: Mapping[str, Collection[str]] | None = None,
) -> NormalizationOutcome:
    """Turns an LLM response text into a candidate response object.

    ``schema_marker`` says that the request schema carries
    ``x-viano-response-recovery: 1``; ``policy_version`` is the
    investigation's ``response_recovery_version``. Unless both enable
    recovery, the text is only parsed strictly. ``known_columns`` maps a table
    name to its allowed columns where they are known; a filter column on such
    a table must be one of them to be normalized.

    The same arguments always give the same outcome.
    """
    if not recovery_enabled(schema_marker=schema_marker, policy_version=policy_version):
        return _parse_as_is(text)
    return _Normalizer(text, known_columns or {}).run()


def _parse_as_is(text: str) -> NormalizationOutcome:
    parsed = parse_strict(text)
    if isinstance(parsed, JsonFailure):
        return _failed(text, (), NormalizationError(parsed.code, "", parsed.offset))
    if not isinstance(parsed.value, dict):
        return _failed(text, (), NormalizationError(NOT_AN_OBJECT, ""))
    return NormalizationOutcome(original=text, normalized=parsed.value)


def _failed(
    text: str,
    applied: tuple[AppliedRule, ...],
    error: NormalizationError,
    refusals: tuple[Refusal, ...] = (),
) -> NormalizationOutcome:
    return NormalizationOutcome(
        original=text, normalized=None, applied_rules=applied, error=error, refusals=refusals
    )


class _Stop(Exception):
    """Internal: ends normalization with an error."""

    def __init__(self, error: NormalizationError) -> None:
        super().__init__(error.code)
        self.error = error


class _Normalizer:
    """One run of the rules over one text; collects rules and refusals in order."""

    def __init__(self, text: str, known_columns: Mapping[str, Collection[str]]) -> None:
        self.text = text
        self.known_columns = known_columns
        self.applied: list[AppliedRule] = []
        self.refusals: list[Refusal] = []

    def run(self) -> NormalizationOutcome:
        try:
            response = self._response()
        except _Stop as stop:
            return _failed(self.text, tuple(self.applied), stop.error, tuple(self.refusals))
        return NormalizationOutcome(
            original=self.text,
            normalized=response,
            applied_rules=tuple(self.applied),
            refusals=tuple(self.refusals),
        )

    def _apply(self, rule: str, path: str) -> None:
        if len(self.applied) >= MAX_NORMALIZATIONS:
            raise _Stop(NormalizationError(TOO_MANY_NORMALIZATIONS, path))
        self.applied.append(AppliedRule(rule, path))

    def _response(self) -> dict[str, Any]:
        try:
            size = len(self.text.encode("utf-8"))
        except UnicodeEncodeError:  # a lone surrogate cannot be UTF-8
            raise _Stop(NormalizationError(NOT_UTF8, "")) from None
        if size > MAX_INPUT_BYTES:
            raise _Stop(NormalizationError(INPUT_TOO_LARGE, ""))

        body, body_start = self.text, 0
        fenced = _fenced_content(self.text)
        if fenced is not None:
            self._apply(RULE_STRIP_FENCE, "")
            body, body_start = fenced

        parsed = parse_strict(body)
        if isinstance(parsed, JsonFailure):
            raise _Stop(NormalizationError(parsed.code, "", parsed.offset + body_start))
        value = parsed.value
        if isinstance(value, str):
            inner = parse_strict(value)
            if isinstance(inner, JsonFailure) and inner.code == "syntax_error":
                # A JSON string of free text is not an encoded object.
                raise _Stop(NormalizationError(NOT_AN_OBJECT, ""))
            if isinstance(inner, JsonFailure):  # duplicate keys, NaN: never repaired
                raise _Stop(NormalizationError(inner.code, "", inner.offset))
            if not isinstance(inner.value, dict):
                raise _Stop(NormalizationError(NOT_AN_OBJECT, ""))
            self._apply(RULE_DECODE_RESPONSE, "")
            value = inner.value
        if not isinstance(value, dict):
            raise _Stop(NormalizationError(NOT_AN_OBJECT, ""))

        self._evidence(value)
        self._next(value)
        return value

    def _decode_at(self, container: Any, key: str | int, path: str) -> bool:
        """Decodes a once-encoded object in ``container[key]`` in place; True if it did."""
        encoded = container[key]
        if not isinstance(encoded, str):
            return False
        inner = parse_strict(encoded)
        if isinstance(inner, JsonFailure):
            if inner.code == "syntax_error":
                # Free text (or broken JSON) is never reinterpreted as an object.
                self.refusals.append(Refusal(NOT_ENCODED_JSON, path))
                return False
            raise _Stop(NormalizationError(inner.code, path, inner.offset))
        if not isinstance(inner.value, dict):
            self.refusals.append(Refusal(ENCODED_NOT_OBJECT, path))
            return False
        container[key] = inner.value
        return True

    def _evidence(self, response: dict[str, Any]) -> None:
        evidence = response.get("evidence")
        if not isinstance(evidence, list):
            return
        for index in range(len(evidence)):
            path = f"/evidence/{index}"
            if self._decode_at(evidence, index, path):
                self._apply(RULE_DECODE_EVIDENCE, path)

    def _next(self, response: dict[str, Any]) -> None:
        if "next" in response and self._decode_at(response, "next", "/next"):
            self._apply(RULE_DECODE_NEXT, "/next")
        step = response.get("next")
        if not isinstance(step, dict):
            return
        path = "/next/arguments"
        if "arguments" in step and self._decode_at(step, "arguments", path):
            self._apply(RULE_DECODE_ARGUMENTS, path)
        arguments = step.get("arguments")
        if step.get("operation") == "project.query" and isinstance(arguments, dict):
            self._filters(arguments)

    def _filters(self, arguments: dict[str, Any]) -> None:
        if arguments.get("kind") not in _FILTERED_QUERIES:
            return
        filters = arguments.get("filters")
        if not isinstance(filters, list):
            return
        table = arguments.get("table")
        allowed = self.known_columns.get(table) if isinstance(table, str) else None
        path = "/next/arguments/filters"
        if _is_flat(filters):
            # The whole list is one filter written flat: it becomes a list of one.
            converted = self._filter(filters, allowed, path)
            if converted is not None:
                rule, unit = converted
                self._apply(rule, path)
                arguments["filters"] = [unit]
            return
        for index, item in enumerate(filters):
            if isinstance(item, list):
                item_path = f"{path}/{index}"
                converted = self._filter(item, allowed, item_path)
                if converted is not None:
                    rule, unit = converted
                    self._apply(rule, item_path)
                    filters[index] = unit

    def _filter(
        self, items: list[Any], allowed: Collection[str] | None, path: str
    ) -> tuple[str, dict[str, Any]] | None:
        if len(items) == 3:
            rule, (column, operator, value) = RULE_FILTER_TRIPLE, items
        elif len(items) == 6 and tuple(items[0::2]) == _FILTER_LABELS:
            rule, (column, operator, value) = RULE_FILTER_LABELLED, items[1::2]
        else:
            return None  # not a filter shape; the contract check rejects it
        reason = _filter_refusal(column, operator, value, allowed)
        if reason is not None:
            self.refusals.append(Refusal(reason, path))
            return None
        return rule, {"column": column, "operator": operator, "value": value}


def _filter_refusal(
    column: Any, operator: Any, value: Any, allowed: Collection[str] | None
) -> str | None:
    if not isinstance(operator, str) or operator not in FILTER_OPERATORS:
        # ``like`` and friends are a domain decision, never a format slip.
        return FILTER_UNKNOWN_OPERATOR
    if not isinstance(column, str) or not vocabulary.is_identifier(column):
        return FILTER_INVALID_COLUMN
    if allowed is not None:
        if column not in allowed:
            return FILTER_UNKNOWN_COLUMN
    elif column in FILTER_OPERATORS or column in _FILTER_LABELS:
        # Without a column list, "eq" or "value" in the column position may
        # just as well be a shifted label or operator.
        return FILTER_AMBIGUOUS_COLUMN
    if not (_is_scalar(value) or (isinstance(value, list) and all(map(_is_scalar, value)))):
        return FILTER_INVALID_VALUE
    return None


def _is_flat(filters: list[Any]) -> bool:
    """A filter list whose first item is a scalar (a column or label), not a filter."""
    return len(filters) in (3, 6) and not isinstance(filters[0], dict | list)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _fenced_content(text: str) -> tuple[str, int] | None:
    """The content of exactly one outer ```/```json fence and its offset, or None."""
    lead = len(text) - len(text.lstrip(_OUTER_WHITESPACE))
    stripped = text.strip(_OUTER_WHITESPACE)
    if not stripped.startswith("```"):
        return None
    first_break, last_break = stripped.find("\n"), stripped.rfind("\n")
    if first_break < 0:
        return None  # a one-line fence is not a fence around JSON
    if not _FENCE_OPENING.match(stripped[:first_break]):
        return None  # a language other than json, or text after the fence
    if stripped[last_break + 1 :] != "```":
        return None
    content = stripped[first_break + 1 : last_break] if first_break < last_break else ""
    if any(line.lstrip().startswith("```") for line in content.split("\n")):
        return None  # a second fence: not exactly one
    return content, lead + first_break + 1


__all__ = [
    "ENCODED_NOT_OBJECT",
    "FILTER_AMBIGUOUS_COLUMN",
    "FILTER_INVALID_COLUMN",
    "FILTER_INVALID_VALUE",
    "FILTER_OPERATORS",
    "FILTER_UNKNOWN_COLUMN",
    "FILTER_UNKNOWN_OPERATOR",
    "INPUT_TOO_LARGE",
    "MAX_INPUT_BYTES",
    "MAX_NORMALIZATIONS",
    "NOT_AN_OBJECT",
    "NOT_ENCODED_JSON",
    "NOT_UTF8",
    "RECOVERY_POLICY_VERSION",
    "RULE_DECODE_ARGUMENTS",
    "RULE_DECODE_EVIDENCE",
    "RULE_DECODE_NEXT",
    "RULE_DECODE_RESPONSE",
    "RULE_FILTER_LABELLED",
    "RULE_FILTER_TRIPLE",
    "RULE_IDS",
    "RULE_STRIP_FENCE",
    "TOO_MANY_NORMALIZATIONS",
    "AppliedRule",
    "NormalizationError",
    "NormalizationOutcome",
    "Refusal",
    "normalize_response",
    "recovery_enabled",
]
