"""A server's history for the "already fixed?" corpus, written with ``git fast-import``.

Eighteen months of a TrinityCore-lineage fork, newest last, in the shapes such a
history has: focused fixes ("Core/Quests: fix credit for <quest> (#NN)", "DB/SAI:
<npc> ..."), release imports touching a hundred files full of IDs, a copyright
sweep over every source file, unrelated build and log commits, a fix and its revert,
a cleanup that edits the rows of several quests at once. Each commit that fixes a
report of ``corpus_reports`` has a label; the reports name those labels.

The world (``WORLD``) is what the database would say of the entities the reports
name: type, ID, name and ScriptName. It is given once for all reports, never per
report, as the build's lookups would read it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from tests.project_research.git_fixtures import GIT_ENV


@dataclass(frozen=True)
class Entity:
    entity_type: str
    entity_id: int
    name: str
    script_name: str | None = None


WORLD = (
    Entity("quest", 14395, "Gasping for Breath"),
    Entity("creature", 36440, "Drowning Watchman", "npc_drowning_watchman"),
    Entity("quest", 25134, "Lazy Peons"),
    Entity("creature", 10556, "Lazy Peon", "npc_lazy_peon"),
    Entity("creature", 35830, "Rampaging Worgen", "npc_rampaging_worgen"),
    Entity("quest", 26290, "Secrets of the Tower"),
    Entity("creature", 34571, "Gwen Armstead"),
    Entity("quest", 24681, "They Have Allies, But So Do We"),
    Entity("creature", 36283, "Forsaken Catapult", "npc_forsaken_catapult"),
    Entity("spell", 82327, "Holy Radiance", "spell_pal_holy_radiance"),
    Entity("item", 62457, "Worn Wolf Pelt"),
    Entity("creature", 44469, "Sentinel Hill Guard"),
    Entity("quest", 14098, "Evacuate the Merchant Square"),
    Entity("quest", 14416, "The Hungry Ettin"),
    Entity("creature", 35906, "Lord Godfrey", "npc_lord_godfrey"),
    Entity("gameobject", 196394, "Ancient Tablet"),
    Entity("quest", 14386, "Leader of the Pack"),
    Entity("quest", 14154, "By the Skin of His Teeth"),
    Entity("quest", 26294, "Weapons of Mass Dysfunction"),
    Entity("creature", 39605, "Garrosh Hellscream", "npc_garrosh_hellscream"),
    Entity("item", 65613, "Ring of the Boy Emperor"),
    Entity("gameobject", 195327, "Sturdy Treasure Chest"),
)

GILNEAS = "src/server/scripts/EasternKingdoms/Gilneas/gilneas_city.cpp"
DUROTAR = "src/server/scripts/Kalimdor/zone_durotar.cpp"
ORGRIMMAR = "src/server/scripts/Kalimdor/zone_orgrimmar.cpp"
PALADIN = "src/server/scripts/Spells/spell_paladin.cpp"
EFFECTS = "src/server/game/Spells/SpellEffects.cpp"
AURAS = "src/server/game/Spells/Auras/SpellAuras.cpp"
UNIT = "src/server/game/Entities/Unit/Unit.cpp"
LOOT = "src/server/game/Handlers/LootHandler.cpp"
MAP = "src/server/game/Maps/Map.cpp"
PET = "src/server/game/Entities/Pet/Pet.cpp"
VEHICLE = "src/server/game/Entities/Vehicle/Vehicle.cpp"
QUESTS = "src/server/game/Handlers/QuestHandler.cpp"
CS_NPC = "src/server/scripts/Commands/cs_npc.cpp"
LOG = "src/server/shared/Logging/Log.cpp"
BASE = "sql/base/world_full.sql"
FILLER = tuple(f"src/server/game/Misc/Part{n:03d}.cpp" for n in range(110))


def _script(name: str, body: str) -> str:
    return (
        f"struct {name} : public ScriptedAI\n{{\n    {name}(Creature* c) : ScriptedAI(c) {{ }}\n"
        f"{body}}};\n\n"
    )


def _initial_files() -> dict[str, str]:
    header = "// Copyright (C) 2008-2022 TrinityCore\n"
    files = {
        GILNEAS: header
        + _script("npc_drowning_watchman", "    void Reset() override { me->SetHealth(1); }\n")
        + _script("npc_rampaging_worgen", "    void EnterEvadeMode() override { Evade(); }\n")
        + _script("npc_lord_godfrey", "    void Reset() override { }\n")
        + _script("npc_forsaken_catapult", "    void PassengerBoarded() override { }\n")
        + "void AddSC_gilneas_city()\n{\n    new npc_drowning_watchman();\n"
        "    new npc_rampaging_worgen();\n    new npc_lord_godfrey();\n"
        "    new npc_forsaken_catapult();\n}\n",
        DUROTAR: header
        + _script("npc_lazy_peon", "    void SpellHit(Unit*, SpellInfo const*) override { }\n")
        + "void AddSC_durotar()\n{\n    new npc_lazy_peon();\n}\n",
        ORGRIMMAR: header
        + _script("npc_garrosh_hellscream", "    void sGossipHello(Player*) override { }\n")
        + "void AddSC_orgrimmar()\n{\n    new npc_garrosh_hellscream();\n}\n",
        PALADIN: header
        + "class spell_pal_judgement : public SpellScript\n{\n    void HandleScript() { }\n};\n\n"
        "class spell_pal_holy_radiance : public SpellScript\n{\n"
        "    void HandleHeal() { GetCaster()->CastSpell(GetCaster(), 86452); }\n};\n\n"
        "void AddSC_paladin_spell_scripts()\n{\n    RegisterSpellScript(spell_pal_judgement);\n"
        "    RegisterSpellScript(spell_pal_holy_radiance);\n}\n",
        EFFECTS: header + "void Spell::EffectHeal(SpellEffIndex)\n{\n    heal();\n}\n\n"
        "void Spell::EffectSummonType(SpellEffIndex)\n{\n"
        "    Map* map = m_caster->GetMap();\n    map->SummonCreature(entry, pos);\n}\n",
        AURAS: header + "void Aura::_Remove(AuraRemoveMode mode)\n{\n"
        "    ASSERT(GetOwner());\n    RemoveAll(mode);\n}\n",
        UNIT: header + "uint32 Unit::CalcAbsorb(Unit* a, uint32 d)\n{\n    return d;\n}\n\n"
        "uint32 Unit::DealDamage(Unit* attacker, Unit* victim, uint32 damage)\n{\n"
        "    victim->ModifyHealth(-int32(damage));\n    return damage;\n}\n",
        LOOT: header + "void WorldSession::HandleLootReleaseOpcode(WorldPacket& recv)\n{\n"
        "    DoLootRelease(guid);\n}\n",
        MAP: header + "void Map::Update(uint32 diff)\n{\n    UpdateObjects(diff);\n}\n\n"
        "void Map::UnloadGrid(NGridType& grid)\n{\n    grid.Unload();\n}\n",
        PET: header + "void Pet::Update(uint32 diff)\n{\n    FollowOwner();\n}\n",
        VEHICLE: header + "void Vehicle::AddPassenger(Unit* unit, int8 seat)\n{\n"
        "    ApplyAura(unit);\n    Seat(unit, seat);\n}\n",
        QUESTS: header + "void WorldSession::HandleQuestgiverAcceptQuestOpcode(WorldPacket&)\n"
        "{\n    AddQuest();\n}\n",
        CS_NPC: header + "static bool HandleNpcAddCommand(ChatHandler* handler, uint32 id)\n{\n"
        "    creature->SetPhaseMask(1, true);\n}\n",
        LOG: header + "void Log::outMessage() { }\n",
        BASE: "-- the world database at the fork\n"
        + "".join(
            f"INSERT INTO `creature_template` VALUES ({e.entity_id}, '{e.name}');\n"
            for e in WORLD
            if e.entity_type == "creature"
        )
        + "".join(
            f"INSERT INTO `quest_template` VALUES ({e.entity_id}, '{e.name}');\n"
            for e in WORLD
            if e.entity_type == "quest"
        ),
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.12)\n",
        ".github/workflows/ci.yml": "image: ubuntu-20.04\n",
        "README.md": "Vcore\n",
    }
    files.update({path: header + f"void Part{n}() {{ }}\n" for n, path in enumerate(FILLER)})
    return files


Change = Callable[[dict[str, str]], None]


@dataclass(frozen=True)
class Step:
    label: str
    date: str  # YYYY-MM-DD
    author: str
    message: str
    change: Change


def _set(path: str, text: str) -> Change:
    def apply(files: dict[str, str]) -> None:
        files[path] = text

    return apply


def _edit(path: str, old: str, new: str) -> Change:
    def apply(files: dict[str, str]) -> None:
        assert old in files[path], (path, old)
        files[path] = files[path].replace(old, new, 1)

    return apply


def _all(*changes: Change) -> Change:
    def apply(files: dict[str, str]) -> None:
        for change in changes:
            change(files)

    return apply


def _release(stamp: str, count: int, ids: tuple[int, ...]) -> Change:
    """A release import: ``count`` update files, each inserting rows of many entities
    (every ID given lands in one of them, among filler IDs)."""

    def apply(files: dict[str, str]) -> None:
        for n in range(count):
            rows = [f"({90000 + n * 7 + k}, 0, 1)" for k in range(6)]
            if n < len(ids):
                rows.insert(2, f"({ids[n]}, 0, 1)")
            table = ("creature_template_addon", "quest_template_addon", "smart_scripts")[n % 3]
            files[f"sql/updates/world/{stamp}_{n:03d}.sql"] = (
                f"DELETE FROM `{table}` WHERE `entry` BETWEEN 90000 AND 99999;\n"
                f"INSERT INTO `{table}` VALUES\n" + ",\n".join(rows) + ";\n"
            )

    return apply


def _copyright(files: dict[str, str]) -> None:
    for path in list(files):
        if path.endswith(".cpp"):
            files[path] = files[path].replace("2008-2022", "2008-2023")


def _sql(path: str, text: str) -> Change:
    return _set(f"sql/updates/world/{path}", text)


# Every ID the releases carry: the reports' entities among them, as real imports do.
_IMPORTED = tuple(e.entity_id for e in WORLD)

HISTORY: tuple[Step, ...] = (
    Step("root", "2023-01-05", "Ann", "Initial import", lambda files: None),
    Step(
        "cmake",
        "2023-01-20",
        "Bob",
        "Build: require CMake 3.16",
        _set("CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\n"),
    ),
    Step(
        "skin",
        "2023-02-03",
        "Cid",
        "Core/Quests: fix credit for By the Skin of His Teeth (#12)",
        _sql(
            "2023_02_03_00.sql",
            "UPDATE `quest_template_addon` SET `SpecialFlags`=2 WHERE `ID`=14154;\n",
        ),
    ),
    Step(
        "absorb",
        "2023-02-20",
        "Dee",
        "Core/Unit: name the arguments of the absorb helper",
        _edit(
            UNIT,
            "Unit::CalcAbsorb(Unit* a, uint32 d)\n{\n    return d;",
            "Unit::CalcAbsorb(Unit* victim, uint32 damage)\n{\n    return damage;",
        ),
    ),
    Step(
        "release_2303",
        "2023-03-10",
        "Eve",
        "DB: release update 23.03",
        _release("2023_03_10", 130, _IMPORTED),
    ),
    Step(
        "judgement",
        "2023-03-25",
        "Fay",
        "Scripts/Spells: Judgement refreshes the seal",
        _edit(PALADIN, "void HandleScript() { }", "void HandleScript() { RefreshSeal(); }"),
    ),
    Step(
        "cause_loot",
        "2023-04-02",
        "Gus",
        "Core/Loot: send the loot release to the group (#20)",
        _edit(
            LOOT, "    DoLootRelease(guid);\n", "    DoLootRelease(guid);\n    SendToGroup(guid);\n"
        ),
    ),
    Step(
        "pets",
        "2023-04-15",
        "Hal",
        "Core/Pets: pets follow their owner through portals (#23)",
        _edit(PET, "FollowOwner();", "FollowOwner(); FollowThroughPortal();"),
    ),
    Step(
        "pets_revert",
        "2023-04-16",
        "Hal",
        'Revert "Core/Pets: pets follow their owner through portals (#23)"\n\n'
        "This reverts commit {pets}.",
        _edit(PET, "FollowOwner(); FollowThroughPortal();", "FollowOwner();"),
    ),
    Step(
        "cleanup",
        "2023-05-01",
        "Ivy",
        "DB/Misc: typo fixes in quest texts",
        _sql(
            "2023_05_01_00.sql",
            "UPDATE `quest_template` SET `LogDescription`='Help the citizens.' WHERE `ID`=14098;\n"
            "UPDATE `quest_template` SET `LogDescription`='Read the tome.' WHERE `ID`=26290;\n"
            "UPDATE `quest_template` SET `LogDescription`='Test the bombs.' WHERE `ID`=26294;\n",
        ),
    ),
    Step(
        "loot",
        "2023-05-20",
        "Jo",
        "Core/Loot: release the loot once when the leader leaves",
        _edit(LOOT, "    SendToGroup(guid);\n", "    if (!released)\n        SendToGroup(guid);\n"),
    ),
    Step(
        "log",
        "2023-06-01",
        "Kai",
        "Core/Misc: tidy the log messages",
        _set(LOG, "// Copyright (C) 2008-2022 TrinityCore\nvoid Log::outMessage() { flush(); }\n"),
    ),
    Step(
        "radiance",
        "2023-06-15",
        "Lu",
        "Scripts/Spells: Holy Radiance heals the allies around the paladin",
        _edit(
            PALADIN,
            "class spell_pal_holy_radiance : public SpellScript\n{\n"
            "    void HandleHeal() { GetCaster()->CastSpell(GetCaster(), 86452); }",
            "class spell_pal_holy_radiance : public SpellScript\n{\n"
            "    void HandleHeal()\n    {\n        for (Unit* ally : Allies())\n"
            "            GetCaster()->CastSpell(ally, 86452);\n    }",
        ),
    ),
    Step(
        "summon",
        "2023-07-01",
        "Max",
        "Core/Spells: fix a crash in Spell::EffectSummonType when the caster has no map (#31)",
        _edit(
            EFFECTS,
            "    Map* map = m_caster->GetMap();\n",
            "    Map* map = m_caster->FindMap();\n    if (!map)\n        return;\n",
        ),
    ),
    Step(
        "gasping",
        "2023-07-10",
        "Ned",
        "(Core/Smart Script) Gasping for Breath - Quest: 14395 (#33)",
        _sql(
            "2023_07_10_00.sql",
            "DELETE FROM `smart_scripts` WHERE `entryorguid`=36440 AND `source_type`=0;\n"
            "INSERT INTO `smart_scripts` VALUES\n(36440, 0, 0, 0, 8, 0, 100, 0, 68735, 0),\n"
            "(36440, 0, 1, 0, 61, 0, 100, 0, 0, 0);\n"
            "UPDATE `quest_template_addon` SET `SpecialFlags`=0 WHERE `ID`=14395;\n",
        ),
    ),
    Step(
        "ci",
        "2023-07-20",
        "Ott",
        "CI: cache the build directory",
        _set(".github/workflows/ci.yml", "image: ubuntu-20.04\ncache: build\n"),
    ),
    Step(
        "peon",
        "2023-08-05",
        "Pia",
        "Scripts/Durotar: Lazy Peon wakes up when hit by the Blackjack (#41)",
        _edit(
            DUROTAR,
            "void SpellHit(Unit*, SpellInfo const*) override { }",
            "void SpellHit(Unit*, SpellInfo const* spell) override\n"
            "    {\n        if (spell->Id == 19938)\n            WakeUp();\n    }",
        ),
    ),
    Step(
        "gwen",
        "2023-08-20",
        "Quinn",
        "DB/Gossip: Gwen Armstead offers the right menu",
        _sql(
            "2023_08_20_00.sql",
            "UPDATE `creature_template` SET `gossip_menu_id`=10676 WHERE `entry`=34571;\n",
        ),
    ),
    Step(
        "cause_vehicle",
        "2023-09-01",
        "Ray",
        "Core/Vehicles: seat the passenger before the aura applies",
        _edit(
            VEHICLE,
            "    ApplyAura(unit);\n    Seat(unit, seat);\n",
            "    Seat(unit, seat);\n    ApplyAura(unit);\n",
        ),
    ),
    Step(
        "merchant",
        "2023-09-10",
        "Sol",
        "Core/Quests: fix credit for Evacuate the Merchant Square (#77)",
        _sql(
            "2023_09_10_00.sql",
            "UPDATE `creature_template` SET `KillCredit1`=35830 WHERE `entry` IN (35660, 35661);\n",
        ),
    ),
    Step("copyright", "2023-09-25", "Tam", "Core/Misc: update the copyright headers", _copyright),
    Step(
        "vehicle_revert",
        "2023-10-05",
        "Ray",
        'Revert "Core/Vehicles: seat the passenger before the aura applies"\n\n'
        "This reverts commit {cause_vehicle}.",
        _edit(
            VEHICLE,
            "    Seat(unit, seat);\n    ApplyAura(unit);\n",
            "    ApplyAura(unit);\n    Seat(unit, seat);\n",
        ),
    ),
    Step(
        "worgen",
        "2023-10-20",
        "Uma",
        "Scripts/Gilneas: Rampaging Worgen no longer evade on the stairs (#92)",
        _edit(
            GILNEAS,
            "void EnterEvadeMode() override { Evade(); }",
            "void EnterEvadeMode() override { if (!OnStairs()) Evade(); }",
        ),
    ),
    Step(
        "allies",
        "2023-11-02",
        "Vic",
        "Core/Quests: fix credit for They Have Allies, But So Do We (#105)",
        _sql(
            "2023_11_02_00.sql",
            "UPDATE `quest_template_addon` SET `SpecialFlags`=0 WHERE `ID`=24681;\n",
        ),
    ),
    Step(
        "catapult",
        "2023-11-15",
        "Wes",
        "DB/SAI: Forsaken Catapult throws its passengers again",
        _sql(
            "2023_11_15_00.sql",
            "DELETE FROM `smart_scripts` WHERE `entryorguid`=36283 AND `source_type`=0;\n"
            "INSERT INTO `smart_scripts` VALUES\n(36283, 0, 0, 0, 27, 0, 100, 0, 0, 0);\n",
        ),
    ),
    Step(
        "release_2312",
        "2023-12-01",
        "Eve",
        "DB: release update 23.12",
        _release("2023_12_01", 110, _IMPORTED[::-1]),
    ),
    Step(
        "ettin",
        "2023-12-10",
        "Xan",
        "Core/Vehicles: The Hungry Ettin can be mounted again (#121)",
        _all(
            _edit(
                VEHICLE,
                "    ApplyAura(unit);\n",
                "    if (CanApply(unit))\n        ApplyAura(unit);\n",
            ),
            _sql(
                "2023_12_10_00.sql",
                "UPDATE `creature_template` SET `VehicleId`=591 WHERE `entry`=35566;\n",
            ),
        ),
    ),
    Step(
        "pelt",
        "2024-01-08",
        "Yva",
        "DB/Loot: lower the drop chance of Worn Wolf Pelt",
        _sql(
            "2024_01_08_00.sql",
            "UPDATE `creature_loot_template` SET `Chance`=35 WHERE `Item`=62457;\n",
        ),
    ),
    Step(
        "godfrey",
        "2024-01-20",
        "Zed",
        "DB/SAI: Lord Godfrey says his lines at the gate",
        _sql(
            "2024_01_20_00.sql",
            "DELETE FROM `creature_text` WHERE `CreatureID`=35906;\n"
            "INSERT INTO `creature_text` VALUES\n(35906, 0, 0, 'Hold the gate!', 14, 0);\n",
        ),
    ),
    Step(
        "npc_add",
        "2024-02-02",
        "Ann",
        "Core/Chat: .npc add keeps the phase of the GM (#134)",
        _edit(
            CS_NPC,
            "creature->SetPhaseMask(1, true);",
            "creature->SetPhaseMask(handler->GetSession()->GetPlayer()->GetPhaseMask(), true);",
        ),
    ),
    Step(
        "sentinel",
        "2024-02-15",
        "Bob",
        "DB/Creature: remove the doubled guards of Sentinel Hill",
        _sql(
            "2024_02_15_00.sql",
            "DELETE FROM `creature` WHERE `id`=44469 AND `guid` IN (270001, 270002);\n",
        ),
    ),
    Step(
        "aura",
        "2024-02-25",
        "Cid",
        "Core/Auras: don't assert when the owner is already gone",
        _edit(AURAS, "    ASSERT(GetOwner());\n", "    if (!GetOwner())\n        return;\n"),
    ),
    Step(
        "relog",
        "2024-03-01",
        "Dee",
        "Core/Quests: keep the quest items on relog",
        _edit(QUESTS, "    AddQuest();\n", "    AddQuest();\n    KeepItems();\n"),
    ),
    Step(
        "compiler",
        "2024-03-10",
        "Eve",
        "Core/Misc: fix the build with newer compilers",
        _set("src/server/shared/Define.h", "#define ATTR_NORETURN [[noreturn]]\n"),
    ),
    Step(
        "tablet",
        "2024-03-20",
        "Fay",
        "DB/GameObject: the Ancient Tablet can be read again (#140)",
        _sql(
            "2024_03_20_00.sql",
            "UPDATE `gameobject_template` SET `flags`=0 WHERE `entry`=196394;\n",
        ),
    ),
    Step(
        "leader",
        "2024-04-01",
        "Gus",
        "DB/Quest: correct the start conditions of a Gilneas chain",
        _sql(
            "2024_04_01_00.sql",
            "UPDATE `quest_template_addon` SET `PrevQuestID`=14375 WHERE `ID`=14386;\n",
        ),
    ),
    Step(
        "secrets",
        "2024-04-10",
        "Hal",
        "DB/Quest: Secrets of the Tower requires the previous quest\n\nCloses #57",
        _sql(
            "2024_04_10_00.sql",
            "UPDATE `quest_template_addon` SET `PrevQuestID`=26289 WHERE `ID`=26290;\n",
        ),
    ),
    Step(
        "grid",
        "2024-04-20",
        "Ivy",
        "Core/Maps: keep grid unloading off for instances",
        _edit(MAP, "    grid.Unload();\n", "    if (!Instanceable())\n        grid.Unload();\n"),
    ),
    Step(
        "chest_note",
        "2024-04-28",
        "Jo",
        "DB/Misc: notes on the Deadmines objects",
        _sql(
            "2024_04_28_00.sql",
            "-- 195327 and its neighbours are handled by the instance script\nSELECT 1;\n",
        ),
    ),
    Step(
        "release_2405",
        "2024-05-02",
        "Eve",
        "DB: release update 24.05",
        _release("2024_05_02", 120, _IMPORTED),
    ),
    Step(
        "dealdamage",
        "2024-05-20",
        "Kai",
        "Core/Unit: check the victim before dealing damage",
        _edit(
            UNIT,
            "    victim->ModifyHealth(-int32(damage));\n",
            "    if (!victim || !victim->IsInWorld())\n        return 0;\n"
            "    victim->ModifyHealth(-int32(damage));\n",
        ),
    ),
    Step(
        "ci_image",
        "2024-06-01",
        "Lu",
        "Build: bump the CI image",
        _set(".github/workflows/ci.yml", "image: ubuntu-22.04\ncache: build\n"),
    ),
)


def make_history(path: Path) -> dict[str, str]:
    """The repository of ``HISTORY`` at ``path``; returns each step's commit by label.
    ``git fast-import``, one step at a time (a revert names the commit it reverts:
    ``{label}`` in a message), with fixed identities: the IDs are the same on every
    machine."""
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=GIT_ENV, check=True)
    files = _initial_files()
    marks = path / ".git" / "corpus-marks"
    commits: dict[str, str] = {}
    previous: dict[str, str] = {}
    for mark, step in enumerate(HISTORY, start=1):
        step.change(files)
        when = int(datetime.fromisoformat(step.date + "T12:00:00+00:00").timestamp())
        person = f"{step.author} <{step.author.lower()}@example.invalid> {when} +0000"
        message = step.message.format(**commits).encode()
        stream = [f"commit refs/heads/main\nmark :{mark}\n".encode()]
        stream.append(f"author {person}\ncommitter {person}\n".encode())
        stream.append(b"data %d\n%s\n" % (len(message), message))
        if mark > 1:
            stream.append(f"from :{mark - 1}\n".encode())
        for name, text in sorted(files.items()):
            if previous.get(name) != text:
                data = text.encode()
                stream.append(f"M 100644 inline {name}\ndata {len(data)}\n".encode() + data + b"\n")
        previous = dict(files)
        subprocess.run(
            ["git", "fast-import", "--quiet", f"--export-marks={marks}"]
            + ([f"--import-marks={marks}"] if mark > 1 else []),
            cwd=path,
            env=GIT_ENV,
            input=b"".join(stream),
            check=True,
        )
        by_mark = dict(line.split(" ", 1) for line in marks.read_text().splitlines())
        commits[step.label] = by_mark[f":{mark}"].strip()
    return commits


__all__ = ["HISTORY", "WORLD", "Entity", "make_history"]
