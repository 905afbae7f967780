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
from collections.abc import Iterator

from viano_bug_analysis.enrichment.profile import NamePhrases

_TOKEN = re.compile(r"\S+")
_LEADING = "\"'“”‘’([{*_<"
_TRAILING = "\"'“”‘’)]}*_>,.;:!?"
_SENTENCE_END = ".!?:"
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
    run_at_sentence_start = False
    sentence_start = True
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
            yield from _candidates(run, run_at_sentence_start, rules)
            run = []
        if kind is None:
            if run:
                yield from _candidates(run, run_at_sentence_start, rules)
                run = []
        else:
            if not run:
                run_at_sentence_start = sentence_start
            run.append((start, word))
        if closes and run:
            yield from _candidates(run, run_at_sentence_start, rules)
            run = []
        sentence_start = raw.rstrip("\"'”’)*_").endswith(tuple(_SENTENCE_END)) or not word
    if run:
        yield from _candidates(run, run_at_sentence_start, rules)


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


def _candidates(
    run: list[tuple[int, str]], at_sentence_start: bool, rules: NamePhrases
) -> Iterator[tuple[int, str]]:
    while run and (run[-1][1].islower() and run[-1][1].lower() in rules.connectors):
        run = run[:-1]
    if not run:
        return
    variants = [run]
    if at_sentence_start:
        # The first word of a sentence is capitalized anyway: "Kill Hot Rod".
        # A lone word is left over only behind a connector ("Go to Orgrimmar"):
        # in "Sassy Hardwrench" the first word belongs to the name.
        rest = run[1:]
        behind_connector = bool(rest) and rest[0][1].islower()
        while rest and rest[0][1].islower():
            rest = rest[1:]
        if len(rest) < 2 and not behind_connector:
            rest = []
        variants = [rest] if len(run) == 1 else [run, rest]
    for words in variants:
        if not words or len(words) > rules.max_words or _NUMBER.fullmatch(words[0][1]):
            continue
        name = " ".join(w for _, w in words)
        forms = [name]
        for suffix in ("'s", "’s"):
            if name.endswith(suffix):
                forms.append(name[: -len(suffix)])
        for form in forms:
            if rules.min_chars <= len(form) <= 100:
                yield words[0][0], form


__all__ = ["phrases"]
