"""How client-data facts read (``client_record``, ``client_record_absent``,
``client_name_match``): a record's name, origin and a spell's effects by the
engine's enum names, shared by the summary line, the compact prompt view and
the brief's entity line so a spell reads the same wherever it is shown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The brief's entity line names a spell's first effects only; the fact has them all.
BRIEF_EFFECTS = 3


def effect_text(effect: Mapping[str, Any]) -> str:
    """``SPELL_EFFECT_APPLY_AURA SPELL_AURA_MOD_INVISIBILITY``, ``… triggers spell 3``."""
    parts = [str(effect.get("effect_name") or f"effect {effect.get('effect')}")]
    if effect.get("aura"):
        parts.append(str(effect.get("aura_name") or f"aura {effect['aura']}"))
    if effect.get("trigger_spell"):
        parts.append(f"triggers spell {effect['trigger_spell']}")
    if effect.get("misc_value"):
        parts.append(f"misc {effect['misc_value']}")
    return " ".join(parts)


def effects_text(fact: Mapping[str, Any], limit: int | None = None) -> str:
    """The effects of a spell record, in effect order (``limit``: the first ones and a count)."""
    effects = list(fact.get("effects") or ())
    if not effects:
        return "no effect" if "effects" in fact else ""
    shown = effects if limit is None else effects[:limit]
    text = "; ".join(effect_text(e) for e in shown)
    if len(shown) < len(effects):
        text += f"; {len(effects) - len(shown)} more"
    return text


def origin_text(origin: Mapping[str, Any]) -> str:
    """Where a record was read: ``Spell.dbc record 3`` or ``world.spell_dbc Id=900``."""
    if origin.get("source") == "database":
        key = " ".join(f"{k}={v}" for k, v in sorted(dict(origin.get("key") or {}).items()))
        return f"{origin.get('database')}.{origin.get('table')} {key}".rstrip()
    return f"{origin.get('file')} record {origin.get('record')}"


def record_text(fact: Mapping[str, Any], *, effect_limit: int | None = None) -> str:
    """``spell 75048 "Stealth": SPELL_EFFECT_APPLY_AURA SPELL_AURA_MOD_INVISIBILITY``."""
    name = f'"{fact["name"]}"' if fact.get("name") else "(no name)"
    line = f"{fact['entity_type']} {fact['entity_id']} {name}"
    effects = effects_text(fact, effect_limit)
    return f"{line}: {effects}" if effects else line


def record_line(fact: Mapping[str, Any], _facts: Any = None) -> str:
    conflict = ""
    if fact.get("override_conflict"):
        conflict = f"; an override row has this ID too ({origin_text(fact['override_conflict'])})"
    return f"client data: {record_text(fact)} ({origin_text(fact['origin'])}{conflict})"


def absent_line(fact: Mapping[str, Any], _facts: Any = None) -> str:
    ids = ", ".join(str(i) for i in fact["entity_ids"])
    return f"client data: no {fact['entity_type']} {ids} in the client files or their overrides"


def name_match_line(fact: Mapping[str, Any], _facts: Any = None) -> str:
    how = "followed" if fact["followed"] else "not followed (too many)"
    return (
        f'client data: name "{fact["phrase"]}" is exactly {fact["entity_type"]} '
        f"{fact['entity_id']}" + (f' "{fact["name"]}"' if fact.get("name") else "") + f": {how}"
    )


__all__ = [
    "BRIEF_EFFECTS",
    "absent_line",
    "effect_text",
    "effects_text",
    "name_match_line",
    "origin_text",
    "record_line",
    "record_text",
]
