"""What a report gives to match a fix (``enrichment/fixes/clues.py``), from reports
written the way public trackers see them."""

from __future__ import annotations

from typing import Any

from viano_bug_analysis.enrichment.fixes.clues import LinkedCommit, report_clues, repository_of

OURS = "https://github.com/vcore/vcore.git"


def report(text: str, **source: Any) -> dict[str, Any]:
    return {
        "title": "Quest credit not given",
        "text": text,
        "metadata": {
            "source": {
                "tracker": "github",
                "url": "https://github.com/vcore/vcore/issues/41",
                "repository": "vcore/vcore",
                "number": 41,
                "created_at": "2024-05-02T18:11:09Z",
                **source,
            }
        },
    }


def test_the_reports_identity_and_date() -> None:
    clues = report_clues(report("nothing else"), [], repository_url=OURS)
    assert (clues.number, clues.same_repository, clues.created_at) == (
        41,
        True,
        "2024-05-02T18:11:09Z",
    )
    other = report_clues(report("x", repository="someone/fork"), [], repository_url=OURS)
    assert not other.same_repository


def test_a_linked_pull_request_of_this_repository_and_pr_words() -> None:
    text = (
        "**Description:** the wounded sailor never gets up.\n"
        "Possibly fixed by https://github.com/vcore/vcore/pull/92 ?\n"
        "Upstream had https://github.com/TrinityCore/TrinityCore/pull/27000 for it too.\n"
        "see also PR #95"
    )
    clues = report_clues(report(text), [], repository_url=OURS)
    assert clues.pulls == (92, 95)


def test_commits_the_reporter_blames_or_names_as_the_fix() -> None:
    text = (
        "Broken since commit 1a2b3c4d5e, worked before.\n"
        "Built from https://github.com/vcore/vcore/commit/abcdef1234567 which fixes the npc part\n"
        "rev 0a1b2c3 of some fork (a number like 1234567 is no commit)"
    )
    clues = report_clues(report(text), [], repository_url=OURS)
    assert LinkedCommit("1a2b3c4d5e", cause=True) in clues.commits
    assert LinkedCommit("abcdef1234567", cause=False) in clues.commits
    assert any(c.hex == "0a1b2c3" for c in clues.commits)
    assert all(c.hex != "1234567" for c in clues.commits)


def test_the_reports_own_revision_is_no_linked_commit() -> None:
    fact = {"kind": "report_revision", "commit": "1a2b3c4d5e" + "0" * 30}
    clues = report_clues(report("Server rev: 1a2b3c4d5e"), [], repository_url=OURS, revision=fact)
    assert clues.revision is not None and clues.commits == ()


def test_files_and_functions_of_a_crash_log() -> None:
    text = (
        "worldserver crashed when I used the net:\n"
        "```\n"
        "#0  0x00005555 in Unit::DealDamage (this=0x0) at /home/build/src/server/game/"
        "Entities/Unit/Unit.cpp:812\n"
        "#1  0x00005556 in HandleScriptEffect (effIndex=0) at SpellEffects.cpp:4411\n"
        "```\n"
        "the wiki (https://example.invalid/page.cpp) says nothing"
    )
    clues = report_clues(report(text), [], repository_url=OURS)
    assert "home/build/src/server/game/Entities/Unit/Unit.cpp" in clues.files
    assert "SpellEffects.cpp" in clues.files
    assert "page.cpp" not in " ".join(clues.files)
    assert {"DealDamage", "HandleScriptEffect"} <= set(clues.functions)


def test_entities_from_the_facts() -> None:
    facts: list[dict[str, Any]] = [
        {"kind": "case_mention", "entity_type": "quest", "entity_id": 14395},
        {"kind": "case_mention", "entity_type": "quest", "entity_id": 12},  # too short to match
        {"kind": "project_entity", "entity_id": 14395, "name": "Gasping for Breath"},
        {"kind": "project_entity", "entity_id": 3, "name": "Not In The Report"},
        {"kind": "project_rows", "rows": [{"ScriptName": "npc_drowning_watchman"}]},
        {
            "kind": "project_source_hits",
            "symbol": "npc_drowning_watchman",
            "matches": [{"path": "src/server/scripts/EasternKingdoms/zone_gilneas.cpp"}],
        },
    ]
    clues = report_clues(
        report("gasping for breath: the watchmen sink again"), facts, repository_url=OURS
    )
    assert clues.ids == ("14395",)
    assert clues.names == ("Gasping for Breath",)
    assert clues.script_names == ("npc_drowning_watchman",)
    assert clues.script_files == ("src/server/scripts/EasternKingdoms/zone_gilneas.cpp",)
    assert clues.terms() == ["14395", "npc_drowning_watchman"]


def test_repository_names() -> None:
    assert repository_of("git@github.com:VCore/vcore.git") == "vcore/vcore"
    assert repository_of("https://gitlab.com/g/p/") == "g/p"
    assert repository_of("vcore") is None


def test_a_blamed_commit_stays_a_clue_when_it_is_the_revision() -> None:
    full = "1a2b3c4d5e" + "0" * 30
    fact = {"kind": "report_revision", "commit": full}
    text = f"Since commit {full} the loot is sent twice."
    clues = report_clues(report(text), [], repository_url=OURS, revision=fact)
    assert clues.commits == (LinkedCommit(full, cause=True),)


def test_a_full_commit_id_needs_no_word_before_it() -> None:
    full = "9f8e7d6c5b" * 4
    clues = report_clues(report(f"Broken since {full}: seats are lost."), [], repository_url=OURS)
    assert clues.commits == (LinkedCommit(full, cause=True),)
    # A shorter hex word is a commit only where the line says so.
    short = report_clues(report("Broken since 9f8e7d6c5b: seats."), [], repository_url=OURS)
    assert short.commits == ()


def test_the_classes_of_qualified_functions() -> None:
    text = "#0 in Map::Update (diff=1) at Map.cpp:1\n#1 in npc_lazy_peon::UpdateAI at x.cpp:2"
    clues = report_clues(report(text), [], repository_url=OURS)
    assert clues.scopes == ("npc_lazy_peon",)  # "Map" is shorter than a name


def test_a_revision_named_with_a_time_word_is_not_blamed() -> None:
    full = "1a2b3c4d5e" + "0" * 30
    fact = {"kind": "report_revision", "commit": full}
    text = f"Tested on rev {full} since Monday, the guard still walks away."
    clues = report_clues(report(text), [], repository_url=OURS, revision=fact)
    assert clues.commits == ()
