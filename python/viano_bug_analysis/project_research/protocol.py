"""What the layers above need of ProjectResearch: one query answered as a capture.

Declared once, here, so that the case builder's enrichment journal and the
investigation controller accept the same thing (the live service, or a test
double that replays captures) without importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from viano_bug_analysis.project_research.captures import Capture


class Research(Protocol):
    def capture(self, query: Mapping[str, Any]) -> Capture: ...


__all__ = ["Research"]
