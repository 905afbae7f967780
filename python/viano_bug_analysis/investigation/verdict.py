"""The case verdict: what the investigation concluded, once every hypothesis has ended.

A verdict is derived from the stored records only (the hypothesis outcomes,
the step log's model answers and the budget journal), so it can be rebuilt at
any time and says nothing the records do not. ``build_verdict`` makes the
document; ``VerdictStore`` keeps its versions.

Each issued verdict is one append-only file,
``analysis/investigation/verdicts/v0001.json``, ``v0002.json`` ...; the
highest number is the current verdict. A hypothesis added later (a new case
revision) ends in a verdict that differs, which is issued as the next version
naming the one it supersedes by number and SHA-256; the old file stays. An
unchanged verdict is not issued again, so a rerun after a kill (before or
after the write) ends with exactly one file per distinct verdict.

The controller writes the verdict when a run ends with the case concluded.
Its reader is strict: a version that is not the exact bytes written, does not
match ``case-verdict-v1``, or leaves a gap in the numbering is
``package_corrupt`` naming the file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.durable import PackageLayout, compact_json
from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.investigation.budget import BudgetManager
from viano_bug_analysis.investigation.checkpoints import BLOCKED, CheckpointStore
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.jsonio import sha256_hex
from viano_bug_analysis.schemas import schema_validator

VERDICT_FORMAT = "viano-case-verdict"
VERDICT_SCHEMA = "case-verdict-v1"
# Version 2 only widens the cited IDs to the case build's facts (P-IDs): a verdict
# is written as version 2 only when a citation names one, so every other verdict
# stays what it always was.
VERDICT_SCHEMAS = {1: VERDICT_SCHEMA, 2: "case-verdict-v2"}
_VERSION_NAME = re.compile(r"v([0-9]{4})\.json")
_REVISION_NAME = re.compile(r"r([0-9]{4})")
_REPLY_NAME = re.compile(r"[0-9]{2}-reply\.json")
# The groups of the case verdict, in the order a reader sees them.
GROUPS = ("supported", "refuted", "inconclusive", "blocked", "open")
# Fields of a version that are about the issue, not the verdict: two versions
# whose other fields are equal say the same thing.
_ISSUE_FIELDS = ("version", "supersedes", "issued_at")


def usage_of(package: PackageLayout | str | os.PathLike[str]) -> dict[str, Any]:
    """Tokens of every stored model answer, and the budget units spent and granted.

    Tokens come from the ``usage`` the server reported with each answer (the
    step log's ``reply`` and ``repair`` records and the case interpretation's
    replies); an answer without usage is
    counted in ``answers_without_usage`` (the budget then charged its whole
    reservation). Budget units are the journal's: tokens plus the fixed cost
    of each tool dispatch, so the two figures differ by design.
    """
    layout = PackageLayout.of(package)
    log = StepLog(layout)
    chats = [
        (log.get(hid, step, attempt, event) or {})["chat"]
        for hid, step, attempt, event in log.events()
        if event in ("reply", "repair")
    ]
    chats += _interpretation_chats(layout)
    prompt = completion = total = without = 0
    for chat in chats:
        usage = chat.get("usage")
        if not isinstance(usage, dict):
            without += 1
            continue
        prompt += _count(usage.get("prompt_tokens"))
        completion += _count(usage.get("completion_tokens"))
        total += _count(usage.get("total_tokens"))
    answers = len(chats)
    accounts = BudgetManager(layout).accounts()
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": total,
        "model_answers": answers,
        "answers_without_usage": without,
        "budget_units_spent": sum(a.spent for a in accounts),
        "budget_units_limit": sum(a.limit for a in accounts),
    }


def hypothesis_entries(
    package: PackageLayout | str | os.PathLike[str],
    hypotheses: Iterable[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """One entry per hypothesis of the case: its outcome, or its open/blocked state."""
    layout = PackageLayout.of(package)
    log = StepLog(layout)
    current = CheckpointStore(layout).current()
    is_blocked = current is not None and current.state == BLOCKED
    # The hypothesis the case blocked on; a block that names none holds every open one.
    blocked_on = current.payload.get("hypothesis") if current is not None and is_blocked else None
    entries = []
    for hypothesis in hypotheses:
        hid = hypothesis["id"]
        outcome = log.outcome(hid)
        entry: dict[str, Any] = {"id": hid, "statement": hypothesis["statement"]}
        if outcome is None:
            group = "blocked" if is_blocked and blocked_on in (hid, None) else "open"
            entry.update(
                group=group,
                assessment=None,
                confidence=None,
                summary=None,
                reason=None,
                citations=[],
                unverified_references=[],
            )
        else:
            citations = [dict(c) for c in outcome.get("citations") or ()]
            cited = {(c["evidence_id"], c["reference"]) for c in citations}
            entry.update(
                group=_group(outcome["assessment"]),
                assessment=outcome["assessment"],
                confidence=outcome.get("confidence"),
                summary=outcome.get("summary"),
                reason=outcome["reason"],
                citations=citations,
                # An answer's reference the controller did not verify (an outcome
                # stored before citations were checked) is kept, marked as such.
                unverified_references=[
                    {k: e[k] for k in ("evidence_id", "role", "reference")}
                    for e in outcome.get("evidence", ())
                    if (e["evidence_id"], e["reference"]) not in cited
                ],
            )
        entries.append(entry)
    return entries


def build_verdict(package: PackageLayout | str | os.PathLike[str]) -> dict[str, Any]:
    """The verdict of the package's current case from its stored records (without
    ``version``, ``supersedes`` and ``issued_at``, which ``VerdictStore.issue`` adds)."""
    layout = PackageLayout.of(package)
    case_package = load_package(layout.root)
    entries = hypothesis_entries(layout, case_package.case["hypotheses"])
    groups: dict[str, list[str]] = {group: [] for group in GROUPS}
    for entry in entries:
        groups[entry.pop("group")].append(entry["id"])
    return {
        "format": VERDICT_FORMAT,
        "format_version": 2 if _cites_facts(entries) else 1,
        "package_id": case_package.package_id,
        "case_id": case_package.case_id,
        "analysis_revision": case_package.analysis_revision,
        "complete": not groups["open"] and not groups["blocked"],
        "case": groups,
        "hypotheses": entries,
        "usage": usage_of(layout),
    }


class VerdictStore:
    """The issued versions of a package's case verdict (append-only)."""

    def __init__(self, package: PackageLayout | str | os.PathLike[str]) -> None:
        self._files = PackageLayout.of(package).files

    def versions(self) -> list[dict[str, Any]]:
        """Every issued version, oldest first, each read strictly."""
        numbers = sorted(
            int(match.group(1))
            for name in self._files.list(PackageLayout.VERDICTS) or ()
            if (match := _VERSION_NAME.fullmatch(name))
        )
        documents = []
        for expected, number in enumerate(numbers, start=1):
            rel = PackageLayout.verdict(expected)
            if number != expected:
                raise _corrupt(rel, "a verdict version is missing")
            document = self._files.read_document(rel)
            if document is None:
                raise _corrupt(rel, "a verdict version disappeared")
            if document.get("version") != expected or not _validator(document).is_valid(document):
                raise _corrupt(rel, "not a case verdict")
            documents.append(document)
        return documents

    def current(self) -> dict[str, Any] | None:
        versions = self.versions()
        return versions[-1] if versions else None

    def issue(self, verdict: Mapping[str, Any], *, now: datetime | None = None) -> dict[str, Any]:
        """Stores ``verdict`` as the next version unless the current one says the same;
        returns the current version afterwards."""
        versions = self.versions()
        if versions and _body(versions[-1]) == _body(verdict):
            return versions[-1]
        number = len(versions) + 1
        previous = versions[-1] if versions else None
        document = {
            **_body(verdict),
            "version": number,
            "supersedes": None
            if previous is None
            else {"version": previous["version"], "sha256": sha256_hex(compact_json(previous))},
            "issued_at": (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        }
        if not _validator(document).is_valid(document):
            # A verdict is built from records the stores checked; one that does not
            # fit its schema is a fault of this code, not of the package.
            raise AssertionError("built verdict does not match case-verdict-v1")
        self._files.write_once(PackageLayout.verdict(number), compact_json(document))
        return document


def _interpretation_chats(layout: PackageLayout) -> list[dict[str, Any]]:
    """The stored answers of the case interpretation (``analysis/interpretation/
    r<rev>/NN-reply.json``), read strictly; their usage counts like the steps'."""
    chats = []
    for revision in sorted(layout.files.list(PackageLayout.INTERPRETATION) or ()):
        match = _REVISION_NAME.fullmatch(revision)
        if match is None:
            continue
        folder = PackageLayout.interpretation(int(match.group(1)))
        for name in sorted(layout.files.list(folder) or ()):
            if not _REPLY_NAME.fullmatch(name):
                continue
            record = layout.files.read_document(folder / name)
            chat = (record or {}).get("chat")
            if not isinstance(chat, dict):
                raise _corrupt(folder / name, "not an interpretation reply record")
            chats.append(chat)
    return chats


def _cites_facts(entries: list[dict[str, Any]]) -> bool:
    return any(
        str(cited.get("evidence_id", "")).startswith("P")
        for entry in entries
        for key in ("citations", "unverified_references")
        for cited in entry.get(key) or ()
    )


def _validator(document: Mapping[str, Any]) -> Any:
    """The validator of the verdict version the document names (version 1 else)."""
    version = document.get("format_version")
    name = VERDICT_SCHEMAS.get(version, VERDICT_SCHEMA) if type(version) is int else VERDICT_SCHEMA
    return schema_validator(name)


def _body(document: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in _ISSUE_FIELDS}


def _group(assessment: str) -> str:
    return assessment if assessment in ("supported", "refuted") else "inconclusive"


def _count(value: object) -> int:
    return value if type(value) is int and value >= 0 else 0


def _corrupt(rel: Any, reason: str) -> PackageFileError:
    return PackageFileError(
        "package_corrupt",
        f"a stored package file is damaged: {reason}",
        {"path": rel.as_posix(), "reason": reason},
    )


__all__ = [
    "GROUPS",
    "VERDICT_FORMAT",
    "VerdictStore",
    "build_verdict",
    "hypothesis_entries",
    "usage_of",
]
