"""Answer one project query from the shell, without an LLM and without touching any case.

    python -m viano_bug_analysis.project_research --project-config C.toml --query Q.json [--pretty]
    vba research --project-config CONFIG.toml --query QUERY.json [--pretty] [--no-cache]

(``--config`` is the first spelling of ``--project-config``: still read, with a hint.)

``QUERY.json`` holds one project-query-v2 object, as every v1 query is (``-`` reads
it from stdin).
The project-result-v2 document goes to stdout.

Exit codes are the table of every command (``viano_bug_analysis.exit_codes``,
docs/errors.md); the ones this command can end with:

* 0 — answered; the result is on stdout;
* 2 — refused: bad configuration (a pinned commit the repository does not
  hold, a repository or database that is not there: the preflight of the
  provider the query asks), unreadable or invalid query, or a query the
  provider rejects (unknown column, table not allowed, ...);
* 3 — research unavailable: the database or repository cannot be reached
  (connection refused, timeout, missing credentials). The same query may
  succeed once the operator fixes the service;
* 9 — the database refused the reader's user name or password;
* 1 — an unexpected failure (a bug; Python prints the traceback).

On exit 2, 3 and 9, stderr holds one JSON line ``{"error": code, "message",
"details"}``. Neither contains credentials, hosts, user names or values.
Nothing is written anywhere, except the persistent content cache of decoded
git blobs when the configuration names one (``source.cache_dir``);
``--no-cache`` neither reads nor writes it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from viano_bug_analysis.errors import VbaError
from viano_bug_analysis.exit_codes import ExitCode, command_epilog, report
from viano_bug_analysis.project_research.config import load_config
from viano_bug_analysis.project_research.errors import ResearchError
from viano_bug_analysis.project_research.preflight import preflight
from viano_bug_analysis.project_research.service import (
    DATABASE_KINDS,
    SOURCE_KINDS,
    ProjectResearch,
    validate_query,
)

MAX_QUERY_FILE_BYTES = 1 << 20


def read_query(path: str) -> Any:
    """The query file (or stdin for ``-``), read strictly as every command-line JSON input."""
    from viano_bug_analysis.cli import read_json_input

    return read_json_input(path, kind="query", max_bytes=MAX_QUERY_FILE_BYTES, error=ResearchError)


def run(
    config: str | Path,
    query: str,
    *,
    pretty: bool = False,
    no_cache: bool = False,
    profile: str | None = None,
    stdout: IO[bytes] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """The whole command: returns the exit code, never raises a ``VbaError``."""
    out = stdout if stdout is not None else sys.stdout.buffer
    err = stderr if stderr is not None else sys.stderr
    try:
        loaded = load_config(config)
        service = ProjectResearch(loaded.without_content_cache() if no_cache else loaded)
        research: Any = service
        if profile is not None:
            # The profile's reference map answers the references kind.
            from viano_bug_analysis.enrichment.reference_query import with_reference_map
            from viano_bug_analysis.profiles import load_profile

            research = with_reference_map(research, load_profile(profile))
        document = read_query(query)
        with research:
            # Only the provider the query asks: a database query needs no repository.
            kind = validate_query(document, loaded.limits)["kind"]  # a bad query first
            preflight(service, source=kind not in DATABASE_KINDS, database=kind not in SOURCE_KINDS)
            result = research.query(document)
    except VbaError as error:
        return report(error, err)
    option = orjson.OPT_INDENT_2 if pretty else 0
    out.write(orjson.dumps(result, option=option) + b"\n")
    out.flush()
    return ExitCode.OK


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options shared by ``python -m ...project_research`` and ``vba research``."""
    parser.add_argument(
        "--project-config", help="ProjectResearch TOML (the project file, as in every command)"
    )
    # The first spelling: --config names the investigation file in every other command.
    parser.add_argument("--config", dest="old_config", help=argparse.SUPPRESS)
    parser.add_argument("--query", required=True, help="project-query-v2 JSON file, - for stdin")
    parser.add_argument("--pretty", action="store_true", help="indent the result JSON")
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the persistent content cache (source.cache_dir)",
    )
    parser.add_argument(
        "--profile",
        help="project profile whose reference map answers the references kind (a bundled "
        "name or a profile file; without it that kind is refused)",
    )


def project_config_of(args: argparse.Namespace, stderr: IO[str] | None = None) -> str:
    """``--project-config``, or the old ``--config`` with a hint; one is required."""
    if args.project_config is not None and args.old_config is not None:
        raise ResearchError(
            "config_invalid",
            "give the project file once, with --project-config (--config is its old spelling)",
            {"key": "", "option": "--config"},
        )
    if args.old_config is not None:
        (stderr if stderr is not None else sys.stderr).write(
            "hint: --config is the old spelling here; the project file is --project-config in "
            "every command (--config names the investigation file)\n"
        )
        return str(args.old_config)
    if args.project_config is None:
        raise ResearchError(
            "config_invalid",
            "give the project file with --project-config",
            {"key": "", "option": "--project-config"},
        )
    return str(args.project_config)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m viano_bug_analysis.project_research",
        description="Answer one read-only project query.",
        epilog=command_epilog("research"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        config = project_config_of(args)
    except ResearchError as error:
        return report(error)
    return run(config, args.query, pretty=args.pretty, no_cache=args.no_cache, profile=args.profile)


if __name__ == "__main__":
    raise SystemExit(main())
