"""The forms a report comes in, each read into one ``Issue``.

* GitHub REST issue object: ``html_url`` is the web address (``url`` is the
  API's), ``user.login``, ``body`` (may be null), ``number``, ``created_at``,
  ``state``; an item with a ``pull_request`` key is a pull request.
* ``gh issue view N --json number,title,body,url,author,labels,createdAt[,comments]``:
  ``url`` is the web address, ``author.login``, ``createdAt``.
* GitLab issue: ``iid``, ``description``, ``web_url``, ``author.username``,
  labels as strings, ``created_at``, ``state``.
* Markdown or plain text: the first non-blank line is the title (its heading
  marks removed), the rest is the body.

An object is GitLab's when it has ``iid``, ``web_url`` or ``description``;
GitHub REST when it has ``html_url``, ``user``, ``repository_url`` or
``pull_request``; anything else is read as ``gh`` output, whose fields are
whichever the caller asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from viano_bug_analysis.case.intake import fields as f
from viano_bug_analysis.case.intake.sections import atx_heading
from viano_bug_analysis.case.intake.source import invalid, not_a_tracker_export, too_large

MAX_TITLE_CHARS = 1000
"""case-spec-v1's ``report.title`` maxLength; a longer title is refused, not cut."""

GITHUB, GITLAB, FILE = "github", "gitlab", "file"
# Fields every tracker form names at least one of.
ISSUE_KEYS = frozenset(
    {"title", "number", "iid", "url", "html_url", "web_url", "body", "description", "user"}
)


@dataclass(frozen=True, slots=True)
class Comment:
    author: str | None
    created_at: str | None
    body: str


@dataclass(frozen=True, slots=True)
class Issue:
    tracker: str
    title: str
    body: str
    url: str | None = None
    repository: str | None = None
    number: int | None = None
    author: str | None = None
    labels: list[str] = field(default_factory=list)
    created_at: str | None = None
    state: str | None = None
    comments: list[Comment] = field(default_factory=list)
    pull_request: bool = False


def issue_from_json(obj: Any, base: str = "") -> Issue:
    """The issue a tracker's JSON object describes; ``base`` is its pointer in the document."""
    if not isinstance(obj, dict):
        raise f.wrong_type(base, "an issue object")
    if not base and not ISSUE_KEYS & obj.keys():
        # A whole document that names none of an issue's fields is another export.
        raise not_a_tracker_export("is JSON of an unknown shape (no title, number or url)")
    if any(key in obj for key in ("iid", "web_url", "description")):
        return _gitlab(obj, base)
    if any(key in obj for key in ("html_url", "user", "repository_url", "pull_request")):
        return _github_rest(obj, base)
    return _gh(obj, base)


def issue_from_text(text: str) -> Issue:
    """A Markdown or plain-text report: first non-blank line = title, the rest = body.

    The title line's heading marks go (``# Title #``, or a setext underline
    of ``=`` or ``-`` below it); blank lines before the body go too.
    """
    start, size = 0, len(text)
    while start < size:
        end = _line_end(text, start)
        line = text[start:end].strip()
        heading = atx_heading(line)
        title = line if heading is None else heading
        if title:
            rest = end + 1
            under_end = _line_end(text, rest)
            if _is_setext_underline(text[rest:under_end].strip()):
                rest = under_end + 1
            body = text[rest:].lstrip("\r\n")
            return Issue(tracker=FILE, title=_title(title, "/title"), body=_body(body))
        start = end + 1
    raise invalid("/title", "missing", "has no title (no line that is not blank)")


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _is_setext_underline(line: str) -> bool:
    return (bool(line) and set(line) == {"="}) or (len(line) >= 2 and set(line) == {"-"})


def _gh(obj: Mapping[str, Any], base: str) -> Issue:
    url = f.optional_str(obj, "url", base)
    return Issue(
        tracker=GITHUB,
        title=_required_title(obj, base),
        body=f.text(obj, "body", base),
        url=url,
        repository=github_repository(url),
        number=f.optional_number(obj, "number", base),
        author=f.person(obj, "author", "login", base),
        labels=f.labels(obj, "labels", base),
        created_at=f.optional_str(obj, "createdAt", base),
        state=f.optional_str(obj, "state", base),
        comments=_comments(obj, base),
    )


def _github_rest(obj: Mapping[str, Any], base: str) -> Issue:
    url = f.optional_str(obj, "html_url", base)
    repository = github_repository(url) or api_repository(
        f.optional_str(obj, "repository_url", base)
    )
    return Issue(
        tracker=GITHUB,
        title=_required_title(obj, base),
        body=f.text(obj, "body", base),
        url=url,
        repository=repository or api_repository(f.optional_str(obj, "url", base)),
        number=f.optional_number(obj, "number", base),
        author=f.person(obj, "user", "login", base),
        labels=f.labels(obj, "labels", base),
        created_at=f.optional_str(obj, "created_at", base),
        state=f.optional_str(obj, "state", base),
        comments=_comments(obj, base),
        pull_request="pull_request" in obj,
    )


def _gitlab(obj: Mapping[str, Any], base: str) -> Issue:
    url = f.optional_str(obj, "web_url", base)
    return Issue(
        tracker=GITLAB,
        title=_required_title(obj, base),
        body=f.text(obj, "description", base),
        url=url,
        repository=gitlab_repository(url),
        number=f.optional_number(obj, "iid", base),
        author=f.person(obj, "author", "username", base),
        labels=f.labels(obj, "labels", base),
        created_at=f.optional_str(obj, "created_at", base),
        state=f.optional_str(obj, "state", base),
        comments=_comments(obj, base),
    )


def _comments(obj: Mapping[str, Any], base: str) -> list[Comment]:
    """Comment texts, when the document holds them (``gh --json comments``).

    The REST issue object only counts its comments (an integer): no text to take.
    """
    value = obj.get("comments")
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return []
    at = f.pointer(base, "comments")
    if not isinstance(value, list):
        raise f.wrong_type(at, "an array, a count or null")
    found = []
    for index, item in enumerate(value):
        where = f.pointer(at, index)
        if not isinstance(item, dict):
            raise f.wrong_type(where, "a comment object")
        author_key = "user" if "user" in item else "author"
        author = f.optional_object(item, author_key, where)
        name = None
        if author is not None:
            name_key = "login" if "login" in author or "username" not in author else "username"
            name = f.optional_str(author, name_key, f.pointer(where, author_key))
        created = f.optional_str(item, "createdAt" if "createdAt" in item else "created_at", where)
        found.append(Comment(author=name, created_at=created, body=f.text(item, "body", where)))
    return found


def _required_title(obj: Mapping[str, Any], base: str) -> str:
    at = f.pointer(base, "title")
    if "title" not in obj or obj["title"] is None:
        raise invalid(at, "missing", "has no title")
    value = f.optional_str(obj, "title", base)
    assert value is not None
    return _title(value, at)


def _title(value: str, at: str) -> str:
    title = value.strip()
    if not title:
        raise invalid(at, "empty", "title is blank")
    if len(title) > MAX_TITLE_CHARS:
        raise too_large(at, MAX_TITLE_CHARS, "characters")
    return title


def _body(value: str) -> str:
    if len(value) * 4 > f.MAX_TEXT_BYTES and len(value.encode("utf-8")) > f.MAX_TEXT_BYTES:
        raise too_large("/body", f.MAX_TEXT_BYTES, "bytes")
    return value


# -- where the issue lives --------------------------------------------------------------


def github_repository(url: str | None) -> str | None:
    """``owner/name`` of a GitHub web address of an issue or pull request."""
    parts = _path_parts(url)
    if len(parts) >= 4 and parts[2] in ("issues", "pull", "pulls"):
        return f"{parts[0]}/{parts[1]}"
    return None


def api_repository(url: str | None) -> str | None:
    """``owner/name`` of a GitHub API address (``…/repos/owner/name[/issues/N]``)."""
    parts = _path_parts(url)
    for index, part in enumerate(parts[:-2]):
        if part == "repos":
            return f"{parts[index + 1]}/{parts[index + 2]}"
    return None


def gitlab_repository(url: str | None) -> str | None:
    """The project path of a GitLab issue address (``group/sub/project``)."""
    parts = _path_parts(url)
    for marker in ("-", "issues"):
        if marker in parts:
            project = parts[: parts.index(marker)]
            return "/".join(project) if project else None
    return None


def _path_parts(url: str | None) -> list[str]:
    if not url:
        return []
    try:
        path = urlsplit(url).path
    except ValueError:
        return []
    return [part for part in path.split("/") if part]


__all__ = [
    "FILE",
    "GITHUB",
    "GITLAB",
    "MAX_TITLE_CHARS",
    "Comment",
    "Issue",
    "api_repository",
    "github_repository",
    "gitlab_repository",
    "issue_from_json",
    "issue_from_text",
]
