"""Which commits of the history may have fixed a report, and why: one score per
commit, its reasons listed, a deterministic ranking and one verdict.

A reason is a small record (``code``, ``weight``, ``detail``); the score is
the sum of a commit's weights, divided by ``MASS_DIVISOR`` for a mass change
(a base dump, an import, hundreds of files: it names every ID and fixes no
particular report) unless the commit names the report or the report links it.
A commit a later one reverts is no candidate. Ranking: score, then the newer
commit, then the ID.

Verdict: ``fixed_by`` when a commit's message names the report (its URL, or
``#N`` of the same repository); otherwise ``maybe`` when the best candidate
reaches ``MAYBE_MIN`` with a reason beyond a bare ID in a changed line;
otherwise ``none``: nothing is claimed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from viano_bug_analysis.enrichment.fixes.clues import ReportClues
from viano_bug_analysis.enrichment.fixes.sections import names_function
from viano_bug_analysis.project_research.git_history import HistoryCommit

Verdict = Literal["fixed_by", "maybe", "none"]

WEIGHTS: Mapping[str, int] = {
    "names_report": 100,
    "carries_linked_pull": 90,
    "is_linked_commit": 90,
    "reverts_blamed_commit": 90,
    "subject_names_entity": 40,
    "subject_names_name": 35,
    "changes_entity_rows": 35,
    "changes_entity_texts": 15,
    "changes_trace_function": 30,
    "touches_script_file": 25,
    "changes_script_name": 25,
    "touches_trace_file": 20,
    "touches_trace_file_elsewhere": 10,
    "same_files_as_cause": 20,
    "message_names_entity": 15,
    "changes_entity_id": 8,
}
"""The weight of each reason; the one table of their strength."""
WEAK = frozenset({"changes_entity_id"})
"""Reasons that alone claim nothing in a mass change."""
DECISIVE = frozenset(
    {"names_report", "carries_linked_pull", "is_linked_commit", "reverts_blamed_commit"}
)
MAYBE_MIN = 20
MASS_FILES = 100
MASS_DIVISOR = 4
_BASE_DUMP = re.compile(r"(?:^|/)(?:base|full|dumps?)/|_full\.sql$|(?:^|/)world[_\w]*\.sql$", re.I)
_REVERTS = re.compile(r"This reverts commit (?P<hex>[0-9a-f]{7,40})")
_REVERT_SUBJECT = re.compile(r'^Revert "(?P<subject>.+)"$')
_SQL_FILE = re.compile(r"\.sql$", re.I)
_COMMENT = re.compile(r"^\s*(?:--|#|/\*)")
_CLOSES = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(?P<n>\d{1,9})\b", re.IGNORECASE
)
_QUOTED = re.compile(r"'(?:[^'\\]|\\.|'')*'")
_UPDATE_SET = re.compile(
    r"^\s*UPDATE\s+`?(?P<table>\w+)`?\s+SET\s+(?P<set>.*?)\s+WHERE\b", re.IGNORECASE
)
_ASSIGNED = re.compile(r"`?(?P<col>[A-Za-z_]\w*)`?\s*=")


@dataclass(frozen=True, slots=True)
class KeyMap:
    """Where a row's key is an entity: ``columns`` the key and reference columns of
    every table (for a line that names no table), ``types`` the entity types each
    ``(table, column)`` holds (lower case), from the profile's entities and
    reference map."""

    columns: frozenset[str]
    types: Mapping[tuple[str, str], frozenset[str]]
    texts: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Each table's text columns (lower case): its entity's name, the profile's texts."""

    @classmethod
    def of_columns(cls, columns: frozenset[str]) -> KeyMap:
        return cls(columns, {})


@dataclass(frozen=True, slots=True)
class Reason:
    code: str
    weight: int
    detail: str


@dataclass(frozen=True, slots=True)
class LineChange:
    """A changed line naming a term (``source.changes``)."""

    path: str
    side: str
    text: str
    term: str


@dataclass(frozen=True, slots=True)
class Candidate:
    commit: HistoryCommit
    position: int  # in the window, 0 = the pinned commit
    score: int
    reasons: tuple[Reason, ...]
    mass: bool

    @property
    def names_report(self) -> bool:
        return any(r.code == "names_report" for r in self.reasons)

    def claims(self) -> bool:
        """A reason beyond a bare ID in a mass change."""
        return not (self.mass and all(r.code in WEAK for r in self.reasons))


@dataclass(frozen=True, slots=True)
class Ranking:
    verdict: Verdict
    candidates: tuple[Candidate, ...]  # ranked, best first
    reverted: tuple[tuple[str, str], ...]  # (commit, reverted by)


def rank(
    clues: ReportClues,
    commits: Sequence[HistoryCommit],
    changes: Mapping[str, Sequence[LineChange]],
    *,
    key_columns: frozenset[str] | KeyMap,
    history: Sequence[HistoryCommit] = (),
    headers: Mapping[tuple[str, str], tuple[str, ...] | None] | None = None,
) -> Ranking:
    """``commits`` the candidates, newest first; ``changes`` the changed term lines by
    commit; ``key_columns`` the key columns, or with their tables' entity types a
    ``KeyMap``; ``history`` the whole line read (``commits`` when not given);
    ``headers`` the headers of the sections a commit changed in a file the report's
    log names, by ``(commit, path)`` (``sections``; None or absent: not read).

    The commit a report blames lies at or before its revision, so never among the
    candidates after it: its files, and the revert that undoes it, are looked up in
    the whole line."""
    line = history or commits
    reverted = _reverted(line)
    cause_files = _cause_files(clues, line)
    found: list[Candidate] = []
    blamed = {c.hex for c in clues.commits if c.cause}
    match = _Matcher(clues, key_columns)
    reverting = set(reverted.values())
    for position, commit in enumerate(commits):
        if commit.commit in reverted:
            continue
        if commit.commit in reverting:
            undone = [t for t, by in reverted.items() if by == commit.commit]
            # A revert fixes a report only by undoing the commit the report blames.
            hit = [t for t in undone if any(t.startswith(b) for b in blamed)]
            if hit:
                reason = Reason(
                    "reverts_blamed_commit",
                    WEIGHTS["reverts_blamed_commit"],
                    f"reverts {hit[0][:12]}, which the report blames",
                )
                found.append(Candidate(commit, position, reason.weight, (reason,), False))
            continue
        reasons = _reasons(
            match, commit, changes.get(commit.commit, ()), cause_files, headers or {}
        )
        if not reasons:
            continue
        mass = is_mass(commit)
        score = sum(r.weight for r in reasons)
        weak = mass or any(r.code == "closes_other_report" for r in reasons)
        if weak and not any(r.code in DECISIVE for r in reasons):
            score //= MASS_DIVISOR
        found.append(Candidate(commit, position, score, tuple(reasons), mass))
    found.sort(key=lambda c: (-c.score, c.position, c.commit.commit))
    among = {c.commit for c in commits}
    pairs = sorted((t, by) for t, by in reverted.items() if t in among or by in among)
    return Ranking(_verdict(found), tuple(found), tuple(pairs))


def _verdict(ranked: Sequence[Candidate]) -> Verdict:
    if any(c.names_report for c in ranked):
        return "fixed_by"
    best = ranked[0] if ranked else None
    if best is not None and best.score >= MAYBE_MIN and best.claims():
        return "maybe"
    return "none"


def is_mass(commit: HistoryCommit) -> bool:
    return commit.files_total >= MASS_FILES or any(_BASE_DUMP.search(f.path) for f in commit.files)


def _reverted(commits: Sequence[HistoryCommit]) -> dict[str, str]:
    """Commits a newer commit of the window reverts -> the reverting commit."""
    by_subject: dict[str, str] = {}
    for commit in reversed(commits):  # oldest first: the latest of a subject wins
        by_subject[commit.subject] = commit.commit
    by_prefix: dict[str, list[str]] = {}  # an ID's first 7 digits: one lookup per hex
    for commit in commits:
        by_prefix.setdefault(commit.commit[:7], []).append(commit.commit)
    out: dict[str, str] = {}
    for commit in commits:
        for m in _REVERTS.finditer(commit.message):
            for other in by_prefix.get(m["hex"][:7], ()):
                if other.startswith(m["hex"]) and other != commit.commit:
                    out.setdefault(other, commit.commit)
        subject = _REVERT_SUBJECT.match(commit.subject)
        if subject and subject["subject"] in by_subject:
            target = by_subject[subject["subject"]]
            if target != commit.commit:
                out.setdefault(target, commit.commit)
    return out


def _cause_files(clues: ReportClues, commits: Sequence[HistoryCommit]) -> dict[str, str]:
    """Files of the commits the report calls the cause -> that commit."""
    out: dict[str, str] = {}
    for linked in clues.commits:
        if not linked.cause:
            continue
        for commit in commits:
            if commit.commit.startswith(linked.hex):
                for f in commit.files:
                    out.setdefault(f.path, commit.commit)
    return out


class _Matcher:
    """The report's clues compiled once per ranking: each commit is then one pass of a
    few patterns over its message and one set lookup per changed path."""

    def __init__(self, clues: ReportClues, keys: frozenset[str] | KeyMap) -> None:
        self.clues = clues
        self.keys = keys if isinstance(keys, KeyMap) else KeyMap.of_columns(keys)
        alternatives = []
        if clues.url:
            alternatives.append(rf"{re.escape(clues.url.rstrip('/'))}(?![\w/])")
        if clues.number is not None and clues.same_repository:
            alternatives.append(rf"(?<![\w/&!])#{clues.number}\b")
        self.report = re.compile("|".join(alternatives)) if alternatives else None
        self.ids = (
            re.compile(r"(?<!\w)(" + "|".join(map(re.escape, clues.ids)) + r")(?!\w)")
            if clues.ids
            else None
        )
        self.names = [(name, name.casefold()) for name in clues.names]
        self.files = set(clues.files)
        self.basenames = {f.rsplit("/", 1)[-1] for f in clues.files}
        self.script_files = set(clues.script_files)
        self.functions = set(clues.functions)
        self.scopes = frozenset(clues.scopes)
        self.scripts = set(clues.script_names)
        self.id_set = set(clues.ids)

    def traces(self, path: str) -> bool:
        """Whether the report's log names this file (its path or its file name)."""
        return path in self.files or path.rsplit("/", 1)[-1] in self.basenames

    def closes_other(self, message: str) -> int | None:
        """The first other issue of this repository the message closes ("Closes #57"),
        when the report is an issue of this repository."""
        if not self.clues.same_repository or self.clues.number is None:
            return None
        for m in _CLOSES.finditer(message):
            if int(m["n"]) != self.clues.number:
                return int(m["n"])
        return None

    def names_report(self, message: str) -> str | None:
        found = self.report.search(message) if self.report is not None else None
        return found.group(0) if found else None


def _reasons(
    match: _Matcher,
    commit: HistoryCommit,
    changes: Sequence[LineChange],
    cause_files: Mapping[str, str],
    headers: Mapping[tuple[str, str], tuple[str, ...] | None],
) -> list[Reason]:
    clues = match.clues
    reasons: list[Reason] = []

    def add(code: str, detail: str) -> None:
        if all(r.code != code for r in reasons):
            reasons.append(Reason(code, WEIGHTS[code], detail))

    message = commit.message
    named = match.names_report(message)
    if named:
        add("names_report", f"the message names the report ({named})")
    for pull in clues.pulls:
        if _carries_pull(message, pull):
            add("carries_linked_pull", f"carries pull request #{pull}, which the report links")
    for linked in clues.commits:
        if not linked.cause and commit.commit.startswith(linked.hex):
            add("is_linked_commit", f"the report links this commit ({linked.hex[:12]})")
    subject = commit.subject
    if match.ids is not None:
        in_subject = match.ids.search(subject)
        in_message = in_subject or match.ids.search(message)
        if in_subject:
            add("subject_names_entity", f"the subject names {in_subject.group(1)}")
        elif in_message:
            add("message_names_entity", f"the message names {in_message.group(1)}")
    if match.names:
        folded = subject.casefold()
        for name, name_folded in match.names:
            if name_folded in folded:
                add("subject_names_name", f'the subject names "{name}"')
    for changed in commit.files:
        path = changed.path
        if path in cause_files and cause_files[path] != commit.commit:
            add("same_files_as_cause", f"changes {path}, as the commit the report blames did")
        if match.traces(path):
            _trace_file(add, match, path, headers.get((commit.commit, path)))
        if path in match.script_files:
            add("touches_script_file", f"changes {path}, which holds the entity's ScriptName")
    for change in changes:
        if change.term in match.functions:
            add("changes_trace_function", f"changes a line of {change.path} naming {change.term}")
        elif change.term in match.scripts:
            add("changes_script_name", f"changes a line naming ScriptName {change.term}")
        elif change.term in match.id_set:
            keyed = _SQL_FILE.search(change.path) and keyed_by(
                change.text, change.term, match.keys, clues.id_types.get(change.term)
            )
            if keyed and sets_texts_only(change.text, match.keys):
                add(
                    "changes_entity_texts",
                    f"changes only texts of rows keyed by {change.term} in {change.path}",
                )
            elif keyed:
                add("changes_entity_rows", f"changes rows keyed by {change.term} in {change.path}")
            else:
                add("changes_entity_id", f"changes a line naming {change.term} in {change.path}")
    if any(r.code == "changes_entity_rows" for r in reasons):
        # A text edit of a row whose behaviour the commit also changes adds nothing.
        reasons[:] = [r for r in reasons if r.code != "changes_entity_texts"]
    other = match.closes_other(message) if not named else None
    if reasons and other is not None and not any(r.code in DECISIVE for r in reasons):
        reasons.append(
            Reason(
                "closes_other_report",
                0,
                f"the message closes #{other}, another report of this repository: a fix made "
                "for that one, a weak candidate for this",
            )
        )
    if reasons and is_mass(commit) and not any(r.code in DECISIVE for r in reasons):
        reasons.append(
            Reason(
                "mass_change",
                0,
                f"a mass change ({commit.files_total} files or a base dump): a weak candidate",
            )
        )
    return reasons


def _trace_file(
    add: Callable[[str, str], None],
    match: _Matcher,
    path: str,
    changed: tuple[str, ...] | None,
) -> None:
    """A file the log names: the functions the commit changed there (the headers of
    its changed sections) say whether it touched the code the log names. Read and
    none of them: another part of the file, a weak reason on its own."""
    if changed is None or not match.functions:
        add("touches_trace_file", f"changes {path}, which the report's log names")
        return
    named = sorted(
        f for f in match.functions if any(names_function(h, f, match.scopes) for h in changed)
    )
    if named:
        add("changes_trace_function", f"changes the body of {named[0]} in {path}")
        add("touches_trace_file", f"changes {path}, which the report's log names")
    else:
        add(
            "touches_trace_file_elsewhere",
            f"changes {path}, which the report's log names, but none of the functions it "
            "names there",
        )


def _carries_pull(message: str, pull: int) -> bool:
    subject = message.split("\n", 1)[0]
    return bool(
        re.search(rf"\(#{pull}\)\s*$", subject)
        or re.search(rf"\bpull request #{pull}\b", message, re.I)
        or re.search(rf"merge request [\w./-]*!{pull}\b", message, re.I)
    )


def sets_texts_only(line: str, keys: frozenset[str] | KeyMap) -> bool:
    """Whether a changed SQL line is an ``UPDATE`` that sets only text columns of its
    table (its entity's name, the profile's texts): what players read changes, not
    what the row does."""
    if not isinstance(keys, KeyMap) or not keys.texts:
        return False
    update = _UPDATE_SET.match(_QUOTED.sub("''", line))
    if update is None:
        return False
    texts = keys.texts.get(update["table"].casefold(), frozenset())
    columns = [m["col"].casefold() for m in _ASSIGNED.finditer(update["set"])]
    return bool(columns) and all(c in texts for c in columns)


_KEY_ASSIGN = re.compile(
    r"(?:`?(?P<col>[A-Za-z_]\w*)`?|@(?P<var>[A-Za-z_]\w*))\s*(?::?=|IN\s*\()[\s\d,@+-]*$", re.I
)


_TABLE = re.compile(r"\b(?:FROM|UPDATE|INTO)\s+`?(?P<table>\w+)`?", re.I)


def keyed_by(
    line: str,
    term: str,
    keys: frozenset[str] | KeyMap,
    types: frozenset[str] | None = None,
) -> bool:
    """Whether a changed SQL line holds ``term`` where a row's key stands: the first
    value of a row tuple, a key column compared with it (``entry = 14395``,
    ``ID IN (…, 14395)``), or a variable set to it (``SET @ENTRY := 14395``). An ID
    in a comment or another column is not. When the line names its table, the map
    knows that table's column and ``types`` (the ID's entity types) are given, the
    column must hold one of them: a creature's row is not keyed by a quest of the
    same number. One bounded look before each occurrence."""
    if _COMMENT.match(line):
        return False
    keys = keys if isinstance(keys, KeyMap) else KeyMap.of_columns(keys)
    folded = {c.casefold() for c in keys.columns}
    table = _TABLE.search(line)
    for m in re.finditer(rf"(?<![\w@]){re.escape(term)}(?![\w])", line):
        before = line[max(0, m.start() - 200) : m.start()]
        if "--" in before or "/*" in before:
            return False
        if re.search(r"(?:^|VALUES|,)\s*\(\s*$", before, re.I):
            return True
        assign = _KEY_ASSIGN.search(before)
        if assign is None:
            continue
        if assign["var"] is not None:
            return True
        column = assign["col"].casefold()
        if column not in folded:
            continue
        held = keys.types.get((table["table"].casefold(), column)) if table else None
        if held is None or types is None or held & types:
            return True
    return False


__all__ = [
    "MASS_FILES",
    "MAYBE_MIN",
    "WEIGHTS",
    "Candidate",
    "KeyMap",
    "LineChange",
    "Ranking",
    "Reason",
    "Verdict",
    "is_mass",
    "keyed_by",
    "rank",
    "sets_texts_only",
]
