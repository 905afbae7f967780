"""``vba case leads PACKAGE [--json]``: where to look first in the package's current revision.

Read-only: the leads are the ``project_lead`` facts the build ranked and
stored in the revision's enrichment index (docs/case-enrichment.md,
"Leads"); nothing is asked or recomputed. ``vba status`` shows the same
block through :func:`leads_view`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.case.package import CasePackage, load_package
from viano_bug_analysis.enrichment.fixes.render import fix_lines, is_fix_fact
from viano_bug_analysis.enrichment.leads import lead_line, leads_left_out, leads_of
from viano_bug_analysis.exit_codes import ExitCode
from viano_bug_analysis.investigation.project_context import load_index
from viano_bug_analysis.jsonio import canonical_bytes


def leads_view(package: CasePackage) -> dict[str, Any]:
    """The leads of the current revision: ``enriched`` False when it was built without
    enrichment (then there can be none), ``left_out`` what ``max_leads`` cut."""
    index = load_index(package)
    facts = index["facts"] if index is not None else []
    # Already fixed? (enrichment/fixes): the search and its candidates, as stated;
    # absent when the build read no history (the view keeps its older shape).
    fixes = [dict(f) for f in facts if is_fix_fact(f)]
    return {
        "enriched": index is not None,
        "leads": [dict(lead) for lead in leads_of(facts)],
        "left_out": leads_left_out(facts),
        **({"fixes": fixes} if fixes else {}),
    }


def leads_lines(view: Mapping[str, Any]) -> list[str]:
    """The block as text: a head line, one indented line per lead, then the
    "already fixed?" lines."""
    fixes = [f"  {line}" for line in fix_lines(view.get("fixes") or [])]
    return _lead_lines(view) + fixes


def _lead_lines(view: Mapping[str, Any]) -> list[str]:
    if not view["enriched"]:
        return [
            "leads: none, this revision was built without enrichment "
            "(`vba case build --project-config` enriches it)"
        ]
    if not view["leads"]:
        return [
            "leads: none (no fact of this revision is a rule hit, a missing reference, "
            "a script-file candidate or a change since the report)"
        ]
    more = f", {view['left_out']} more left out by max_leads" if view["left_out"] else ""
    head = f"leads: {len(view['leads'])}, most telling first{more}"
    return [head, *(f"  [{lead['fact_id']}] {lead_line(lead)}" for lead in view["leads"])]


def run_leads(args: argparse.Namespace) -> int:
    package = load_package(args.package)
    view = leads_view(package)
    if args.json:
        document = {
            "package_id": package.package_id,
            "analysis_revision": package.analysis_revision,
            **view,
        }
        # The stored bytes' encoder: exact for an ID beyond 64 bits in a location key.
        sys.stdout.write(canonical_bytes(document).decode() + "\n")
        return ExitCode.OK
    print(f"package {package.package_id}: revision {package.analysis_revision}")
    for line in leads_lines(view):
        print(line)
    return ExitCode.OK


__all__ = ["leads_lines", "leads_view", "run_leads"]
