"""CaseBuilder: case revisions from raw inputs, enriched through ProjectResearch.

    builder = CaseBuilder("case-spec.json", "packages/BUG-20",
                          profile=vcore_profile(), project_research=research)
    built = builder.build()      # BuildResult: package, revision, facts, queries

A package built here keeps every revision: ``revisions/r0001/case.json``,
``revisions/r0002/case.json``, ... The manifest is the commit point: it is
replaced (atomically) only after a revision is complete, so a reader always
sees the last finished revision. Everything else is written once and never
changed. Rebuilding with the same raw inputs, profile and research origin
changes nothing; new raw inputs make a new revision, which keeps the hypotheses
the case interpreter proposed beside the spec's. An interrupted build is
finished by running it again (see docs/case-enrichment.md for the exact
steps and what is replayed). The builder never diagnoses and never calls an
LLM: enrichment facts say what the project data holds, nothing more.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from viano_bug_analysis import jsonio
from viano_bug_analysis.case.canonical import canonical_bytes, sha256_hex
from viano_bug_analysis.case.documents import (
    PlacedAttachment,
    case_document,
    default_package_id,
    manifest_document,
)
from viano_bug_analysis.case.inputs import (
    check_spec,
    copy_zip,
    hash_file,
    member_digests,
    read_spec,
    zip_directory,
)
from viano_bug_analysis.case.lock import BUILD_LOCK, LOCK_NAMES, package_lock
from viano_bug_analysis.case.package import (
    MANIFEST_NAME,
    CasePackage,
    load_package,
    revision_case,
    verify_attachment,
)
from viano_bug_analysis.case.report_revision import (
    PinnedResearch,
    RevisionPin,
    journaled_revision_step,
)
from viano_bug_analysis.durable import PackageLayout, create_package_root, relative
from viano_bug_analysis.enrichment.changes import changes_since_report
from viano_bug_analysis.enrichment.client_lookups import client_data_configured
from viano_bug_analysis.enrichment.engine import Enricher
from viano_bug_analysis.enrichment.extract import (
    MemberLines,
    Mention,
    extract,
)
from viano_bug_analysis.enrichment.fixes.phase import fix_candidates
from viano_bug_analysis.enrichment.fixes.source import HistorySource, history_sources
from viano_bug_analysis.enrichment.journal import Research, StepJournal
from viano_bug_analysis.enrichment.leads import add_leads
from viano_bug_analysis.enrichment.origin import query_database
from viano_bug_analysis.enrichment.profile import EnrichmentProfile
from viano_bug_analysis.enrichment.profile_check import resolve_columns
from viano_bug_analysis.enrichment.rule_phase import rules_phase
from viano_bug_analysis.enrichment.script_files import script_file_phase
from viano_bug_analysis.errors import CaseError, EnrichmentError, PackageFileError, VbaError
from viano_bug_analysis.facts.index import check_index
from viano_bug_analysis.snapshot import MemberRef, SnapshotArchive

REVISIONS_DIR = PackageLayout.REVISIONS.as_posix()
RESEARCH_DIR = PackageLayout.RESEARCH.as_posix()
INPUTS_FORMAT = "viano-case-build-inputs"
INDEX_FORMAT = "viano-enrichment-index"
MAX_EXTRACT_MEMBER_BYTES = 8 * 1024 * 1024
LOCK_NAME = BUILD_LOCK
# A commit or snapshot ID as a refusal may name it (no URL, host or free text).
_IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@:+-]{0,127}")

BuildHook = Callable[[str], None]
Progress = Callable[[str], None]


@dataclass(frozen=True)
class BuildResult:
    package: CasePackage
    revision: int
    new_revision: bool
    facts: list[dict[str, Any]]
    queries: list[dict[str, Any]]
    asked: int  # queries this process sent to ProjectResearch (0 when replayed or unchanged)


class CaseBuilder:
    def __init__(
        self,
        spec: Mapping[str, Any] | str | os.PathLike[str],
        package_dir: str | os.PathLike[str],
        *,
        base_dir: str | os.PathLike[str] | None = None,
        profile: EnrichmentProfile | None = None,
        project_research: Research | None = None,
        research_origin: Mapping[str, Any] | None = None,
        progress: Progress | None = None,
        after_step: BuildHook | None = None,
        without_research: bool = False,
        revision_pin: RevisionPin | None = None,
    ) -> None:
        """``research_origin`` identifies what ProjectResearch reads (git URL and
        commit, database snapshot IDs); it is part of a revision's identity, so a
        new commit or snapshot makes a new revision. ``after_step`` is called after
        every durable step (tests use it to interrupt the build there).

        A package whose last revision was enriched is not rebuilt without
        ``project_research`` (``research_required``: the new revision would have
        no facts) unless ``without_research`` says that is what is wanted.

        ``revision_pin`` (``--at-report-revision``): ``research_origin`` names the
        report's commit; the reported-revision step asks at the configured one."""
        if project_research is not None and profile is None:
            raise EnrichmentError(
                "profile_missing", "enrichment needs an enrichment profile", {"key": ""}
            )
        self._spec, self._base = read_spec(spec, base_dir)
        check_spec(self._spec)
        self._root = Path(os.path.abspath(package_dir))
        self._research = project_research
        self._origin = dict(research_origin or {})
        self._profile = (
            profile.in_database(query_database(profile.database, self._origin))
            if profile is not None and project_research is not None
            else None
        )
        self._progress = progress or (lambda _text: None)
        self._hook = after_step or (lambda _point: None)
        self._without_research = without_research
        self._pin = revision_pin
        self._layout = PackageLayout(self._root)
        self._files = self._layout.files
        self._hypotheses: list[dict[str, Any]] = self._spec["hypotheses"]

    def _fix_histories(self) -> tuple[HistorySource, ...]:
        """The histories "already fixed?" reads: none when research reads the report's
        own commit (``--at-report-revision``) or has no git source."""
        if self._pin is not None:
            return ()
        return history_sources(getattr(self._research, "config", None))

    def _client_data(self) -> bool | None:
        """Whether the research reads client data (``[client_data]``); None for a
        stand-in research without a configuration (tests): nothing said about it."""
        return client_data_configured(getattr(self._research, "config", None))

    def build(self) -> BuildResult:
        create_package_root(self._root)
        with package_lock(self._root, BUILD_LOCK, "build"):
            return self._build()

    # -- the steps ----------------------------------------------------------------------

    def _build(self) -> BuildResult:
        finished = _finished_revision(self._root)
        # Checked before anything is written: a refused spec leaves no trace.
        if finished:
            current = load_package(self._root)
            previous_case = current.case
            if self._research is None and not self._without_research:
                self._keep_research(finished, previous_case)
            previous = previous_case["hypotheses"]
            _refuse_retired_ids(current, self._spec["hypotheses"])
            self._hypotheses = _revision_hypotheses(previous, self._spec["hypotheses"])
        self._progress("staging attachments")
        attachments = self._stage_attachments(finished + 1)
        inputs = self._inputs_record(attachments)
        inputs_sha256 = sha256_hex(canonical_bytes(inputs))
        if finished and self._stored_inputs_sha256(finished) == inputs_sha256:
            package = load_package(self._root)
            self._discard_staged(attachments)
            return BuildResult(package, finished, False, _index_facts(package), [], 0)
        revision = finished + 1
        rev_dir = self._layout.path(PackageLayout.revision(revision))
        self._place_attachments(attachments, revision)
        inputs = self._inputs_record(attachments)
        try:
            self._files.write_once(PackageLayout.revision_inputs(revision), canonical_bytes(inputs))
        except PackageFileError as err:
            if err.code != "record_conflict":
                raise
            raise EnrichmentError(
                "build_pending_differs",
                "an unfinished build of this revision used other inputs; finish it with its "
                "own inputs or remove its revision directory",
                {"revision": revision},
            ) from err
        self._hook("inputs-staged")
        case = self._case_document(revision, attachments)
        facts: list[dict[str, Any]] = []
        queries: list[dict[str, Any]] = []
        asked = 0
        if self._research is not None:
            index_rel, index_sha256, facts, queries, asked = self._enrich(revision, case, rev_dir)
            case["project_research"] = {
                "format_version": 1,
                "index": {"path": index_rel, "sha256": index_sha256},
            }
        case_bytes = canonical_bytes(case)
        case_rel = PackageLayout.revision_case(revision).as_posix()
        self._files.write_once(case_rel, case_bytes)
        self._hook("case-written")
        self._write_manifest(revision, case_rel, sha256_hex(case_bytes), attachments)
        self._hook("manifest-written")
        package = load_package(self._root)
        for rel in package.attachments:
            verify_attachment(package, rel)
        return BuildResult(package, revision, True, facts, queries, asked)

    def _stage_attachments(self, revision: int) -> list[dict[str, Any]]:
        staging = self._layout.path(PackageLayout.REVISIONS) / f".staging-{secrets.token_hex(6)}"
        self._files.make_dirs(relative(self._root, staging))
        staged = []
        try:
            for a_index, attachment in enumerate(self._spec["attachments"]):
                target = staging / attachment["name"]
                if "zip" in attachment:
                    copy_zip(self._base / attachment["zip"], target, a_index)
                else:
                    zip_directory(self._base / attachment["directory"], target, a_index)
                sha256, size = hash_file(target)
                digests = member_digests(target, attachment["members"], a_index)
                staged.append(
                    {
                        "spec": attachment,
                        "file": target,
                        "sha256": sha256,
                        "size": size,
                        "digests": digests,
                        "path": None,
                    }
                )
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return staged

    def _discard_staged(self, attachments: list[dict[str, Any]]) -> None:
        if attachments:
            shutil.rmtree(attachments[0]["file"].parent, ignore_errors=True)
        else:
            for staging in self._layout.path(PackageLayout.REVISIONS).glob(".staging-*"):
                shutil.rmtree(staging, ignore_errors=True)

    def _place_attachments(self, attachments: list[dict[str, Any]], revision: int) -> None:
        """Links each staged ZIP under attachments/, never replacing another file."""
        for item in attachments:
            name: str = item["spec"]["name"]
            candidates = [name, f"{name[: -len('.zip')]}.r{revision:04d}.zip"]
            for candidate in candidates:
                rel = PackageLayout.attachment(candidate)
                target = self._layout.path(rel)
                if target.exists():
                    if hash_file(target) == (item["sha256"], item["size"]):
                        item["path"] = rel.as_posix()
                        break
                    continue
                self._files.write_once(rel, item["file"].read_bytes())
                item["path"] = rel.as_posix()
                break
            if item["path"] is None:
                raise CaseError(
                    "attachment_name_taken",
                    "attachment names of this revision are taken by other files",
                    {"attachment": name},
                )
        self._discard_staged(attachments)

    def _inputs_record(self, attachments: list[dict[str, Any]]) -> dict[str, Any]:
        spec = self._spec
        return {
            "format": INPUTS_FORMAT,
            "format_version": 1,
            "case_id": spec["case_id"],
            "phase": spec["phase"],
            "report": spec["report"],
            "hypotheses": spec["hypotheses"],
            "attachments": [
                {
                    "name": item["spec"]["name"],
                    "classification": item["spec"]["classification"],
                    "members": item["spec"]["members"],
                    "sha256": item["sha256"],
                    "size": item["size"],
                }
                for item in attachments
            ],
            "enrichment": None
            if self._profile is None
            else {"profile": self._profile.name, "profile_sha256": self._profile.sha256},
            "research_origin": self._origin if self._research is not None else None,
        }

    def _keep_research(self, revision: int, case: Mapping[str, Any]) -> None:
        """Refuses a build without research after an enriched revision (its facts
        would be silently gone from the new one); names what that revision read."""
        if "project_research" not in case:
            return
        details: dict[str, Any] = {"revision": revision}
        details.update(self._stored_origin(revision))
        raise EnrichmentError(
            "research_required",
            f"revision {revision} of this package was enriched through ProjectResearch; "
            "give its research configuration (--project-config) to enrich the new "
            "revision too, or --no-research to build it without enrichment facts",
            details,
        )

    def _stored_origin(self, revision: int) -> dict[str, str]:
        """The git commit and database snapshot ID a revision was enriched from
        (identifiers only, never a URL or host); empty when unreadable."""
        path = self._layout.path(PackageLayout.revision_inputs(revision))
        try:
            data = path.read_bytes()
            inputs = jsonio.strict_loads(
                data, max_depth=jsonio.MAX_ENCODE_DEPTH, max_bytes=len(data)
            )
        except (OSError, VbaError):
            return {}
        origin = inputs.get("research_origin") if isinstance(inputs, dict) else None
        if not isinstance(origin, dict):
            return {}
        found: dict[str, str] = {}
        for part, key, name in (
            ("git", "commit", "commit"),
            ("database", "snapshot_id", "snapshot_id"),
        ):
            table = origin.get(part)
            value = table.get(key) if isinstance(table, dict) else None
            if isinstance(value, str) and _IDENTIFIER.fullmatch(value):
                found[name] = value
        return found

    def _stored_inputs_sha256(self, revision: int) -> str | None:
        path = self._layout.path(PackageLayout.revision_inputs(revision))
        try:
            return sha256_hex(path.read_bytes())
        except FileNotFoundError:
            return None

    def _case_document(self, revision: int, attachments: list[dict[str, Any]]) -> dict[str, Any]:
        case = case_document(self._spec, revision, _placed(attachments))
        case["hypotheses"] = self._hypotheses
        return case

    def _enrich(
        self, revision: int, case: dict[str, Any], rev_dir: Path
    ) -> tuple[str, str, list[dict[str, Any]], list[dict[str, Any]], int]:
        assert self._profile is not None and self._research is not None
        research_rel = PackageLayout.research_revision(revision)
        index_rel = PackageLayout.research_index(revision).as_posix()
        index = self._files.read_document(index_rel, encode=_compact)
        if index is not None:
            # The enrichment checkpoint of this revision is done: never repeated.
            check_index(index, index_rel)
            return index_rel, sha256_hex(_compact(index)), index["facts"], index["queries"], 0
        self._progress("reading entity mentions")
        found = extract(self._profile, case["report"], self._member_lines(case["source_context"]))
        mentions = found.mentions
        research = self._research
        if self._pin is not None:
            research = PinnedResearch(research, self._pin)
        journal = StepJournal(self._layout, research_rel, research, hook=self._hook)
        captures_rel = (research_rel / "captures").as_posix()
        # First, so that its step number does not depend on the enrichment's.
        reported = journaled_revision_step(
            journal.run,
            case["report"],
            self._origin,
            self._pin,
            capture_path=lambda sha: f"{captures_rel}/{sha}.json",
        )
        # Column names of this database's schema era, resolved here for every
        # caller: the schema answers are journaled steps like any other query,
        # so a resumed build replays them and resolves the same way.
        resolution: list[dict[str, Any]] = []
        profile = self._profile.with_columns(
            resolve_columns(self._profile, _journaled_schema(journal, resolution))
        )
        enricher = Enricher(
            profile,
            journal.run,
            capture_path=lambda sha: f"{captures_rel}/{sha}.json",
            progress=self._progress,
            client_data=self._client_data(),
            # Rules and script files read the rows the queue read; leads last:
            # they rank what the other phases found.
            phases=[
                rules_phase,
                script_file_phase,
                changes_since_report(reported.fact),
                fix_candidates(case["report"], self._fix_histories(), reported.fact),
                add_leads,
            ],
        )
        run = enricher.run(found)
        journal.finished_cleanly()
        facts = run.facts + reported.facts(len(run.facts) + 1)
        queries = reported.queries + resolution + run.queries
        index = {
            "format": INDEX_FORMAT,
            "format_version": 1,
            "case_id": case["case_id"],
            "analysis_revision": revision,
            "profile": {"name": self._profile.name, "sha256": self._profile.sha256},
            "research_origin": self._origin,
            "mentions": [_mention_view(m) for m in mentions],
            "queries": queries,
            "facts": facts,
        }
        check_index(index, index_rel)  # a fact outside the vocabulary is never written
        data = _compact(index)
        self._files.write_once(index_rel, data)
        self._hook("index-written")
        return index_rel, sha256_hex(data), facts, queries, journal.asked

    def _member_lines(self, source_context: list[dict[str, Any]]) -> Iterator[MemberLines]:
        for entry in source_context:
            ref = MemberRef(entry["member"], entry["sha256"], entry["size"])
            path = self._root / entry["attachment"]
            if entry["size"] > MAX_EXTRACT_MEMBER_BYTES:
                continue

            def lines(path: Path = path, ref: MemberRef = ref) -> Iterable[tuple[int, str]]:
                try:
                    text = SnapshotArchive(path).read_text(ref, max_bytes=ref.size)
                except CaseError:
                    return []
                except Exception:  # a member that is not text names no entity
                    return []
                return [(n, t) for n, t, _cut in text.lines(1, text.line_count, 4096)]

            yield MemberLines(entry["source_ref"], entry["member"], lines)

    def _write_manifest(
        self, revision: int, case_rel: str, case_sha256: str, attachments: list[dict[str, Any]]
    ) -> None:
        previous = self._read_manifest()
        manifest = manifest_document(
            self._spec,
            # A later revision keeps the ID the first one was given.
            package_id=previous["package_id"]
            if previous
            else default_package_id(self._spec, case_sha256),
            revision=revision,
            case_path=case_rel,
            case_sha256=case_sha256,
            attachments=_placed(attachments),
        )
        self._files.replace(MANIFEST_NAME, canonical_bytes(manifest))

    def _read_manifest(self) -> dict[str, Any] | None:
        return self._files.read_document(MANIFEST_NAME, encode=canonical_bytes)


def _journaled_schema(
    journal: StepJournal, records: list[dict[str, Any]]
) -> Callable[[Mapping[str, Any]], Mapping[str, Any]]:
    """A ``database.schema`` answerer for ``resolve_columns`` that runs through the journal.

    Each step is recorded in ``records`` in the form of the enrichment's own
    query records (purpose ``column_resolution``); a refused table answers
    with no columns, which resolves nothing for it (its refusal is journaled).
    """

    def schema(query: Mapping[str, Any]) -> Mapping[str, Any]:
        outcome = journal.run(query)
        records.append(
            {
                "step": outcome.step,
                "query_sha256": outcome.query_sha256,
                "capture_sha256": outcome.capture.sha256 if outcome.capture else None,
                "refused_code": outcome.refused_code,
                "depth": 0,
                "purpose": {"kind": "column_resolution", "table": query["table"]},
            }
        )
        if outcome.capture is None:
            # A refused table has no columns to choose from: nothing resolves.
            return {"result": {"columns": []}}
        return outcome.capture.result

    return schema


def _revision_hypotheses(
    previous: list[dict[str, Any]], spec: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The hypotheses of a new revision: the spec's (the operator's) and every one the
    case interpreter proposed earlier, which no spec holds, kept byte for byte.

    Order: the previous revision's, then the spec's new ones. An operator hypothesis
    left out of the spec is left out; a spec hypothesis that repeats an interpreter's
    (same ID and statement) keeps the interpreter's origin; one that reuses its ID
    for another statement is refused, as the outcome stored for that ID answers the
    interpreter's statement.
    """
    own = {h["id"]: (index, h) for index, h in enumerate(spec)}
    merged: list[dict[str, Any]] = []
    for hypothesis in previous:
        origin = hypothesis.get("origin")
        # "case_interpreter": investigation/interpreter.py writes it; case/ cannot import it.
        if isinstance(origin, dict) and origin.get("by") == "case_interpreter":
            index, taken = own.pop(hypothesis["id"], (None, None))
            if taken is not None and taken["statement"] != hypothesis["statement"]:
                raise CaseError(
                    "spec_invalid",
                    "case spec is invalid: this hypothesis ID was given to another statement "
                    "by the case interpreter; choose another ID "
                    f"(at /hypotheses/{index}/id)",
                    {
                        "reason": "hypothesis id taken by the case interpreter",
                        "pointer": f"/hypotheses/{index}/id",
                        "hypothesis_id": hypothesis["id"],
                    },
                )
            merged.append(hypothesis)
        elif hypothesis["id"] in own:
            merged.append(own.pop(hypothesis["id"])[1])
    return merged + [h for h in spec if h["id"] in own]


def _refuse_retired_ids(package: CasePackage, spec: list[dict[str, Any]]) -> None:
    """A spec hypothesis may not take the ID of an interpreter hypothesis that a
    reinterpretation (an edited report) replaced: its stored outcome, steps and
    evidence answer that statement about the earlier report."""
    kept = {h["id"] for h in package.case["hypotheses"]}
    retired: set[str] = set()
    for revision in range(1, package.analysis_revision):
        for hypothesis in revision_case(package, revision)["hypotheses"]:
            origin = hypothesis.get("origin")
            if isinstance(origin, dict) and origin.get("by") == "case_interpreter":
                retired.add(hypothesis["id"])
    for index, hypothesis in enumerate(spec):
        if hypothesis["id"] in retired - kept:
            raise CaseError(
                "spec_invalid",
                "case spec is invalid: this hypothesis ID belonged to a hypothesis the case "
                "interpreter proposed for an earlier report text; choose another ID "
                f"(at /hypotheses/{index}/id)",
                {
                    "reason": "hypothesis id retired by a reinterpretation",
                    "pointer": f"/hypotheses/{index}/id",
                    "hypothesis_id": hypothesis["id"],
                },
            )


def _placed(attachments: list[dict[str, Any]]) -> list[PlacedAttachment]:
    return [
        PlacedAttachment(item["path"], item["sha256"], item["size"], item["spec"], item["digests"])
        for item in attachments
    ]


# What a build puts into a package besides the manifest and the locks.
_BUILD_FOLDERS = frozenset(
    rel.parts[0]
    for rel in (PackageLayout.REVISIONS, PackageLayout.ATTACHMENTS, PackageLayout.RESEARCH)
)


def _finished_revision(root: Path) -> int:
    """The revision the manifest commits to (0: none yet)."""
    if not (root / MANIFEST_NAME).exists():
        if any(p for p in root.iterdir() if p.name not in {*LOCK_NAMES, *_BUILD_FOLDERS}):
            raise CaseError(
                "package_not_buildable",
                "the directory holds files that are not part of a case build",
                {},
            )
        return 0
    return load_package(root).analysis_revision


def _index_facts(package: CasePackage) -> list[dict[str, Any]]:
    ref = package.case.get("project_research")
    if not ref:
        return []
    # load_package checked the index against its hash in case.json; the strict
    # parse keeps an integer beyond 64 bits exact (orjson would make it a float).
    data = (package.path / ref["index"]["path"]).read_bytes()
    index: dict[str, Any] = jsonio.strict_loads(  # type: ignore[assignment]
        data, max_depth=jsonio.MAX_ENCODE_DEPTH, max_bytes=len(data)
    )
    facts: list[dict[str, Any]] = index["facts"]
    return facts


def _mention_view(mention: Mention) -> dict[str, Any]:
    return {
        "entity_type": mention.entity_type,
        "entity_id": mention.entity_id,
        "where": dict(mention.where),
    }


def _compact(value: Any) -> bytes:
    # Not the case domain: research facts may hold floats and big integers.
    return jsonio.canonical_bytes(value)


__all__ = ["BuildResult", "CaseBuilder"]
