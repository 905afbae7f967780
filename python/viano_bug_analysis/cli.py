"""`vba`: the command line face of VianoBugAnalysis.

    vba query PACKAGE REQUEST.json [--pretty]   answer one investigation batch
    vba schema request|result                   print a bundled JSON Schema
    vba case create SPEC.json OUT_DIR           build a case package from a spec
    vba case build SPEC.json PACKAGE [--project-config C]
                                                build or extend a case revision, enriched
    vba research --config C --query Q.json      answer one live project query
    vba investigate PACKAGE --config C          run the hypothesis loop with an LLM
    vba status PACKAGE                          phase, blocked reason, budget, evidence
    vba resume PACKAGE --operator NAME          operator resume of a blocked case

Exit codes: 0 success, 2 rejected input (the error code and message go to
stderr as one JSON line), 1 unexpected failure; `research` adds 3 for
research unavailable (docs/project-research-v1.md). Nothing printed on
stderr contains source text, rows or request values.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from viano_bug_analysis.errors import VbaError

EXIT_REJECTED = 2


def _read_json_strict(path: Path) -> Any:
    """JSON from a file; duplicate keys are an error, not a silent overwrite."""

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        if len(keys) != len(set(keys)):
            raise VbaError("request_invalid", "duplicate key in a JSON object", {"path": str(path)})
        return dict(pairs)

    try:
        return json.loads(path.read_bytes(), object_pairs_hook=no_duplicates)
    except OSError as err:
        raise VbaError(
            "input_unreadable", "cannot read the input file", {"path": str(path)}
        ) from err
    except (ValueError, RecursionError) as err:
        raise VbaError(
            "request_invalid", "input file is not valid JSON", {"path": str(path)}
        ) from err


def _cmd_query(args: argparse.Namespace) -> int:
    from viano_bug_analysis.tools.router import InvestigationToolRouter

    request = _read_json_strict(args.request)
    result = InvestigationToolRouter().query(args.package, request)
    option = orjson.OPT_INDENT_2 if args.pretty else 0
    sys.stdout.buffer.write(orjson.dumps(result, option=option) + b"\n")
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from viano_bug_analysis.schemas import load_schema

    name = {"request": "investigation-request-v1", "result": "investigation-result-v1"}[args.which]
    sys.stdout.write(json.dumps(load_schema(name), indent=2) + "\n")
    return 0


def _cmd_case_create(args: argparse.Namespace) -> int:
    from viano_bug_analysis.case.create import create_package

    package = create_package(args.spec, args.out_dir)
    print(f"created package {package.manifest['package_id']} at {package.path}")
    return 0


def _cmd_case_build(args: argparse.Namespace) -> int:
    from viano_bug_analysis.case.build_command import run_build

    return run_build(args)


def _cmd_investigate(args: argparse.Namespace) -> int:
    from viano_bug_analysis.investigation.commands import run_investigate

    return run_investigate(args)


def _cmd_status(args: argparse.Namespace) -> int:
    from viano_bug_analysis.investigation.commands import run_status

    return run_status(args)


def _cmd_resume(args: argparse.Namespace) -> int:
    from viano_bug_analysis.investigation.commands import run_resume

    return run_resume(args)


def _cmd_research(args: argparse.Namespace) -> int:
    from viano_bug_analysis.project_research.__main__ import run

    return run(args.config, args.query, pretty=args.pretty)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vba", description="VianoBugAnalysis read-only tools")
    commands = parser.add_subparsers(dest="command", required=True)

    query = commands.add_parser("query", help="answer one investigation-request-v1 batch")
    query.add_argument("package", type=Path, help="case package directory")
    query.add_argument("request", type=Path, help="request JSON file")
    query.add_argument("--pretty", action="store_true", help="indent the result JSON")
    query.set_defaults(run=_cmd_query)

    schema = commands.add_parser("schema", help="print a bundled JSON Schema")
    schema.add_argument("which", choices=["request", "result"])
    schema.set_defaults(run=_cmd_schema)

    case = commands.add_parser("case", help="case package commands")
    case_commands = case.add_subparsers(dest="case_command", required=True)
    create = case_commands.add_parser("create", help="build a case package from a spec file")
    create.add_argument("spec", type=Path, help="case-spec-v1 JSON file")
    create.add_argument("out_dir", type=Path, help="new package directory (must not exist)")
    create.set_defaults(run=_cmd_case_create)
    build = case_commands.add_parser(
        "build", help="build a case revision, enriched through ProjectResearch (resumable)"
    )
    build.add_argument("spec", type=Path, help="case-spec-v1 JSON file")
    build.add_argument("package", type=Path, help="package directory (created or extended)")
    build.add_argument("--project-config", help="ProjectResearch TOML; without it: no enrichment")
    build.add_argument(
        "--profile", default="vcore", help="enrichment profile: 'vcore' or a TOML file"
    )
    build.add_argument("--json", action="store_true", help="print the facts as JSON")
    build.set_defaults(run=_cmd_case_build)

    research = commands.add_parser(
        "research", help="answer one project-query-v1 query (live git / database, read-only)"
    )
    research.add_argument("--config", required=True, help="ProjectResearch TOML configuration")
    research.add_argument("--query", required=True, help="project-query-v1 JSON file, - for stdin")
    research.add_argument("--pretty", action="store_true", help="indent the result JSON")
    research.set_defaults(run=_cmd_research)

    investigate = commands.add_parser("investigate", help="investigate a case package with an LLM")
    investigate.add_argument("package", help="case package directory")
    investigate.add_argument("--config", required=True, help="investigation TOML configuration")
    investigate.set_defaults(run=_cmd_investigate)
    status = commands.add_parser("status", help="show the investigation state of a package")
    status.add_argument("package", help="case package directory")
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(run=_cmd_status)
    resume = commands.add_parser("resume", help="operator resume of a blocked investigation")
    resume.add_argument("package", help="case package directory")
    resume.add_argument("--operator", required=True, help="who resumes (recorded)")
    resume.set_defaults(run=_cmd_resume)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except VbaError as err:
        line = {"error": err.code, "message": err.message, "details": err.details}
        sys.stderr.write(json.dumps(line, default=str) + "\n")
        return EXIT_REJECTED
    return code


if __name__ == "__main__":
    raise SystemExit(main())
