"""A build whose report was filed against an older commit: the commits since then
that change a line naming the report's quest become ``project_change_since_report``
facts; a report at the same, a diverged or an unrelated commit asks nothing.

Research has a source only (a history built in the test); the database queries
of the enrichment are refused, which leaves the report's typed mention, and so
its ID, as the term.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.case.builder.conftest import case_spec
from tests.project_research.changes_fixtures import History, build_history
from tests.project_research.git_fixtures import git
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.enrichment import research_origin, vcore_profile
from viano_bug_analysis.project_research import ProjectResearch, load_config

URL = "https://git.example.invalid/vcore.git"
QUEST = 26290
TEXT = f"Quest {QUEST} cannot be completed."


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    made = build_history(
        tmp_path_factory.mktemp("since") / "repo",
        [
            {"src/zone.cpp": "// zone\n"},
            {"src/zone.cpp": "// zone scripts\n"},  # the report's commit
            {"sql/updates/7.sql": f"UPDATE quest_template SET Flags=0 WHERE ID={QUEST};\n"},
            {"src/other.cpp": "unrelated\n"},
        ],
        side=[{"side.txt": f"{QUEST} on a branch of its own\n"}],
        branch_at=1,
    )
    return made


def build(tmp_path: Path, history: History, reported: str) -> Any:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    (config_dir / "research.toml").write_text(
        f'[source]\nrepository = "{history.path}"\nurl = "{URL}"\n'
        f'commit = "{history.commits[-1]}"\n'
    )
    config = load_config(config_dir / "research.toml")
    spec = case_spec(tmp_path / "inputs", metadata={"revision": reported}, text=TEXT)
    with ProjectResearch(config) as live:
        return CaseBuilder(
            spec,
            tmp_path / "pkg",
            profile=vcore_profile(),
            project_research=live,
            research_origin=research_origin(config),
        ).build()


def of_kind(built: Any, kind: str) -> list[dict[str, Any]]:
    return [f for f in built.facts if f["kind"] == kind]


def test_a_later_commit_naming_the_quest_is_a_change_since_the_report(
    tmp_path: Path, history: History
) -> None:
    built = build(tmp_path, history, history.commits[1])
    (change,) = of_kind(built, "project_change_since_report")
    assert change["commit"] == history.commits[2]
    assert change["since"] == history.commits[1] and change["pinned"] == history.commits[-1]
    assert change["terms"] == [str(QUEST)]
    assert [(c["path"], c["side"], c["line"]) for c in change["changes"]] == [
        ("sql/updates/7.sql", "added", 1)
    ]
    asked = [q for q in built.queries if q["purpose"].get("kind") == "changes_since_report"]
    assert len(asked) == 1 and asked[0]["capture_sha256"] == change["provenance"]["capture_sha256"]
    capture = built.package.path / change["provenance"]["capture_path"]
    assert capture.is_file()


@pytest.mark.parametrize("which", ["same", "diverged", "unrelated"])
def test_no_query_when_the_report_commit_is_not_before_the_pinned_one(
    tmp_path: Path, history: History, which: str
) -> None:
    if which == "same":
        reported = history.commits[-1]
    elif which == "diverged":
        reported = history.side[-1]
    else:
        git(history.path, "checkout", "-q", "--orphan", f"lone-{tmp_path.name}")
        git(history.path, "commit", "-q", "--allow-empty", "-m", "lone")
        reported = git(history.path, "rev-parse", "HEAD")
        git(history.path, "checkout", "-q", "-f", "main")
    built = build(tmp_path, history, reported)
    (revision,) = of_kind(built, "report_revision")
    assert revision["relation"] == which
    assert of_kind(built, "project_change_since_report") == []
    assert not [q for q in built.queries if q["purpose"].get("kind") == "changes_since_report"]
