"""Entity mentions in the case inputs, found by the profile's rules only.

A mention is an ID plus where it stands (a JSON Pointer into the report, or a
declared member's source_ref and line). It says that the case *names* the
entity, nothing more: whether that entity exists, what it is called and what
it does comes from the enrichment queries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.enrichment.profile import EnrichmentProfile, ExtractRule

MAX_ENTITY_ID = 2**32 - 1
MAX_MEMBER_LINE_CHARS = 4096


@dataclass(frozen=True, slots=True)
class Mention:
    entity_type: str
    entity_id: int
    where: Mapping[str, Any]  # {"pointer": ...} or {"source_ref": ..., "line": ...}


@dataclass(frozen=True, slots=True)
class MemberLines:
    """A declared member's decoded lines (1-based numbers), for the attachment rules."""

    source_ref: str
    member: str
    lines: Callable[[], Iterable[tuple[int, str]]]


def extract_mentions(
    profile: EnrichmentProfile, report: Mapping[str, Any], members: Iterable[MemberLines]
) -> list[Mention]:
    """Every mention, in rule order, then place order; each (type, id, place) once."""
    member_list = list(members)
    found: list[Mention] = []
    for rule in profile.extract:
        per_rule: list[Mention] = []
        if rule.place == "report.metadata":
            per_rule.extend(_from_metadata(rule, report.get("metadata", {})))
        elif rule.place == "report.text":
            per_rule.extend(_from_report_text(rule, report))
        else:
            per_rule.extend(_from_members(rule, member_list))
        found.extend(per_rule[: profile.limits.mentions_per_rule])
    unique: dict[tuple[str, int, str], Mention] = {}
    for mention in found:
        key = (mention.entity_type, mention.entity_id, repr(sorted(mention.where.items())))
        unique.setdefault(key, mention)
    return list(unique.values())


@dataclass(frozen=True, slots=True)
class NameMention:
    """A name the report text gives an entity of one of ``entity_types``, without its ID."""

    name: str
    entity_types: tuple[str, ...]
    where: Mapping[str, Any]


MAX_NAME_CHARS = 100


def extract_names(profile: EnrichmentProfile, report: Mapping[str, Any]) -> list[NameMention]:
    """Every name of the ``[[names]]`` rules, in rule order; each (name, types) once."""
    found: dict[tuple[str, tuple[str, ...]], NameMention] = {}
    for rule in profile.names:
        per_rule = 0
        for field in ("title", "text"):
            text = report.get(field)
            if not isinstance(text, str):
                continue
            for match in rule.pattern.finditer(text):
                name = " ".join(match.group(1).split())
                if not rule.min_chars <= len(name) <= MAX_NAME_CHARS:
                    continue
                if per_rule >= profile.limits.mentions_per_rule:
                    break
                key = (name.casefold(), rule.entity_types)
                if key not in found:
                    per_rule += 1
                    where = {"pointer": f"/report/{field}", "offset": match.start(1)}
                    found[key] = NameMention(name, rule.entity_types, where)
    return list(found.values())


def _entity_id(value: Any) -> int | None:
    if type(value) is int:
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10:
        number = int(value)
    else:
        return None
    return number if 0 < number <= MAX_ENTITY_ID else None


def _from_metadata(rule: ExtractRule, metadata: Any) -> Iterable[Mention]:
    value = metadata
    for key in rule.key:
        if not isinstance(value, dict) or key not in value:
            return
        value = value[key]
    pointer = "/report/metadata/" + "/".join(_escape(k) for k in rule.key)
    values = value if isinstance(value, list) else [value]
    for index, item in enumerate(values):
        entity_id = _entity_id(item)
        if entity_id is not None:
            where = pointer + (f"/{index}" if isinstance(value, list) else "")
            yield Mention(rule.entity_type, entity_id, {"pointer": where})


def _from_report_text(rule: ExtractRule, report: Mapping[str, Any]) -> Iterable[Mention]:
    assert rule.pattern is not None
    for field in ("title", "text"):
        text = report.get(field)
        if not isinstance(text, str):
            continue
        for match in rule.pattern.finditer(text):
            entity_id = _entity_id(match.group(1))
            if entity_id is not None:
                yield Mention(
                    rule.entity_type,
                    entity_id,
                    {"pointer": f"/report/{field}", "offset": match.start(1)},
                )


def _from_members(rule: ExtractRule, members: list[MemberLines]) -> Iterable[Mention]:
    assert rule.pattern is not None and rule.members is not None
    for member in members:
        if not rule.members.search(member.member):
            continue
        for number, text in member.lines():
            for match in rule.pattern.finditer(text):
                entity_id = _entity_id(match.group(1))
                if entity_id is not None:
                    yield Mention(
                        rule.entity_type,
                        entity_id,
                        {"source_ref": member.source_ref, "line": number},
                    )


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


__all__ = [
    "MAX_MEMBER_LINE_CHARS",
    "MemberLines",
    "Mention",
    "NameMention",
    "extract_mentions",
    "extract_names",
]
