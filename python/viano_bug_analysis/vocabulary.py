"""The words the request languages share, defined once.

A filter operator or an identifier rule that is written in several places
drifts: one copy gains an operator the SQL builder cannot build, another
still accepts a character the server would have to quote. Every Python
module imports these names; the JSON Schemas under ``schemas/`` cannot
import, so tests/test_vocabulary.py reads every schema and checks each
operator ``enum`` and each identifier ``pattern`` against this module.

* ``FILTER_OPERATORS``: the operators of a ``database.rows`` /
  ``database.count`` filter, in the order the hint and the schemas list
  them. ``EQUALITY_OPERATORS`` are the two that also accept ``null`` as the
  value (``IS NULL`` / ``IS NOT NULL``); ``ORDERED_OPERATORS`` take a string
  or number only (the schemas' ``equality_value`` / ``ordered_value``).
* ``IDENTIFIER_PATTERN``: a database, table or column name that needs no
  quoting beyond backticks (MariaDB's unquoted identifier characters, at
  most 64 characters, the server's own limit).
* ``SYMBOL_PATTERN``: a source-code symbol as ``source.symbol`` and
  ``find_symbol`` accept it (no ``$``, no length limit of its own; the
  request size limits bound it).
* ``ENV_NAME_PATTERN``: the name of an environment variable a configuration
  file may point at for a secret (``api_key_env``, ``password_env``).

Patterns are kept as source text without anchors because JSON Schema wants
``^...$`` and Python wants ``fullmatch``; ``schema_pattern`` and the
compiled ``IDENTIFIER`` / ``SYMBOL`` give each its form.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

FILTER_OPERATORS: Final[tuple[str, ...]] = ("eq", "ne", "lt", "le", "gt", "ge", "contains", "in")
EQUALITY_OPERATORS: Final[tuple[str, ...]] = ("eq", "ne")
ORDERED_OPERATORS: Final[tuple[str, ...]] = ("lt", "le", "gt", "ge")
# A consistency rule's conditions also test bits of a flags column (npcflag).
MASK_OPERATORS: Final[tuple[str, ...]] = ("mask_any", "mask_all", "mask_none")
RULE_OPERATORS: Final[tuple[str, ...]] = FILTER_OPERATORS + MASK_OPERATORS
OPERATOR_HINT: Final = "allowed operators: " + ", ".join(FILTER_OPERATORS)

IDENTIFIER_PATTERN: Final = r"[A-Za-z_][A-Za-z0-9_$]{0,63}"
SYMBOL_PATTERN: Final = r"[A-Za-z_][A-Za-z0-9_]*"
ENV_NAME_PATTERN: Final = r"[A-Za-z_][A-Za-z0-9_]{0,127}"

IDENTIFIER: Final = re.compile(IDENTIFIER_PATTERN)
SYMBOL: Final = re.compile(SYMBOL_PATTERN)
ENV_NAME: Final = re.compile(ENV_NAME_PATTERN)


# Entity types as operators say them (wowhead's words): each alias names a
# profile's type. Used wherever a person types an entity type (vba
# references, the references query, MCP's project_references).
ENTITY_TYPE_ALIASES: Final[dict[str, str]] = {
    "npc": "creature",
    "mob": "creature",
    "object": "gameobject",
    "go": "gameobject",
    "gob": "gameobject",
}


def entity_type_named(name: str, known: Collection[str]) -> str:
    """The type of ``known`` that ``name`` names: itself, in any case, or by an alias;
    ``name`` unchanged when it names none (the caller refuses it with ``known``)."""
    if name in known:
        return name
    lowered = name.lower()
    for candidate in (lowered, ENTITY_TYPE_ALIASES.get(lowered)):
        if candidate is not None and candidate in known:
            return candidate
    return name


def schema_pattern(pattern: str) -> str:
    """``pattern`` anchored as a JSON Schema ``pattern`` keyword writes it."""
    return f"^{pattern}$"


def is_identifier(text: object) -> bool:
    """True for a string that is a whole identifier (no trailing newline)."""
    return isinstance(text, str) and IDENTIFIER.fullmatch(text) is not None


def is_symbol(text: object) -> bool:
    """True for a string that is a whole source symbol (no trailing newline)."""
    return isinstance(text, str) and SYMBOL.fullmatch(text) is not None


__all__ = [
    "ENTITY_TYPE_ALIASES",
    "ENV_NAME",
    "ENV_NAME_PATTERN",
    "EQUALITY_OPERATORS",
    "FILTER_OPERATORS",
    "IDENTIFIER",
    "IDENTIFIER_PATTERN",
    "OPERATOR_HINT",
    "ORDERED_OPERATORS",
    "SYMBOL",
    "SYMBOL_PATTERN",
    "entity_type_named",
    "is_identifier",
    "is_symbol",
    "schema_pattern",
]
