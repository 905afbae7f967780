"""Name candidates in running text: phrases a player writes for a quest, an NPC or an object.

Players rarely give IDs: "…gives you the quest Decontamination…", "board
Sanitron 500", "talk to [Nevin Twistwrench]". The candidates are title-case
word runs, and quoted, bracketed or bold text, each checked for the shape of
a name: words of letters (with apostrophes and hyphens, "Traitor's Cove",
"Ahn'Qiraj"), connectors inside (of, the), a number after a word
("Sanitron 500"). Tokens with ``_``, ``/``, ``\\``, ``.`` or ``::`` inside
(file names, paths, identifiers, versions) break a run; all-caps words are
acronyms (NPC, GM), not names. The caller has already blanked code, URLs,
link targets and image descriptions.

The same phrase is asked once; every candidate is only a question to the
database, which answers whether an entity carries exactly that name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace

from viano_bug_analysis.enrichment.profile import NamePhrases

_TOKEN = re.compile(r"\S+")
_LEADING = "\"'“”‘’([{*_<"
_TRAILING = "\"'“”‘’)]}*_>,.;:!?"
_CAP_WORD = re.compile(r"[^\W\d_][^\W\d_'’-]*(?:['’-][^\W\d_]+)*(?:['’]s)?")
_NUMBER = re.compile(r"\d{1,6}")
_LIST_MARKER = re.compile(r"(?:\d{1,3}[.)]|[-*+>#]+)")
# Quoted, bracketed or bold text: the inside is a candidate when it has a name's shape.
_ENCLOSED = re.compile(
    r"\"([^\"\n]{1,100})\"|“([^”\n]{1,100})”|\[([^\[\]\n]{1,100})\]|\*\*([^*\n]{1,100})\*\*"
)
_NAME_SHAPE = re.compile(r"[^\W_][\w'’ ,:!-]*")
_BAD_INSIDE = ("_", "/", "\\", "::", "..", "=", "|")


def phrases(line: str, rules: NamePhrases) -> Iterator[tuple[int, str]]:
    """(offset, name) candidates of one blanked line, in order; duplicates included."""
    yield from _enclosed(line, rules)
    yield from _title_runs(line, rules)
    if rules.after_words:
        yield from _after_type_words(line, rules)


def written_as_names(
    line: str, rules: NamePhrases, type_words: Mapping[str, str], enclosed_types: tuple[str, ...]
) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(offset, name, types) the report's own structure sets apart as a name: quoted,
    bracketed or bold text (of ``enclosed_types``) and the words after a type word of
    ``type_words`` ("the spell Rescue Drowning Watchman": each prefix, up to max_words).

    No title-case run: without a quote or a type word, every stretch of a run would
    be a candidate, which is what ``phrases`` asks the database but too many here.
    """
    for offset, name in _enclosed(line, rules):
        yield offset, name, enclosed_types
    for word, entity_type in type_words.items():
        for offset, name in _after_type_words(line, replace(rules, after_words=frozenset({word}))):
            yield offset, name, (entity_type,)


def _enclosed(line: str, rules: NamePhrases) -> Iterator[tuple[int, str]]:
    for match in _ENCLOSED.finditer(line):
        group = next(g for g in range(1, 5) if match.group(g) is not None)
        inside = match.group(group).rstrip()
        if group == 4 and inside.endswith(":"):
            continue  # "**Current behaviour:**" labels an answer
        name = " ".join(inside.split()).strip(" ,:!-")
        if _fits(name, rules):
            yield match.start(group), name


def _fits(name: str, rules: NamePhrases) -> bool:
    if not rules.min_chars <= len(name) <= 100 or len(name.split()) > rules.max_words:
        return False
    if any(bad in name for bad in _BAD_INSIDE) or not _NAME_SHAPE.fullmatch(name):
        return False
    return any(ch.isalpha() for ch in name)


def _title_runs(line: str, rules: NamePhrases) -> Iterator[tuple[int, str]]:
    run: list[tuple[int, str]] = []
    for index, match in enumerate(_TOKEN.finditer(line)):
        raw = match.group(0)
        if index == 0 and _LIST_MARKER.fullmatch(raw):
            continue  # "2." or "-" before the first word of a step
        word = raw.lstrip(_LEADING)
        start = match.start() + (len(raw) - len(word))
        opens = word != raw
        ends = word.rstrip(_TRAILING)
        closes = ends != word
        word = ends
        kind = _kind(word, rules, bool(run))
        if opens and run:
            yield from _candidates(run, rules)
            run = []
        if kind is None:
            if run:
                yield from _candidates(run, rules)
                run = []
        else:
            run.append((start, word))
        if closes and run:
            yield from _candidates(run, rules)
            run = []
    if run:
        yield from _candidates(run, rules)


def _kind(word: str, rules: NamePhrases, inside: bool) -> str | None:
    if not word:
        return None
    if inside and word.lower() in rules.connectors and word.islower():
        return "connector"
    if inside and _NUMBER.fullmatch(word):
        return "number"
    if not word[0].isupper() or not _CAP_WORD.fullmatch(word):
        return None
    letters = [ch for ch in word if ch.isalpha()]
    if len(letters) > 1 and all(ch.isupper() for ch in letters):
        return None  # an acronym: NPC, GM, ID
    return "word"


def _candidates(run: list[tuple[int, str]], rules: NamePhrases) -> Iterator[tuple[int, str]]:
    """Every name a run of title-case words may hold.

    Connectors join names as often as they sit inside one ("Killing a
    Vexmoor Ghoul for Return to Vexmoor"), so each stretch from one
    capitalized word to a later one (up to max_words words) is a candidate,
    and a lone word when the run is that word (a sentence's first word
    included: "Scrapfall quest broken") or when it stands behind a connector
    ("Go to Orgrimmar"). A word alone inside a longer run is no candidate:
    "Ghoul" is not what "Vexmoor Ghoul" names.
    """
    heads = [i for i, (_, word) in enumerate(run) if not _is_connector(word, rules)]
    heads = [i for i in heads if not _NUMBER.fullmatch(run[i][1])]
    if not heads:
        return
    if len(heads) == 1 and all(
        _is_connector(w, rules) or _NUMBER.fullmatch(w)
        for i, (_, w) in enumerate(run)
        if i != heads[0]
    ):
        yield from _forms(run[heads[0] : _end_with_numbers(run, heads[0]) + 1], rules)
        return
    for first in heads:
        end = _end_with_numbers(run, first)
        alone = end + 1 == len(run) or _is_connector(run[end + 1][1], rules)
        if alone and (first == 0 or _is_connector(run[first - 1][1], rules)):
            # A word between connectors or the run's ends: "Go to Orgrimmar".
            yield from _forms(run[first : end + 1], rules)
        for last in range(first + 1, min(len(run), first + rules.max_words)):
            if _is_connector(run[last][1], rules):
                continue
            if last + 1 < len(run) and _NUMBER.fullmatch(run[last + 1][1]):
                continue  # the number belongs to the word before it: "Sanitron 500"
            yield from _forms(run[first : last + 1], rules)


def _end_with_numbers(run: list[tuple[int, str]], index: int) -> int:
    while index + 1 < len(run) and _NUMBER.fullmatch(run[index + 1][1]):
        index += 1
    return index


def _is_connector(word: str, rules: NamePhrases) -> bool:
    return word.islower() and word.lower() in rules.connectors


def _forms(words: list[tuple[int, str]], rules: NamePhrases) -> Iterator[tuple[int, str]]:
    if not words or len(words) > rules.max_words:
        return
    name = " ".join(w for _, w in words)
    forms = [name]
    for suffix in ("'s", "’s"):
        if name.endswith(suffix):
            forms.append(name[: -len(suffix)])
    for form in forms:
        if rules.min_chars <= len(form) <= 100:
            yield words[0][0], form


def _after_type_words(line: str, rules: NamePhrases) -> Iterator[tuple[int, str]]:
    """The words after a type word, as written: "the quest decontamination", "квест Доставка …".

    Each prefix of up to max_words words, to the end of the clause, is a
    candidate: names in languages that capitalize only their first word, or
    not at all, have no title-case run to find.
    """
    tokens = list(_TOKEN.finditer(line))
    for index, match in enumerate(tokens):
        if match.group(0).strip(_LEADING + _TRAILING).casefold() not in rules.after_words:
            continue
        if match.group(0).rstrip(_TRAILING).rstrip(":") != match.group(0).rstrip(":"):
            continue  # "… the quest." names nothing after it; "Quest: The Coast is Clear" does
        words: list[tuple[int, str]] = []
        for following in tokens[index + 1 : index + 1 + rules.max_words]:
            raw = following.group(0)
            if raw[0] in _LEADING:
                break  # quoted and bracketed names are read as such
            word = raw.rstrip(_TRAILING)
            if not any(ch.isalnum() for ch in word) or any(bad in word for bad in _BAD_INSIDE):
                break  # a dash or a path ends the clause
            words.append((following.start(), word))
            if word != raw:
                break
        if not words or not any(ch.isalpha() for ch in words[0][1]):
            continue  # "spell 69971 does …": the ID follows, not a name
        for end in range(1, len(words) + 1):
            yield from _forms(words[:end], rules)


__all__ = ["phrases", "written_as_names"]
