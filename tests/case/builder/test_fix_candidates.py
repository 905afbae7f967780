"""Already fixed? A whole build against a history the test makes: the report's date
anchors the candidates, the focused fix outranks the mass import, a message naming
the report is "fixed by", an unfixed report gets no claim, and an upstream fork's
fix that the pinned history lacks is a cherry-pick candidate.

Research has a source only; the database queries of the enrichment are refused,
which leaves the report's typed mention (quest 26290) and its ID.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.case.builder.conftest import case_spec
from tests.project_research.git_fixtures import GIT_ENV, git
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.enrichment import research_origin, vcore_profile
from viano_bug_analysis.project_research import ProjectResearch, load_config

URL = "https://github.com/vcore/vcore.git"
QUEST = 26290


@dataclass(frozen=True)
class Repo:
    path: Path
    commits: dict[str, str]


def _commit(repo: Path, when: str, author: str, message: str, files: Mapping[str, str]) -> str:
    for name, content in files.items():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    env = {
        **GIT_ENV,
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
    }
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True, capture_output=True)
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", message],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
    )
    return git(repo, "rev-parse", "HEAD")


DUMP = {f"sql/base/world/{n:03d}.sql": f"INSERT INTO t{n} VALUES ({n}, 1);\n" for n in range(120)}
DUMP["sql/base/world/quest_template.sql"] = f"INSERT INTO quest_template VALUES\n({QUEST}, 2, 0),\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    path = tmp_path_factory.mktemp("fixes") / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    c: dict[str, str] = {}
    c["root"] = _commit(path, "2024-01-01T00:00:00Z", "Ann", "Initial import", {"README": "x\n"})
    c["dump"] = _commit(path, "2024-02-01T00:00:00Z", "Bob", "Release Vcore DB V1.0", DUMP)
    c["misc"] = _commit(
        path, "2024-02-20T00:00:00Z", "Cid", "Core/Misc: tidy logs", {"src/Log.cpp": "log\n"}
    )
    c["fix"] = _commit(
        path,
        "2024-03-05T00:00:00Z",
        "Dee",
        f"(Core/Smart Script) Gasping for Breath - Quest: {QUEST} (#33)",
        {"sql/updates/world/2024_03_05_00.sql": f"DELETE FROM t_addon WHERE ID={QUEST};\n"},
    )
    c["closes"] = _commit(
        path,
        "2024-03-10T00:00:00Z",
        "Eve",
        "Core/Quest: give the credit on the last objective\n\nCloses #41",
        {"src/server/game/Quests/QuestHandler.cpp": "credit\n"},
    )
    c["later"] = _commit(
        path,
        "2024-03-12T00:00:00Z",
        "Fay",
        "Core/Spells: fix a crash (#34)",
        {"src/Spell.cpp": "s\n"},
    )
    return Repo(path, c)


def build(
    tmp_path: Path,
    repo: Repo,
    *,
    text: str,
    source: Mapping[str, Any],
    extra_config: str = "",
    revision: str | None = None,
) -> Any:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    (config_dir / "research.toml").write_text(
        f'[source]\nrepository = "{repo.path}"\nurl = "{URL}"\n'
        f'commit = "{repo.commits["later"]}"\n' + extra_config
    )
    config = load_config(config_dir / "research.toml")
    metadata: dict[str, Any] = {"source": dict(source)}
    if revision is not None:
        metadata["revision"] = revision
    spec = case_spec(tmp_path / "inputs", metadata=metadata, text=text)
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


SOURCE = {"tracker": "github", "repository": "someone/other", "created_at": "2024-03-01T12:00:00Z"}


def test_the_report_date_anchors_the_search_and_the_focused_fix_ranks_first(
    tmp_path: Path, repo: Repo
) -> None:
    built = build(tmp_path, repo, text=f"Quest {QUEST} cannot be completed.", source=SOURCE)
    (search,) = of_kind(built, "project_fix_search")
    assert search["verdict"] == "maybe" and search["basis"] == "report_date"
    assert search["anchor"] == repo.commits["misc"] and search["anchor_estimated"]
    candidates = of_kind(built, "project_fix_candidate")
    first = candidates[0]
    assert first["commit"] == repo.commits["fix"] and first["rank"] == 1
    assert first["verdict"] == "maybe" and first["timing"] == "after_report_date"
    assert {r["code"] for r in first["reasons"]} == {"subject_names_entity", "changes_entity_rows"}
    assert first["subject"].startswith("(Core/Smart Script) Gasping for Breath")
    assert (first["author"], first["date"]) == ("Dee", "2024-03-05T00:00:00Z")
    assert first["files"] == ["sql/updates/world/2024_03_05_00.sql"] and first["files_changed"] == 1
    assert first["link"] == f"https://github.com/vcore/vcore/commit/{repo.commits['fix']}"
    # The import predates the report and names the quest in a row of its dump: a weak
    # candidate, ranked below the fix, that says it is a mass change.
    dump = [c for c in candidates if c["commit"] == repo.commits["dump"]]
    assert not dump or (
        dump[0]["rank"] > 1 and dump[0]["mass_change"] and dump[0]["timing"] == "before_report"
    )
    # The diff reasons rest on a journaled source.changes answer.
    asked = [q for q in built.queries if q["purpose"].get("kind") == "fix_candidates"]
    assert len(asked) == 1


def test_the_reports_revision_bounds_the_candidates(tmp_path: Path, repo: Repo) -> None:
    # Filed against the fix itself: the fix cannot be the answer, later commits only.
    built = build(
        tmp_path,
        repo,
        text=f"Quest {QUEST} cannot be completed.",
        source=SOURCE,
        revision=repo.commits["fix"][:10],
    )
    (search,) = of_kind(built, "project_fix_search")
    assert search["basis"] == "report_revision" and search["anchor"] == repo.commits["fix"]
    assert not search["anchor_estimated"] and search["candidates_examined"] == 2
    assert search["verdict"] == "none"


def test_a_message_naming_the_report_is_fixed_by(tmp_path: Path, repo: Repo) -> None:
    source = {
        **SOURCE,
        "repository": "vcore/vcore",
        "number": 41,
        "url": "https://github.com/vcore/vcore/issues/41",
    }
    built = build(tmp_path, repo, text="The last objective gives no credit.", source=source)
    (search,) = of_kind(built, "project_fix_search")
    assert search["verdict"] == "fixed_by"
    first = of_kind(built, "project_fix_candidate")[0]
    assert first["commit"] == repo.commits["closes"] and first["verdict"] == "fixed_by"
    assert "names the report" in first["statement"]


def test_an_unfixed_report_gets_no_claim(tmp_path: Path, repo: Repo) -> None:
    built = build(tmp_path, repo, text="Quest 99999 cannot be completed.", source=SOURCE)
    (search,) = of_kind(built, "project_fix_search")
    assert search["verdict"] == "none"
    assert of_kind(built, "project_fix_candidate") == []


def test_a_report_without_a_date_reads_the_whole_window(tmp_path: Path, repo: Repo) -> None:
    built = build(tmp_path, repo, text=f"Quest {QUEST} cannot be completed.", source={})
    (search,) = of_kind(built, "project_fix_search")
    assert search["basis"] == "whole_window" and search["anchor"] is None
    assert of_kind(built, "project_fix_candidate")[0]["timing"] == "unknown"


def test_the_history_bound_is_stated(tmp_path: Path, repo: Repo) -> None:
    built = build(
        tmp_path,
        repo,
        text=f"Quest {QUEST} cannot be completed.",
        source={},
        extra_config="\n[limits]\nhistory_commits = 3\n",
    )
    (search,) = of_kind(built, "project_fix_search")
    assert search["commits_read"] == 3
    (gap,) = [
        f for f in of_kind(built, "project_context_coverage") if f["reason"] == "fix_history_limit"
    ]
    assert gap["limit"] == 3


@pytest.fixture(scope="module")
def fork(tmp_path_factory: pytest.TempPathFactory, repo: Repo) -> Repo:
    """The upstream: the pinned history plus commits the pinned line lacks, only
    one of which names the report's quest in its subject."""
    path = tmp_path_factory.mktemp("upstream") / "upstream"
    subprocess.run(
        ["git", "clone", "-q", str(repo.path), str(path)],
        env=GIT_ENV,
        check=True,
        capture_output=True,
    )
    c: dict[str, str] = {}
    c["named"] = _commit(
        path,
        "2024-04-01T00:00:00Z",
        "Gus",
        f"Scripts/Quest: Gasping for Breath {QUEST} escort waits (#50)",
        {"src/server/scripts/zone_gilneas.cpp": "escort\n"},
    )
    # A neutral subject: only the diff says it changes the quest's rows.
    c["rows"] = _commit(
        path,
        "2024-04-02T00:00:00Z",
        "Hal",
        "DB/Quest: correct the start conditions of a Gilneas chain",
        {"sql/updates/world/2024_04_02_00.sql": f"UPDATE t_addon SET Flags=8 WHERE ID={QUEST};\n"},
    )
    # The ID in a comment only: a bare mention, no claim.
    c["comment"] = _commit(
        path,
        "2024-04-03T00:00:00Z",
        "Ivy",
        "DB/Misc: notes on the phasing tables",
        {"sql/updates/world/2024_04_03_00.sql": f"-- see also {QUEST}\nSELECT 1;\n"},
    )
    c["trace"] = _commit(
        path,
        "2024-04-04T00:00:00Z",
        "Jo",
        "Core/Spells: guard the caster pointer",
        {"src/server/game/Spells/Spell.cpp": "void Spell::HandleLaunchPhase()\n{\n}\n"},
    )
    return Repo(path, c)


def upstream_config(fork: Repo) -> str:
    return (
        f'\n[source.upstream]\nrepository = "{fork.path}"\nurl = "https://github.com/up/core"\n'
        f'commit = "{fork.commits["trace"]}"\n'
    )


def upstream_candidates(built: Any) -> list[dict[str, Any]]:
    return [f for f in of_kind(built, "project_fix_candidate") if f["repository"] == "upstream"]


def test_an_upstream_fix_missing_from_the_pinned_history(
    tmp_path: Path, repo: Repo, fork: Repo
) -> None:
    built = build(
        tmp_path,
        repo,
        text=f"Quest {QUEST} cannot be completed.",
        source=SOURCE,
        extra_config=upstream_config(fork),
    )
    searches = {f["repository"]: f for f in of_kind(built, "project_fix_search")}
    assert set(searches) == {"source", "upstream"}
    ups = upstream_candidates(built)
    # The shared commits are not named again; the comment is no claim.
    assert [f["commit"] for f in ups] == [fork.commits["named"], fork.commits["rows"]]
    assert ups[0]["verdict"] == "upstream_maybe"
    assert ups[0]["link"] == f"https://github.com/up/core/commit/{fork.commits['named']}"
    assert "cherry-pick" in ups[0]["statement"]


def test_upstream_candidates_get_the_diff_reasons(tmp_path: Path, repo: Repo, fork: Repo) -> None:
    built = build(
        tmp_path,
        repo,
        text=f"Quest {QUEST} cannot be completed.",
        source=SOURCE,
        extra_config=upstream_config(fork),
    )
    by_commit = {f["commit"]: f for f in upstream_candidates(built)}
    # Read from the upstream's own diff: its subject names nothing of the report.
    rows = by_commit[fork.commits["rows"]]
    assert [r["code"] for r in rows["reasons"]] == ["changes_entity_rows"]
    assert "2024_04_02_00.sql" in rows["reasons"][0]["detail"]
    assert {r["code"] for r in by_commit[fork.commits["named"]]["reasons"]} == {
        "subject_names_entity"
    }
    assert fork.commits["comment"] not in by_commit  # a bare ID in a comment claims nothing
    # The upstream's pages are not research queries: the query budget pays the source's.
    asked = [q for q in built.queries if q["purpose"].get("kind") == "fix_candidates"]
    assert len(asked) == 1


def test_an_upstream_change_to_a_traced_function(tmp_path: Path, repo: Repo, fork: Repo) -> None:
    crash = (
        "worldserver crashes when a caster dies mid-cast\n```\n#0 0x7f in "
        "Spell::HandleLaunchPhase (this=0x0) at Spell.cpp:3120\n```"
    )
    built = build(tmp_path, repo, text=crash, source=SOURCE, extra_config=upstream_config(fork))
    ups = upstream_candidates(built)
    assert ups[0]["commit"] == fork.commits["trace"]
    codes = {r["code"] for r in ups[0]["reasons"]}
    assert codes == {"changes_trace_function", "touches_trace_file"}


def test_an_unrelated_report_gets_no_upstream_candidate(
    tmp_path: Path, repo: Repo, fork: Repo
) -> None:
    built = build(
        tmp_path,
        repo,
        text="Quest 99999 cannot be completed.",
        source=SOURCE,
        extra_config=upstream_config(fork),
    )
    assert upstream_candidates(built) == []
    searches = {f["repository"]: f["verdict"] for f in of_kind(built, "project_fix_search")}
    assert searches == {"source": "none", "upstream": "none"}


def test_the_case_report_shows_the_candidates(tmp_path: Path, repo: Repo) -> None:
    from viano_bug_analysis.report import build_report, render_html, render_markdown
    from viano_bug_analysis.schemas import schema_validator

    build(tmp_path, repo, text=f"Quest {QUEST} cannot be completed.", source=SOURCE)
    report = build_report(tmp_path / "pkg")
    assert schema_validator("case-report-v3").is_valid(report)
    fixed = report["already_fixed"]
    assert fixed["verdict"] == "maybe"
    assert fixed["candidates"][0]["commit"] == repo.commits["fix"]
    markdown = render_markdown(report)
    assert "Already fixed?" in markdown
    html = render_html(report)
    assert f'href="https://github.com/vcore/vcore/commit/{repo.commits["fix"]}"' in html
    # The fix changes one file: said as one file, not "1 files".
    assert fixed["candidates"][0]["files_changed"] == 1
    for text in (markdown, html):
        assert "1 file)" in text or "1 file<" in text
        assert "1 files" not in text


def test_the_version_1_prompt_context_leaves_them_out(tmp_path: Path, repo: Repo) -> None:
    from viano_bug_analysis.case.package import load_package
    from viano_bug_analysis.investigation.project_context import project_prompt_context

    built = build(tmp_path, repo, text=f"Quest {QUEST} cannot be completed.", source=SOURCE)
    assert of_kind(built, "project_fix_candidate")
    context = project_prompt_context(load_package(built.package.path))
    assert context is not None
    kinds = {f["kind"] for f in context["facts"]}
    assert not kinds & {"project_fix_candidate", "project_fix_search"}
