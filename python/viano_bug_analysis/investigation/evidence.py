"""Evidence records: what a dispatched query returned, taken over with its capture.

An evidence record (``analysis/evidence/records/<n>.json``, ID ``E<n>``)
names the hypothesis and step that asked, the request, and where the
answer lies: a project capture (``analysis/evidence/captures/<sha256>.json``)
or a stored router result (``analysis/evidence/results/<sha256>.json``). The
answer file is content-addressed and written first; the record, written
once, is the commit. So a crash between the two leaves at most an
unreferenced answer file, and a rerun of the same step writes the record.

An identical repeated answer is not new evidence: the existing E-ID is
returned with ``new=False``. Before a record is written the case
generation is read again; if it changed since dispatch, nothing is taken
over (``case_changed``).

Records and results are read strictly through ``durable.PackageFiles``: a
torn or garbled file is ``package_corrupt`` naming it (relative to the
package), and no file is written or read through a symbolic link.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.durable import PackageLayout, compact_json, parse_document
from viano_bug_analysis.errors import EvidenceError
from viano_bug_analysis.jsonio import canonical_bytes, sha256_hex
from viano_bug_analysis.project_research import Capture, CaptureStore
from viano_bug_analysis.project_research.captures import REFERENCES_KIND, model_view

RECORDS_DIR = PackageLayout.EVIDENCE_RECORDS
RESULTS_DIR = PackageLayout.EVIDENCE_RESULTS
CAPTURES_DIR = PackageLayout.CAPTURES
RECORD_FORMAT = "viano-evidence-record"
_RECORD_NAME = re.compile(r"[0-9]{6}\.json")
_SHA256 = re.compile(r"[0-9a-f]{64}")
CASE_FACTS_KIND = "case_facts"  # evidence from the case.facts operation
CASE_FACT_KIND = "case_fact"  # one fact of the enrichment index, cited by its P-ID


@dataclass(frozen=True, slots=True)
class TakenEvidence:
    evidence_id: str
    new: bool
    record: Mapping[str, Any]


class EvidenceStore:
    def __init__(self, package: PackageLayout | str | os.PathLike[str]) -> None:
        self.layout = PackageLayout.of(package)
        self.package_path = self.layout.root
        self._files = self.layout.files
        self._captures = CaptureStore(self.layout)

    # -- reading ------------------------------------------------------------------------

    def records(self) -> list[dict[str, Any]]:
        names = sorted(
            name for name in self._files.list(RECORDS_DIR) or () if _RECORD_NAME.fullmatch(name)
        )
        records = []
        for expected, name in enumerate(names, start=1):
            if name != f"{expected:06d}.json":
                raise EvidenceError(
                    "evidence_corrupt", "evidence records have a gap", {"n": expected}
                )
            rel = RECORDS_DIR / name
            record = self._files.read_document(rel)
            if record is None:
                raise EvidenceError(
                    "evidence_corrupt", "an evidence record disappeared", {"n": expected}
                )
            if not _is_record(record, expected):
                raise EvidenceError(
                    "evidence_corrupt",
                    "an evidence record is invalid",
                    {"n": expected, "path": rel.as_posix()},
                )
            records.append(record)
        return records

    def get(self, evidence_id: str) -> dict[str, Any]:
        for record in self.records():
            if record["evidence_id"] == evidence_id:
                return record
        raise EvidenceError(
            "evidence_unknown", "no evidence with this ID", {"evidence_id": evidence_id}
        )

    def answer(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """The stored answer of a record (the capture document or the router result)."""
        if record["kind"] == "project_query":
            return dict(self._captures.get(record["capture_sha256"]).document)
        rel = RESULTS_DIR / f"{record['result_sha256']}.json"
        data = self._files.read(rel)
        if data is None:
            raise EvidenceError(
                "evidence_corrupt", "a stored result is missing", {"path": rel.as_posix()}
            )
        if sha256_hex(data) != record["result_sha256"]:
            raise EvidenceError(
                "evidence_corrupt",
                "a stored result does not match its hash",
                {"path": rel.as_posix()},
            )
        return parse_document(data, rel)

    def payload(self, record: Mapping[str, Any]) -> Any:
        """What the model sees of a record, and what its references point into:
        the tool result (``result`` of a capture, the one router result)."""
        answer = self.answer(record)
        if record["kind"] == "project_query":
            return model_view(answer["result"])
        return answer["results"][0]

    # -- taking over --------------------------------------------------------------------

    def take_capture(
        self,
        capture: Capture,
        *,
        hypothesis_id: str,
        step_key: str,
        generation: int,
        current_generation: Callable[[], int],
    ) -> TakenEvidence:
        self._captures.put(capture)
        return self._take(
            {
                "kind": "project_query",
                "request": dict(capture.request),
                "capture_sha256": capture.sha256,
                "capture_path": f"{CAPTURES_DIR.as_posix()}/{capture.sha256}.json",
                "origin": dict(capture.origin),
            },
            "capture_sha256",
            hypothesis_id=hypothesis_id,
            step_key=step_key,
            generation=generation,
            current_generation=current_generation,
        )

    def take_router_result(
        self,
        request: Mapping[str, Any],
        result: Mapping[str, Any],
        *,
        hypothesis_id: str,
        step_key: str,
        generation: int,
        current_generation: Callable[[], int],
    ) -> TakenEvidence:
        data = compact_json(result)
        sha256 = sha256_hex(data)
        self._files.write_once(RESULTS_DIR / f"{sha256}.json", data)
        return self._take(
            {
                "kind": "snapshot_query",
                "request": dict(request),
                "result_sha256": sha256,
                "result_path": f"{RESULTS_DIR.as_posix()}/{sha256}.json",
            },
            "result_sha256",
            hypothesis_id=hypothesis_id,
            step_key=step_key,
            generation=generation,
            current_generation=current_generation,
        )

    def take_facts(
        self,
        request: Mapping[str, Any],
        result: Mapping[str, Any],
        index: Mapping[str, Any],
        *,
        hypothesis_id: str,
        step_key: str,
        generation: int,
        current_generation: Callable[[], int],
    ) -> TakenEvidence:
        """A ``case.facts`` answer (facts of the enrichment index ``index`` names: its
        path and SHA-256 in the package), stored like a router result: one result."""
        data = compact_json({"results": [dict(result)]})
        sha256 = sha256_hex(data)
        self._files.write_once(RESULTS_DIR / f"{sha256}.json", data)
        return self._take(
            {
                "kind": CASE_FACTS_KIND,
                "request": dict(request),
                "result_sha256": sha256,
                "result_path": f"{RESULTS_DIR.as_posix()}/{sha256}.json",
                "index": dict(index),
            },
            "result_sha256",
            hypothesis_id=hypothesis_id,
            step_key=step_key,
            generation=generation,
            current_generation=current_generation,
        )

    def _take(
        self,
        fields: dict[str, Any],
        answer_key: str,
        *,
        hypothesis_id: str,
        step_key: str,
        generation: int,
        current_generation: Callable[[], int],
    ) -> TakenEvidence:
        records = self.records()
        for record in records:
            if record["step_key"] == step_key:
                return TakenEvidence(record["evidence_id"], False, record)  # a resumed step
        for record in records:
            if record.get(answer_key) == fields[answer_key]:
                return TakenEvidence(record["evidence_id"], False, record)  # the same answer
        if current_generation() != generation:
            raise EvidenceError(
                "case_changed",
                "the case generation changed between dispatch and persistence",
                {"generation": generation},
            )
        number = len(records) + 1
        record = {
            "format": RECORD_FORMAT,
            "format_version": 1,
            "evidence_id": f"E{number}",
            "hypothesis_id": hypothesis_id,
            "step_key": step_key,
            "generation": generation,
            **fields,
        }
        self._files.write_once(RECORDS_DIR / f"{number:06d}.json", compact_json(record))
        return TakenEvidence(record["evidence_id"], True, record)


def _is_record(record: Mapping[str, Any], number: int) -> bool:
    """The fields every later reader indexes must be there, with the right types."""
    if record.get("format") != RECORD_FORMAT or record.get("evidence_id") != f"E{number}":
        return False
    if not isinstance(record.get("step_key"), str) or not isinstance(record.get("request"), dict):
        return False
    kind = record.get("kind")
    key = "capture_sha256" if kind == "project_query" else "result_sha256"
    digest = record.get(key)
    return (
        kind in ("project_query", "snapshot_query", CASE_FACTS_KIND)
        and isinstance(digest, str)
        and _SHA256.fullmatch(digest) is not None
    )


# -- citations ------------------------------------------------------------------------

CITATION_UNRESOLVED = "citation_unresolved"
MAX_HINT_KEYS = 12
"""How many child keys of the nearest existing value a hint names."""
_LINE_REF = re.compile(r"L([1-9][0-9]{0,9})(?:-L([1-9][0-9]{0,9}))?")
_INDEX = re.compile(r"0|[1-9][0-9]*")
_PROVENANCE_KEYS = ("source_ref", "path", "blob", "sha256", "line", "pointer", "capture_sha256")
# Where the findings of an answer are, in the order an example pointer prefers them
# (before other arrays such as the echoed request's columns or filters).
_CITED_CONTAINERS = ("result", "rows", "row", "lines", "matches", "files", "tables", "columns")


def _tokens(reference: str) -> list[str]:
    if reference == "":
        return []
    if not reference.startswith("/"):
        raise _unresolved(reference, "a JSON Pointer starts with '/'", "", None)
    return [t.replace("~1", "/").replace("~0", "~") for t in reference[1:].split("/")]


def _pointer(tokens: list[str]) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


def resolve_reference(document: Any, reference: str) -> Any:
    """The value a JSON Pointer names inside an answer document.

    A pointer that names nothing is ``citation_unresolved``; its details name
    the deepest existing prefix and, bounded, what exists below it, so the
    model (or a reader) can correct it.
    """
    value = document
    tokens = _tokens(reference)
    for depth, token in enumerate(tokens):
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and _INDEX.fullmatch(token) and int(token) < len(value):
            value = value[int(token)]
        else:
            nearest = _pointer(tokens[:depth])
            raise _unresolved(reference, "no value at this pointer", nearest, value)
    return value


def citable_pointers(payload: Any, limit: int) -> list[str] | None:
    """Every JSON Pointer :func:`resolve_reference` accepts in ``payload``, in
    document order, or None when there are more than ``limit``."""
    found: list[str] = []
    pending: list[tuple[Any, list[str]]] = [(payload, [])]
    while pending:
        node, path = pending.pop()
        found.append(_pointer(path))
        if len(found) > limit:
            return None
        if isinstance(node, dict):
            children = [(v, [*path, k]) for k, v in node.items()]
        elif isinstance(node, list):
            children = [(v, [*path, str(i)]) for i, v in enumerate(node)]
        else:
            continue
        pending.extend(reversed(children))
    return found


def _children(value: Any) -> str:
    if isinstance(value, dict):
        keys = sorted(value)
        shown = ", ".join(keys[:MAX_HINT_KEYS]) + (", …" if len(keys) > MAX_HINT_KEYS else "")
        return f"an object with the keys {shown}" if keys else "an empty object"
    if isinstance(value, list):
        return f"an array with indexes 0-{len(value) - 1}" if value else "an empty array"
    return "a single value with nothing below it"


def _unresolved(reference: str, why: str, nearest: str, value: Any) -> EvidenceError:
    details: dict[str, Any] = {"reference": reference[:128], "nearest": nearest}
    hint = f"{why}: {reference[:128]}"
    if value is not None or nearest:
        hint += f"; the deepest existing pointer is {nearest or '(the whole answer)'}, "
        hint += _children(value)
    details["hint"] = hint
    return EvidenceError(CITATION_UNRESOLVED, "a cited reference does not resolve", details)


def line_items(payload: Any) -> dict[int, list[tuple[str, Mapping[str, Any]]]]:
    """The source lines an answer shows, by line number: (pointer, line item).

    Line items are objects with an integer ``line`` and a string ``text`` in
    an array at most three levels below the answer (``/result/lines``,
    ``/lines``, ``/result/matches``, ``/matches``).
    """
    found: dict[int, list[tuple[str, Mapping[str, Any]]]] = {}
    pending: list[tuple[Any, list[str]]] = [(payload, [])]
    while pending:
        node, path = pending.pop()
        if len(path) > 3:
            continue
        if isinstance(node, dict):
            pending.extend((v, [*path, k]) for k, v in node.items() if isinstance(v, dict | list))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                if (
                    isinstance(item, dict)
                    and type(item.get("line")) is int
                    and isinstance(item.get("text"), str)
                ):
                    found.setdefault(item["line"], []).append((_pointer([*path, str(index)]), item))
    return found


def _line_range(lines: Mapping[int, list[Any]]) -> str:
    numbers = sorted(lines)
    if not numbers:
        return "none"
    if numbers[-1] - numbers[0] + 1 == len(numbers):
        return f"L{numbers[0]}-L{numbers[-1]}" if len(numbers) > 1 else f"L{numbers[0]}"
    shown = ", ".join(f"L{n}" for n in numbers[:MAX_HINT_KEYS])
    return shown + (", …" if len(numbers) > MAX_HINT_KEYS else "")


def resolve_lines(payload: Any, reference: str) -> list[tuple[str, Mapping[str, Any]]]:
    """The line items a line reference (``L12`` or ``L12-L20``) names, in order.

    Every line of the range must be shown by the answer exactly once (a
    search over several files may show the same number twice: then only a
    JSON Pointer is unambiguous).
    """
    match = _LINE_REF.fullmatch(reference)
    if match is None:
        raise _unresolved(reference, "not a line reference", "", None)
    first = int(match.group(1))
    last = int(match.group(2) or first)
    lines = line_items(payload)
    if not lines:
        raise EvidenceError(
            CITATION_UNRESOLVED,
            "a cited reference does not resolve",
            {
                "reference": reference,
                "hint": f"this answer shows no source lines: {reference}; cite a JSON Pointer",
            },
        )
    if last < first or last - first >= 10_000:
        raise _line_error(reference, "the line range is empty or too long", lines)
    chosen = []
    for number in range(first, last + 1):
        items = lines.get(number, [])
        if len(items) != 1:
            why = "the answer shows this line more than once" if items else "no such line"
            raise _line_error(reference, why, lines)
        chosen.append(items[0])
    return chosen


def _line_error(reference: str, why: str, lines: Mapping[int, list[Any]]) -> EvidenceError:
    hint = f"{why}: {reference}; the lines shown are {_line_range(lines)}"
    if any(len(items) > 1 for items in lines.values()):
        hint += " (numbers shown twice can only be cited by JSON Pointer)"
    return EvidenceError(
        CITATION_UNRESOLVED,
        "a cited reference does not resolve",
        {"reference": reference, "hint": hint},
    )


def citation_hints(payload: Any) -> str:
    """What can be cited in an answer, in a few words, for the prompt."""
    parts = []
    pointer = _example_pointer(payload)
    if pointer:
        parts.append(f"JSON Pointers into the answer, e.g. {pointer}")
    lines = line_items(payload)
    if lines:
        parts.append(f"lines {_line_range(lines)}")
    return "; ".join(parts) if parts else 'the whole answer (reference "")'


def _example_pointer(payload: Any) -> str:
    """A real pointer to a scalar: into the findings of the answer (rows, lines,
    matches, ...) where there are some, else into its first non-empty container."""
    value = payload
    tokens: list[str] = []
    while isinstance(value, dict | list) and value and len(tokens) < 6:
        if isinstance(value, list):
            tokens.append("0")
            value = value[0]
            continue
        filled = [k for k in sorted(value) if isinstance(value[k], dict | list) and value[k]]
        preferred = [k for k in _CITED_CONTAINERS if k in filled]
        texts = [k for k in ("text",) if isinstance(value.get(k), str)]
        key = (preferred or filled or texts or sorted(value))[0]
        tokens.append(key)
        value = value[key]
    return _pointer(tokens)


@dataclass(frozen=True, slots=True)
class ResolvedCitation:
    """A citation checked against the stored evidence (see ``to_mapping``)."""

    evidence_id: str
    role: str
    reference: str
    value_sha256: str
    provenance: Mapping[str, Any]

    def to_mapping(self) -> dict[str, Any]:
        return {
            "evidence_id": self.evidence_id,
            "role": self.role,
            "reference": self.reference,
            "value_sha256": self.value_sha256,
            "provenance": dict(self.provenance),
        }


class CitationResolver:
    """Resolves cited ``(E-ID, reference)`` pairs in the stored evidence.

    ``members`` maps a snapshot ``source_ref`` to its member path in the case
    (for the provenance of snapshot evidence). Records and payloads are read
    once per resolver.
    """

    def __init__(
        self,
        store: EvidenceStore,
        members: Mapping[str, str] | None = None,
        facts: CaseFacts | None = None,
    ) -> None:
        self._store = store
        self._members = dict(members or {})
        self._facts = facts
        self._records: dict[str, dict[str, Any]] | None = None
        self._payloads: dict[str, Any] = {}

    def _record(self, evidence_id: str) -> dict[str, Any]:
        if self._records is None:
            self._records = {r["evidence_id"]: r for r in self._store.records()}
            if self._facts is not None:
                self._records.update(self._facts.records())
        record = self._records.get(evidence_id)
        if record is None:
            raise EvidenceError(
                CITATION_UNRESOLVED,
                "a cited reference does not resolve",
                {"evidence_id": evidence_id[:16], "hint": f"no evidence {evidence_id[:16]}"},
            )
        return record

    def _payload(self, evidence_id: str) -> Any:
        if evidence_id not in self._payloads:
            record = self._record(evidence_id)
            if record["kind"] == CASE_FACT_KIND:
                assert self._facts is not None
                self._payloads[evidence_id] = self._facts.by_id[evidence_id]
            else:
                self._payloads[evidence_id] = self._store.payload(record)
        return self._payloads[evidence_id]

    def problem(self, evidence_id: str, reference: str) -> str | None:
        """None when the citation resolves, else a hint naming what does exist."""
        try:
            self.resolve({"evidence_id": evidence_id, "role": "context", "reference": reference})
        except EvidenceError as err:
            if err.code != CITATION_UNRESOLVED:
                raise
            return f"{evidence_id}: {err.details.get('hint', 'does not resolve')}"
        return None

    def resolve(self, entry: Mapping[str, Any]) -> ResolvedCitation:
        """One cited evidence entry, resolved, hashed and traced to its origin."""
        evidence_id, reference = entry["evidence_id"], entry["reference"]
        record = self._record(evidence_id)
        payload = self._payload(evidence_id)
        base = _base_provenance(record)
        if _LINE_REF.fullmatch(reference):
            items = resolve_lines(payload, reference)
            text = "\n".join(item["text"] for _pointer_, item in items)
            digest = sha256_hex(text.encode("utf-8", "surrogatepass"))
            first_pointer, first = items[0]
            provenance = {**base, **self._along(record, payload, _tokens(first_pointer))}
            provenance["line"] = first["line"]
            if len(items) > 1:
                provenance["end_line"] = items[-1][1]["line"]
            provenance["answer_pointer"] = first_pointer
        else:
            value = resolve_reference(payload, reference)
            digest = sha256_hex(canonical_bytes(value))
            provenance = {**base, **self._along(record, payload, _tokens(reference))}
            provenance["answer_pointer"] = reference
        return ResolvedCitation(evidence_id, entry["role"], reference, digest, provenance)

    def _along(self, record: Mapping[str, Any], payload: Any, tokens: list[str]) -> dict[str, Any]:
        """What the objects on the way to the cited value say about where it comes from."""
        found: dict[str, Any] = {}
        value = payload
        for depth in range(len(tokens) + 1):
            if isinstance(value, dict):
                for key in _PROVENANCE_KEYS:
                    if isinstance(value.get(key), str | int) and not isinstance(value[key], bool):
                        found[key] = value[key]
                if (
                    isinstance(value.get("rows"), list)
                    and depth + 1 < len(tokens)
                    and tokens[depth] == "rows"
                ):
                    found["row_pointer"] = _pointer(tokens[: depth + 2])
            if depth == len(tokens):
                break
            token = tokens[depth]
            if isinstance(value, dict) and token in value:
                value = value[token]
            elif isinstance(value, list) and _INDEX.fullmatch(token) and int(token) < len(value):
                value = value[int(token)]
            else:
                break
        provenance: dict[str, Any] = {}
        if record["kind"] == "project_query":
            for key in ("path", "blob", "line"):
                if key in found:
                    provenance[key] = found[key]
            if "sha256" in found:
                provenance["file_sha256"] = found["sha256"]
            if record["origin"].get("kind") == "database" and "row_pointer" in found:
                provenance["row_pointer"] = found["row_pointer"]
            if record["origin"].get("kind") == REFERENCES_KIND and "capture_sha256" in found:
                # A references answer: the row or line lies in one of the part
                # captures its capture holds, at this pointer.
                provenance["part_capture_sha256"] = found["capture_sha256"]
                if "pointer" in found:
                    provenance["part_pointer"] = found["pointer"]
        else:
            source_ref = found.get("source_ref")
            if isinstance(source_ref, str):
                provenance["source_ref"] = source_ref
                if source_ref in self._members:
                    provenance["member"] = self._members[source_ref]
            if "sha256" in found:
                provenance["member_sha256"] = found["sha256"]
            if "line" in found:
                provenance["line"] = found["line"]
            if "pointer" in found:
                provenance["row_pointer"] = found["pointer"]  # the row inside the member
        return provenance


@dataclass(frozen=True)
class CaseFacts:
    """The facts of a case revision's enrichment index, citable by P-ID: ``index`` is
    the case's reference to the index (its path and SHA-256 in the package)."""

    index: Mapping[str, Any]
    by_id: Mapping[str, Mapping[str, Any]]

    @classmethod
    def of(cls, index_ref: Mapping[str, Any], index: Mapping[str, Any]) -> CaseFacts:
        return cls(dict(index_ref), {f["fact_id"]: f for f in index.get("facts", ())})

    def records(self) -> dict[str, dict[str, Any]]:
        """A record per fact, the shape the resolver reads (kind case_fact)."""
        return {
            fact_id: {
                "evidence_id": fact_id,
                "kind": CASE_FACT_KIND,
                "fact_kind": fact["kind"],
                "index": dict(self.index),
                "fact_provenance": fact.get("provenance"),
            }
            for fact_id, fact in self.by_id.items()
        }


def _base_provenance(record: Mapping[str, Any]) -> dict[str, Any]:
    if record["kind"] == CASE_FACT_KIND:
        # A fact of the case build: the index it stands in, and where the fact's
        # own value came from (its capture and pointer), when it has one.
        base = {
            "kind": CASE_FACT_KIND,
            "fact_id": record["evidence_id"],
            "fact_kind": record["fact_kind"],
            "index_path": record["index"].get("path"),
            "index_sha256": record["index"].get("sha256"),
        }
        origin = record.get("fact_provenance")
        if isinstance(origin, Mapping):
            for key in ("capture_sha256", "capture_path", "pointer"):
                if isinstance(origin.get(key), str):
                    base[f"fact_{key}"] = origin[key]
        return base
    if record["kind"] == "project_query":
        origin = record.get("origin") or {}
        base = {
            "kind": f"project_{origin.get('kind', 'unknown')}",
            "capture_sha256": record["capture_sha256"],
            "capture_path": record["capture_path"],
            "document_prefix": "/result/result",
        }
        # A references answer read both providers, each named in its origin.
        both = [origin.get("source"), origin.get("database")]
        for part in both if origin.get("kind") == REFERENCES_KIND else [origin]:
            for key in ("commit", "url", "database", "snapshot_id"):
                if isinstance(part, Mapping) and key in part:
                    base[key] = part[key]
        return base
    if record["kind"] == CASE_FACTS_KIND:
        # The facts come from the enrichment index of the case revision; each fact
        # keeps its own provenance there.
        return {
            "kind": CASE_FACTS_KIND,
            "result_sha256": record["result_sha256"],
            "result_path": record["result_path"],
            "document_prefix": "/results/0",
            "index_path": record["index"].get("path"),
            "index_sha256": record["index"].get("sha256"),
        }
    return {
        "kind": "snapshot",
        "result_sha256": record["result_sha256"],
        "result_path": record["result_path"],
        "document_prefix": "/results/0",
    }


__all__ = [
    "CASE_FACTS_KIND",
    "CASE_FACT_KIND",
    "CITATION_UNRESOLVED",
    "CaseFacts",
    "CitationResolver",
    "EvidenceError",
    "EvidenceStore",
    "ResolvedCitation",
    "TakenEvidence",
    "citable_pointers",
    "citation_hints",
    "line_items",
    "resolve_lines",
    "resolve_reference",
]
