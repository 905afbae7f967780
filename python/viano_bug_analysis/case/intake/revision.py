"""The commit a report was filed against, as the report gives it.

First the template's revision field: the first section whose name has one
of the words ``commit``, ``hash``, ``rev``, ``revision``, ``sha`` or
``changeset`` (``FC rev. hash/commit``, ``TC rev. hash/commit``, ``AC
HASH/COMMIT``) and whose answer holds a commit URL or a hash. Failing that, a
commit URL anywhere in the body, a GitHub ``owner/repo@<hash>`` reference, or
a hash on a line that says what it is (``rev: 59e98629eb1e``, "core built …
from 0603d8f82e75"; such a hash needs digits and letters) — ``from`` is then
``"text"``.

A hash is a run of 7 to 40 hex digits standing alone (no letter or digit
touching it), not all digits: ``2021032`` is a date or an ID, not a commit.
A commit URL is an ``http(s)://`` address with ``/commit/<hash>`` or
``/commits/<hash>`` (GitHub, GitLab's ``/-/commit/``, Bitbucket ...). The
hash is given lowercase, as long as the report wrote it; resolving an
abbreviation is the build's business.

Every scan is one pass of a character class over the text (no pattern that
can backtrack), so the cost is linear in the text.
"""

from __future__ import annotations

import re
import string
from typing import Any

MIN_HASH, MAX_HASH = 7, 40
REVISION_WORDS = frozenset({"commit", "hash", "rev", "revision", "sha", "changeset"})
# Words that make a hash on the same line of running text the report's revision.
LINE_WORDS = REVISION_WORDS | {"core", "built", "build", "running"}
FROM_TEXT = "text"
_CROSS_REFERENCE = re.compile(r"\b[\w.-]{1,100}/[\w.-]{1,100}@([0-9A-Fa-f]{7,40})\b")
_HEX = frozenset(string.hexdigits)
_ALNUM_RUN = re.compile(r"[0-9A-Za-z]+")
_WORD = re.compile(r"[a-z0-9]+")
# A URL candidate ends at blank space and at the brackets and quotes Markdown puts around one.
_TOKEN = re.compile(r"[^\s()<>\[\]{}\"'`|]+")
_COMMIT_MARKERS = ("/commit/", "/commits/")
_TRAILING = ".,;:!?*_"


def find_revision(sections: dict[str, str | None], body: str) -> dict[str, Any] | None:
    """``{"commit", "from"[, "url"]}`` for the revision the report names, or None."""
    for heading, value in sections.items():
        if value is None or not names_a_revision(heading):
            continue
        found = commit_url(value) or _bare_hash(value)
        if found is not None:
            return {"from": heading, **found}
    found = commit_url(body) or _cross_reference(body) or _revision_line(body)
    return {"from": FROM_TEXT, **found} if found is not None else None


def names_a_revision(heading: str) -> bool:
    return any(word in REVISION_WORDS for word in _WORD.findall(heading.lower()))


def commit_url(text: str) -> dict[str, str] | None:
    """The first commit URL in ``text``: ``{"commit", "url"}``."""
    for match in _TOKEN.finditer(text):
        token = match.group()
        if not token[:8].lower().startswith(("http://", "https://")):
            continue
        for marker in _COMMIT_MARKERS:
            at = token.find(marker)
            if at < 0:
                continue
            start = at + len(marker)
            end = start
            while end < len(token) and end - start <= MAX_HASH and token[end] in _HEX:
                end += 1
            boundary = end == len(token) or not token[end].isalnum()
            if boundary and is_plausible_hash(token[start:end]):
                return {"commit": token[start:end].lower(), "url": token.rstrip(_TRAILING)}
    return None


def is_plausible_hash(run: str) -> bool:
    return (
        MIN_HASH <= len(run) <= MAX_HASH and all(char in _HEX for char in run) and not run.isdigit()
    )


def _cross_reference(text: str) -> dict[str, str] | None:
    """GitHub's ``owner/repo@<hash>`` reference to a commit."""
    for match in _CROSS_REFERENCE.finditer(text):
        if is_plausible_hash(match.group(1)):
            return {"commit": match.group(1).lower()}
    return None


def _revision_line(text: str) -> dict[str, str] | None:
    """A hash on a line that says what it is: ``rev: 59e98629eb1e``, "core built … from 0603d8f".

    Only a run with both digits and letters counts here, so an English word
    of hex letters ("decade", "faced") on such a line is never a commit.
    """
    for line in text.splitlines():
        if not LINE_WORDS.intersection(_WORD.findall(line.lower())):
            continue
        for match in _ALNUM_RUN.finditer(line):
            run = match.group()
            if is_plausible_hash(run) and any(c.isalpha() for c in run):
                return {"commit": run.lower()}
    return None


def _bare_hash(text: str) -> dict[str, str] | None:
    for match in _ALNUM_RUN.finditer(text):
        if is_plausible_hash(match.group()):
            return {"commit": match.group().lower()}
    return None


__all__ = ["FROM_TEXT", "commit_url", "find_revision", "is_plausible_hash", "names_a_revision"]
