"""A small tracker backlog written for these tests, as ``gh issue list --json`` prints it.

Every report is made up here, in the styles public trackers see: an issue
form with ``###`` headings (and ``_No response_``), an older template with
``**Label:**`` lines, a one-line complaint, a wowhead link, GM commands, a
name without an ID. Two reports name the same quest (possible duplicates);
one declares custom modules; one names no revision.
"""

from __future__ import annotations

import copy
from typing import Any

URL = "https://github.com/example-org/vcore-bugs/issues/{}"


def _form(current: str, steps: list[str], revision: str | None, custom: str | None) -> str:
    lines = ["### Current Behaviour", "", current, "", "### Expected Blizzlike Behaviour", ""]
    lines += ["It should work like on retail.", "", "### Steps to reproduce the problem", ""]
    lines += [f"{n}. {step}" for n, step in enumerate(steps, start=1)] or ["_No response_"]
    lines += ["", "### Core rev. hash/commit", "", revision or "_No response_", ""]
    lines += ["### Custom changes or Modules", "", custom or "None", ""]
    return "\r\n".join(lines)


def _issue(number: int, title: str, body: str, **extra: Any) -> dict[str, Any]:
    return {
        "number": number,
        "title": title,
        "body": body,
        "url": URL.format(number),
        "state": extra.get("state", "OPEN"),
        "labels": [{"name": name} for name in extra.get("labels", ["bug"])],
        "author": {"login": extra.get("author", "tester")},
        "createdAt": extra.get("created", f"2026-10-0{number % 9 + 1}T10:00:00Z"),
        "updatedAt": extra.get("updated", f"2026-11-0{number % 9 + 1}T10:00:00Z"),
    }


BACKLOG: list[dict[str, Any]] = [
    _issue(
        101,
        "[Quest] Catch the Wolpertinger cannot be completed",
        _form(
            "Throwing the net at the wolpertinger does nothing, no credit. "
            "https://www.wowhead.com/quest=90001",
            ["`.quest add 90001`", "`.go creature 90002`", "Use the net on it"],
            "9f1c2ab",
            None,
        ),
        labels=["bug", "quest"],
    ),
    _issue(
        102,
        "Wolpertinger quest broken again",
        "**Description:** same as always, quest 90001 stays at 0/1 after netting one\n"
        "**Branch(es):** 4.3.4\n**Custom changes:** transmog module and a custom vendor\n",
        labels=["bug"],
    ),
    _issue(
        103,
        "Bramble Spider does not attack",
        _form(
            "The Bramble Spider in the glade just stands there.",
            ["`.npc add 90007`", "Pull it"],
            None,
            None,
        ),
        labels=["npc"],
        updated="2026-11-20T08:00:00Z",
    ),
    _issue(
        104,
        "innkeeper hilde no gossip",
        "talked to Glade Innkeeper Hilde, nothing happens. fix pls",
        labels=["npc", "gossip"],
        state="CLOSED",
    ),
]


def backlog() -> list[dict[str, Any]]:
    return copy.deepcopy(BACKLOG)
