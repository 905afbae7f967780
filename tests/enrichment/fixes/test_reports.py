"""Reports as trackers see them, each with the fix it expects (or none), against one
history: the fix must rank first, and no unfixed report may get a "fixed by" (at
most one of the eight gets a first-ranked "maybe").

The reports are written in the styles of public trackers (issue templates, GM
commands, crash logs, links); the IDs a build would read from the database are
given beside each, as the facts would carry them.
"""

from __future__ import annotations

from typing import Any

import pytest

from viano_bug_analysis.enrichment.fixes.clues import report_clues
from viano_bug_analysis.enrichment.fixes.evidence import KeyMap, LineChange, rank
from viano_bug_analysis.project_research.git_history import ChangedFile, HistoryCommit

OURS = "https://github.com/vcore/vcore.git"
KEYS = KeyMap(
    frozenset({"id", "entry", "creatureid", "questid", "entryorguid"}),
    {("smart_scripts", "entryorguid"): frozenset({"creature"})},
)


def c(n: int, subject: str, files: list[str], *, body: str = "", total: int = 0) -> HistoryCommit:
    return HistoryCommit(
        commit=f"{n:040x}",
        parents=(f"{n - 1:040x}",),
        author="dev",
        author_time=1_700_000_000 + n * 3600,
        committer_time=1_700_000_000 + n * 3600,
        message=subject + ("\n\n" + body if body else ""),
        message_truncated=False,
        files_total=total or len(files),
        files=tuple(ChangedFile(p, "modified") for p in files),
    )


HISTORY = [
    c(1, "Release Vcore DB V1.0", ["sql/base/world_full.sql"], total=412),
    c(2, "Core/Misc: fix build with newer compilers", ["src/common/Define.h"]),
    c(3, "(Core/Smart Script) Gasping for Breath - Quest: 14395 (#33)", ["sql/updates/1.sql"]),
    c(4, "Scripts/Gilneas: the wounded guard stands up (#92)", ["src/scripts/zone_gilneas.cpp"]),
    c(5, "Core/Unit: check the victim before dealing damage", ["src/game/Unit/Unit.cpp"]),
    c(6, "DB/Loot: update drop chances", ["sql/updates/2.sql"]),
    c(7, "Core/Quest: keep the credit on relog", ["src/game/Quests/Q.cpp"], body="Closes #41"),
    c(8, "Build: bump the CI image", [".github/workflows/ci.yml"]),
    c(9, "DB/Creature: Sergeant Cleese says his line once", ["sql/updates/3.sql"]),
]
CHANGES = {
    f"{1:040x}": [LineChange("sql/base/world_full.sql", "added", "(14395, 2, 0),", "14395")],
    f"{3:040x}": [
        LineChange(
            "sql/updates/1.sql",
            "added",
            "DELETE FROM smart_scripts WHERE entryorguid=36440;",
            "36440",
        )
    ],
    f"{5:040x}": [
        LineChange(
            "src/game/Unit/Unit.cpp", "added", "void Unit::DealDamage(Unit* victim)", "DealDamage"
        )
    ],
    f"{6:040x}": [
        LineChange("sql/updates/2.sql", "added", "UPDATE t SET Chance=5 WHERE Item=36440;", "36440")
    ],
}


def report(text: str, number: int, repository: str = "vcore/vcore") -> dict[str, Any]:
    return {
        "title": text.split("\n", 1)[0][:80],
        "text": text,
        "metadata": {
            "source": {
                "url": f"https://github.com/{repository}/issues/{number}",
                "repository": repository,
                "number": number,
            }
        },
    }


def mention(entity_id: int, entity_type: str = "quest") -> dict[str, Any]:
    return {"kind": "case_mention", "entity_type": entity_type, "entity_id": entity_id}


FIXED = [
    (  # the quest by ID and name, a base dump naming the same ID in a row
        report(
            "### Current Behaviour\n\nQuest Gasping for Breath (https://www.wowhead.com/quest=14395)"
            " - the drowning watchmen never get up.\n\n### Steps\n1. `.quest add 14395`\n",
            12,
        ),
        [
            mention(14395),
            {"kind": "project_entity", "entity_id": 14395, "name": "Gasping for Breath"},
        ],
        3,
    ),
    (  # the reporter links the pull request that fixed it
        report(
            "wounded guard in gilneas stays on the floor, maybe "
            "https://github.com/vcore/vcore/pull/92 fixes it?",
            13,
        ),
        [],
        4,
    ),
    (  # a crash log
        report(
            "worldserver crash when pet attacks\n```\n#0 0x5555 in Unit::DealDamage (this=0x0)"
            " at /build/src/game/Unit/Unit.cpp:812\n```",
            14,
        ),
        [],
        5,
    ),
    (  # the message closes the issue
        report("Quest credit lost when relogging, see title", 41),
        [],
        7,
    ),
]

UNFIXED = [
    report("Orgrimmar auction house npc does not talk to me", 50),
    report("**Description:** quest 26290 cannot be turned in\n**Expected:** it can", 51),
    report("crash in Map::Update\n```\n#0 in Map::Update (diff=50) at Map.cpp:12\n```", 52),
    report("The mount speed is wrong in Twilight Highlands", 53),
    report("Spell 36440 has no cooldown (tested on rev 1a2b3c4)", 54),
    report("drop chance of item 99001 too high, see PR #120 upstream", 55, "someone/fork"),
    report("Sergeant Cleese repeats his line forever (see #9)", 56, "someone/fork"),
    report("Can't loot the chest in Deadmines", 57),
]
UNFIXED_FACTS: dict[int, list[dict[str, Any]]] = {
    51: [mention(26290)],
    54: [mention(36440, "spell")],
    55: [mention(99001, "item")],
}


@pytest.mark.parametrize(("case", "facts", "fix"), FIXED, ids=lambda v: "")
def test_the_fix_ranks_first(case: dict[str, Any], facts: list[dict[str, Any]], fix: int) -> None:
    clues = report_clues(case, facts, repository_url=OURS)
    ranking = rank(clues, list(reversed(HISTORY)), CHANGES, key_columns=KEYS)
    assert ranking.verdict in ("fixed_by", "maybe")
    assert ranking.candidates[0].commit.commit == f"{fix:040x}"
    assert ranking.candidates[0].reasons  # every lead shows why


def test_unfixed_reports_get_no_fixed_by_and_rarely_a_maybe() -> None:
    verdicts = []
    for case in UNFIXED:
        facts = UNFIXED_FACTS.get(case["metadata"]["source"]["number"], [])
        clues = report_clues(case, facts, repository_url=OURS)
        verdicts.append(rank(clues, list(reversed(HISTORY)), CHANGES, key_columns=KEYS).verdict)
    assert "fixed_by" not in verdicts
    # Report 54's spell ID is also a creature's, and a commit changes that creature's
    # rows: the map says smart_scripts.entryorguid holds creatures, so no claim.
    assert verdicts.count("maybe") <= 1, verdicts
    assert verdicts[4] == "none"
