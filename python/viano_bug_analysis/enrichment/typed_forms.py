"""The forms that carry their own type: database-site links, chat links and GM commands.

* A link to a configured database site names an entity by the site's type
  word, in a path segment or query key (``/quest=14071/slug``, ``?npc=36440``,
  ``/npcs/34840-hot-rod``); the language subdomain or expansion path
  (``de.wowhead.com``, ``/cata/``) is only a segment that names nothing.
* An in-game chat link ``|Hquest:14395:80|h[Name]|h`` names its type.
* A GM command names the type of its argument, as the server's command
  tables define it: ``.go creature id N`` takes an entry, ``.go creature N``
  a spawn GUID. Each command word may be abbreviated to a prefix that is
  unique among the server's commands at that level, as the server accepts
  it (``.gob add``, ``.q a 12459``, ``.go c 213369``).

Each found ID is reported with the offset of its digits in the line, so the
type-word patterns and the untyped rules that read the same digits later do
not count them again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from viano_bug_analysis.enrichment.profile import Command, MentionRules
from viano_bug_analysis.enrichment.report_text import urls

_URL_ID = re.compile(r"(?:^|[/?&#;])([A-Za-z][A-Za-z0-9_-]{0,40})[=/](\d{1,10})(?![0-9])")
_CHAT_LINK = re.compile(r"\|H([A-Za-z_]{1,32}):(-?\d{1,10})")
_COMMAND_START = re.compile(r"(?:^|(?<=[\s`'\"(>]))([.!])([A-Za-z]{1,32})")
_STEP_COMMAND = re.compile(r"[ \t]*\d{1,3}\.([A-Za-z])")
_ARGUMENT = re.compile(r"[ \t]+(?:#?(\d{1,10})(?![\w.])|\[([^\]\n]{1,100})\]|([A-Za-z]{1,32}))")


@dataclass(frozen=True, slots=True)
class Found:
    """An ID (or a name) in one line and the entity type its form gives it."""

    offset: int
    how: str  # link, chat_link or command
    entity_type: str  # "" when the form's type is one the profile does not read
    entity_id: int | None
    name: str | None = None
    form: str = ""  # the site or link type, for an unresolved mention


def site_links(line: str, rules: MentionRules) -> Iterator[Found]:
    """Entities named by the URLs of configured database sites in ``line``."""
    if not rules.sites:
        return
    for start, url in urls(line):
        try:
            parts = urlsplit(url if "://" in url else "http://" + url)
            host = (parts.hostname or "").lower()
        except ValueError:
            continue
        site = next((name for name, hosts in rules.sites if hosts.search(host)), None)
        if site is None:
            continue
        tail_at = url.find(parts.netloc) + len(parts.netloc)
        for match in _URL_ID.finditer(url, tail_at):
            word = match.group(1).lower()
            entity_type = rules.site_types.get(word)
            if entity_type is None and word.endswith("s"):
                entity_type = rules.site_types.get(word[:-1])
            if entity_type is None:
                continue
            yield Found(
                start + match.start(2),
                "link",
                entity_type,
                int(match.group(2)),
                form=f"{site}:{word}",
            )


def chat_links(line: str, rules: MentionRules) -> Iterator[Found]:
    """Entities named by in-game chat links (``|Hquest:14395…``)."""
    if not rules.chat_links:
        return
    for match in _CHAT_LINK.finditer(line):
        word = match.group(1).lower()
        entity_type = rules.chat_links.get(word)
        number = int(match.group(2))
        if entity_type is None or number <= 0:
            continue
        yield Found(match.start(2), "chat_link", entity_type, number, form=f"chat:{word}")


def commands(line: str, rules: MentionRules) -> Iterator[Found]:
    """The entity arguments of the GM commands in ``line``."""
    if not rules.commands:
        return
    starts = [
        m.start(2) for m in _COMMAND_START.finditer(line) if m.group(1) in rules.command_prefixes
    ]
    # "1.quest add 10409": a step's number and the command share the dot.
    step = _STEP_COMMAND.match(line)
    if step is not None and "." in rules.command_prefixes:
        starts.insert(0, step.start(1))
    words = tuple(c.words for c in rules.commands) + rules.other_commands
    for at in starts:
        found = _command(line, at, rules.commands, words)
        if found is not None:
            yield found


_COMMAND_WORD = re.compile(r"[ \t]*([A-Za-z]{1,32})")


def _command(
    line: str, at: int, table: tuple[Command, ...], paths: tuple[tuple[str, ...], ...]
) -> Found | None:
    tokens: list[tuple[str, int]] = []
    position = at
    while len(tokens) < 4:
        match = _COMMAND_WORD.match(line, position)
        if match is None:
            break
        tokens.append((match.group(1).lower(), match.end()))
        position = match.end()
    # Longest command first: ".go creature id N" before ".go creature N".
    for command in sorted(table, key=lambda c: -len(c.words)):
        end = _matches(command, tokens, paths)
        if end is not None:
            return _argument(line, end, command)
    return None


def _matches(
    command: Command, tokens: list[tuple[str, int]], paths: tuple[tuple[str, ...], ...]
) -> int | None:
    if len(tokens) < len(command.words):
        return None
    for level, wanted in enumerate(command.words):
        token = tokens[level][0]
        if token == wanted:
            continue
        if not wanted.startswith(token):
            return None
        # An abbreviation counts only where it is unique among the server's
        # commands that share the words before it (".go c N" is creature).
        siblings = {
            p[level] for p in paths if len(p) > level and p[:level] == command.words[:level]
        }
        if sum(1 for s in siblings if s.startswith(token)) != 1:
            return None
    return tokens[len(command.words) - 1][1]


def _argument(line: str, position: int, command: Command) -> Found | None:
    for _ in range(len(command.skip) + 1):
        match = _ARGUMENT.match(line, position)
        if match is None:
            return None
        if match.group(1) is not None:
            return Found(match.start(1), "command", command.entity_type, int(match.group(1)))
        if match.group(2) is not None:
            if not command.takes_name:
                return None
            name = " ".join(match.group(2).split())
            return Found(match.start(2), "command", command.entity_type, None, name=name)
        if match.group(3).lower() not in command.skip:
            return None
        position = match.end()
    return None


__all__ = ["Found", "chat_links", "commands", "site_links"]
