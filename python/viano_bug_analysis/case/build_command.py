"""``vba case build``: progress on stderr while enrichment runs, a summary on stdout.

Also ``vba profile check``, which wires the same profile and ProjectResearch
to the check whose warnings the build prints at its start.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from typing import Any, TextIO

import orjson

from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.case.inputs import check_spec, read_spec
from viano_bug_analysis.case.report_revision import RevisionPin, pin_to_report_revision
from viano_bug_analysis.enrichment import research_origin
from viano_bug_analysis.enrichment.leads import leads_left_out, leads_of
from viano_bug_analysis.enrichment.origin import query_database
from viano_bug_analysis.enrichment.profile import EnrichmentProfile
from viano_bug_analysis.enrichment.profile_check import check_profile, lines, warnings
from viano_bug_analysis.enrichment.summary import (
    Section,
    counts,
    lead_summary,
    summarize_all,
    summary_sections,
)
from viano_bug_analysis.errors import EnrichmentError, VbaError
from viano_bug_analysis.exit_codes import ExitCode, report
from viano_bug_analysis.profiles import load_profile
from viano_bug_analysis.project_research import ProjectResearch, load_config
from viano_bug_analysis.project_research.client_layouts import check_lines
from viano_bug_analysis.project_research.config import ResearchConfig
from viano_bug_analysis.project_research.preflight import preflight


class ProgressLine:
    """One updating status line on a terminal; plain lines when piped."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._tty = stream.isatty()

    def __call__(self, text: str) -> None:
        if self._tty:
            self._stream.write("\r\x1b[K" + text[:100])
        else:
            self._stream.write(text + "\n")
        self._stream.flush()

    def done(self) -> None:
        if self._tty:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


def run_build(args: argparse.Namespace) -> int:
    progress = ProgressLine(sys.stderr)
    # The whole profile is loaded (and checked) even when only its enrichment
    # rules are used here, so a bad --profile fails the same way everywhere.
    profile = load_profile(args.profile).enrichment
    try:
        at_report_revision = getattr(args, "at_report_revision", False)
        if at_report_revision and not args.project_config:
            raise EnrichmentError(
                "research_required",
                "--at-report-revision pins source research: give its configuration "
                "(--project-config)",
                {"option": "--at-report-revision"},
            )
        if args.project_config:
            config = load_config(args.project_config)
            with ExitStack() as stack:
                research = stack.enter_context(ProjectResearch(config))
                preflight(research)  # a wrong commit, repository or database: exit 2 now
                pin: RevisionPin | None = None
                if at_report_revision:
                    config, pin = _pinned(args, config, research)
                    research = stack.enter_context(ProjectResearch(config))
                # Once, before any lookup: what the profile cannot reach in this
                # database, so an empty enrichment is not mistaken for a finding.
                # (The CaseBuilder resolves the profile's column alternatives itself.)
                if profile is not None:
                    checked = _in_world_database(profile, config)
                    for line in warnings(check_profile(checked, research.query)):
                        sys.stderr.write(f"profile check: {line}\n")
                built = CaseBuilder(
                    args.spec,
                    args.package,
                    profile=profile,
                    project_research=research,
                    research_origin=research_origin(config),
                    progress=progress,
                    revision_pin=pin,
                ).build()
        else:
            built = CaseBuilder(
                args.spec,
                args.package,
                progress=progress,
                without_research=getattr(args, "no_research", False),
            ).build()
    except VbaError as err:
        progress.done()
        code = report(err)
        if code == ExitCode.UNAVAILABLE and err.details.get("reason") == "credentials_missing":
            # Running again changes nothing until the password is there.
            sys.stderr.write(
                "research unavailable: give the database password (the line above says "
                "where it is looked for), then run the same command again to resume\n"
            )
        elif code == ExitCode.UNAVAILABLE:
            sys.stderr.write("research unavailable: run the same command again to resume\n")
        return code
    progress.done()
    if args.json:
        document = {
            "package_id": built.package.package_id,
            "revision": built.revision,
            "new_revision": built.new_revision,
            "queries_asked": built.asked,
            "queries": len(built.queries),
            # Where to look first, before the whole list (which holds them too).
            "leads": leads_of(built.facts),
            "leads_left_out": leads_left_out(built.facts),
            "facts": built.facts,
        }
        sys.stdout.write(orjson.dumps(document).decode() + "\n")
        return ExitCode.OK if _database_unreadable(built.facts) is None else ExitCode.PROFILE_GAPS
    unreadable = _database_unreadable(built.facts)
    if unreadable is not None:
        print(unreadable)
    state = "built" if built.new_revision else "unchanged (same inputs)"
    print(f"package {built.package.package_id}: revision {built.revision} {state}")
    print(f"path: {built.package.path}")
    if built.new_revision and args.project_config:
        print(counts(built.facts, len(built.queries), built.asked))
    elif built.facts:
        print(counts(built.facts, None))  # an unchanged revision: its facts, nothing asked
    if built.facts:
        # Where to look first, before the facts they rest on.
        head, lead_lines = lead_summary(built.facts)
        print(head)
        for lead_line in lead_lines:
            print("  " + lead_line)
    for section in _sections(args, built.facts, profile):
        print(section.head)
        for line in section.lines:
            print("  " + line)
    return ExitCode.OK if unreadable is None else ExitCode.PROFILE_GAPS


def _sections(
    args: argparse.Namespace, facts: list[dict[str, Any]], profile: EnrichmentProfile | None
) -> list[Section]:
    """The blocks after the leads: ``--verbose`` one line per fact, otherwise the
    revision, what was not read, what was not followed, then the findings (grouped)."""
    if getattr(args, "verbose", False):
        listing = summarize_all(facts)
        return [Section("facts:", listing)] if listing else []
    # How the no-reference line words the values: the profile's ignore_values.
    ignored = {r.name: r.ignore_values for r in profile.references} if profile else {}
    return summary_sections(facts, ignored)


def _database_unreadable(facts: list[dict[str, Any]]) -> str | None:
    """The first summary line of a build that could read nothing from the database."""
    for fact in facts:
        if fact.get("kind") == "project_context_coverage" and (
            fact.get("reason") == "database_unreadable"
        ):
            codes = ", ".join(f"{code}: {n}" for code, n in fact["codes"].items())
            return (
                f"nothing could be read from the database: all {fact['count']} queries were "
                f"refused ({codes}); check which database the project config allowlists "
                "([database] name, [database.allow]) with `vba profile check`"
            )
    return None


def _pinned(
    args: argparse.Namespace, config: ResearchConfig, research: ProjectResearch
) -> tuple[ResearchConfig, RevisionPin]:
    """``--at-report-revision``: the configuration at the spec's reported commit."""
    spec, _ = read_spec(args.spec, None)
    check_spec(spec)  # a bad spec fails as it would in the build
    return pin_to_report_revision(spec["report"], config, research)


def run_profile_check(args: argparse.Namespace) -> int:
    """``vba profile check``: exit 0 when the profile fits, PROFILE_GAPS when it does not."""
    try:
        profile = load_profile(args.profile).enrichment
        if profile is None:
            print("the profile has no enrichment rules: nothing to check")
            return ExitCode.OK
        config = load_config(args.project_config)
        with ProjectResearch(config) as research:
            preflight(research)  # the git half too, and a database that is not there
            placed = _in_world_database(profile, config)
            allow = config.database.allow if config.database is not None else {}
            if placed.database is None and len(allow) == 1:
                placed = placed.in_database(next(iter(allow)))  # the one it would read
            result = check_profile(placed, research.query, allow.get(placed.database or "", ()))
            # The client data layouts against the engine source: a section of its own.
            client = research.client_provider().check() if config.client_data else None
    except VbaError as err:
        return report(err)
    if client is not None:
        result = {**result, "client_data": client, "ok": result["ok"] and client["ok"]}
    if args.json:
        sys.stdout.write(orjson.dumps(result).decode() + "\n")
    else:
        for line in lines(result):
            print(line)
        for line in check_lines(client) if client is not None else ():
            print(line)
    return ExitCode.OK if result["ok"] else ExitCode.PROFILE_GAPS


def _in_world_database(profile: EnrichmentProfile, config: ResearchConfig) -> EnrichmentProfile:
    # The same choice the CaseBuilder makes from the research origin.
    return profile.in_database(query_database(profile.database, research_origin(config)))
