"""Reports for the "already fixed?" corpus, as ``gh issue view --json`` (and one GitHub
REST object) gives them, each with the label of the ``corpus_history`` commit that
fixed it, or None when the history holds no fix (the negative controls).

Written in the styles public trackers show: the issue template's headings, a
wowhead link, a GM command, an NPC ID, a crash log with its frames, a link to
the pull request or commit that fixed it, a commit of another fork, a revision of
this repository, a name and nothing else. ``{label}`` stands for the commit of
that label (a report that names one of this repository's commits).
"""

from __future__ import annotations

from typing import Any

OURS = "vcore/vcore"
SISTER = "sister/catacore"


def gh(number: int, title: str, body: str, created: str, repository: str = OURS) -> dict[str, Any]:
    return {
        "number": number,
        "title": title,
        "body": body,
        "url": f"https://github.com/{repository}/issues/{number}",
        "author": {"login": f"player{number}"},
        "labels": [{"name": "Bug"}],
        "createdAt": created,
        "state": "OPEN",
    }


def template(current: str, expected: str, steps: str, revision: str = "") -> str:
    """The bug-report form most cores use."""
    body = (
        f"### Current behaviour\n\n{current}\n\n### Expected behaviour\n\n{expected}\n\n"
        f"### Steps to reproduce the problem\n\n{steps}\n\n"
    )
    if revision:
        body += f"### Core revision\n\n{revision}\n\n"
    return body + "### Operating system\n\nUbuntu 22.04\n"


FIXED: tuple[tuple[dict[str, Any], str], ...] = (
    (
        gh(
            151,
            "[Quest] Gasping for Breath",
            template(
                "The drowning watchmen stay in the water, nothing happens when I dive to them.\n"
                "https://www.wowhead.com/quest=14395/gasping-for-breath",
                "I can carry them to the shore.",
                "1. `.quest add 14395`\n2. swim to a watchman",
                "rev unknown, repack from last winter",
            ),
            "2023-06-20T18:02:11Z",
        ),
        "gasping",
    ),
    (
        gh(
            152,
            "Lazy Peon does not wake up",
            "The Lazy Peon NPCs in Durotar keep sleeping when I hit them with the Blackjack, so "
            "the quest never progresses. Worked on retail.",
            "2023-07-28T09:40:00Z",
        ),
        "peon",
    ),
    (
        gh(
            153,
            "Crash on summon",
            "Server crashed when a warlock summoned right after a teleport.\n\n```\n"
            "Program received signal SIGSEGV, Segmentation fault.\n"
            "#0  0x0000555555a1b2c3 in Map::SummonCreature (this=0x0, entry=416) at "
            "/home/wow/core/src/server/game/Maps/Map.cpp:3310\n"
            "#1  0x0000555555c0ffee in Spell::EffectSummonType (this=0x7fffd8001230, "
            "effIndex=EFFECT_0) at /home/wow/core/src/server/game/Spells/SpellEffects.cpp:2311\n"
            "#2  0x0000555555c0aaaa in Spell::HandleEffects (this=0x7fffd8001230) at "
            "/home/wow/core/src/server/game/Spells/Spell.cpp:4890\n```\n",
            "2023-06-25T22:13:05Z",
        ),
        "summon",
    ),
    (
        gh(
            154,
            "Worgen run back to spawn in Gilneas",
            "Rampaging worgen on the stairs of the merchant square evade all the time.\n\n"
            "Maybe https://github.com/vcore/vcore/pull/92 fixes it? Did not test.",
            "2023-10-18T11:00:00Z",
        ),
        "worgen",
    ),
    (
        gh(
            57,
            "Secrets of the Tower can be taken too early",
            "**Description:** quest 26290 is offered before the previous one is done.\n"
            "**Expected:** it needs the previous quest.\n**Branch:** master",
            "2024-03-30T08:00:00Z",
        ),
        "secrets",
    ),
    (
        gh(
            156,
            "[NPC] Gwen Armstead wrong gossip",
            template(
                "NPC ID: 34571 shows the innkeeper menu.",
                "Her own menu.",
                "talk to her in Gilneas",
            ),
            "2023-08-02T15:30:00Z",
        ),
        "gwen",
    ),
    (
        gh(
            157,
            "They Have Allies, But So Do We - no credit",
            "Killing the worgen gives no credit for quest 24681.\n\n"
            f"Core: https://github.com/{SISTER}/commit/3f9a0c1d2e4b (their master)",
            "2024-02-11T10:00:00Z",
        ),
        "allies",
    ),
    (
        gh(
            158,
            "Forsaken Catapult broken",
            template(
                "The catapult (npc 36283) does not launch me.",
                "It throws the passenger onto the wall.",
                "board a catapult at the Greymane wall",
                "{copyright}",
            ),
            "2023-10-01T19:00:00Z",
        ),
        "catapult",
    ),
    (
        gh(
            159,
            "Holy Radiance only heals the paladin",
            "Spell 82327 (Holy Radiance) heals only me, not my group.\n"
            "https://www.wowhead.com/spell=82327",
            "2023-05-30T12:00:00Z",
        ),
        "radiance",
    ),
    (
        {
            "number": 160,
            "title": "Worn Wolf Pelt drops from every wolf",
            "body": "item 62457 drops far too often, 100% from the wolves in Gilneas.",
            "html_url": "https://github.com/vcore/vcore/issues/160",
            "user": {"login": "player160"},
            "labels": [],
            "created_at": "2023-12-20T07:45:00Z",
            "state": "open",
        },
        "pelt",
    ),
    (
        gh(
            161,
            "Double guards at Sentinel Hill",
            "Two guards stand in each other.\n`.npc info` says entry 44469, guids 270001 and "
            "270002.",
            "2024-02-01T16:20:00Z",
        ),
        "sentinel",
    ),
    (
        gh(
            162,
            "Evacuate the Merchant Square not completable",
            "Quest Evacuate the Merchant Square: opening the doors does not count.",
            "2023-09-01T13:00:00Z",
        ),
        "merchant",
    ),
    (
        gh(
            163,
            "Crash in DealDamage",
            "```\nCrash dump\n#0 0x00007f in Unit::DealDamage (attacker=0x7f12, victim=0x0, "
            "damage=1200) at Unit.cpp:870\n#1 0x00007f in Unit::AttackerStateUpdate "
            "(this=0x7f12) at Unit.cpp:2140\n```\nhappens when a pet kills something in a "
            "dungeon",
            "2024-05-10T03:00:00Z",
        ),
        "dealdamage",
    ),
    (
        gh(
            164,
            "Group loot released twice",
            "Since commit {cause_loot} the loot window closes for the whole group when the "
            "leader leaves, and the loot is sent twice.",
            "2023-04-20T20:00:00Z",
        ),
        "loot",
    ),
    (
        gh(
            165,
            "Passengers lose the vehicle aura",
            "Broken since {cause_vehicle}: passengers of the siege engines lose their aura.",
            "2023-09-12T09:00:00Z",
        ),
        "vehicle_revert",
    ),
    (
        gh(
            166,
            "[Quest][Worgen] The Hungry Ettin 14416 can't mount",
            "the ettin does not let me mount, cant finish",
            "2023-12-02T21:00:00Z",
        ),
        "ettin",
    ),
    (
        gh(
            167,
            ".npc add puts the NPC in the wrong phase",
            "Spawning with `.npc add` while phased makes the NPC invisible. PR #134 looks like "
            "it addresses this.",
            "2024-01-30T10:00:00Z",
        ),
        "npc_add",
    ),
    (
        gh(
            168,
            "Quest items gone after relog",
            template(
                "Quest items disappear when I log out with the quest active.",
                "They stay.",
                "take a quest, relog",
                "{aura}",
            )
            + "\nLooks like https://github.com/vcore/vcore/commit/{relog} is the fix on master, "
            "we run an older build.",
            "2024-03-15T10:00:00Z",
        ),
        "relog",
    ),
    (
        gh(
            169,
            "Lord Godfrey silent",
            "https://www.wowhead.com/npc=35906/lord-godfrey does not say anything at the gate "
            "event.",
            "2024-01-05T18:00:00Z",
        ),
        "godfrey",
    ),
    (
        gh(
            170,
            "Ancient Tablet cannot be used",
            "The Ancient Tablet (object 196394) cannot be clicked.",
            "2024-03-02T11:11:11Z",
        ),
        "tablet",
    ),
    (
        gh(
            171,
            "Leader of the Pack available without the prequest",
            "quest 14386 shows up before I finished the quest before it",
            "2024-03-25T17:00:00Z",
        ),
        "leader",
    ),
    (
        gh(
            172,
            "By the Skin of His Teeth does not complete",
            "Surviving the waves gives nothing, quest 14154 stays incomplete.\n\n"
            f"Using {SISTER} rev 8c2d41e0a9 (2022).",
            "2024-05-02T09:00:00Z",
        ),
        "skin",
    ),
    (
        gh(
            173,
            "Assertion on aura removal",
            "```\nASSERTION FAILED:\n  GetOwner()\n in "
            "/src/server/game/Spells/Auras/SpellAuras.cpp:612 (Aura::_Remove)\n```\n"
            "when a player logs out while his pet's aura expires",
            "2024-02-20T06:00:00Z",
        ),
        "aura",
    ),
)

UNFIXED: tuple[dict[str, Any], ...] = (
    gh(
        251,
        "Weapons of Mass Dysfunction cannot be turned in",
        "quest 26294: the quest giver has no turn-in option.",
        "2023-04-10T10:00:00Z",
    ),
    gh(
        252,
        "Crash in Map::Update",
        "```\n#0 0x7f in Map::Update (this=0x7f, diff=50) at Map.cpp:512\n#1 0x7f in "
        "MapUpdater::Work at MapUpdater.cpp:70\n```\nrandom, maybe every other day",
        "2024-04-01T00:00:00Z",
    ),
    gh(
        253,
        "Garrosh Hellscream has no gossip",
        "npc 39605 in Orgrimmar shows no gossip at all.",
        "2023-02-01T12:00:00Z",
    ),
    gh(
        254,
        "Pets do not follow through portals",
        "My pet stays behind when I take a portal to the capital.",
        "2023-04-10T12:00:00Z",
    ),
    gh(
        255,
        "Ring tooltip wrong",
        f"item 65613 shows the wrong stats.\nRevision: {SISTER}@77ab21c",
        "2023-11-11T11:00:00Z",
    ),
    gh(
        256,
        "Mounts too slow in Twilight Highlands",
        "flying feels slower than it should in Twilight Highlands",
        "2024-01-01T00:00:00Z",
    ),
    gh(
        257,
        "Dual wield parry wrong",
        "A port of https://github.com/other/fork/pull/92 would fix parry with two weapons.",
        "2023-10-01T00:00:00Z",
    ),
    gh(
        258,
        "Chest in Deadmines cannot be looted",
        "gameobject 195327 cannot be looted after the boss.",
        "2024-04-01T00:00:00Z",
    ),
    gh(
        58,
        "Secrets of the Tower reward is wrong",
        "The reward of Secrets of the Tower is a cloth item for everyone, plate users too.",
        "2024-03-01T00:00:00Z",
    ),
)


__all__ = ["FIXED", "OURS", "UNFIXED"]
