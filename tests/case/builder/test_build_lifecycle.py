"""Revisions, resumption after interruption at every step, bounds, and builds without research."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.case.builder.conftest import CountingResearch, ResearchSetup, case_spec
from viano_bug_analysis.case import load_package
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.enrichment import parse_profile, research_origin, vcore_profile
from viano_bug_analysis.errors import CaseError, EnrichmentError
from viano_bug_analysis.project_research import load_config
from viano_bug_analysis.tools import InvestigationToolRouter


class Interrupted(BaseException):
    """Stands in for a kill: nothing after the hook runs."""


def file_digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".build.lock"
    }


def builder(
    spec: Path, package: Path, research: Any, setup: ResearchSetup, **kw: Any
) -> CaseBuilder:
    return CaseBuilder(
        spec,
        package,
        profile=kw.pop("profile", vcore_profile()),
        project_research=research,
        research_origin=research_origin(load_config(setup.config_path)),
        **kw,
    )


def test_same_inputs_change_nothing_new_inputs_make_a_new_revision(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    package = tmp_path / "package"
    spec = case_spec(tmp_path / "inputs")
    first = builder(spec, package, counting, research_setup).build()
    assert first.revision == 1 and first.new_revision
    before = file_digests(package)
    asked = len(counting.asked)

    again = builder(spec, package, counting, research_setup).build()
    assert (again.revision, again.new_revision, again.asked) == (1, False, 0)
    assert len(counting.asked) == asked  # the enrichment checkpoint is not repeated
    assert file_digests(package) == before

    spec = case_spec(tmp_path / "inputs", text="It still does not count. Second report.")
    second = builder(spec, package, counting, research_setup).build()
    assert second.revision == 2 and second.new_revision
    after = file_digests(package)
    # The finished revision 1 is never rewritten: every earlier file is byte-identical.
    changed = {path for path, digest in before.items() if after.get(path) != digest}
    assert changed == {"manifest.json"}
    loaded = load_package(package)
    assert loaded.analysis_revision == 2 and loaded.generation == 2
    assert loaded.manifest["case"]["path"] == "revisions/r0002/case.json"
    assert loaded.case["project_research"]["index"]["path"] == "research/project/r0002/index.json"


def test_interrupted_at_every_step_resumes_without_duplicates(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    clean_dir = tmp_path / "clean"
    spec = case_spec(tmp_path / "inputs")
    points: list[str] = []
    # Every durable step of a bounded build (the cost is quadratic in its steps):
    # the journal is under test, not how far the profile reaches.
    vcore = vcore_profile()
    profile = dataclasses.replace(vcore, limits=dataclasses.replace(vcore.limits, max_queries=24))
    clean = builder(
        spec, clean_dir, counting, research_setup, after_step=points.append, profile=profile
    ).build()
    clean_asked = len(counting.asked)
    assert clean_asked == len(clean.queries) and len(points) > 2 * clean_asked

    for stop_at in range(len(points)):
        package = tmp_path / f"interrupted-{stop_at}"
        counting.asked.clear()
        calls = 0

        def hook(point: str, stop_at: int = stop_at) -> None:
            nonlocal calls
            calls += 1
            if calls == stop_at + 1:
                raise Interrupted(point)

        with pytest.raises(Interrupted):
            builder(
                spec, package, counting, research_setup, after_step=hook, profile=profile
            ).build()
        builder(spec, package, counting, research_setup, profile=profile).build()
        # No query ran twice across the interrupted run and the rerun ...
        assert sorted(counting.asked) == sorted(set(counting.asked))
        assert len(counting.asked) == clean_asked, points[stop_at]
        # ... and the result is exactly the uninterrupted one (same captures, same index).
        assert _enrichment_files(package) == _enrichment_files(clean_dir), points[stop_at]


def _enrichment_files(package: Path) -> dict[str, str]:
    return {
        path: digest
        for path, digest in file_digests(package).items()
        if path.startswith(("research/", "revisions/"))
    }


def test_a_killed_process_resumes(tmp_path: Path, research_setup: ResearchSetup) -> None:
    """A real kill (os._exit) in a child process, in the middle of the query steps."""
    spec = case_spec(tmp_path / "inputs")
    package = tmp_path / "package"
    script = f"""
import os, sys
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.enrichment import vcore_profile, research_origin
from viano_bug_analysis.project_research import ProjectResearch, load_config
config = load_config({str(research_setup.config_path)!r})
def hook(point):
    if point == "step-5-captured":
        os._exit(137)
with ProjectResearch(config) as research:
    CaseBuilder({str(spec)!r}, {str(package)!r}, profile=vcore_profile(),
                project_research=research, research_origin=research_origin(config),
                after_step=hook).build()
"""
    env = dict(os.environ)
    killed = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True)
    assert killed.returncode == 137
    assert not (package / "manifest.json").exists()
    with research_setup.research() as research:
        counting = CountingResearch(research)
        built = builder(spec, package, counting, research_setup).build()
    # Steps 1-5 were replayed (step 5 from its adopted capture), only the rest was asked.
    assert len(counting.asked) == len(built.queries) - 5
    assert load_package(package).analysis_revision == 1


@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        ("max_queries = 4\nmax_depth = 50\nmax_relationships = 500", "max_queries"),
        ("max_queries = 500\nmax_depth = 2\nmax_relationships = 500", "max_depth"),
        ("max_queries = 500\nmax_depth = 50\nmax_relationships = 3", "max_relationships"),
    ],
)
def test_cyclic_relationships_terminate_with_coverage_facts(
    tmp_path: Path,
    counting: CountingResearch,
    research_setup: ResearchSetup,
    limits: str,
    reason: str,
) -> None:
    profile = parse_profile(CYCLIC_PROFILE.replace("LIMITS", limits).encode())
    built = builder(
        case_spec(tmp_path / "inputs"), tmp_path / "p", counting, research_setup, profile=profile
    ).build()
    skipped = [
        f for f in built.facts if f["kind"] == "project_context_coverage" and f["reason"] == reason
    ]
    assert skipped and all("incomplete" in f["statement"] for f in skipped)
    if reason == "max_queries":
        assert len(built.queries) == 4
    # Identical queries ran once.
    shas = [q["query_sha256"] for q in built.queries]
    assert len(shas) == len(set(shas))


CYCLIC_PROFILE = """
format = "viano-enrichment-profile"
format_version = 1
profile = "cyclic"
database = "cata_world"
[limits]
LIMITS
[[extract]]
entity_type = "quest"
in = "attachments"
members = 'log$'
pattern = 'QuestID=(\\d+)'
[entities.quest]
table = "quest_template"
column = "ID"
columns = ["ID", "LogTitle", "RewardNextQuest"]
name_column = "LogTitle"
[entities.creature]
table = "creature_template"
column = "entry"
columns = ["entry", "name"]
name_column = "name"
[tables.creature_queststarter]
columns = ["id", "quest"]
[[references]]
name = "starter_link"
table = "creature_queststarter"
column = "quest"
holds = "quest"
part_of = true
[[references]]
name = "starter"
table = "creature_queststarter"
column = "id"
holds = "creature"
part_of = true
"""


def test_a_rebuild_without_research_after_an_enriched_revision_is_refused(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    package = tmp_path / "package"
    first = builder(case_spec(tmp_path / "inputs"), package, counting, research_setup).build()
    assert first.facts
    before = file_digests(package)
    spec = case_spec(tmp_path / "inputs2", text="It still does not count. Second report.")
    with pytest.raises(EnrichmentError) as caught:
        CaseBuilder(spec, package).build()
    assert caught.value.code == "research_required"
    assert caught.value.details == {
        "revision": 1,
        "commit": research_setup.commit,
        "snapshot_id": "cata_world@fixture",
    }
    assert "--project-config" in caught.value.message and "--no-research" in caught.value.message
    assert file_digests(package) == before  # refused before anything is written

    cli = [sys.executable, "-m", "viano_bug_analysis.cli", "case", "build", str(spec)]
    refused = subprocess.run([*cli, str(package)], capture_output=True, text=True)
    assert refused.returncode == 2, refused.stderr
    assert orjson.loads(refused.stderr.splitlines()[0])["error"] == "research_required"
    assert file_digests(package) == before

    built = subprocess.run([*cli, str(package), "--no-research"], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    loaded = load_package(package)
    assert loaded.analysis_revision == 2 and "project_research" not in loaded.case


def test_without_research_the_case_is_valid_and_queryable(tmp_path: Path) -> None:
    spec = case_spec(tmp_path / "inputs")
    built = CaseBuilder(spec, tmp_path / "package").build()
    assert built.facts == [] and "project_research" not in built.package.case
    router = InvestigationToolRouter()
    manifest = built.package.manifest
    result = router.query(
        tmp_path / "package",
        {
            "format": "viano-investigation-request",
            "format_version": 1,
            "case_id": manifest["case_id"],
            "package_id": manifest["package_id"],
            "analysis_revision": manifest["analysis_revision"],
            "requests": [
                {
                    "request_id": "Q0001",
                    "hypothesis_id": "H1",
                    "action_id": "query-0001",
                    "operation": "source.find_text",
                    "arguments": {
                        "source_refs": ["diag-001"],
                        "text": "QuestID",
                        "case_sensitive": True,
                        "offset": 0,
                        "limit": 20,
                    },
                }
            ],
        },
    )
    assert orjson.dumps(result).count(b"QuestID=90001") == 1


def test_a_foreign_directory_is_not_built_over(tmp_path: Path) -> None:
    package = tmp_path / "package"
    package.mkdir()
    (package / "notes.txt").write_text("mine")
    with pytest.raises(CaseError) as err:
        CaseBuilder(case_spec(tmp_path / "inputs"), package).build()
    assert err.value.code == "package_not_buildable"


WHEN_PROFILE = """
format = "viano-enrichment-profile"
format_version = 1
profile = "when"
database = "cata_world"
[[extract]]
entity_type = "creature"
in = "attachments"
members = 'log$'
pattern = 'Creature entry=(\\d+)'
[entities.creature]
table = "creature_template"
column = "entry"
columns = ["entry", "name", "AIName", "KillCredit1"]
name_column = "name"
[[references]]
name = "kill_credit_when_smartai"
table = "creature_template"
column = "KillCredit1"
holds = "creature"
when = [{ column = "AIName", operator = "eq", value = "SmartAI" }]
ignore_values = ["null", ""]
[[references]]
name = "kill_credit"
table = "creature_template"
column = "KillCredit1"
holds = "creature"
ignore_values = ["null", ""]
"""


def test_when_gates_and_ignore_values_override(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup
) -> None:
    # Creature 90002 has AIName '' (the when of the first entry fails) and KillCredit1 = 0,
    # which this
    # profile's ignore_values (without 0) makes a followed value.
    profile = parse_profile(WHEN_PROFILE.encode())
    built = builder(
        case_spec(tmp_path / "inputs"), tmp_path / "p", counting, research_setup, profile=profile
    ).build()
    relations = [
        f["relation"]
        for f in built.facts
        if f["kind"] == "project_relationship" and f["direction"] == "forward"
    ]
    assert relations == ["kill_credit"]
    empty = [
        f
        for f in built.facts
        if f["kind"] == "project_empty_result" and f["purpose"].get("direction") == "forward"
    ]
    assert [f["filters"][0]["value"] for f in empty] == [0]


@pytest.mark.parametrize(
    "damage",
    [lambda data: data[: len(data) // 2], lambda data: b"{" + data, lambda data: b"[]"],
    ids=["torn", "garbled", "not an object"],
)
def test_a_damaged_enrichment_index_is_a_typed_corruption_on_resume(
    tmp_path: Path, counting: CountingResearch, research_setup: ResearchSetup, damage: Any
) -> None:
    # A kill between the index and case.json leaves the index as the resume
    # point; if it is damaged meanwhile, the rerun names it instead of crashing.
    spec = case_spec(tmp_path / "inputs")
    package = tmp_path / "package"

    def stop_after_index(point: str) -> None:
        if point == "index-written":
            raise Interrupted(point)

    with pytest.raises(Interrupted):
        builder(spec, package, counting, research_setup, after_step=stop_after_index).build()
    [index] = package.glob("research/*/r*/index.json")
    index.write_bytes(damage(index.read_bytes()))
    with pytest.raises(CaseError) as info:
        builder(spec, package, counting, research_setup).build()
    assert info.value.code == "package_corrupt"
    assert info.value.details["path"] == index.relative_to(package).as_posix()
