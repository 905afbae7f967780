"""The reported revision in a build: one journaled step, one fact, the summary line,
the prompt label, and ``vba case build --at-report-revision``.

Research here has a source only (the history repository of
``history_fixtures``): the database queries of the enrichment are refused
with ``provider_not_configured``, which changes nothing about the revision.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.case.builder.conftest import CountingResearch, case_spec, resolve_pointer
from tests.project_research.history_fixtures import (
    AMBIGUOUS_PREFIX,
    HistoryRepo,
    build_history_repo,
    rev_list_count,
)
from viano_bug_analysis.case import load_package
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.enrichment import research_origin, summarize, vcore_profile
from viano_bug_analysis.enrichment.summary import summarize_all
from viano_bug_analysis.exit_codes import ExitCode
from viano_bug_analysis.investigation.project_context import LABELS, project_prompt_context
from viano_bug_analysis.project_research import ProjectResearch, load_config, query_sha256

URL = "https://git.example.invalid/vcore.git"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> HistoryRepo:
    return build_history_repo(tmp_path_factory.mktemp("history") / "repo")


def source_config(directory: Path, history: HistoryRepo, pinned: str = "M") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "research.toml"
    path.write_text(
        f'[source]\nrepository = "{history.path}"\nurl = "{URL}"\n'
        f'commit = "{history.commits[pinned]}"\n'
    )
    return path


def build(
    tmp_path: Path, history: HistoryRepo, revision: Any, *, research: Any = None, **kw: Any
) -> Any:
    config = load_config(source_config(tmp_path / "config", history))
    spec = case_spec(
        tmp_path / "inputs", metadata={} if revision is None else {"revision": revision}
    )
    with ProjectResearch(config) as live:
        return CaseBuilder(
            spec,
            tmp_path / "pkg",
            profile=vcore_profile(),
            project_research=research or live,
            research_origin=research_origin(config),
            **kw,
        ).build()


def revision_facts(facts: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [f for f in facts if f["kind"] == "report_revision"]


def test_the_reported_revision_is_resolved_and_related_in_one_journaled_step(
    tmp_path: Path, history: HistoryRepo
) -> None:
    c2, pinned = history.commits["c2"], history.commits["M"]
    built = build(tmp_path, history, {"commit": c2[:8], "from": "FC rev. hash/commit"})
    (fact,) = revision_facts(built.facts)
    assert fact["fact_id"] == f"P{len(built.facts)}"  # numbered after the enrichment's own
    assert fact["reported"] == c2[:8] and fact["reported_from"] == "FC rev. hash/commit"
    assert (fact["resolution"], fact["commit"], fact["relation"]) == ("resolved", c2, "ancestor")
    assert fact["pinned_only"] == rev_list_count(history, c2, pinned) == 5
    assert (fact["reported_only"], fact["merge_bases"]) == (0, [c2])
    assert fact["configured_commit"] == fact["research_commit"] == pinned
    assert fact["source_pinned_to"] == "configured_commit"
    assert fact["statement"] == "ancestor, 5 commits before the pinned commit"
    # Step 1 of the journal; its capture is in the package and the pointer resolves.
    first = built.queries[0]
    assert (first["step"], first["purpose"]) == (1, {"kind": "report_revision"})
    assert first["query_sha256"] == query_sha256({"kind": "source.revision", "revision": c2[:8]})
    capture = json.loads((built.package.path / fact["provenance"]["capture_path"]).read_bytes())
    assert resolve_pointer(capture["result"], fact["provenance"]["pointer"])["commit"] == c2
    assert fact["provenance"]["origin"] == {"kind": "git", "url": URL, "commit": pinned}


@pytest.mark.parametrize(
    ("revision", "relation"),
    [
        (lambda h: h.commits["M"], "same"),
        (lambda h: h.commits["M"].upper()[:10], "same"),  # a plain string, any case
        (lambda h: {"commit": h.commits["s2"][:7]}, "ancestor"),
        (lambda h: h.commits["o1"], "unrelated"),
        (lambda h: {"commit": AMBIGUOUS_PREFIX, "url": "https://x.invalid/c"}, "ambiguous"),
        (lambda h: "deadbee", "not_in_repository"),
    ],
)
def test_each_outcome_is_one_fact(
    tmp_path: Path, history: HistoryRepo, revision: Any, relation: str
) -> None:
    (fact,) = revision_facts(build(tmp_path, history, revision(history)).facts)
    assert fact["relation"] == relation
    if relation == "ambiguous":
        assert fact["candidates"] == sorted(history.ambiguous)
        assert fact["reported_url"] == "https://x.invalid/c"
        assert fact["statement"] == "ambiguous: 2 commits start with it"


@pytest.mark.parametrize("revision", ["main", "abc12", {"commit": 1234567}, {"from": "x"}])
def test_a_value_that_is_no_commit_id_is_a_fact_without_a_query(
    tmp_path: Path, history: HistoryRepo, revision: Any
) -> None:
    built = build(tmp_path, history, revision)
    (fact,) = revision_facts(built.facts)
    assert (fact["resolution"], fact["relation"], fact["reported"]) == ("malformed", None, None)
    assert "not a commit ID" in fact["statement"]
    assert all(q["purpose"].get("kind") != "report_revision" for q in built.queries)


def test_no_revision_no_step_and_no_fact(tmp_path: Path, history: HistoryRepo) -> None:
    built = build(tmp_path, history, None)
    assert revision_facts(built.facts) == []
    assert all(q["purpose"].get("kind") != "report_revision" for q in built.queries)


class Interrupt(Exception):
    pass


def test_a_resumed_build_replays_the_revision_step_without_asking_again(
    tmp_path: Path, history: HistoryRepo
) -> None:
    revision = history.commits["c3"][:10]

    def stop(point: str) -> None:
        if point == "step-2-recorded":
            raise Interrupt

    with pytest.raises(Interrupt):
        build(tmp_path, history, revision, after_step=stop)
    config = load_config(source_config(tmp_path / "config", history))
    with ProjectResearch(config) as live:
        counting = CountingResearch(live)
        resumed = build(tmp_path, history, revision, research=counting)
    asked_for_revision = query_sha256({"kind": "source.revision", "revision": revision})
    assert asked_for_revision not in counting.asked
    assert resumed.asked == len(resumed.queries) - 2  # steps 1 and 2 replayed
    (fact,) = revision_facts(resumed.facts)
    assert fact["relation"] == "ancestor"


def test_the_summary_shows_the_revision_first_and_the_prompt_labels_it(
    tmp_path: Path, history: HistoryRepo
) -> None:
    built = build(tmp_path, history, history.commits["s2"][:12])
    lines = summarize(built.facts)
    commit = history.commits["s2"]
    assert lines[0] == (
        f"[P{len(built.facts)}] report revision {commit[:12]} = {commit[:12]}…: "
        "ancestor, 4 commits before the pinned commit"
    )
    assert sum("report revision" in line for line in lines) == 1
    assert any("report revision" in line for line in summarize_all(built.facts))
    context = project_prompt_context(load_package(built.package.path))
    assert context is not None
    (shown,) = [f for f in context["facts"] if f["kind"] == "report_revision"]
    assert shown["label"] == LABELS["report_revision"]
    assert shown["statement"] == "ancestor, 4 commits before the pinned commit"
    assert shown["source"].startswith("capture:") and "provenance" not in shown


def test_diverged_names_the_merge_base_and_both_sides(tmp_path: Path, history: HistoryRepo) -> None:
    config = load_config(source_config(tmp_path / "config", history, pinned="c4"))
    spec = case_spec(tmp_path / "inputs", metadata={"revision": history.commits["s2"]})
    with ProjectResearch(config) as live:
        built = CaseBuilder(
            spec,
            tmp_path / "pkg",
            profile=vcore_profile(),
            project_research=live,
            research_origin=research_origin(config),
        ).build()
    (fact,) = revision_facts(built.facts)
    assert fact["merge_bases"] == [history.commits["c1"]]
    assert fact["statement"] == (
        f"diverged from the pinned commit at merge base {history.commits['c1'][:12]}: "
        "2 commits on the report's side, 3 commits on the other"
    )


# -- vba case build --at-report-revision ---------------------------------------------------


def vba(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", *map(str, args)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def pinned_build(tmp_path: Path, history: HistoryRepo, metadata: Mapping[str, Any]) -> Any:
    config = source_config(tmp_path / "config", history)
    spec = case_spec(tmp_path / "inputs", metadata=metadata)
    args = ("case", "build", spec, tmp_path / "pkg", "--project-config", config)
    return vba(*args, "--at-report-revision"), args


def test_at_report_revision_pins_source_research_to_the_reports_commit(
    tmp_path: Path, history: HistoryRepo
) -> None:
    c2, configured = history.commits["c2"], history.commits["M"]
    done, args = pinned_build(tmp_path, history, {"revision": {"commit": c2[:7]}})
    # No database is configured: every database query is refused, which is exit 8
    # (the source side is what this test is about).
    assert done.returncode == ExitCode.PROFILE_GAPS, done.stderr
    facts = [line.strip() for line in done.stdout.splitlines() if line.startswith("  [")]
    assert facts[0].startswith("[P") and " report revision " in facts[0]
    package = load_package(tmp_path / "pkg")
    index_ref = package.case["project_research"]["index"]["path"]
    index = orjson.loads((package.path / index_ref).read_bytes())
    # The revision's provenance names the commit the source was read at.
    assert index["research_origin"]["git"]["commit"] == c2
    (fact,) = revision_facts(index["facts"])
    assert fact["source_pinned_to"] == "report_revision"
    assert (fact["configured_commit"], fact["research_commit"]) == (configured, c2)
    # The relation is the one to the configured commit, read there.
    assert (fact["relation"], fact["pinned_only"]) == ("ancestor", 5)
    assert fact["provenance"]["origin"]["commit"] == configured
    assert fact["statement"].endswith("(--at-report-revision)")
    source_captures = [
        json.loads(p.read_bytes())
        for p in (package.path / Path(fact["provenance"]["capture_path"]).parent).glob("*.json")
    ]
    other = [c for c in source_captures if c["result"]["query"]["kind"] != "source.revision"]
    assert {
        c["result"]["origin"]["commit"] for c in other if c["result"]["origin"]["kind"] == "git"
    } <= {c2}
    # The same options again: nothing changes.
    again = vba(*args, "--at-report-revision")
    assert again.returncode == ExitCode.PROFILE_GAPS, again.stderr
    assert "revision 1 unchanged (same inputs)" in again.stdout
    # Without the option the research origin differs: a new revision.
    plain = vba(*args)
    assert "revision 2 built" in plain.stdout


@pytest.mark.parametrize(
    ("metadata", "code", "reason"),
    [
        ({}, "report_revision_missing", None),
        ({"revision": "not-a-hash"}, "report_revision_unresolved", "malformed"),
        ({"revision": AMBIGUOUS_PREFIX}, "report_revision_unresolved", "ambiguous"),
        ({"revision": "deadbee"}, "report_revision_unresolved", "not_found"),
    ],
)
def test_at_report_revision_fails_clearly_when_the_commit_is_not_one(
    tmp_path: Path, history: HistoryRepo, metadata: Mapping[str, Any], code: str, reason: str
) -> None:
    done, _ = pinned_build(tmp_path, history, metadata)
    assert done.returncode == 2
    error = json.loads(done.stderr.strip().splitlines()[-1])
    assert error["error"] == code
    assert error["details"]["pointer"] == "/report/metadata/revision"
    assert error["details"].get("reason") == reason
    if reason == "ambiguous":
        assert error["details"]["candidate_count"] == 2
    assert not (tmp_path / "pkg").exists() or not any((tmp_path / "pkg").iterdir())
    assert "Traceback" not in done.stderr


def test_at_report_revision_needs_the_research_configuration(tmp_path: Path) -> None:
    spec = case_spec(tmp_path / "inputs", metadata={"revision": "deadbee"})
    done = vba("case", "build", spec, tmp_path / "pkg", "--at-report-revision")
    assert done.returncode == 2
    error = json.loads(done.stderr.strip().splitlines()[-1])
    assert (error["error"], error["details"]["option"]) == (
        "research_required",
        "--at-report-revision",
    )
