"""Entity mentions in the case inputs, found by the profile's rules only.

A mention is an ID plus where it stands (a JSON Pointer into the report, or a
declared member's source_ref and line). It says that the case *names* the
entity, nothing more: whether that entity exists, what it is called and what
it does comes from the enrichment queries.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.enrichment import names, report_text, typed_forms
from viano_bug_analysis.enrichment.profile import (
    EnrichmentProfile,
    ExtractRule,
    NamePhrases,
    UntypedRule,
)

MAX_ENTITY_ID = 2**32 - 1
MAX_MEMBER_LINE_CHARS = 4096


@dataclass(frozen=True, slots=True)
class Mention:
    entity_type: str
    entity_id: int
    where: Mapping[str, Any]  # {"pointer": ...} or {"source_ref": ..., "line": ...}
    how: str = "pattern"  # pattern, list, link, chat_link, command, metadata, attachment


@dataclass(frozen=True, slots=True)
class MemberLines:
    """A declared member's decoded lines (1-based numbers), for the attachment rules."""

    source_ref: str
    member: str
    lines: Callable[[], Iterable[tuple[int, str]]]


@dataclass(frozen=True, slots=True)
class NameMention:
    """A name the report text gives an entity of one of ``entity_types``, without its ID."""

    name: str
    entity_types: tuple[str, ...]
    where: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class UntypedMention:
    """An ID the report gives without its type; the database says which types have it."""

    entity_id: int
    entity_types: tuple[str, ...]  # the types it is asked as
    where: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class UnresolvedMention:
    """A link to a type the profile does not read (an achievement, a faction)."""

    form: str  # site:word or chat:word
    entity_id: int
    where: Mapping[str, Any]


@dataclass
class Extraction:
    """Everything the case inputs name, and how many candidates a bound dropped."""

    mentions: list[Mention] = field(default_factory=list)
    untyped: list[UntypedMention] = field(default_factory=list)
    names: list[NameMention] = field(default_factory=list)
    # Names the report sets apart (brackets, quotes, "the spell …") or commands give a
    # spell or item: asked in the client data when the project has it (client_facts).
    client_names: list[NameMention] = field(default_factory=list)
    unresolved: list[UnresolvedMention] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)  # mentions, untyped, names -> count

    def drop(self, what: str, count: int = 1) -> None:
        self.dropped[what] = self.dropped.get(what, 0) + count


MAX_NAME_CHARS = 100
# Client-data names: the types a set-apart phrase may name, the type words a name
# follows, and how many phrases one case asks (each is a query per type).
CLIENT_NAME_TYPES = ("spell", "item")
CLIENT_TYPE_WORDS = {"spell": "spell", "aura": "spell", "buff": "spell", "item": "item"}
MAX_CLIENT_NAMES = 12
_DIGITS = re.compile(r"\d{1,10}(?![0-9])")
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]|$)")


def extract(
    profile: EnrichmentProfile, report: Mapping[str, Any], members: Iterable[MemberLines]
) -> Extraction:
    """Every mention of the case inputs, in rule order, then place order; each once."""
    found = Extraction()
    member_list = list(members)
    typed: list[Mention] = []
    for rule in profile.extract:
        if rule.place == "report.metadata":
            typed.extend(_cap(_from_metadata(rule, report.get("metadata", {})), profile, found))
        elif rule.place == "attachments":
            typed.extend(_cap(_from_members(rule, member_list), profile, found))
    text_found = _ReportText(profile, found)
    for field_name in ("title", "text"):
        text = report.get(field_name)
        if isinstance(text, str):
            text_found.read(field_name, text)
    typed.extend(text_found.mentions)
    unique: dict[tuple[str, int, str], Mention] = {}
    for mention in typed:
        key = (mention.entity_type, mention.entity_id, repr(sorted(mention.where.items())))
        unique.setdefault(key, mention)
    found.mentions = list(unique.values())
    return found


def extract_mentions(
    profile: EnrichmentProfile, report: Mapping[str, Any], members: Iterable[MemberLines]
) -> list[Mention]:
    """The typed mentions of :func:`extract`."""
    return extract(profile, report, members).mentions


def extract_names(profile: EnrichmentProfile, report: Mapping[str, Any]) -> list[NameMention]:
    """The name candidates of :func:`extract`."""
    return extract(profile, report, []).names


def _cap(
    mentions: Iterable[Mention], profile: EnrichmentProfile, found: Extraction
) -> list[Mention]:
    kept: list[Mention] = []
    for mention in mentions:
        if len(kept) < profile.limits.mentions_per_rule:
            kept.append(mention)
        else:
            found.drop("mentions")
    return kept


class _ReportText:
    """The report title and text, read line by line by every text rule of the profile.

    Forms that carry their own type (links, chat links, commands) are read
    first; the digits they took are not read again by a type-word pattern or
    an untyped rule, so ``.go creature 6882`` is a spawn GUID and not also
    creature 6882.
    """

    def __init__(self, profile: EnrichmentProfile, found: Extraction) -> None:
        self._profile = profile
        self._rules = profile.mentions
        self._found = found
        self.mentions: list[Mention] = []
        self._per_rule: dict[object, int] = {}
        self._names: dict[tuple[str, tuple[str, ...]], None] = {}
        self._untyped: dict[tuple[int, tuple[str, ...]], None] = {}
        self._client: dict[tuple[str, tuple[str, ...]], None] = {}

    def read(self, field_name: str, text: str) -> None:
        pointer = f"/report/{field_name}"
        for line in report_text.lines(text):
            taken: set[int] = set()
            self._typed_forms(pointer, line, taken)
            self._patterns(pointer, line, taken)
            self._untyped_ids(pointer, line, taken)
            self._name_phrases(pointer, line)

    def _where(self, pointer: str, line: report_text.Line, offset: int) -> dict[str, Any]:
        return {"pointer": pointer, "offset": line.start + offset}

    def _count(self, rule: object, what: str) -> bool:
        used = self._per_rule.get(rule, 0)
        # Names all go to one IN list per column: that list's bound is theirs.
        limits = self._profile.limits
        bound = (
            limits.candidates_per_query * limits.candidate_batches
            if what == "names"
            else limits.mentions_per_rule
        )
        if used >= bound:
            self._found.drop(what)
            return False
        self._per_rule[rule] = used + 1
        return True

    def _typed_forms(self, pointer: str, line: report_text.Line, taken: set[int]) -> None:
        rules = self._rules
        for form in (
            *typed_forms.commands(line.text, rules),
            *typed_forms.site_links(line.text, rules),
            *typed_forms.chat_links(line.text, rules),
        ):
            if form.offset in taken:
                continue
            taken.add(form.offset)
            where = self._where(pointer, line, form.offset)
            if form.name is not None:
                self._name(form.name, (form.entity_type,), where)
                if form.entity_type in CLIENT_NAME_TYPES:
                    self._client_name(form.name, (form.entity_type,), where)
            elif form.entity_type == "":
                if self._count(form.how, "unresolved"):
                    assert form.entity_id is not None
                    self._found.unresolved.append(
                        UnresolvedMention(form.form, form.entity_id, where)
                    )
            elif (
                form.entity_id is not None
                and _valid_id(form.entity_id)
                and self._count(form.how, "mentions")
            ):
                self.mentions.append(Mention(form.entity_type, form.entity_id, where, form.how))

    def _patterns(self, pointer: str, line: report_text.Line, taken: set[int]) -> None:
        separator = self._rules.list_separator
        for rule in self._profile.extract:
            if rule.place != "report.text":
                continue
            assert rule.pattern is not None
            for match in rule.pattern.finditer(line.text):
                ids = [(match.start(1), match.group(1), "pattern")]
                # A list goes on after a typed ID in prose, not after one a URL
                # holds; "#N" items only after a "#N" head ("spell #45 and #46"),
                # else "… and #2345" is an issue reference.
                if rule.list_ids and separator is not None and match.start(1) not in taken:
                    ids += _listed(line.text, match.end(1), separator, "#" in match.group(0))
                for offset, digits, how in ids:
                    entity_id = _entity_id(digits)
                    if entity_id is None or offset in taken or self._quantity(line, offset, digits):
                        continue
                    taken.add(offset)
                    if self._count(rule, "mentions"):
                        where = self._where(pointer, line, offset)
                        self.mentions.append(Mention(rule.entity_type, entity_id, where, how))

    def _untyped_ids(self, pointer: str, line: report_text.Line, taken: set[int]) -> None:
        ignore = self._rules.ignore_numbers
        separator = self._rules.list_separator
        # A number in a URL (an issue, a comment anchor) is the site's, not an entity's.
        in_urls = [(start, start + len(url)) for start, url in report_text.urls(line.text)]
        for rule in self._rules.untyped:
            for match in rule.pattern.finditer(line.text):
                before = line.text[max(0, match.start() - 48) : match.start()]
                if rule.not_after is not None and rule.not_after.search(before):
                    continue
                if rule.after is not None and not rule.after.search(before):
                    continue
                ids = [(match.start(1), match.group(1))]
                if rule.list_ids and separator is not None:
                    listed = _listed(line.text, match.end(1), separator, "#" in match.group(0))
                    ids += [(o, d) for o, d, _ in listed]
                for offset, digits in ids:
                    entity_id = _entity_id(digits)
                    if entity_id is None or offset in taken:
                        continue
                    if ignore is not None and ignore.fullmatch(digits):
                        continue
                    if any(start <= offset < end for start, end in in_urls):
                        continue
                    if self._quantity(line, offset, digits):
                        continue
                    taken.add(offset)
                    self._untyped_id(rule, entity_id, self._where(pointer, line, offset))

    def _quantity(self, line: report_text.Line, offset: int, digits: str) -> bool:
        """Whether a unit follows the number: "mobs 20 yards away" names no creature 20."""
        unit = self._rules.not_before
        return unit is not None and unit.match(line.text, offset + len(digits)) is not None

    def _untyped_id(self, rule: UntypedRule, entity_id: int, where: dict[str, Any]) -> None:
        key = (entity_id, rule.entity_types)
        if key in self._untyped or not self._count(rule, "untyped"):
            return
        self._untyped[key] = None
        self._found.untyped.append(UntypedMention(entity_id, rule.entity_types, where))

    def _name_phrases(self, pointer: str, line: report_text.Line) -> None:
        for rule in self._profile.names:
            for match in rule.pattern.finditer(line.text):
                name = " ".join(match.group(1).split())
                if rule.min_chars <= len(name) <= MAX_NAME_CHARS:
                    where = self._where(pointer, line, match.start(1))
                    self._name(name, rule.entity_types, where, rule)
        phrases = self._rules.names
        if _HEADING.match(line.text):
            # A heading of the tracker's template ("### Current Behaviour") names nothing.
            return
        blank = report_text.blank_out(line.text, report_text.not_a_name(line))
        self._client_names(pointer, line, blank, phrases or NamePhrases(CLIENT_NAME_TYPES))
        if phrases is None:
            return
        for offset, name in names.phrases(blank, phrases):
            self._name(name, phrases.entity_types, self._where(pointer, line, offset), phrases)

    def _client_names(
        self, pointer: str, line: report_text.Line, blank: str, phrases: NamePhrases
    ) -> None:
        found = names.written_as_names(blank, phrases, CLIENT_TYPE_WORDS, CLIENT_NAME_TYPES)
        for offset, name, entity_types in found:
            self._client_name(name, entity_types, self._where(pointer, line, offset))

    def _client_name(self, name: str, entity_types: tuple[str, ...], where: dict[str, Any]) -> None:
        key = (name.casefold(), entity_types)
        if key in self._client:
            return
        if len(self._client) >= MAX_CLIENT_NAMES:
            self._found.drop("client_names")
            return
        self._client[key] = None
        self._found.client_names.append(NameMention(name, entity_types, where))

    def _name(
        self,
        name: str,
        entity_types: tuple[str, ...],
        where: dict[str, Any],
        rule: object = "command",
    ) -> None:
        key = (name.casefold(), entity_types)
        if key in self._names:
            return
        if not self._count(rule, "names"):
            return
        self._names[key] = None
        self._found.names.append(NameMention(name, entity_types, where))


def _listed(
    text: str, position: int, separator: re.Pattern[str], hashes: bool
) -> list[tuple[int, str, str]]:
    """The IDs after ``position`` joined by ``separator``: "NPC 50372, 49044 and 49128"."""
    listed: list[tuple[int, str, str]] = []
    while len(listed) < 1000:
        joint = separator.match(text, position)
        if joint is None or joint.end() == position:
            break
        at = joint.end() + (1 if hashes and text.startswith("#", joint.end()) else 0)
        digits = _DIGITS.match(text, at)
        if digits is None:
            break
        listed.append((digits.start(), digits.group(0), "list"))
        position = digits.end()
    return listed


def _valid_id(number: int) -> bool:
    return 0 < number <= MAX_ENTITY_ID


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
            yield Mention(rule.entity_type, entity_id, {"pointer": where}, "metadata")


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
                        "attachment",
                    )


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


__all__ = [
    "MAX_MEMBER_LINE_CHARS",
    "Extraction",
    "MemberLines",
    "Mention",
    "NameMention",
    "UnresolvedMention",
    "UntypedMention",
    "extract",
    "extract_mentions",
    "extract_names",
]
