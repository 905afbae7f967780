"""What the investigation prompt ``investigation_project_v1`` sees of the enrichment.

The full index stays archived in the package; the prompt gets a
deterministic, labelled selection of it: the leads first, in rank order
(where to look first), then every other fact once, in fact-ID order, each
with a short provenance reference instead of the whole origin record. Left
out (and said so): the input inventory of the case and results that repeat
an earlier one word for word.

``project-context-v2`` put the leads first; ``v1`` listed every fact in
fact-ID order (a stored prompt keeps the selection it was built from).

It lives beside its one user, the controller: the enrichment writes the
index, the investigation chooses what of it a prompt shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from viano_bug_analysis.case.package import CasePackage
from viano_bug_analysis.enrichment.fixes.render import is_fix_fact
from viano_bug_analysis.enrichment.leads import leads_first
from viano_bug_analysis.facts.index import check_index
from viano_bug_analysis.facts.registry import fact_kind, labels
from viano_bug_analysis.jsonio import MAX_ENCODE_DEPTH, canonical_bytes, strict_loads

PROMPT_VERSION = "investigation_project_v1"
SELECTION_VERSION = "project-context-v2"

# The vocabulary's labels, in its order: the texts stored prompts were built with.
LABELS = labels(stored=True)


def load_index(package: CasePackage) -> dict[str, Any] | None:
    """The enrichment index of the package's current revision (hash-checked on load)."""
    ref = package.case.get("project_research")
    if not ref:
        return None
    data = (package.path / ref["index"]["path"]).read_bytes()
    # Not orjson.loads: it turns an integer beyond 64 bits (a DECIMAL value) into a float.
    index = cast(
        "dict[str, Any]", strict_loads(data, max_depth=MAX_ENCODE_DEPTH, max_bytes=len(data))
    )
    check_index(index, ref["index"]["path"])
    return index


def project_prompt_context(package: CasePackage) -> dict[str, Any] | None:
    """The labelled, deterministic selection for ``investigation_project_v1``."""
    index = load_index(package)
    if index is None:
        return None
    selected: list[dict[str, Any]] = []
    duplicates: list[str] = []
    seen: dict[bytes, str] = {}
    for fact in leads_first(index["facts"]):
        if is_fix_fact(fact):
            # "Already fixed?" facts came after investigation_project_v1, whose labels
            # (and so its prompt bytes) are fixed; a later prompt version shows them.
            continue
        view = _prompt_view(fact)
        key = canonical_bytes(
            {k: v for k, v in view.items() if k not in {"fact_id", "purpose", "source"}}
        )
        if fact_kind(fact["kind"]).deduplicated and key in seen:
            duplicates.append(fact["fact_id"])
            continue
        seen[key] = fact["fact_id"]
        selected.append(view)
    return {
        "prompt": PROMPT_VERSION,
        "selection": SELECTION_VERSION,
        "analysis_revision": index["analysis_revision"],
        "research_origin": index["research_origin"],
        "labels": LABELS,
        "facts": selected,
        "left_out": {
            "input_inventory": True,
            "duplicate_results": duplicates,
            "note": "the full enrichment index stays archived in the package",
        },
    }


def _prompt_view(fact: Mapping[str, Any]) -> dict[str, Any]:
    # Boilerplate statements are carried by the label; empty results and
    # coverage keep theirs, because the statement is the finding.
    kind = fact_kind(fact["kind"])
    keep_statement = kind.statement_is_finding
    dropped = {"provenance", "name_provenance", "purpose"} | (
        set() if keep_statement else {"statement"}
    )
    view = {k: v for k, v in fact.items() if k not in dropped}
    view["label"] = kind.label
    if "provenance" in fact:
        view["source"] = _reference(fact["provenance"])
    if "from" in fact:
        view["from"] = {
            k: v for k, v in fact["from"].items() if k not in {"capture_sha256", "capture_path"}
        }
        # A relationship keyed by a mentioned entity ID has no row to cite.
        if "capture_sha256" in fact["from"]:
            view["from"]["source"] = _reference(fact["from"])
    if "to" in fact:
        view["to"] = {
            k: v
            for k, v in fact["to"].items()
            if k not in {"capture_sha256", "capture_path", "query_sha256"}
        }
    return view


def _reference(provenance: Mapping[str, Any]) -> str:
    """``capture:<first 12 hex>#<JSON Pointer>`` — enough to cite, short to read."""
    return f"capture:{provenance['capture_sha256'][:12]}#{provenance['pointer']}"


__all__ = [
    "LABELS",
    "PROMPT_VERSION",
    "SELECTION_VERSION",
    "load_index",
    "project_prompt_context",
]
