"""Typed reads of a tracker's JSON fields, each failure naming the field by its JSON Pointer.

Every reader takes the object, the key and the pointer of the object
(``""`` for the document, ``/3`` for an item of a list) and refuses a value
of the wrong type with ``report_invalid`` (reason ``wrong_type``, and
``expected``) rather than guessing what it meant.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.case.intake.source import invalid, too_large
from viano_bug_analysis.errors import ReportImportError

MAX_SAFE_INTEGER = 2**53 - 1
MAX_TEXT_BYTES = 1024 * 1024
"""The longest body (or comment) taken, in UTF-8 bytes."""


def pointer(base: str, *parts: str | int) -> str:
    escaped = (str(p).replace("~", "~0").replace("/", "~1") for p in parts)
    return base + "".join("/" + p for p in escaped)


def wrong_type(field: str, expected: str) -> ReportImportError:
    return invalid(field, "wrong_type", f"field {field} must be {expected}", expected=expected)


def optional_str(obj: Mapping[str, Any], key: str, base: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise wrong_type(pointer(base, key), "a string or null")
    _no_nul(value, pointer(base, key))
    return value


def text(obj: Mapping[str, Any], key: str, base: str) -> str:
    """A body-like field: a string or null (null reads as empty), at most MAX_TEXT_BYTES."""
    value = optional_str(obj, key, base) or ""
    # Four bytes per character at most: only a long text pays for the encode.
    if len(value) * 4 > MAX_TEXT_BYTES and len(value.encode("utf-8")) > MAX_TEXT_BYTES:
        raise too_large(pointer(base, key), MAX_TEXT_BYTES, "bytes")
    return value


def optional_number(obj: Mapping[str, Any], key: str, base: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    field = pointer(base, key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(field, "an integer or null")
    if not 0 < value <= MAX_SAFE_INTEGER:
        raise invalid(
            field,
            "out_of_range",
            f"field {field} must be a positive integer",
            limit=MAX_SAFE_INTEGER,
        )
    return value


def optional_object(obj: Mapping[str, Any], key: str, base: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise wrong_type(pointer(base, key), "an object or null")
    return value


def person(obj: Mapping[str, Any], key: str, name_key: str, base: str) -> str | None:
    """The name of a user object (``user.login``, ``author.username``), or None."""
    found = optional_object(obj, key, base)
    return None if found is None else optional_str(found, name_key, pointer(base, key))


def labels(obj: Mapping[str, Any], key: str, base: str) -> list[str]:
    """Label names: strings (GitLab) or objects with a ``name`` (GitHub), either is taken."""
    value = obj.get(key)
    if value is None:
        return []
    field = pointer(base, key)
    if not isinstance(value, list):
        raise wrong_type(field, "an array or null")
    names = []
    for index, item in enumerate(value):
        at = pointer(field, index)
        if isinstance(item, str):
            _no_nul(item, at)
            names.append(item)
        elif isinstance(item, dict):
            name = optional_str(item, "name", at)
            if name is None:
                raise invalid(pointer(at, "name"), "missing", "label has no name")
            names.append(name)
        else:
            raise wrong_type(at, "a string or an object with a name")
    return names


def _no_nul(value: str, field: str) -> None:
    if "\0" in value:
        raise invalid(field, "nul_character", f"field {field} holds a NUL character")


__all__ = [
    "MAX_SAFE_INTEGER",
    "MAX_TEXT_BYTES",
    "labels",
    "optional_number",
    "optional_object",
    "optional_str",
    "person",
    "pointer",
    "text",
    "wrong_type",
]
