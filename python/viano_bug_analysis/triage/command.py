"""``vba triage ISSUES --project-config C [--config I] --out DIR [--jobs N] ...``.

Progress goes to stderr: one updating bar on a terminal, else one JSON line
per report (``{"event": "report", "case", "status", "done", "total"}``). The
summary goes to stdout. Exit 0 when every report went through; otherwise
the exit code of the first failed report's error (3 for an unavailable
service: run again to resume), with each failure in the index. A second run
on the same DIR while one runs: exit 7 at once.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from viano_bug_analysis.errors import VbaError
from viano_bug_analysis.exit_codes import ExitCode, report
from viano_bug_analysis.jsonio import canonical_bytes


def run_triage(args: argparse.Namespace) -> int:
    from viano_bug_analysis.profiles import profile_from_args
    from viano_bug_analysis.triage.reports import Selection, read_reports
    from viano_bug_analysis.triage.run import Triage, TriageSetup

    try:
        selection = Selection.parse(args.only, args.since, args.label)
        profile = profile_from_args(args)
        research = None
        if args.project_config is not None:
            from viano_bug_analysis.project_research import load_config

            research = load_config(args.project_config)
            from viano_bug_analysis.project_research import ProjectResearch
            from viano_bug_analysis.project_research.preflight import preflight

            with ProjectResearch(research) as service:
                preflight(service)  # once, before any report is built against it
        investigation = None
        if args.config is not None:
            from viano_bug_analysis.investigation.config import load_investigation_config

            investigation = load_investigation_config(args.config)
        reports = [r for r in read_reports(args.issues) if selection.keeps(r)]
        setup = TriageSetup(
            profile=profile,
            research_config=research,
            investigation=investigation,
            jobs=args.jobs,
            reinvestigate=args.reinvestigate,
        )
        progress = _Progress(sys.stderr)
        records = Triage(args.out, setup, on_event=progress).run(reports)
        progress.done()
    except VbaError as err:
        return report(err)
    failed = [r for r in records if r["status"] == "failed"]
    by_status: dict[str, int] = {}
    for record in records:
        by_status[record["status"]] = by_status.get(record["status"], 0) + 1
    counts = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()))
    print(f"triage of {len(records)} report(s): {counts or 'none selected'}")
    print(f"index: {Path(args.out) / 'index.html'}")
    for record in failed:
        error = record["error"]
        reason = (error.get("details") or {}).get("reason")
        why = f" ({reason})" if isinstance(reason, str) else ""
        print(f"  failed {record['case']}: {error['stage']}: {error['code']}{why}")
    return int(failed[0]["error"]["exit_code"]) if failed else ExitCode.OK


class _Progress:
    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._tty = bool(getattr(stream, "isatty", lambda: False)())

    def __call__(self, event: Mapping[str, Any]) -> None:
        if not self._tty:
            self._stream.write(canonical_bytes(dict(event)).decode() + "\n")
        else:
            total = max(int(event["total"]), 1)
            width = 24
            filled = width * int(event["done"]) // total
            bar = "#" * filled + "." * (width - filled)
            line = (
                f"triage [{bar}] {event['done']}/{event['total']} {event['case']} {event['status']}"
            )
            self._stream.write("\r\x1b[K" + line[:100])
        self._stream.flush()

    def done(self) -> None:
        if self._tty:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "issues",
        help="an issue list (gh issue list --state all --limit 1000 --json number,title,body,"
        "url,state,labels,author,createdAt,updatedAt), one issue, or a folder of issue files",
    )
    parser.add_argument("--project-config", help="ProjectResearch TOML (enrichment and leads)")
    parser.add_argument(
        "--config",
        help="investigation TOML with [llm]: interpret and investigate each report (the "
        "project file is --project-config)",
    )
    parser.add_argument("--out", required=True, type=Path, help="the triage folder")
    parser.add_argument(
        "--jobs", type=_jobs, default=os.cpu_count() or 1, help="reports at once (default: cores)"
    )
    parser.add_argument("--only", help="issue numbers or case IDs, comma-separated")
    parser.add_argument("--since", help="reports updated (else created) on or after this date")
    parser.add_argument(
        "--label", action="append", help="reports with this label (repeat for any of several)"
    )
    parser.add_argument(
        "--reinvestigate",
        action="store_true",
        help="investigate again a report changed since its verdict",
    )


def _jobs(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError("must be from 1 to 64")
    return value


__all__ = ["add_arguments", "run_triage"]
