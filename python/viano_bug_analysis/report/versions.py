"""What every version of a report document answers alike, for the renderers.

Version 3 holds the facts as ``fact_tables``; versions 1 and 2 (written by
older versions, still rendered) as ``facts``, one JSON excerpt each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def enriched(report: Mapping[str, Any]) -> bool:
    """Whether the case was built with project research (it has facts)."""
    return bool(report.get("fact_tables") or report.get("facts"))


def not_investigated(report: Mapping[str, Any]) -> bool:
    """No verdict issued and no hypothesis has a step: nothing to show as a verdict."""
    return report["verdict"] is None and not any(h["steps"] for h in report["hypotheses"])


__all__ = ["enriched", "not_investigated"]
