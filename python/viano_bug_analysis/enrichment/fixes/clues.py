"""What a report and the facts so far say that a fixing commit could carry.

One pass over the report's text (``report_text.lines``, linear) collects the
links a reporter pastes (a pull or merge request, a commit of this or another
repository), the file and function names of a log or stack trace, and the
words that ask whether a linked commit caused the bug or fixed it. The facts
give the report's entities: their IDs, the names the report writes, the
ScriptNames of the rows read and the files that name those ScriptNames.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.enrichment.changes import report_ids, script_names
from viano_bug_analysis.enrichment.report_text import lines

MIN_NAME_CHARS = 4
MAX_CLUES = 32
FULL_ID = 40
"""Most values of each kind kept (IDs, names, files, functions, links)."""

_PULL = re.compile(r"/(?P<repo>[\w.-]+/[\w.-]+)/(?:pull|-/merge_requests)/(?P<n>\d{1,9})\b")
_PR_WORDS = re.compile(r"\b(?:PR|pull request|merge request)\s*#?!?(?P<n>\d{1,9})\b", re.I)
_COMMIT_LINK = re.compile(r"/(?P<repo>[\w.-]+/[\w.-]+)/(?:-/)?commit/(?P<hex>[0-9a-fA-F]{7,40})\b")
_BARE_HEX = re.compile(r"(?<![\w/])(?P<hex>[0-9a-f]{7,40})(?![\w/])")
_SOURCE_FILE = re.compile(
    r"(?<![\w.])(?P<path>(?:[\w.-]+/)*[\w.-]+\.(?:cpp|cc|cxx|c|hpp|hh|h|inl|sql|lua|py|rs))"
    r"(?::\d{1,7})?\b"
)
_QUALIFIED = re.compile(r"\b(?P<cls>[A-Za-z_]\w{0,127})::(?P<fn>~?[A-Za-z_]\w{0,127})\b")
_FRAME = re.compile(r"\bin\s+(?P<fn>[A-Za-z_]\w{2,127})\s*\(")
_CAUSE_WORDS = re.compile(
    r"\b(?:caused|broke|broken|since|regress\w*|introduced|after)\b", re.IGNORECASE
)
_FIX_WORDS = re.compile(r"\b(?:fix(?:ed|es)?|resolved?|solved?|patch)\b", re.IGNORECASE)
_TERM = re.compile(r"[A-Za-z0-9_]{1,256}")


@dataclass(frozen=True, slots=True)
class LinkedCommit:
    hex: str  # lower case, 7 to 40 digits
    cause: bool  # the line calls it the cause (else: a fix, or unknown)


@dataclass(frozen=True, slots=True)
class ReportClues:
    number: int | None = None
    url: str | None = None
    repository: str | None = None  # owner/name, lower case
    same_repository: bool = False
    created_at: str | None = None
    revision: str | None = None
    pulls: tuple[int, ...] = ()
    commits: tuple[LinkedCommit, ...] = ()
    files: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    """The classes of the log's qualified functions (``Class::Method``)."""
    ids: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    script_names: tuple[str, ...] = ()
    script_files: tuple[str, ...] = field(default_factory=tuple)
    id_types: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Each ID's entity types (lower case) as the facts type it."""

    def terms(self) -> list[str]:
        """The words a changed line is searched for: IDs, ScriptNames, functions."""
        found: dict[str, None] = {}
        for term in (*self.ids, *self.script_names, *self.functions):
            if _TERM.fullmatch(term) and len(found) < MAX_CLUES:
                found.setdefault(term, None)
        return list(found)


def repository_of(url: str | None) -> str | None:
    """``owner/name`` (lower case) of a web or SSH repository URL."""
    if not url:
        return None
    text = url.strip().rstrip("/").removesuffix(".git")
    text = re.sub(r"^[\w.-]+@[\w.-]+:", "/", text)
    parts = [p for p in re.split(r"[/:]", text) if p]
    if len(parts) < 2:
        return None
    return f"{parts[-2]}/{parts[-1]}".lower()


def report_clues(
    report: Mapping[str, Any],
    facts: Sequence[Mapping[str, Any]],
    *,
    repository_url: str | None,
    revision: Mapping[str, Any] | None = None,
) -> ReportClues:
    """``revision``: the build's ``report_revision`` fact (stated after the
    enrichment's, so not among ``facts``), None when the report names none."""
    metadata = report.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    source = metadata.get("source")
    source = source if isinstance(source, Mapping) else {}
    number = source.get("number")
    url = source.get("url") if isinstance(source.get("url"), str) else None
    repository = source.get("repository")
    repository = repository.lower() if isinstance(repository, str) else repository_of(url)
    ours = repository_of(repository_url)
    same = repository is not None and repository == ours
    text = "\n".join(v for v in (report.get("title"), report.get("text")) if isinstance(v, str))
    pulls, commits, files, functions, scopes = _links_and_trace(text, ours)
    commit = _revision(revision)
    return ReportClues(
        number=number if type(number) is int else None,
        url=url,
        repository=repository,
        same_repository=same,
        created_at=source.get("created_at") if isinstance(source.get("created_at"), str) else None,
        revision=commit,
        pulls=pulls,
        # The revision is no fix the report links; a commit it plainly blames stays a
        # clue even when it is the revision too ("broken since commit X": the reporter
        # runs X), not one on a line that only says when ("on rev X since Monday").
        commits=tuple(
            c
            for c in commits
            if commit is None or not commit.startswith(c.hex) or (c.cause and _blames(text, c))
        ),
        files=files,
        functions=functions,
        scopes=scopes,
        ids=_first(report_ids(facts)),
        names=_first(_names(facts, text)),
        script_names=_first(n for n in script_names(facts) if _TERM.fullmatch(n)),
        script_files=_first(_script_files(facts)),
        id_types=_id_types(facts),
    )


def _first(values: Iterable[str]) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for value in values:
        if len(found) >= MAX_CLUES:
            break
        found.setdefault(value, None)
    return tuple(found)


def _links_and_trace(
    text: str, ours: str | None
) -> tuple[
    tuple[int, ...], tuple[LinkedCommit, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]
]:
    pulls: list[int] = []
    commits: list[LinkedCommit] = []
    files: list[str] = []
    functions: list[str] = []
    scopes: list[str] = []
    for line in lines(text):
        body = line.text
        cause = bool(_CAUSE_WORDS.search(body)) and not _FIX_WORDS.search(body)
        for m in _PULL.finditer(body):
            if ours is not None and m["repo"].lower() == ours:
                pulls.append(int(m["n"]))
        for m in _PR_WORDS.finditer(body):
            pulls.append(int(m["n"]))
        linked = False
        for m in _COMMIT_LINK.finditer(body):
            linked = True
            if ours is not None and m["repo"].lower() == ours:
                commits.append(LinkedCommit(m["hex"].lower(), cause))
        # A short hex word is a commit only where the line says so; a full ID always is.
        named = re.search(r"\bcommit\b|\brev(?:ision)?\b|\bhash\b", body, re.I)
        for m in () if linked else _BARE_HEX.finditer(body):
            if not m["hex"].isdigit() and (named or len(m["hex"]) == FULL_ID):
                commits.append(LinkedCommit(m["hex"], cause))
        for m in _SOURCE_FILE.finditer(body):
            if "://" not in body[max(0, m.start() - 200) : m.start()]:
                files.append(m["path"])
        for m in _QUALIFIED.finditer(body):
            functions.append(m["fn"].lstrip("~"))
            scopes.append(m["cls"])
        for m in _FRAME.finditer(body):
            functions.append(m["fn"])
    return (
        tuple(dict.fromkeys(pulls))[:MAX_CLUES],
        tuple(dict.fromkeys(commits))[:MAX_CLUES],
        _first(files),
        _first(f for f in functions if len(f) >= MIN_NAME_CHARS),
        _first(c for c in scopes if len(c) >= MIN_NAME_CHARS),
    )


_BLAME_WORDS = re.compile(r"\b(?:caused|broke|broken|regress\w*|introduced)\b", re.IGNORECASE)


def _blames(text: str, linked: LinkedCommit) -> bool:
    """Whether a line naming the commit blames it: a word of blame, or "since" /
    "after" / "by" right before it ("since commit X", "broken by X")."""
    right_before = re.compile(
        rf"\b(?:since|after|by)\s+(?:commit\s+|rev(?:ision)?\s+)?{linked.hex}", re.IGNORECASE
    )
    for line in lines(text):
        body = line.text
        if linked.hex in body.lower() and (_BLAME_WORDS.search(body) or right_before.search(body)):
            return True
    return False


def _revision(fact: Mapping[str, Any] | None) -> str | None:
    """The report's commit when it resolved to one of this repository's."""
    commit = fact.get("commit") if fact is not None else None
    return commit.lower() if isinstance(commit, str) else None


def _id_types(facts: Sequence[Mapping[str, Any]]) -> dict[str, frozenset[str]]:
    """The types the facts give each ID: a typed mention's, the types an untyped ID
    was found as, a followed name's matches."""
    found: dict[str, set[str]] = {}

    def add(entity_id: Any, entity_type: Any) -> None:
        if type(entity_id) is int and isinstance(entity_type, str):
            found.setdefault(str(entity_id), set()).add(entity_type.casefold())

    for fact in facts:
        kind = fact.get("kind")
        if kind == "case_mention":
            add(fact.get("entity_id"), fact.get("entity_type"))
        elif kind == "case_untyped_mention":
            for entity_type in fact.get("found_as") or ():
                add(fact.get("entity_id"), entity_type)
        elif kind == "project_name_match" and fact.get("followed"):
            for m in fact.get("matches") or ():
                add(m.get("entity_id"), m.get("entity_type"))
    return {k: frozenset(v) for k, v in found.items()}


def _names(facts: Sequence[Mapping[str, Any]], text: str) -> Iterable[str]:
    """Entity names as the report writes them: those a name rule matched, and the
    names of the entities read that the report's text holds."""
    folded = text.casefold()
    for fact in facts:
        kind = fact.get("kind")
        if kind == "project_name_match" and fact.get("followed"):
            name = fact.get("name")
        elif kind == "project_entity":
            name = fact.get("name")
            if not isinstance(name, str) or name.casefold() not in folded:
                continue
        else:
            continue
        if isinstance(name, str) and len(name.strip()) >= MIN_NAME_CHARS:
            yield name.strip()


def _script_files(facts: Sequence[Mapping[str, Any]]) -> Iterable[str]:
    """Files whose lines name one of the ScriptNames (``project_source_hits``)."""
    names = set(script_names(facts))
    for fact in facts:
        if fact.get("kind") == "project_source_hits" and fact.get("symbol") in names:
            for match in fact.get("matches") or ():
                path = match.get("path") if isinstance(match, Mapping) else None
                if isinstance(path, str):
                    yield path


__all__ = ["LinkedCommit", "ReportClues", "report_clues", "repository_of"]
