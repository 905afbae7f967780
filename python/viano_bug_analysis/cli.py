"""`vba`: the command line face of VianoBugAnalysis.

    vba --version                               the installed package version
    vba query PACKAGE REQUEST.json [--pretty] [--profile P] [--limits FILE]
                                                answer one investigation batch
    vba schema [NAME]                           list the bundled JSON Schemas / print one
    vba case import REPORT (-o SPEC.json | --out-dir DIR) [--with-comments]
                    [--include-pull-requests] [--force] [--json]
                                                a tracker issue (JSON or Markdown) as a case spec
    vba case create SPEC.json OUT_DIR [--json]  build a case package from a spec
    vba case build SPEC.json PACKAGE [--project-config C [--at-report-revision] | --no-research]
                   [--profile P]                build or extend a case revision, enriched
    vba case verify PACKAGE [--json]            check a package's hashes (read-only)
    vba case leads PACKAGE [--json]             where to look first: the ranked leads (read-only)
    vba research --project-config C --query Q.json
                                                answer one live project query
    vba references --project-config C --type T --id N [--package P] [--profile P] [--json]
                                                every use of an ID as a type (rows, lines)
    vba interpret PACKAGE --config C [--reinterpret] [--profile P]
                                                propose hypotheses for the report with an LLM
                                                (--reinterpret: again for an edited report)
    vba investigate PACKAGE --config C [--reinvestigate] [--profile P]
                                                run the hypothesis loop with an LLM
                                                (interprets first when there are none;
                                                --reinvestigate: an edited report anew)
    vba triage ISSUES --out DIR [--project-config C] [--config I] [--jobs N] [--only LIST]
               [--since DATE] [--label L] [--reinvestigate] [--profile P]
                                                many reports at once: a package each, one index
    vba llm check --config C [--json]           reach every configured LLM endpoint: models,
                                                formats honoured, latency, usage fields
    vba status PACKAGE [--config C]             phase, blocked reason, budget, evidence,
                                                tokens per step and hypothesis (cost with C)
    vba resume PACKAGE --operator NAME          operator resume of a blocked case
    vba report PACKAGE [--format html|md|json] [-o FILE] [--config C]
                                                the case report (read-only)
    vba mcp --package PACKAGE [--project-config C] [--profile P] [--limits FILE]
                                                serve the read-only tools over MCP (stdio)
    vba mcp --package PACKAGE --verify          check the package's MCP call records

Every command ends with a code from ``viano_bug_analysis.exit_codes`` (the
table is printed by ``--help``); a typed error goes to stderr as one JSON
line ``{error, message, details}``. Nothing printed on stderr contains
source text, rows or request values. ``--profile`` (default ``vcore``)
selects the project profile: enrichment rules and schema adapter
(``viano_bug_analysis.profiles``). The commands that answer snapshot queries
(query, interpret, investigate, triage, references, mcp) also take
``--no-digest-cache``: hash every selected attachment and verify every used
member on every batch, and neither read nor write the router's digest cache
(docs/case-package-v1.md, "The digest cache").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from viano_bug_analysis.errors import VbaError
from viano_bug_analysis.exit_codes import (
    INTERRUPTED,
    ExitCode,
    command_epilog,
    help_epilog,
    report,
)

MAX_REQUEST_FILE_BYTES = 32 * 1024 * 1024
# Short names kept from the first release; every bundled name works too.
SCHEMA_ALIASES = {"request": "investigation-request-v1", "result": "investigation-result-v1"}
FIRST_SCHEMA = "case-spec-v1"


def version() -> str:
    """The package version (read from the distribution's metadata, the one source)."""
    from viano_bug_analysis import __version__

    return __version__


def read_json_input(
    source: str | Path,
    *,
    kind: str,
    max_bytes: int,
    error: type[VbaError] = VbaError,
) -> Any:
    """The one way the command line reads a JSON input file (``-`` is stdin).

    Parsed by ``jsonio.strict_loads``: a duplicate key, NaN/Infinity, a
    non-ASCII digit, a lone surrogate or too deep nesting is refused at parse
    time, before anything runs, as ``{kind}_invalid`` with ``details`` naming
    the ``reason`` (the jsonio failure code) and where it is: ``offset``,
    ``line`` and ``column`` (1-based; characters, or bytes for ``not_utf8``).
    Never any part of the text, nor the file's path.
    """
    from viano_bug_analysis import jsonio
    from viano_bug_analysis.files import TOO_LARGE, read_regular_file

    def refused(reason: str, _message: str, details: dict[str, Any]) -> VbaError:
        if reason == TOO_LARGE:
            return error(f"{kind}_too_large", f"the {kind} file is too large", {"limit": max_bytes})
        # The OS error class, or not_a_regular_file (a FIFO is refused, not waited on).
        why = details.get("kind", reason)
        return error("input_unreadable", f"cannot read the {kind} file", {"reason": why})

    if str(source) == "-":
        try:
            data = sys.stdin.buffer.read(max_bytes + 1)
        except OSError as err:
            raise refused("unreadable", "", {"kind": type(err).__name__}) from None
        if len(data) > max_bytes:
            raise refused(TOO_LARGE, "", {})
    else:
        what = f"the {kind} file"
        data = read_regular_file(source, max_bytes=max_bytes, what=what, refuse=refused)
    parsed = jsonio.strict_parse(data, max_bytes=max_bytes)
    if isinstance(parsed, jsonio.Parsed):
        return parsed.value
    details: dict[str, Any] = {"reason": parsed.code, "offset": parsed.offset}
    if parsed.code == jsonio.NOT_UTF8:
        details.update(jsonio.line_column(data, parsed.offset, b"\n"))
    elif parsed.code != jsonio.TOO_LARGE:
        # Every other failure is found after the bytes decoded: the offset counts characters.
        details.update(jsonio.line_column(data.decode("utf-8"), parsed.offset))
    where = f" at line {details['line']}, column {details['column']}" if "line" in details else ""
    phrase = parsed.code.replace("_", " ")
    raise error(f"{kind}_invalid", f"the {kind} file is not strict JSON: {phrase}{where}", details)


def _cmd_query(args: argparse.Namespace) -> int:
    from viano_bug_analysis.profiles import profile_from_args
    from viano_bug_analysis.tools.limits import load_limits

    limits = load_limits(args.limits) if args.limits is not None else None
    router = profile_from_args(args).router(limits=limits)
    request = read_json_input(args.request, kind="request", max_bytes=MAX_REQUEST_FILE_BYTES)
    result = router.query(args.package, request)
    sys.stdout.buffer.write(_result_bytes(result, pretty=args.pretty) + b"\n")
    return ExitCode.OK


def _result_bytes(result: Any, *, pretty: bool) -> bytes:
    # The encoder that measured and hashed the result, so integers beyond
    # 64 bits print exactly; --pretty only adds indentation (stdlib, also exact).
    from viano_bug_analysis.jsonio import canonical_bytes

    data = canonical_bytes(result)
    if not pretty:
        return data
    return json.dumps(json.loads(data), indent=2, ensure_ascii=False).encode()


def schema_names() -> list[str]:
    """Every bundled schema, the case spec (where a user starts) first."""
    from viano_bug_analysis.schemas import available_schemas

    names = available_schemas()
    return [FIRST_SCHEMA] + [name for name in names if name != FIRST_SCHEMA]


def _cmd_schema(args: argparse.Namespace) -> int:
    from viano_bug_analysis.schemas import load_schema

    names = schema_names()
    if args.name is None:
        sys.stdout.write("".join(name + "\n" for name in names))
        return ExitCode.OK
    name = SCHEMA_ALIASES.get(args.name, args.name)
    if name not in names:
        allowed = ", ".join(names + sorted(SCHEMA_ALIASES))
        raise VbaError(
            "schema_unknown",
            f"no bundled schema has this name; allowed: {allowed}",
            {"allowed": allowed},
        )
    sys.stdout.write(json.dumps(load_schema(name), indent=2) + "\n")
    return ExitCode.OK


def _package_summary(package: Any) -> dict[str, Any]:
    return {
        "package_id": package.package_id,
        "case_id": package.case_id,
        "path": str(package.path),
        "case_sha256": package.case_sha256,
    }


def _cmd_case_create(args: argparse.Namespace) -> int:
    from viano_bug_analysis.case.create import create_package

    package = create_package(args.spec, args.out_dir)
    if args.json:
        sys.stdout.write(orjson.dumps(_package_summary(package)).decode() + "\n")
    else:
        print(f"created package {package.manifest['package_id']} at {package.path}")
    return ExitCode.OK


def _cmd_case_import(args: argparse.Namespace) -> int:
    from viano_bug_analysis.case.intake import import_report

    def written(imported: Any, path: Path, outcome: str) -> None:
        # As each file is done: a later item's refusal still shows what was written.
        if not args.json:
            print(f"{outcome} case spec {imported.case_id} at {path}", flush=True)

    summary = import_report(
        args.report,
        output=args.output,
        out_dir=args.out_dir,
        with_comments=args.with_comments,
        include_pull_requests=args.include_pull_requests,
        force=args.force,
        on_spec=written,
    )
    if args.json:
        sys.stdout.write(orjson.dumps(summary.as_json()).decode() + "\n")
        return ExitCode.OK
    for skipped in summary.skipped:
        print(f"skipped item {skipped.index}: a pull request (--include-pull-requests takes it)")
    return ExitCode.OK


def _cmd_case_verify(args: argparse.Namespace) -> int:
    from viano_bug_analysis.case.package import load_package, verify_package

    # load_package checks the manifest, case.json (hash, canonical bytes,
    # schema, references) and every attachment's size; verify_package then
    # hashes every attachment and every declared member. Both only read.
    package = load_package(args.package)
    verify_package(package)
    if args.json:
        sys.stdout.write(orjson.dumps(_package_summary(package)).decode() + "\n")
    else:
        print(f"verified package {package.package_id}")
        print(f"path: {package.path}")
    return ExitCode.OK


def _cmd_case_build(args: argparse.Namespace) -> int:
    from viano_bug_analysis.case.build_command import run_build

    return run_build(args)


def _cmd_case_leads(args: argparse.Namespace) -> int:
    from viano_bug_analysis.case.leads_command import run_leads

    return run_leads(args)


def _cmd_profile_check(args: argparse.Namespace) -> int:
    from viano_bug_analysis.case.build_command import run_profile_check

    return run_profile_check(args)


def _cmd_interpret(args: argparse.Namespace) -> int:
    from viano_bug_analysis.investigation.commands import run_interpret

    return run_interpret(args)


def _cmd_investigate(args: argparse.Namespace) -> int:
    from viano_bug_analysis.investigation.commands import run_investigate

    return run_investigate(args)


def _cmd_llm_check(args: argparse.Namespace) -> int:
    from viano_bug_analysis.investigation.check_command import run_llm_check

    return run_llm_check(args)


def _cmd_status(args: argparse.Namespace) -> int:
    from viano_bug_analysis.investigation.commands import run_status

    return run_status(args)


def _cmd_report(args: argparse.Namespace) -> int:
    from viano_bug_analysis.report.output import report_bytes, write_report

    prices = None
    if args.config is not None:
        from viano_bug_analysis.investigation.config import load_investigation_config

        prices = load_investigation_config(args.config).prices
    data = report_bytes(args.package, args.format, prices, written_to=args.output)
    if args.output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        write_report(data, args.output, args.package)
    return 0


def _cmd_resume(args: argparse.Namespace) -> int:
    from viano_bug_analysis.investigation.commands import run_resume

    return run_resume(args)


def _cmd_research(args: argparse.Namespace) -> int:
    from viano_bug_analysis.project_research.__main__ import project_config_of, run

    return run(
        project_config_of(args),
        args.query,
        pretty=args.pretty,
        no_cache=args.no_cache,
        profile=args.profile,
    )


def _cmd_triage(args: argparse.Namespace) -> int:
    from viano_bug_analysis.triage.command import run_triage

    return run_triage(args)


def _cmd_references(args: argparse.Namespace) -> int:
    from viano_bug_analysis.tools.references_command import run_references

    return run_references(args)


def _cmd_mcp(args: argparse.Namespace) -> int:
    from viano_bug_analysis.mcp_server.command import run_mcp

    return run_mcp(args)


def _add_profile(parser: argparse.ArgumentParser, *, router: bool = False) -> None:
    """``--profile``; for a command that answers snapshot queries (``router``) also
    ``--no-digest-cache`` (read with ``profiles.profile_from_args``)."""
    from viano_bug_analysis.profiles import DEFAULT_PROFILE

    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help=f"project profile: a bundled name or a profile file (default {DEFAULT_PROFILE})",
    )
    if router:
        parser.add_argument(
            "--no-digest-cache",
            action="store_true",
            help="hash every selected attachment and verify every member on every batch; "
            "neither read nor write the digest cache (docs/case-package-v1.md)",
        )


LOCAL = "config/project.local.toml"
INVESTIGATE = "config/investigate.local.toml"
# One or two real invocations per command, shown at the end of its --help.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "query": ("vba query cases/vcore-1234 request.json --pretty",),
    "schema": ("vba schema", "vba schema case-spec-v1 > case-spec.schema.json"),
    "case import": (
        "gh issue view 1234 --json number,title,body,url,author,labels,createdAt > issue.json",
        "vba case import issue.json -o specs/vcore-1234.json",
    ),
    "case create": ("vba case create specs/vcore-1234.json cases/vcore-1234",),
    "case build": (
        f"vba case build specs/vcore-1234.json cases/vcore-1234 --project-config {LOCAL}",
        "vba case build specs/vcore-1234.json cases/vcore-1234 --project-config "
        f"{LOCAL} --at-report-revision",
    ),
    "case verify": ("vba case verify cases/vcore-1234",),
    "case leads": ("vba case leads cases/vcore-1234",),
    "profile check": (f"vba profile check --project-config {LOCAL}",),
    "research": (f"vba research --project-config {LOCAL} --query query.json --pretty",),
    "references": (
        f"vba references --project-config {LOCAL} --type npc --id 36440",
        f"vba references --project-config {LOCAL} --type quest --id 25134 --package "
        "cases/vcore-1234",
    ),
    "triage": (
        "gh issue list --state all --limit 1000 --json number,title,body,url,state,labels,"
        "author,createdAt,updatedAt > issues.json",
        f"vba triage issues.json --out triage/ --project-config {LOCAL}",
    ),
    "interpret": (f"vba interpret cases/vcore-1234 --config {INVESTIGATE}",),
    "investigate": (f"vba investigate cases/vcore-1234 --config {INVESTIGATE}",),
    "llm check": (f"vba llm check --config {INVESTIGATE}",),
    "status": (
        "vba status cases/vcore-1234",
        f"vba status cases/vcore-1234 --config {INVESTIGATE}",
    ),
    "report": ("vba report cases/vcore-1234 -o vcore-1234.html",),
    "resume": ("vba resume cases/vcore-1234 --operator alice",),
    "mcp": (f"vba mcp --package cases/vcore-1234 --project-config {LOCAL}",),
}


def _help(command: str | None = None) -> dict[str, Any]:
    """The --help settings of a (sub)command: its examples and exit codes; none for a
    group of subcommands (``vba case``), whose own subcommands show theirs."""
    shown: dict[str, Any] = {"formatter_class": argparse.RawDescriptionHelpFormatter}
    if command is not None:
        shown["epilog"] = command_epilog(command, EXAMPLES[command])
    return shown


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vba",
        description="VianoBugAnalysis read-only tools",
        epilog=help_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"vba {version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    query = commands.add_parser(
        "query", help="answer one investigation-request-v1 batch", **_help("query")
    )
    query.add_argument("package", type=Path, help="case package directory")
    query.add_argument("request", type=Path, help="request JSON file")
    query.add_argument("--pretty", action="store_true", help="indent the result JSON")
    query.add_argument(
        "--limits",
        type=Path,
        metavar="FILE",
        help="JSON or TOML file of ToolLimits to raise or lower (schema tool-limits-v1)",
    )
    _add_profile(query, router=True)
    query.set_defaults(run=_cmd_query)

    schema = commands.add_parser(
        "schema", help="list the bundled JSON Schemas, or print one", **_help("schema")
    )
    schema.add_argument(
        "name",
        nargs="?",
        help="schema name (see the list without NAME); 'request' and 'result' are short names",
    )
    schema.set_defaults(run=_cmd_schema)

    case = commands.add_parser("case", help="case package commands", **_help())
    case_commands = case.add_subparsers(dest="case_command", required=True)
    intake = case_commands.add_parser(
        "import",
        help="turn a tracker issue (GitHub/GitLab JSON, Markdown) into a case spec",
        **_help("case import"),
    )
    intake.add_argument("report", help="issue JSON (gh, GitHub REST, GitLab), Markdown or text; -")
    intake_target = intake.add_mutually_exclusive_group(required=True)
    intake_target.add_argument(
        "-o", "--output", type=Path, metavar="SPEC.json", help="the case spec file to write"
    )
    intake_target.add_argument(
        "--out-dir", type=Path, metavar="DIR", help="one <case_id>.json per issue (lists)"
    )
    intake.add_argument(
        "--with-comments", action="store_true", help="append the comments to the report text"
    )
    intake.add_argument(
        "--include-pull-requests", action="store_true", help="import pull requests too"
    )
    intake.add_argument(
        "--force", action="store_true", help="replace a spec file that holds other content"
    )
    intake.add_argument("--json", action="store_true", help="print the result as JSON")
    intake.set_defaults(run=_cmd_case_import)
    create = case_commands.add_parser(
        "create", help="build a case package from a spec file", **_help("case create")
    )
    create.add_argument("spec", type=Path, help="case-spec-v1 JSON file")
    create.add_argument("out_dir", type=Path, help="new package directory (must not exist)")
    create.add_argument("--json", action="store_true", help="print the result as JSON")
    create.set_defaults(run=_cmd_case_create)
    build = case_commands.add_parser(
        "build",
        help="build a case revision, enriched through ProjectResearch (resumable)",
        **_help("case build"),
    )
    build.add_argument("spec", type=Path, help="case-spec-v1 JSON file")
    build.add_argument("package", type=Path, help="package directory (created or extended)")
    build_research = build.add_mutually_exclusive_group()
    build_research.add_argument(
        "--project-config", help="ProjectResearch TOML; without it: no enrichment"
    )
    build_research.add_argument(
        "--no-research",
        action="store_true",
        help="build without enrichment even though the last revision was enriched",
    )
    build.add_argument(
        "--at-report-revision",
        action="store_true",
        help="read the source at the commit the report names (report.metadata.revision) "
        "instead of the configured one; the database stays as configured",
    )
    _add_profile(build)
    build.add_argument("--json", action="store_true", help="print the facts as JSON")
    build.add_argument(
        "--verbose",
        "--all-facts",
        dest="verbose",
        action="store_true",
        help="summary: every fact on its own line, not grouped (--all-facts: the older name)",
    )
    build.set_defaults(run=_cmd_case_build)
    verify = case_commands.add_parser(
        "verify",
        help="check a package's manifest, case and hashes (read-only)",
        **_help("case verify"),
    )
    verify.add_argument("package", type=Path, help="package directory")
    verify.add_argument("--json", action="store_true", help="print the result as JSON")
    verify.set_defaults(run=_cmd_case_verify)
    leads = case_commands.add_parser(
        "leads",
        help="the ranked leads of a package's current revision: where to look first (read-only)",
        **_help("case leads"),
    )
    leads.add_argument("package", type=Path, help="package directory")
    leads.add_argument("--json", action="store_true", help="print the leads as JSON")
    leads.set_defaults(run=_cmd_case_leads)

    profile = commands.add_parser("profile", help="enrichment profile commands", **_help())
    profile_commands = profile.add_subparsers(dest="profile_command", required=True)
    profile_check = profile_commands.add_parser(
        "check",
        help="how the profile's tables and columns fit the live database (read-only)",
        **_help("profile check"),
    )
    profile_check.add_argument("--project-config", required=True, help="ProjectResearch TOML")
    _add_profile(profile_check)
    profile_check.add_argument("--json", action="store_true", help="print the report as JSON")
    profile_check.set_defaults(run=_cmd_profile_check)

    research = commands.add_parser(
        "research",
        help="answer one project-query-v1 query (live git / database, read-only)",
        **_help("research"),
    )
    from viano_bug_analysis.project_research.__main__ import add_arguments as add_research

    add_research(research)
    research.set_defaults(run=_cmd_research)

    from viano_bug_analysis.tools.references_command import add_arguments as add_references

    references = commands.add_parser(
        "references",
        help="every place the project uses an ID as an entity type: rows, source lines, "
        "constants (read-only)",
        **_help("references"),
    )
    add_references(references)
    _add_profile(references, router=True)
    references.set_defaults(run=_cmd_references)

    from viano_bug_analysis.triage.command import add_arguments as add_triage

    triage = commands.add_parser(
        "triage",
        help="many tracker reports at once: import, build and investigate each, one index",
        **_help("triage"),
    )
    add_triage(triage)
    _add_profile(triage, router=True)
    triage.set_defaults(run=_cmd_triage)

    interpret = commands.add_parser(
        "interpret",
        help="propose hypotheses for a case's report with an LLM (a new case revision)",
        **_help("interpret"),
    )
    interpret.add_argument("package", help="case package directory")
    interpret.add_argument("--config", required=True, help="investigation TOML configuration")
    interpret.add_argument(
        "--reinterpret",
        action="store_true",
        help="the report changed after the interpretation: propose new hypotheses for the "
        "current revision (the earlier ones, their outcomes and the verdict stay in the "
        "history); without it such a case is refused (report_changed_since_interpretation)",
    )
    _add_profile(interpret, router=True)
    interpret.set_defaults(run=_cmd_interpret)
    investigate = commands.add_parser(
        "investigate", help="investigate a case package with an LLM", **_help("investigate")
    )
    investigate.add_argument("package", help="case package directory")
    investigate.add_argument("--config", required=True, help="investigation TOML configuration")
    investigate.add_argument(
        "--reinvestigate",
        action="store_true",
        help="the report changed after the interpretation: interpret the current revision "
        "again and investigate its new hypotheses (a new verdict; the earlier one stays in "
        "the history); without it such a case is refused (report_changed_since_interpretation)",
    )
    _add_profile(investigate, router=True)
    investigate.set_defaults(run=_cmd_investigate)
    llm = commands.add_parser("llm", help="LLM endpoint commands", **_help())
    llm_commands = llm.add_subparsers(dest="llm_command", required=True)
    llm_check = llm_commands.add_parser(
        "check",
        help="check every configured LLM endpoint: reachability, models, response formats, "
        "latency, usage fields (a few dozen tokens)",
        **_help("llm check"),
    )
    llm_check.add_argument("--config", required=True, help="investigation TOML configuration")
    llm_check.add_argument("--json", action="store_true", help="print the check as JSON")
    llm_check.set_defaults(run=_cmd_llm_check)
    status = commands.add_parser(
        "status", help="show the investigation state of a package", **_help("status")
    )
    status.add_argument("package", help="case package directory")
    status.add_argument("--json", action="store_true", help="print JSON")
    status.add_argument(
        "--config",
        help="investigation TOML: its [llm] price_per_million_* give the cost of the tokens",
    )
    status.set_defaults(run=_cmd_status)
    report_cmd = commands.add_parser(
        "report",
        help="the case report as one HTML page, Markdown or JSON (read-only)",
        **_help("report"),
    )
    report_cmd.add_argument("package", help="case package directory")
    report_cmd.add_argument(
        "--format", choices=("html", "md", "json"), default="html", help="default html"
    )
    report_cmd.add_argument(
        "-o", "--output", metavar="FILE", help="write FILE (outside the package), not stdout"
    )
    report_cmd.add_argument(
        "--config",
        help="investigation TOML: its [llm] price_per_million_* give the cost of the tokens",
    )
    report_cmd.set_defaults(run=_cmd_report)
    resume = commands.add_parser(
        "resume", help="operator resume of a blocked investigation", **_help("resume")
    )
    resume.add_argument("package", help="case package directory")
    resume.add_argument("--operator", required=True, help="who resumes (recorded)")
    resume.set_defaults(run=_cmd_resume)
    from viano_bug_analysis.mcp_server.command import add_arguments as add_mcp_arguments

    mcp = commands.add_parser(
        "mcp", help="serve the read-only tools of one package over MCP (stdio)", **_help("mcp")
    )
    add_mcp_arguments(mcp)
    _add_profile(mcp, router=True)
    mcp.set_defaults(run=_cmd_mcp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    with _sigterm_exits():
        try:
            code: int = args.run(args)
            sys.stdout.flush()  # a closed pipe fails here, not in the flush at exit
        except VbaError as err:
            return int(report(err))
        except BrokenPipeError:
            if not _stdout_reader_gone():
                raise
            return _stdout_closed()
        except KeyboardInterrupt:
            return _interrupted()
    return int(code)


def _interrupted() -> int:
    """Ctrl-C: one line and 130 (128 + SIGINT), not Python's traceback.

    Every write of the package is atomic (a temporary file renamed into
    place), so what was written before the interrupt stays valid and the
    same command resumes from it; the cleanups already ran while the
    ``KeyboardInterrupt`` unwound to here.
    """
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(
            "\ninterrupted: what was written so far is kept; run the same command again to go on\n"
        )
        sys.stderr.flush()
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    if threading.current_thread() is threading.main_thread() and any(not t.daemon for t in others):
        # Worker threads (vba triage --jobs) would hold the exit until their
        # report is done, and a second Ctrl-C there prints a traceback. Their
        # writes are atomic and the package lock is the OS's, so ending now
        # leaves what a kill -9 leaves: nothing a rerun cannot take up.
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os._exit(INTERRUPTED)
    return INTERRUPTED


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe whose reading end is closed (``vba status | head``).

    A broken pipe elsewhere (a socket) is not this case and is not hidden.
    """
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _fd, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


def _stdout_closed() -> int:
    """Ends a command whose reader of stdout went away, without a traceback.

    Python prints one for the ``BrokenPipeError`` and again when it flushes
    stdout at exit; stdout is pointed at /dev/null so that flush succeeds.
    141 is 128 + SIGPIPE, what a shell reports for a writer the pipe ended.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
    return 128 + signal.SIGPIPE


@contextlib.contextmanager
def _sigterm_exits() -> Iterator[None]:
    """SIGTERM ends the command as ``SystemExit(143)``, so cleanups still run.

    Python's default for SIGTERM ends the process at once: no ``finally``,
    no ``except BaseException``, so ``vba case create`` left its
    ``.OUT.tmp-*`` directory behind. 143 is 128 + SIGTERM, the status a shell
    reports for a process ended by that signal. Only the main thread may set
    a handler; elsewhere (main() called from a thread) the default stays.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        # None: the handler was not set from Python; the default is the closest.
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


if __name__ == "__main__":
    raise SystemExit(main())
