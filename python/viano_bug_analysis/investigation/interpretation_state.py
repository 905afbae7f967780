"""Whether the case's interpretation still answers its report.

The case interpreter proposes hypotheses about one revision's report (each
hypothesis's ``origin.interpreted_revision``). A later revision may carry an
edited report (a tracker issue whose title or body changed, rebuilt with
``vba case build`` or ``vba triage``): the builder keeps the interpreted
hypotheses in it byte for byte, so the case then holds hypotheses, outcomes
and a verdict that answer the earlier text. This module says so, read only,
from the revisions themselves; the interpreter (``reinterpret``), the
controller, ``vba status``, the case report and ``vba triage`` all ask it.

Only the report's ``title`` and ``text`` count: they are what the
interpretation and every investigation prompt show of it. A new revision for
other reasons (a label, new attachments, an operator hypothesis) leaves the
interpretation current.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.case.package import CasePackage, revision_case
from viano_bug_analysis.errors import InterpretationError

ORIGIN = "case_interpreter"  # the interpreter's origin.by (interpreter.ORIGIN)
REPORT_CHANGED = "report_changed_since_interpretation"


@dataclass(frozen=True, slots=True)
class InterpretationState:
    interpreted_revision: int | None  # the revision the case's interpretation read (None: none)
    report_changed: bool  # the current revision's report differs from that revision's

    def to_record(self) -> dict[str, Any]:
        return {
            "interpreted_revision": self.interpreted_revision,
            "report_changed": self.report_changed,
        }


def is_proposed(hypothesis: Mapping[str, Any]) -> bool:
    origin = hypothesis.get("origin")
    return isinstance(origin, Mapping) and origin.get("by") == ORIGIN


def interpretation_state(package: CasePackage) -> InterpretationState:
    revisions = [
        h["origin"]["interpreted_revision"] for h in package.case["hypotheses"] if is_proposed(h)
    ]
    if not revisions:
        return InterpretationState(None, False)
    interpreted = max(revisions)
    return InterpretationState(
        interpreted, _report(revision_case(package, interpreted)) != _report(package.case)
    )


def report_changed_error(package: CasePackage, state: InterpretationState) -> InterpretationError:
    return InterpretationError(
        "report_changed_since_interpretation",
        f"the report changed after revision {state.interpreted_revision} was interpreted: the "
        "hypotheses and the verdict answer the earlier text; re-investigate it with "
        "vba investigate --reinvestigate (or vba interpret --reinterpret)",
        {
            "analysis_revision": package.analysis_revision,
            "interpreted_revision": state.interpreted_revision,
        },
    )


def _report(case: Mapping[str, Any]) -> tuple[str, str]:
    return (case["report"]["title"], case["report"]["text"])


__all__ = [
    "REPORT_CHANGED",
    "InterpretationState",
    "interpretation_state",
    "is_proposed",
    "report_changed_error",
]
