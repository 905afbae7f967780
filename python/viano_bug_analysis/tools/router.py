"""`InvestigationToolRouter`: read-only snapshot queries over a case package.

One call answers one batch. The order of work is what makes a batch
all-or-nothing:

1. validate the request document (``request_validation``) — no file is read;
2. load the package and check identity, revision, phase, status, freshness of
   the canonical case and the known hypotheses;
3. resolve every ``source_ref`` against ``case.json`` (role included) and
   check the selection limits;
4. verify each selected attachment and read each selected member once
   (inflate, size, CRC-32, SHA-256, decode or parse), then run the checks
   that need the data (line ranges, known columns). With the digest cache
   (the default) an attachment whose file identity is unchanged and settled
   is not hashed again, and a member verified before in the same attachment
   bytes is not inflated again when its parsed rows are cached; the identity
   is checked on every batch (``case.digest_cache``);
5. only then run the queries and assemble the result, whose size is checked
   last.

Any failure raises one ``ToolError`` and nothing else is returned. The
router writes no record: no manifest update, checkpoint, budget or evidence.
The one file it may write is its digest cache (``analysis/cache/digests.json``
in a writable package, else the user's cache directory), which changes no
answer; ``digest_cache=False`` (``--no-digest-cache``) writes nothing at all.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from viano_bug_analysis.case.digest_cache import (
    DigestCache,
    FileIdentity,
    member_key,
    shared_digest_cache,
)
from viano_bug_analysis.case.package import (
    CasePackage,
    ContextEntry,
    VerifiedAttachment,
    load_package,
    verify_attachment,
)
from viano_bug_analysis.errors import (
    ArchiveError,
    CaseError,
    IntegrityError,
    LimitError,
    ReadError,
    TextDecodeError,
    VbaError,
)
from viano_bug_analysis.schemas import load_schema
from viano_bug_analysis.snapshot import MemberRef, SnapshotArchive, SourceText
from viano_bug_analysis.tools.database_query import (
    DatabaseQueryTool,
    LoadedTable,
    check_row_limit,
)
from viano_bug_analysis.tools.errors import ToolError, wrap_core_error
from viano_bug_analysis.tools.limits import ToolLimits
from viano_bug_analysis.tools.request_validation import (
    REQUEST_SCHEMA,
    Batch,
    Request,
    compact_json,
    parse_batch,
)
from viano_bug_analysis.tools.source_query import run_source_requests

QUERYABLE_PHASES = frozenset({"generation", "investigation"})
SOURCE_OPERATIONS = frozenset({"source.find_text", "source.find_symbol", "source.read_context"})
SOURCE_ROLES = frozenset({"source_file"})
DATABASE_ROLES = frozenset({"database_snapshot", "schema_descriptor"})


@dataclass(frozen=True, slots=True)
class _Selection:
    """What a batch reads: context entries in first-use order, by source_ref."""

    entries: dict[str, ContextEntry]


class InvestigationToolRouter:
    """Validates and answers ``investigation-request-v2`` batches (every v1 batch is one)."""

    def __init__(
        self,
        *,
        database_tool: DatabaseQueryTool | None = None,
        limits: ToolLimits | None = None,
        threads: int = 0,
        digest_cache: bool | DigestCache = True,
    ) -> None:
        """``digest_cache``: True (default) trusts verified digests per file identity,
        in the process and across processes (``case.digest_cache``); False hashes
        every selected attachment and verifies every used member on every batch
        and writes nothing; a ``DigestCache`` is used as given."""
        self.limits = limits or ToolLimits()
        # Every load is given self.limits.database_rows, so a tool passed in
        # (with its adapter) cannot keep a row limit of its own.
        self.database_tool = database_tool or DatabaseQueryTool(max_rows=self.limits.database_rows)
        self.threads = threads
        self.digests: DigestCache | None
        if digest_cache is True:
            self.digests = shared_digest_cache()
        elif digest_cache is False:
            self.digests = None
        else:
            self.digests = digest_cache
        # Off unless a long-lived caller turns it on (cache_source_texts).
        self._text_cache: OrderedDict[tuple[str, str, str], tuple[SourceText, int]] = OrderedDict()
        self._text_cache_limit = 0
        self._text_cache_bytes = 0

    def cache_source_texts(self, max_bytes: int) -> None:
        """Keep decoded source members between batches, up to ``max_bytes`` of members.

        For a long-lived process (``vba mcp``). A text is keyed by the SHA-256
        of its attachment, its member name and its declared SHA-256; it is
        used only after the attachment itself verified against the manifest
        for this batch (size and SHA-256; re-hashed whenever the file's size
        or times change), so its bytes are the ones verified when it was
        first read. The least recently used texts leave first.
        """
        self._text_cache_limit = max(0, max_bytes)
        while self._text_cache_bytes > self._text_cache_limit and self._text_cache:
            _, (_, size) = self._text_cache.popitem(last=False)
            self._text_cache_bytes -= size

    @staticmethod
    def request_schema() -> dict[str, Any]:
        """The bundled strict JSON Schema the router validates batches with
        (``investigation-request-v2``: version 1 plus ``find_text``'s ``whole_word``)."""
        return load_schema(REQUEST_SCHEMA)

    @staticmethod
    def result_schema() -> dict[str, Any]:
        return load_schema("investigation-result-v1")

    def preflight(
        self,
        package_path: str | os.PathLike[str],
        request: Mapping[str, Any],
        *,
        proposed_hypotheses: frozenset[str] = frozenset(),
    ) -> None:
        """Every check ``query`` makes before running anything, and nothing else.

        Raises the same ``ToolError`` that ``query`` would raise before its
        handlers; returns None when the batch would be accepted (only the
        result size is checked later). Reads the selected members; writes nothing.
        ``proposed_hypotheses`` are IDs the case does not hold yet but a caller
        is about to add (the CaseInterpreter checks each proposal's first query
        before its revision exists); ``query`` accepts no such thing.
        """
        self._prepare(package_path, request, proposed_hypotheses)

    def query(
        self, package_path: str | os.PathLike[str], request: Mapping[str, Any]
    ) -> dict[str, Any]:
        batch, package, selection, texts, tables = self._prepare(package_path, request)
        results = self._run(batch, selection, texts, tables)
        document = {
            "format": "viano-investigation-result",
            "format_version": 1,
            "case_id": package.manifest["case_id"],
            "package_id": package.manifest["package_id"],
            "analysis_revision": package.manifest["analysis_revision"],
            "generation": package.manifest["generation"],
            "case_ref": {"path": package.manifest["case"]["path"], "sha256": package.case_sha256},
            "batch_sha256": batch.sha256,
            "results": results,
        }
        size = _encoded_size(document)
        if size > self.limits.result_bytes:
            raise ToolError(
                "result_too_large",
                f"result would exceed the result size limit of {self.limits.result_bytes} bytes;"
                " ask for smaller pages",
                {
                    "limit": self.limits.result_bytes,
                    "maximum": self.limits.result_bytes,
                    "size": size,
                },
            )
        return document

    def read_snapshots(
        self, package_path: str | os.PathLike[str]
    ) -> tuple[CasePackage, dict[str, SourceText], dict[str, LoadedTable]]:
        """Every declared source file and database snapshot of the package, read and
        verified as a batch reads them (attachment, member size, CRC-32, SHA-256).

        For a whole-case search (``vba references --package``) that is no batch:
        no hypothesis, revision or phase applies, and nothing is written.
        """
        package = _load(Path(package_path))
        readable = SOURCE_ROLES | {"database_snapshot"}
        entries = {
            ref: entry for ref, entry in package.context_entries.items() if entry.role in readable
        }
        texts, tables = self._read_selection(package, _Selection(entries))
        return package, texts, tables

    def _prepare(
        self,
        package_path: str | os.PathLike[str],
        request: Mapping[str, Any],
        proposed_hypotheses: frozenset[str] = frozenset(),
    ) -> tuple[Batch, CasePackage, _Selection, dict[str, SourceText], dict[str, LoadedTable]]:
        batch = parse_batch(request, self.limits)
        package = _load(Path(package_path))
        _check_case(package, batch, proposed_hypotheses)
        selection = _select(package, batch, self.limits)
        texts, tables = self._read_selection(package, selection)
        _check_against_data(batch, texts, tables)
        return batch, package, selection, texts, tables

    # -- reading ---------------------------------------------------------------

    def _read_selection(
        self, package: CasePackage, selection: _Selection
    ) -> tuple[dict[str, SourceText], dict[str, LoadedTable]]:
        by_attachment: dict[str, list[ContextEntry]] = {}
        for entry in selection.entries.values():
            by_attachment.setdefault(entry.attachment, []).append(entry)
        texts: dict[str, SourceText] = {}
        tables: dict[str, LoadedTable] = {}
        for attachment, entries in by_attachment.items():
            try:
                verified = verify_attachment(package, attachment, digests=self.digests)
            except CaseError as err:
                raise wrap_core_error(
                    err, err.code, "attachment does not match the manifest"
                ) from None
            self._read_attachment(package, verified, entries, texts, tables)
        if self.digests is not None:
            self.digests.flush(package.path)
        return texts, tables

    def _read_attachment(
        self,
        package: CasePackage,
        verified: VerifiedAttachment,
        entries: list[ContextEntry],
        texts: dict[str, SourceText],
        tables: dict[str, LoadedTable],
    ) -> None:
        """Reads the selected members of one verified attachment into ``texts`` and ``tables``.

        The archive is opened only when a member must be read or verified.
        """
        max_bytes = self.limits.file_bytes
        opened: list[SnapshotArchive] = []

        def archive() -> SnapshotArchive:
            if not opened:
                opened.append(_open_archive(verified.path, entries[0]))
            return opened[0]

        known = (
            frozenset()
            if self.digests is None
            else self.digests.verified_members(package.path, verified.sha256)
        )
        learned: list[str] = []
        sources = [e for e in entries if e.kind == "source"]
        if self._text_cache_limit:
            sources = self._cached_texts(verified.sha256, sources, texts)
        if sources:
            refs = [MemberRef(e.member, e.sha256, e.size) for e in sources]
            try:
                decoded = archive().read_texts(refs, max_bytes=max_bytes, threads=self.threads)
            except VbaError as err:
                failed = sources[int(err.details.get("member_index", 0))]
                raise _member_error(err, failed) from None
            texts.update(zip((e.source_ref for e in sources), decoded, strict=True))
            learned += [_key(e) for e in sources]
            if self._text_cache_limit:
                for entry, text in zip(sources, decoded, strict=True):
                    kept = (verified.sha256, entry.member, entry.sha256)
                    self._keep_text(kept, text, entry.size)
        for entry in (e for e in entries if e.kind == "database"):
            key = _key(entry)
            tables[entry.source_ref] = self._read_table(archive, entry, max_bytes, key in known)
            if key not in known:
                learned.append(key)
        if self.digests is not None and learned and _unchanged(verified):
            # Only while the file is still the one whose digest was checked: the
            # archive was opened by path after the attachment was verified.
            self.digests.remember_members(package.path, verified.sha256, learned)

    def _cached_texts(
        self, digest: str, sources: list[ContextEntry], texts: dict[str, SourceText]
    ) -> list[ContextEntry]:
        """Fills ``texts`` from the cache; returns the entries still to be read."""
        missing = []
        for entry in sources:
            key = (digest, entry.member, entry.sha256)
            hit = self._text_cache.get(key)
            if hit is None:
                missing.append(entry)
                continue
            self._text_cache.move_to_end(key)
            texts[entry.source_ref] = hit[0]
        return missing

    def _keep_text(self, key: tuple[str, str, str], text: SourceText, size: int) -> None:
        if key in self._text_cache or size > self._text_cache_limit:
            return
        self._text_cache[key] = (text, size)
        self._text_cache_bytes += size
        while self._text_cache_bytes > self._text_cache_limit:
            _, (_, dropped) = self._text_cache.popitem(last=False)
            self._text_cache_bytes -= dropped

    def _read_table(
        self,
        archive: Callable[[], SnapshotArchive],
        entry: ContextEntry,
        max_bytes: int,
        verified_before: bool,
    ) -> LoadedTable:
        """The member's parsed rows. ``verified_before``: the digest cache knows this
        member verified in these attachment bytes, so cached rows need no re-read."""
        ref = MemberRef(entry.member, entry.sha256, entry.size)
        try:
            cached = self.database_tool.cached(entry.sha256, role=entry.role)
            if cached is not None:
                # Parsed tables are keyed by content hash; unless the digest cache
                # vouches for the member in this attachment, it is verified again.
                if not verified_before:
                    archive().verify(ref, max_bytes=max_bytes)
            else:
                data = archive().read_bytes(ref, max_bytes=max_bytes)
        except VbaError as err:
            raise _member_error(err, entry) from None
        try:
            if cached is not None:
                # Loaded under whatever limit applied then; this router's limits decide now.
                check_row_limit(cached, self.limits.database_rows)
                return cached
            return self.database_tool.load(
                data, role=entry.role, sha256=entry.sha256, max_rows=self.limits.database_rows
            )
        except ToolError as err:
            err.details.setdefault("source_ref", entry.source_ref)
            raise

    # -- running ---------------------------------------------------------------

    def _run(
        self,
        batch: Batch,
        selection: _Selection,
        texts: dict[str, SourceText],
        tables: dict[str, LoadedTable],
    ) -> list[dict[str, Any]]:
        source_results = run_source_requests(
            [r for r in batch.requests if r.operation in SOURCE_OPERATIONS],
            texts,
            selection.entries,
            max_chars=self.limits.line_chars,
            threads=self.threads,
        )
        results = []
        for request in batch.requests:
            if request.operation in SOURCE_OPERATIONS:
                result = source_results[request.index]
            else:
                result = _run_database(request, tables, selection.entries)
            results.append(
                {
                    "request_id": request.request_id,
                    "hypothesis_id": request.hypothesis_id,
                    "action_id": request.action_id,
                    "operation": request.operation,
                    "request_sha256": request.sha256,
                    "result": result,
                }
            )
        return results


def _key(entry: ContextEntry) -> str:
    return member_key(entry.member, entry.sha256, entry.size)


def _unchanged(verified: VerifiedAttachment) -> bool:
    try:
        st = os.stat(verified.path, follow_symlinks=False)
    except OSError:
        return False
    return FileIdentity.of(st) == verified.identity


def _encoded_size(document: dict[str, Any]) -> int:
    """Bytes of ``document`` in the canonical form (``jsonio.canonical_bytes``).

    That form is orjson's bytes wherever orjson can write the value, so
    orjson measures first (a 2 MiB result costs it well under a millisecond,
    the canonical encoder's validating walk ~20x more); only a result that
    holds an integer beyond 64 bits, which orjson refuses, takes the exact
    encoder. Results hold no NaN (snapshots are parsed strictly), the one
    value orjson would write differently instead of refusing.
    """
    try:
        return len(orjson.dumps(document, option=orjson.OPT_SORT_KEYS))
    except TypeError:  # orjson.JSONEncodeError is TypeError
        return len(compact_json(document))


def _load(path: Path) -> CasePackage:
    try:
        return load_package(path)
    except CaseError as err:
        raise ToolError(err.code, err.message, err.details) from None


def _check_case(package: CasePackage, batch: Batch, proposed: frozenset[str] = frozenset()) -> None:
    manifest = package.manifest
    for field in ("case_id", "package_id"):
        if getattr(batch, field) != manifest[field]:
            raise ToolError(
                "identity_mismatch", f"request {field} does not match the package", {"field": field}
            )
    if batch.analysis_revision != manifest["analysis_revision"]:
        raise ToolError(
            "revision_mismatch",
            "request analysis_revision is not the package's current revision",
            {"current": manifest["analysis_revision"], "requested": batch.analysis_revision},
        )
    status = manifest["status"]
    if status["state"] != "active":
        raise ToolError(
            "case_blocked",
            "the case is blocked; an operator must resume it before queries run",
            {"blocked_code": status.get("code"), "resume_state": status.get("resume_state")},
        )
    if manifest["phase"] not in QUERYABLE_PHASES:
        raise ToolError(
            "phase_not_queryable",
            "queries run only in the generation or investigation phase",
            {"phase": manifest["phase"]},
        )
    for request in batch.requests:
        if request.hypothesis_id not in package.hypothesis_ids | proposed:
            raise ToolError(
                "unknown_hypothesis",
                "hypothesis_id is not a known initial hypothesis of the case",
                {"request_index": request.index},
            )


def _request_refs(request: Request) -> list[str]:
    args = request.arguments
    return list(args["source_refs"]) if "source_refs" in args else [args["source_ref"]]


def _select(package: CasePackage, batch: Batch, limits: ToolLimits) -> _Selection:
    entries: dict[str, ContextEntry] = {}
    members: dict[tuple[str, str], int] = {}
    for request in batch.requests:
        wanted_roles = SOURCE_ROLES if request.operation in SOURCE_OPERATIONS else DATABASE_ROLES
        for position, ref in enumerate(_request_refs(request)):
            entry = package.context_entries.get(ref)
            where = {"request_index": request.index, "position": position}
            if entry is None:
                raise ToolError(
                    "unknown_source_ref", "source_ref is not declared by case.json", where
                )
            if entry.role not in wanted_roles:
                raise ToolError(
                    "wrong_role",
                    f"source_ref has role {entry.role}, which this operation cannot read",
                    {**where, "role": entry.role},
                )
            if entry.size > limits.file_bytes:
                raise ToolError(
                    "file_too_large",
                    f"selected member is larger than the per-file limit of"
                    f" {limits.file_bytes} bytes",
                    {
                        **where,
                        "limit": limits.file_bytes,
                        "maximum": limits.file_bytes,
                        "size": entry.size,
                    },
                )
            entries.setdefault(ref, entry)
            members.setdefault((entry.attachment, entry.member), entry.size)
    if len(members) > limits.selected_files:
        raise ToolError(
            "too_many_files",
            f"batch selects more distinct members than the file limit of {limits.selected_files}",
            {
                "limit": limits.selected_files,
                "maximum": limits.selected_files,
                "files": len(members),
            },
        )
    combined = sum(members.values())
    if combined > limits.selected_bytes:
        raise ToolError(
            "selection_too_large",
            f"selected members together exceed the combined size limit of"
            f" {limits.selected_bytes} bytes",
            {"limit": limits.selected_bytes, "maximum": limits.selected_bytes, "size": combined},
        )
    return _Selection(entries)


def _open_archive(path: Path, entry: ContextEntry) -> SnapshotArchive:
    try:
        return SnapshotArchive(path)
    except VbaError as err:
        raise _member_error(err, entry) from None


def _member_error(err: VbaError, entry: ContextEntry) -> ToolError:
    where = {"source_ref": entry.source_ref}
    if isinstance(err, IntegrityError):
        return wrap_core_error(
            err,
            "source_integrity_mismatch",
            "member does not match its declared hash or size",
            **where,
        )
    if isinstance(err, TextDecodeError):
        return wrap_core_error(err, "source_not_text", "member is binary or not UTF-8", **where)
    if isinstance(err, LimitError):
        return wrap_core_error(
            err, "file_too_large", "member is larger than the per-file limit", **where
        )
    if isinstance(err, ArchiveError):
        return wrap_core_error(
            err, "source_unreadable", "member cannot be read from its attachment", **where
        )
    if isinstance(err, ReadError):
        return wrap_core_error(err, "package_unreadable", "attachment cannot be read", **where)
    return wrap_core_error(err, "source_unreadable", "member cannot be read", **where)


def _check_against_data(
    batch: Batch, texts: dict[str, SourceText], tables: dict[str, LoadedTable]
) -> None:
    """Preflight checks that need the decoded members; nothing has run yet."""
    for request in batch.requests:
        args = request.arguments
        if request.operation == "source.read_context":
            line_count = texts[args["source_ref"]].line_count
            if args["end_line"] > line_count:
                raise ToolError(
                    "line_out_of_range",
                    "line range ends after the last line of the source",
                    {"request_index": request.index, "line_count": line_count},
                )
        elif request.operation == "database.lookup":
            table = tables[args["source_ref"]]
            _check_columns(request, table, list(args["filters"]), "filters")
            _check_columns(request, table, args.get("columns"), "columns")
        elif request.operation == "database.find_references":
            table = tables[args["source_ref"]]
            _check_columns(request, table, args["search_columns"], "search_columns")
            _check_columns(request, table, args.get("columns"), "columns")


def _check_columns(
    request: Request, table: LoadedTable, names: list[str] | None, argument: str
) -> None:
    if names is None:
        return
    try:
        table.check_columns(names, argument=argument)
    except ToolError as err:
        err.details.setdefault("request_index", request.index)
        raise


def _run_database(
    request: Request, tables: dict[str, LoadedTable], entries: dict[str, ContextEntry]
) -> dict[str, Any]:
    args = request.arguments
    ref = args["source_ref"]
    table = tables[ref]
    head = {"source_ref": ref, "sha256": entries[ref].sha256}
    if request.operation == "database.describe":
        return {**head, **table.describe()}
    if request.operation == "database.lookup":
        body = table.lookup(args["filters"], args.get("columns"), args["offset"], args["limit"])
    else:
        body = table.find_references(
            args["value"],
            args["search_columns"],
            args.get("columns"),
            args["offset"],
            args["limit"],
        )
    return {**head, "table": table.table, "coverage": table.coverage, **body}


__all__ = ["InvestigationToolRouter", "compact_json"]
