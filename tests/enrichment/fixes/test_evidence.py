"""Each reason a commit may have fixed a report, positive and negative, the score,
the ranking and the verdict (``enrichment/fixes/evidence.py``), on commits made
in memory."""

from __future__ import annotations

from collections.abc import Sequence

from viano_bug_analysis.enrichment.fixes.clues import LinkedCommit, ReportClues
from viano_bug_analysis.enrichment.fixes.evidence import (
    MASS_FILES,
    KeyMap,
    LineChange,
    Ranking,
    keyed_by,
    rank,
    sets_texts_only,
)
from viano_bug_analysis.project_research.git_history import ChangedFile, HistoryCommit

KEYS = frozenset({"ID", "entry", "QuestID", "CreatureID"})
REPORT = ReportClues(
    number=41,
    url="https://github.com/vcore/vcore/issues/41",
    repository="vcore/vcore",
    same_repository=True,
    ids=("14395",),
    names=("Gasping for Breath",),
)


def commit(
    n: int,
    message: str,
    files: Sequence[str] = ("src/server/game/Quests/QuestDef.cpp",),
    *,
    total: int | None = None,
) -> HistoryCommit:
    return HistoryCommit(
        commit=f"{n:040x}",
        parents=(f"{n - 1:040x}",) if n > 1 else (),
        author="dev",
        author_time=1_700_000_000 + n,
        committer_time=1_700_000_000 + n,
        message=message,
        message_truncated=False,
        files_total=len(files) if total is None else total,
        files=tuple(ChangedFile(p, "modified") for p in files),
    )


def ranked(
    clues: ReportClues,
    commits: Sequence[HistoryCommit],
    changes: dict[str, list[LineChange]] | None = None,
) -> Ranking:
    newest_first = sorted(commits, key=lambda c: -c.committer_time)
    return rank(clues, newest_first, changes or {}, key_columns=KEYS)


def codes(ranking: Ranking, n: int) -> set[str]:
    (found,) = [c for c in ranking.candidates if c.commit.commit == f"{n:040x}"]
    return {r.code for r in found.reasons}


# -- the message names the report --------------------------------------------


def test_closes_hash_n_of_the_same_repository_is_fixed_by() -> None:
    r = ranked(REPORT, [commit(1, "Core/Quest: fix the credit\n\nCloses #41")])
    assert r.verdict == "fixed_by" and "names_report" in codes(r, 1)


def test_the_report_url_in_the_message_is_fixed_by() -> None:
    r = ranked(REPORT, [commit(1, "fix, see https://github.com/vcore/vcore/issues/41.")])
    assert r.verdict == "fixed_by"
    longer = ranked(REPORT, [commit(1, "see https://github.com/vcore/vcore/issues/410")])
    assert longer.verdict == "none"


def test_hash_n_of_another_repository_or_a_longer_number_names_nothing() -> None:
    other = ReportClues(number=41, repository="other/fork", same_repository=False)
    assert ranked(other, [commit(1, "Fixes #41")]).verdict == "none"
    assert ranked(
        REPORT, [commit(1, "Fixes #411"), commit(2, "see TrinityCore/TC#41")]
    ).verdict == ("none")


# -- the report names the fix -------------------------------------------------


def test_a_linked_pull_request_matches_the_squash_subject() -> None:
    clues = ReportClues(pulls=(92,))
    r = ranked(clues, [commit(1, "Scripts/Npc: fix the escort (#92)"), commit(2, "other (#93)")])
    assert r.verdict == "maybe" and r.candidates[0].commit.commit == f"{1:040x}"
    assert codes(r, 1) == {"carries_linked_pull"}


def test_a_linked_pull_request_number_in_the_middle_of_a_subject_is_no_match() -> None:
    r = ranked(ReportClues(pulls=(92,)), [commit(1, "Revert part of (#92) and more")])
    assert r.candidates == ()


def test_a_linked_fix_commit_is_a_candidate_and_a_blamed_one_is_not() -> None:
    fix = ReportClues(commits=(LinkedCommit(f"{2:040x}"[:10], cause=False),))
    assert codes(ranked(fix, [commit(2, "tweak")]), 2) == {"is_linked_commit"}
    blamed = ReportClues(commits=(LinkedCommit(f"{2:040x}"[:10], cause=True),))
    assert ranked(blamed, [commit(2, "tweak")]).candidates == ()


def test_a_later_commit_changing_the_blamed_commits_files() -> None:
    clues = ReportClues(commits=(LinkedCommit(f"{1:040x}", cause=True),))
    r = ranked(
        clues,
        [
            commit(1, "refactor spells", ["src/Spells/SpellEffects.cpp"]),
            commit(2, "Spells: restore the effect", ["src/Spells/SpellEffects.cpp"]),
            commit(3, "unrelated", ["src/Maps/Map.cpp"]),
        ],
    )
    assert codes(r, 2) == {"same_files_as_cause"}
    assert [c.commit.commit for c in r.candidates] == [f"{2:040x}"]


# -- the log or stack trace ---------------------------------------------------


def test_a_file_the_crash_log_names_is_touched() -> None:
    clues = ReportClues(files=("Unit.cpp",), functions=("DealDamage",))
    r = ranked(
        clues,
        [
            commit(1, "Core/Unit: guard a null victim", ["src/server/game/Entities/Unit/Unit.cpp"]),
            commit(2, "Core/Unit: docs", ["src/server/game/Entities/Unit/UnitAI.cpp"]),
        ],
        {
            f"{1:040x}": [
                LineChange(
                    "src/server/game/Entities/Unit/Unit.cpp",
                    "added",
                    "void Unit::DealDamage(Unit* victim)",
                    "DealDamage",
                )
            ]
        },
    )
    assert codes(r, 1) == {"touches_trace_file", "changes_trace_function"}
    assert r.candidates[0].commit.commit == f"{1:040x}" and len(r.candidates) == 1


# -- the report's entities ----------------------------------------------------


def test_the_subject_names_the_quest_id_or_the_name_as_the_report_writes_it() -> None:
    r = ranked(
        REPORT,
        [
            commit(1, "(Core/Smart Script) Gasping for Breath - Quest: 14395 (#33)"),
            commit(2, "Quests: gasping for breath credit"),
        ],
    )
    assert codes(r, 1) == {"subject_names_entity", "subject_names_name"}
    assert codes(r, 2) == {"subject_names_name"}
    assert r.verdict == "maybe" and r.candidates[0].commit.commit == f"{1:040x}"


def test_an_id_inside_a_longer_number_or_only_the_body_is_weaker() -> None:
    r = ranked(REPORT, [commit(1, "bump 143950"), commit(2, "misc\n\nalso touches 14395")])
    assert [c.commit.commit for c in r.candidates] == [f"{2:040x}"]
    assert codes(r, 2) == {"message_names_entity"}
    assert r.verdict == "none"  # 15 points: below the bar for a claim


def test_rows_keyed_by_the_entity_outrank_an_id_in_another_column() -> None:
    keyed = LineChange(
        "sql/updates/world/2024_quest.sql",
        "added",
        "DELETE FROM `quest_template_addon` WHERE `ID`=14395;",
        "14395",
    )
    other = LineChange(
        "sql/updates/world/2024_loot.sql",
        "added",
        "UPDATE `creature_template` SET `KillCredit1`=14395 WHERE `entry`=3;",
        "14395",
    )
    r = ranked(
        REPORT,
        [
            commit(1, "DB/Quest: fixes", ["sql/updates/world/2024_quest.sql"]),
            commit(2, "DB/Creature: credit", ["sql/updates/world/2024_loot.sql"]),
        ],
        {f"{1:040x}": [keyed], f"{2:040x}": [other]},
    )
    assert codes(r, 1) == {"changes_entity_rows"}
    assert codes(r, 2) == {"changes_entity_id"}
    assert r.candidates[0].commit.commit == f"{1:040x}"


def test_keyed_positions() -> None:
    assert keyed_by("(14395, 0, 'Gasping for Breath'),", "14395", KEYS)
    assert keyed_by("INSERT INTO `quest_template` VALUES (14395, 2);", "14395", KEYS)
    assert keyed_by("SET @ENTRY := 14395;", "14395", KEYS)
    assert keyed_by(
        "DELETE FROM creature_queststarter WHERE quest IN (1, 14395);", "14395", KEYS | {"quest"}
    )
    assert not keyed_by("-- 14395: Gasping for Breath", "14395", KEYS)
    assert not keyed_by("(1, 14395, 0),", "14395", KEYS)
    assert not keyed_by("UPDATE t SET RewardItem=14395 WHERE ID=5;", "14395", KEYS)
    assert not keyed_by("(1, 'x' /* 14395 */),", "14395", KEYS)


def test_a_row_of_another_type_with_the_same_number_is_not_keyed_by_the_entity() -> None:
    keys = KeyMap(
        frozenset({"entryorguid", "id"}),
        {("smart_scripts", "entryorguid"): frozenset({"creature"})},
    )
    line = "DELETE FROM `smart_scripts` WHERE `entryorguid`=36440 AND `source_type`=0;"
    assert not keyed_by(line, "36440", keys, frozenset({"quest"}))
    assert keyed_by(line, "36440", keys, frozenset({"creature", "quest"}))
    assert keyed_by(line, "36440", keys)  # the ID's type unknown: the column decides
    # A table the map does not know: the column decides.
    assert keyed_by("DELETE FROM other WHERE ID=36440;", "36440", keys, frozenset({"quest"}))


def test_a_commit_touching_the_entitys_script() -> None:
    clues = ReportClues(
        script_names=("npc_wounded_sailor",),
        script_files=("src/server/scripts/Kalimdor/zone_azshara.cpp",),
    )
    r = ranked(
        clues,
        [
            commit(1, "Scripts: rewrite", ["src/server/scripts/Kalimdor/zone_azshara.cpp"]),
            commit(2, "Scripts: other zone", ["src/server/scripts/Kalimdor/zone_durotar.cpp"]),
        ],
    )
    assert codes(r, 1) == {"touches_script_file"}
    assert len(r.candidates) == 1


# -- focus and reverts --------------------------------------------------------


def test_a_mass_change_ranks_below_the_focused_fix_and_says_so() -> None:
    dump = commit(2, "Release Vcore DB V1.0", ["sql/base/world_full.sql"], total=350)
    focused = commit(1, "(Core/Smart Script) Gasping for Breath - Quest: 14395 (#33)")
    changes = {
        dump.commit: [LineChange("sql/base/world_full.sql", "added", "(14395, 2, 0),", "14395")]
    }
    r = ranked(REPORT, [focused, dump], changes)
    assert [c.commit.commit for c in r.candidates] == [focused.commit, dump.commit]
    assert "mass_change" in codes(r, 2)


def test_a_bare_id_in_a_mass_change_claims_nothing() -> None:
    dump = commit(1, "Import 2024 DB", ["sql/a.sql"], total=MASS_FILES + 1)
    line = LineChange("sql/a.sql", "added", "UPDATE t SET x=14395 WHERE y=2;", "14395")
    assert ranked(REPORT, [dump], {dump.commit: [line]}).verdict == "none"


def test_a_later_revert_cancels_the_fix() -> None:
    fix = commit(1, "Core/Quest: fix 14395\n\nCloses #41")
    revert = commit(2, f'Revert "Core/Quest: fix 14395"\n\nThis reverts commit {fix.commit}.')
    r = ranked(REPORT, [fix, revert])
    assert r.verdict == "none" and r.candidates == ()  # the revert itself is no fix either
    assert r.reverted == ((fix.commit, revert.commit),)


def test_reverting_the_blamed_commit_is_a_fix() -> None:
    cause = commit(1, "Core/Spells: rework proc flags")
    revert = commit(
        2, f'Revert "Core/Spells: rework proc flags"\n\nThis reverts commit {cause.commit}.'
    )
    clues = ReportClues(commits=(LinkedCommit(cause.commit[:9], cause=True),))
    r = ranked(clues, [cause, revert])
    assert r.verdict == "maybe" and codes(r, 2) == {"reverts_blamed_commit"}


# -- ranking and negative controls -------------------------------------------


def test_the_ranking_is_deterministic() -> None:
    commits = [commit(n, f"Quests: 14395 part {n}") for n in range(1, 6)]
    first = ranked(REPORT, commits)
    again = ranked(REPORT, list(reversed(commits)))
    assert [c.commit.commit for c in first.candidates] == [
        c.commit.commit for c in again.candidates
    ]
    assert first.candidates[0].commit.commit == f"{5:040x}"  # equal scores: the newest first


def test_an_unfixed_report_gets_no_claim_from_unrelated_history() -> None:
    history = [
        commit(1, "Core/Spells: fix a crash in Spell::Cast (#12)"),
        commit(2, "DB/Creature: move 3 spawns", ["sql/updates/world/1.sql"]),
        commit(3, "Build: update the CI image", [".github/workflows/ci.yml"]),
        commit(4, "Merge pull request #40 from dev/branch"),
    ]
    r = ranked(REPORT, history)
    assert r.verdict == "none" and r.candidates == ()


# -- the functions a commit changed in a file the log names --------------------

UNIT = "src/server/game/Entities/Unit/Unit.cpp"


def test_a_change_inside_a_traced_function_is_a_change_of_it() -> None:
    clues = ReportClues(files=("Unit.cpp",), functions=("DealDamage",))
    inside, elsewhere = commit(2, "Core/Unit: guard", [UNIT]), commit(1, "Core/Unit: tidy", [UNIT])
    headers = {
        (inside.commit, UNIT): ("uint32 Unit::DealDamage(Unit* victim)",),
        (elsewhere.commit, UNIT): ("uint32 Unit::CalcAbsorb(Unit* victim)",),
    }
    r = rank(clues, [inside, elsewhere], {}, key_columns=KEYS, headers=headers)
    assert codes(r, 2) == {"changes_trace_function", "touches_trace_file"}
    # Another function of the same file: a weak reason, no claim on its own.
    assert codes(r, 1) == {"touches_trace_file_elsewhere"}
    alone = rank(clues, [elsewhere], {}, key_columns=KEYS, headers=headers)
    assert alone.verdict == "none"


def test_a_file_whose_functions_were_not_read_keeps_the_file_reason() -> None:
    clues = ReportClues(files=("Unit.cpp",), functions=("DealDamage",))
    touched = commit(1, "Core/Unit: tidy", [UNIT])
    unread = rank(clues, [touched], {}, key_columns=KEYS, headers={(touched.commit, UNIT): None})
    assert codes(unread, 1) == {"touches_trace_file"}
    # A log that names no function: the file is all there is to match.
    no_functions = ReportClues(files=("Unit.cpp",))
    headers = {(touched.commit, UNIT): ("void Unit::Other()",)}
    plain = rank(no_functions, [touched], {}, key_columns=KEYS, headers=headers)
    assert codes(plain, 1) == {"touches_trace_file"}


# -- what the row change does ---------------------------------------------------

TEXT_KEYS = KeyMap(
    frozenset({"id"}),
    {("quest_template", "id"): frozenset({"quest"})},
    {"quest_template": frozenset({"logtitle", "logdescription"})},
)


def test_a_change_of_only_the_texts_of_the_entitys_row_is_weak() -> None:
    clues = ReportClues(ids=("26294",), id_types={"26294": frozenset({"quest"})})
    text = "UPDATE `quest_template` SET `LogDescription`='Test, the bombs.' WHERE `ID`=26294;"
    change = {f"{1:040x}": [LineChange("sql/u.sql", "added", text, "26294")]}
    r = rank(clues, [commit(1, "DB/Misc: typo fixes")], change, key_columns=TEXT_KEYS)
    assert codes(r, 1) == {"changes_entity_texts"} and r.verdict == "none"
    behaviour = "UPDATE `quest_template` SET `LogDescription`='x', `Flags`=8 WHERE `ID`=26294;"
    change = {f"{1:040x}": [LineChange("sql/u.sql", "added", behaviour, "26294")]}
    r = rank(clues, [commit(1, "DB/Quest: flags")], change, key_columns=TEXT_KEYS)
    assert codes(r, 1) == {"changes_entity_rows"} and r.verdict == "maybe"


def test_sets_texts_only() -> None:
    assert sets_texts_only("UPDATE quest_template SET LogTitle='a = b' WHERE ID=1;", TEXT_KEYS)
    assert not sets_texts_only("UPDATE quest_template SET Flags=1 WHERE ID=1;", TEXT_KEYS)
    assert not sets_texts_only("UPDATE creature_template SET name='x' WHERE entry=1;", TEXT_KEYS)
    assert not sets_texts_only("INSERT INTO quest_template VALUES (1, 'x');", TEXT_KEYS)
    assert not sets_texts_only("UPDATE quest_template SET LogTitle='x' WHERE ID=1;", KEYS)


# -- a commit made for another report ------------------------------------------


def test_a_commit_closing_another_issue_of_this_repository_is_weak() -> None:
    other = commit(1, "DB/Quest: Gasping for Breath needs the previous quest\n\nCloses #57")
    r = ranked(REPORT, [other])
    assert "closes_other_report" in codes(r, 1) and r.verdict == "none"
    # The same commit for a report of another tracker: #57 is not known to be another.
    foreign = ReportClues(number=57, repository="someone/fork", names=REPORT.names)
    assert "closes_other_report" not in codes(ranked(foreign, [other]), 1)
    assert ranked(foreign, [other]).verdict == "maybe"
    # Closing this very report is "fixed by".
    assert ranked(REPORT, [commit(1, "fix\n\nCloses #41")]).verdict == "fixed_by"


# -- the blamed commit lies before the candidates ----------------------------------


def test_the_blamed_commit_is_looked_up_in_the_whole_line() -> None:
    cause = commit(1, "Core/Loot: send the release to the group", ["src/Loot.cpp"])
    fix = commit(2, "Core/Loot: release once", ["src/Loot.cpp"])
    clues = ReportClues(commits=(LinkedCommit(cause.commit, cause=True),))
    # The candidates are the commits after the report's revision, the blamed one.
    r = rank(clues, [fix], {}, key_columns=KEYS, history=[fix, cause])
    assert codes(r, 2) == {"same_files_as_cause"}
    assert rank(clues, [fix], {}, key_columns=KEYS).candidates == ()


def test_a_revert_of_a_blamed_commit_before_the_candidates() -> None:
    cause = commit(1, "Core/Vehicles: seat first")
    revert = commit(2, f'Revert "Core/Vehicles: seat first"\n\nThis reverts commit {cause.commit}.')
    clues = ReportClues(commits=(LinkedCommit(cause.commit[:12], cause=True),))
    r = rank(clues, [revert], {}, key_columns=KEYS, history=[revert, cause])
    assert codes(r, 2) == {"reverts_blamed_commit"}
    assert r.reverted == ((cause.commit, revert.commit),)
