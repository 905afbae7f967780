"""``vba references --project-config C --type T --id N [--package P] [--json]``.

Every place the live project (and, with ``--package``, the case's own
snapshots) uses the ID as that type: the map's database rows, whole-word
literal lines and named constants (``enrichment.reference_search``). Human
output is grouped, counts first; ``--json`` prints one ``references-v2``
document. Exit codes are the table of every command: 2 for a rejected input
(an unknown type names the profile's types), 3 when research is unavailable.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from viano_bug_analysis.enrichment.profile import EnrichmentProfile
from viano_bug_analysis.errors import EnrichmentError
from viano_bug_analysis.exit_codes import ExitCode
from viano_bug_analysis.jsonio import canonical_bytes


def run_references(args: argparse.Namespace) -> int:
    from viano_bug_analysis.enrichment.reference_search import (
        Bounds,
        check_request,
        find_references,
        live_profile,
    )
    from viano_bug_analysis.profiles import profile_from_args
    from viano_bug_analysis.project_research import ProjectResearch, load_config
    from viano_bug_analysis.project_research.preflight import preflight

    loaded = profile_from_args(args)
    profile = _enrichment(loaded.enrichment)
    entity_type = check_request(profile, args.type, args.id)  # before any connection
    config = load_config(args.project_config)
    with ProjectResearch(config) as research:
        preflight(research)
        live = live_profile(profile, config, research.query)
        bounds = Bounds.for_research(config.limits, shown=args.limit)
        document = find_references(live, research, entity_type, args.id, bounds)
    if args.package is not None:
        from viano_bug_analysis.tools.reference_snapshots import snapshot_references

        document["snapshots"] = snapshot_references(
            loaded.router(), args.package, profile, entity_type, args.id, shown=args.limit
        )
    if args.json:
        sys.stdout.buffer.write(canonical_bytes(document) + b"\n")
    else:
        sys.stdout.write("".join(line + "\n" for line in text_lines(document)))
    return ExitCode.OK


def _enrichment(profile: EnrichmentProfile | None) -> EnrichmentProfile:
    if profile is None:
        raise EnrichmentError(
            "profile_missing",
            "the profile has no enrichment rules, so no reference map to follow",
            {"key": "enrichment"},
        )
    return profile


def text_lines(document: Mapping[str, Any]) -> list[str]:
    """The human form: one heading line of counts per group, then its rows and lines."""
    what = f"{document['entity_type']} {document['id']}"
    lines = [f"references to {what} (profile {document['profile']})"]
    lines += _database_lines(document["database"])
    lines += _source_lines(document["source"])
    if document.get("snapshots") is not None:
        lines += _snapshot_lines(document["snapshots"])
    return lines


def _count(n: int, exact: bool) -> str:
    return str(n) if exact else f"at least {n}" if n else "unknown"


def _database_lines(part: Mapping[str, Any]) -> list[str]:
    if not part["available"]:
        return ["database: not configured ([database] in the project config)"]
    entries = part["entries"]
    used = [e for e in entries if e["count"]]
    refused = [e for e in entries if "refused" in e]
    total = part["total"] if part["total_exact"] else f"{part['total']} (see below)"
    head = f"database: {total} row(s) in {len(used)} of {len(entries)} map entries"
    if refused:
        head += f"; {len(refused)} entries refused (vba profile check)"
    lines = [head]
    for entry in entries:
        if "refused" in entry:
            lines.append(f"  {entry['reference']}: refused ({entry['refused']})")
            continue
        if not entry["count"]:
            continue
        count = entry["count"] if entry["count_exact"] else f"at most {entry['count']}"
        where = f"{entry['table']}.{entry['column']}"
        if entry["when"]:
            where += " where " + ", ".join(
                f"{w['column']} {w['operator']} {w['value']}" for w in entry["when"]
            )
        lines.append(f"  {count} {entry['reference']}: {where}")
        if entry["negative_means"]:
            lines.append(f"    (a negative value means: {entry['negative_means']})")
        for row in entry["rows"]:
            key = ", ".join(f"{k}={v}" for k, v in row["key"].items())
            lines.append(f"    {key}  [{row['capture_sha256'][:12]}{row['pointer']}]")
        if len(entry["rows"]) < entry["count"]:
            lines.append(f"    … {entry['count'] - len(entry['rows'])} more (--limit, --json)")
    return lines


def _source_lines(part: Mapping[str, Any]) -> list[str]:
    if not part["available"]:
        return ["source: not configured ([source] in the project config)"]
    literal = part["literal"]
    commit = part["origin"]["commit"][:12]
    lines = [f"source at {commit}: " + _literal_head(literal)]
    lines += _literal_gap(literal)
    # references-v2 counts them; a references-v1 document (a stored version 1
    # capture) only said whether there were any.
    unsearched = literal.get("files_unsearched", 0 if literal.get("complete", True) else None)
    if unsearched != 0:
        many = "some" if unsearched is None else str(unsearched)
        lines.append(
            f"  ({many} file(s) could not be searched: too large, not UTF-8 or not in this clone)"
        )
    lines += [_hit(hit) for hit in literal["lines"]]
    if len(literal["lines"]) < literal["count"]:
        lines.append(f"  … {literal['count'] - len(literal['lines'])} more (--limit, --json)")
    constants = part["constants"]
    if not part["constant_prefixes"]:
        return lines
    prefixes = ", ".join(part["constant_prefixes"])
    lines.append(f"constants ({prefixes}): {len(constants)} assigned this ID")
    for constant in constants:
        count = _count(constant["count"], constant["count_exact"])
        lines.append(f"  {constant['name']}: {count} line(s) name it")
        lines += ["  " + _hit(hit) for hit in constant["lines"]]
    return lines


def _literal_head(literal: Mapping[str, Any]) -> str:
    n, digits = literal["count"], literal["text"]
    if literal["count_exact"]:
        return f"{n} line(s) name {digits} as a whole word"
    if n:
        return f"at least {n} line(s) name {digits} as a whole word"
    return f"no line read names {digits} as a whole word"


def _literal_gap(literal: Mapping[str, Any]) -> list[str]:
    """What was read and what was not, when the count is a lower bound: lines not
    read (the page limit), or lines read but cut before a whole word could be told."""
    if literal["count_exact"]:
        return []
    read, total = literal["lines_read"], literal["literal_lines"]
    if read < total:
        return [
            f"  (read {read} of the {total} lines holding the digits; the other {total - read} "
            "were not read: the search stops after its page limit)"
        ]
    return [
        f"  (read all {total} lines holding the digits; some are longer than "
        "limits.line_chars and were cut, so whether the digits stand there as a whole "
        "word beyond the cut is not known)"
    ]


def _hit(hit: Mapping[str, Any]) -> str:
    return f"  {hit['path']}:{hit['line']}: {hit['text'].strip()}"


def _snapshot_lines(part: Mapping[str, Any]) -> list[str]:
    lines_total = sum(s["count"] for s in part["sources"])
    rows_total = sum(t["count"] for t in part["tables"])
    lines = [
        f"case snapshots of {part['package_id']} (revision {part['analysis_revision']}): "
        f"{lines_total} line(s) in {part['sources_searched']} source(s), "
        f"{rows_total} row(s) in {part['tables_searched']} table snapshot(s)"
    ]
    for source in part["sources"]:
        lines.append(f"  {source['source_ref']} {source['member']}: {source['count']}")
        lines += [f"    L{hit['line']}: {hit['text'].strip()}" for hit in source["lines"]]
    for table in part["tables"]:
        lines.append(
            f"  {table['source_ref']} {table['table']}.{table['column']} "
            f"({table['reference']}, coverage {table['coverage']}): {table['count']}"
        )
        lines += [f"    {row['pointer']}" for row in table["rows"]]
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project-config", required=True, help="ProjectResearch TOML")
    parser.add_argument("--type", required=True, help="entity type of the profile (quest, ...)")
    parser.add_argument("--id", required=True, type=int, help="the ID (a whole number)")
    parser.add_argument(
        "--package", type=Path, help="also search this case package's own snapshots (read-only)"
    )
    parser.add_argument(
        "--limit", type=_shown, default=20, help="rows or lines listed per group (default 20)"
    )
    parser.add_argument("--json", action="store_true", help="print one references-v2 document")


def _shown(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError("must be from 1 to 1000")
    return value


__all__ = ["add_arguments", "run_references", "text_lines"]
