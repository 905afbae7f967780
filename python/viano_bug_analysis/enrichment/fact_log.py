"""The fact log of one enrichment run: facts numbered in the order they are stated.

Two paths to the same statement (the same row reached twice, the same
relationship from an equal origin) give one fact, referred to twice; so the
same answers give the same facts with the same IDs, which is what lets an
interrupted build replay its journal. A kind outside the fact vocabulary is
refused when stated (``unknown_fact_kind``), never written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from viano_bug_analysis.facts.registry import fact_kind
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.project_research import Capture


class FactLog:
    def __init__(self, capture_path: Callable[[str], str]) -> None:
        self._capture_path = capture_path
        self.facts: list[dict[str, Any]] = []
        self._stated: dict[bytes, str] = {}

    def fact(self, kind: str, **fields: Any) -> str:
        """The ID of the fact ``kind`` with ``fields``: a new one, or the equal earlier one."""
        fact_kind(kind)
        body = canonical_bytes({"kind": kind, **fields})
        if body in self._stated:
            return self._stated[body]
        fact_id = f"P{len(self.facts) + 1}"
        self.facts.append({"fact_id": fact_id, "kind": kind, **fields})
        self._stated[body] = fact_id
        return fact_id

    def provenance(self, capture: Capture, pointer: str) -> dict[str, Any]:
        """Where a fact was read: the capture (hash and package path), the pointer in it."""
        return {
            "capture_sha256": capture.sha256,
            "capture_path": self._capture_path(capture.sha256),
            "pointer": pointer,
            "origin": dict(capture.origin),
        }


__all__ = ["FactLog"]
