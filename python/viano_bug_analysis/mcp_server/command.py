"""``vba mcp --package PACKAGE [--project-config C] [--profile P] [--limits FILE]``.

``vba mcp --package PACKAGE --verify`` serves nothing: it re-reads the
package's MCP call records (``audit.verify_calls``) and prints their counts
(exit 0), or the ``mcp_audit_corrupt`` error line (exit 5).

Everything a tool could otherwise choose is fixed here, before the first
message is read: the package, the profile (router and schema adapter), the
router limits and the ProjectResearch configuration (git commit, database
server, table allowlist, credentials source). The package must load and its
audit directories must take a file, or the command ends at once with the
CLI's error line and exit code instead of serving a broken session.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from viano_bug_analysis.errors import McpError
from viano_bug_analysis.exit_codes import ExitCode


def _report_builder() -> Any:
    """``report.build_report`` and ``render_markdown``, when the package has them."""
    try:
        from viano_bug_analysis.report import build_report, render_markdown
    except ImportError:
        return None

    def build(package: Path) -> tuple[dict[str, Any], str]:
        report = build_report(package)
        return report, render_markdown(report)

    return build


def run_verify(package: Path) -> int:
    """``vba mcp --package P --verify``: check the audit trail, print its counts."""
    import orjson

    from viano_bug_analysis.case.package import load_package
    from viano_bug_analysis.mcp_server.audit import verify_calls

    load_package(package)  # no trail to verify without a package
    counts = verify_calls(str(package))
    sys.stdout.write(orjson.dumps(counts).decode() + "\n")
    return ExitCode.OK


def run_mcp(args: argparse.Namespace) -> int:
    if args.verify:
        return run_verify(Path(args.package))
    from viano_bug_analysis import __version__
    from viano_bug_analysis.case.package import load_package
    from viano_bug_analysis.profiles import profile_from_args
    from viano_bug_analysis.tools.limits import load_limits

    try:
        from viano_bug_analysis.mcp_server.server import serve_stdio
    except ImportError:
        raise McpError(
            "mcp_sdk_missing",
            "the MCP Python SDK is not installed; pip install 'viano-bug-analysis[mcp]'",
            {"package": "mcp"},
        ) from None
    from viano_bug_analysis.mcp_server.tools import McpTools

    package = Path(args.package)
    load_package(package)  # a package that does not load is no session
    limits = load_limits(args.limits) if args.limits is not None else None
    profile = profile_from_args(args)
    router = profile.router(limits=limits)
    research = None
    if args.project_config is not None:
        from viano_bug_analysis.enrichment.reference_query import with_reference_map
        from viano_bug_analysis.project_research.config import load_config
        from viano_bug_analysis.project_research.preflight import preflight
        from viano_bug_analysis.project_research.service import ProjectResearch

        service = ProjectResearch(load_config(args.project_config))
        try:
            preflight(service)  # a session on a wrong commit or database serves nothing true
        except BaseException:
            service.close()
            raise
        # project_query answers the references kind through the profile's map.
        research = with_reference_map(service, profile)
    tools = McpTools(
        package,
        router,
        research=research,
        report=_report_builder(),
        profile=profile.enrichment,
    )
    tools.log.check_writable()
    try:
        serve_stdio(tools, version=__version__)
    finally:
        if research is not None:
            research.close()
    return ExitCode.OK


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--package", required=True, type=Path, help="case package directory")
    parser.add_argument(
        "--project-config",
        help="ProjectResearch TOML; offers project_query and project_references (else neither), "
        "and client_records when it has [client_data]",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="do not serve: verify the package's MCP call records and print their counts",
    )
    parser.add_argument(
        "--limits",
        type=Path,
        metavar="FILE",
        help="JSON or TOML file of ToolLimits for case_query (schema tool-limits-v1)",
    )


__all__ = ["add_arguments", "run_mcp"]
