"""client.records: layouts from engine headers, files written from the format strings,
override rows merged the engine's way, and the answers checked like every other kind."""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.native.dbccraft import WDB2, write_client_file
from tests.project_research.research_fakes import COMMIT, URL, make_config
from viano_bug_analysis.errors import ResearchError, ResearchUnavailable
from viano_bug_analysis.project_research import ProjectResearch
from viano_bug_analysis.project_research.captures import Capture
from viano_bug_analysis.project_research.client_data import sql_positions

# A tiny engine of our own: the same header forms as the lineage's.
HEADERS = {
    "src/DataStores/DBCfmt.h": """
// x - skip, s - string, n - index
char const SpellEntryfmt[] = "nixsxi";
const std::string CustomSpellEntryfmt = "ppaaap";
const std::string CustomSpellEntryIndex = "Id";
char const SpellEffectEntryfmt[] = "niiixi";
char const AreaTableEntryfmt[] = "nisd";
""",
    "src/DataStores/DB2fmt.h": 'char const ItemSparsefmt[]="nisssf";\n',
    "src/DataStores/DBCStructure.h": """
#define MAX_NAMES 2
struct SpellEntry
{
    uint32 ID;              // 0
    uint32 Attributes;      // 1
    char const* Name;       // 3
    int32 PowerCost;        // 5
    bool IsPassive() const { return (Attributes & 0x40) != 0; }
};

struct SpellEffectEntry
{
    uint32 ID;
    uint32 Effect;
    uint32 EffectAura;
    uint32 SpellID;
    //uint32 Unused;
    int32 EffectBasePoints;
};

struct AreaTableEntry
{
    uint32 ID;
    uint32 MapID;
    char* AreaName;
};
""",
    "src/DataStores/DB2Structure.h": """
struct ItemSparseEntry
{
    uint32 ID;
    uint32 Quality;
    LocalizedString* Display[3];
    float PriceVariance;
};
""",
    "src/Defines.h": """
enum SpellEffects
{
    SPELL_EFFECT_NONE = 0,
    SPELL_EFFECT_INSTAKILL,          // 1
    SPELL_EFFECT_SCHOOL_DAMAGE,      // 2
    SPELL_EFFECT_APPLY_AURA = 6,
};
enum AuraType : uint32
{
    SPELL_AURA_NONE = 0,
    SPELL_AURA_MOD_INVISIBILITY = 18,
    SPELL_AURA_MOD_INVISIBILITY_DETECT,
};
""",
}

PROFILE = """
format = "viano-client-data-profile"
format_version = 1
profile = "test"

[enums.effect]
path = "src/Defines.h"
enum = "SpellEffects"

[enums.aura]
path = "src/Defines.h"
enum = "AuraType"

[tables.spell]
file = "Spell.dbc"
format_path = "src/DataStores/DBCfmt.h"
format = "SpellEntryfmt"
struct_path = "src/DataStores/DBCStructure.h"
struct = "SpellEntry"
name_field = "name"
override = { table = "spell_dbc", format = "CustomSpellEntryfmt", index = "CustomSpellEntryIndex" }
[tables.spell.fields]
id = { member = "ID", column = 0 }
attributes = { member = "Attributes", column = 1 }
name = { member = "Name", column = 3 }
power_cost = { member = "PowerCost", column = 5 }

[tables.spell_effect]
file = "SpellEffect.dbc"
format_path = "src/DataStores/DBCfmt.h"
format = "SpellEffectEntryfmt"
struct_path = "src/DataStores/DBCStructure.h"
struct = "SpellEffectEntry"
[tables.spell_effect.fields]
id = { member = "ID", column = 0 }
effect = { member = "Effect", column = 1, enum = "effect" }
aura = { member = "EffectAura", column = 2, enum = "aura" }
spell_id = { member = "SpellID", column = 3 }
base_points = { member = "EffectBasePoints", column = 5 }

[tables.item]
file = "Item-sparse.db2"
format_path = "src/DataStores/DB2fmt.h"
format = "ItemSparsefmt"
struct_path = "src/DataStores/DB2Structure.h"
struct = "ItemSparseEntry"
name_field = "name"
[tables.item.fields]
id = { member = "ID", column = 0 }
name = { member = "Display", column = 2 }
price_variance = { member = "PriceVariance", column = 5 }
"""


class HeaderGit:
    """The git provider's ``read`` over HEADERS."""

    origin: ClassVar[dict[str, str]] = {"kind": "git", "url": URL, "commit": COMMIT}

    def __init__(self, headers: Mapping[str, str] = HEADERS) -> None:
        self.headers = headers

    def read(self, *, path: str, start_line: int, end_line: int) -> dict[str, Any]:
        if path not in self.headers:
            raise ResearchError("path_not_found", "no such file", {"argument": "path"})
        lines = self.headers[path].split("\n")
        return {
            "line_count": len(lines),
            "lines": [{"line": n, "text": lines[n - 1]} for n in range(start_line, end_line + 1)],
        }


class OverrideDb:
    """spell_dbc with two rows: 900 (new) and 1 (an ID Spell.dbc already has)."""

    snapshot_id = "world@test"
    ROWS: ClassVar[list[dict[str, int]]] = [
        {"Id": 900, "Attributes": 64, "PowerCost": -5},
        {"Id": 1, "Attributes": 0, "PowerCost": 0},
    ]

    def __init__(self, allowed: bool = True) -> None:
        self.allowed = allowed

    def schema(self, *, database: str | None, table: str) -> dict[str, Any]:
        if not self.allowed:
            raise ResearchError("table_not_allowed", "not allowed", {"table": table})
        names = ["Id", "Attributes", "PowerCost"]
        return {"columns": [{"name": n, "ordinal": i + 1} for i, n in enumerate(names)]}

    def rows(
        self,
        *,
        database: str | None,
        table: str,
        columns: Sequence[str],
        filters: Sequence[Mapping[str, Any]],
        offset: int,
        limit: int,
    ) -> dict[str, Any]:
        [condition] = filters
        rows = [r for r in self.ROWS if r[condition["column"]] in condition["value"]]
        return {"database": "world", "table": table, "rows": rows[offset : offset + limit]}

    def origin(self, database: str) -> dict[str, Any]:
        return {"kind": "database", "database": database, "snapshot_id": self.snapshot_id}


def _write_dbc_folder(folder: Path) -> None:
    folder.mkdir()
    (folder / "Spell.dbc").write_bytes(
        write_client_file(
            "nixsxi",
            [[1, 0, 0, "Rescue Drowning Watchman", 0, 2**32 - 3], [75048, 64, 0, "Stealth", 0, 0]],
        )
    )
    (folder / "SpellEffect.dbc").write_bytes(
        write_client_file("niiixi", [[10, 6, 18, 75048, 0, 2**32 - 1], [11, 1, 0, 1, 0, 0]])
    )
    (folder / "Item-sparse.db2").write_bytes(
        write_client_file(
            "nisssf",
            [
                [6948, 1, "Hearthstone", "", "", 0.5],
                [52069, 1, "Grandma's Good Clothes", "", "", float("nan")],
            ],
            container=WDB2,
        )
    )


SOURCE_TOML = f'[source]\nrepository = "r.git"\nurl = "{URL}"\ncommit = "{COMMIT}"\n'
CLIENT_TOML = '[client_data]\ndbc_dir = "dbc"\nlayouts = "client.toml"\n'


def _client_config(tmp_path: Path, middle: str = "", *, files: bool = True) -> Any:
    """A research config with [source] and [client_data] (and ``middle`` between them)."""
    if files:
        _write_dbc_folder(tmp_path / "dbc")
    (tmp_path / "client.toml").write_text(PROFILE, encoding="utf-8")
    return make_config(tmp_path, SOURCE_TOML + middle + CLIENT_TOML)


@pytest.fixture
def research(tmp_path: Path) -> ProjectResearch:
    return ProjectResearch(_client_config(tmp_path), git=HeaderGit(), database=None)


def _ask(research: ProjectResearch, **query: Any) -> dict[str, Any]:
    return research.query({"kind": "client.records", "offset": 0, "limit": 20, **query})


def test_spells_by_id_carry_names_effects_and_enum_names(research: ProjectResearch) -> None:
    answer = _ask(research, table="spell", ids=[75048, 4])
    result = answer["result"]
    [spell] = result["records"]
    assert result["missing_ids"] == [4]
    assert spell["fields"]["name"] == "Stealth"
    assert spell["origin"]["file"] == "Spell.dbc" and spell["origin"]["record"] == 1
    [effect] = spell["effects"]
    assert effect["fields"]["effect_name"] == "SPELL_EFFECT_APPLY_AURA"
    assert effect["fields"]["aura_name"] == "SPELL_AURA_MOD_INVISIBILITY"
    assert effect["fields"]["base_points"] == -1  # int32 member: signed
    assert answer["origin"]["kind"] == "client_data"
    assert {f["file"] for f in answer["origin"]["files"]} == {"Spell.dbc", "SpellEffect.dbc"}
    # Without [database] spell_dbc is not read: it could add spells, so no absence is proven.
    assert answer["result"]["overrides"]["status"] == "not_configured"
    assert answer["coverage"]["complete"] is False
    item = _ask(research, table="item", ids=[6948, 7])  # Item-sparse.db2 has no override table
    assert item["coverage"]["complete"] is True and item["result"]["missing_ids"] == [7]
    Capture.from_result(answer)  # a capture like every other answer
    # The files stay open between queries; every answer still names the ones it read.
    again = _ask(research, table="spell", ids=[1])
    assert again["origin"]["files"] == answer["origin"]["files"]


def test_names_resolve_ignoring_case_in_dbc_and_db2(research: ProjectResearch) -> None:
    spell = _ask(research, table="spell", name="rescue drowning watchman")["result"]["records"]
    assert [r["id"] for r in spell] == [1]
    assert spell[0]["fields"]["power_cost"] == -3
    item = _ask(research, table="item", name="GRANDMA'S GOOD CLOTHES")["result"]["records"]
    assert [r["id"] for r in item] == [52069]
    # JSON has no NaN: a non-finite float of a file is named, not a broken answer.
    assert item[0]["fields"]["price_variance"] == "nan"


def test_effects_by_field_and_paging(research: ProjectResearch) -> None:
    answer = _ask(research, table="spell_effect", field="spell_id", values=[75048, 1], limit=1)
    assert answer["result"]["returned"] == 1 and answer["result"]["truncated"] is True
    assert answer["coverage"]["complete"] is False


def test_override_rows_add_ids_and_conflicts_are_reported(tmp_path: Path) -> None:
    config = _client_config(
        tmp_path,
        '[database]\nhost = "127.0.0.1"\nport = 3306\nuser = "r"\npassword_env = "X"\n'
        'snapshot_id = "world@test"\n[database.allow]\nworld = ["spell_dbc"]\n',
    )
    research = ProjectResearch(config, git=HeaderGit(), database=OverrideDb())  # type: ignore[arg-type]
    result = _ask(research, table="spell", ids=[900, 1])["result"]
    added, conflicting = result["records"]
    assert added["origin"] == {
        "source": "database",
        "database": "world",
        "table": "spell_dbc",
        "key": {"Id": 900},
    }
    assert added["fields"]["power_cost"] == -5 and added["fields"]["name"] == ""
    assert conflicting["origin"]["source"] == "file"
    assert conflicting["override_conflict"]["key"] == {"Id": 1}
    assert result["overrides"]["status"] == "read"
    assert _ask(research, table="spell", ids=[4])["coverage"]["complete"] is True
    denied = ProjectResearch(config, git=HeaderGit(), database=OverrideDb(allowed=False))  # type: ignore[arg-type]
    unread = _ask(denied, table="spell", ids=[4])
    assert unread["result"]["overrides"]["status"] == "not_allowlisted"
    # An override table not read may add records: the answer proves no absence.
    assert unread["coverage"]["complete"] is False


def test_without_client_data_the_kind_is_refused(tmp_path: Path) -> None:
    config = make_config(tmp_path, SOURCE_TOML)
    with pytest.raises(ResearchError) as caught:
        _ask(ProjectResearch(config, git=HeaderGit()), table="spell", ids=[1])
    assert caught.value.code == "provider_not_configured"
    assert caught.value.details["provider"] == "client_data"


def test_query_shapes_are_checked(research: ProjectResearch) -> None:
    for bad in (
        {"table": "spell"},
        {"table": "spell", "ids": [1], "name": "x"},
        {"table": "spell", "field": "id"},
        {"table": "spell", "ids": []},
    ):
        with pytest.raises(ResearchError) as caught:
            _ask(research, **bad)
        assert caught.value.code in ("query_invalid", "unknown_field")
    with pytest.raises(ResearchError) as unknown:
        _ask(research, table="quest", ids=[1])
    assert unknown.value.details["allowed"] == ["item", "spell", "spell_effect"]
    with pytest.raises(ResearchError) as not_integer:
        _ask(research, table="spell", field="name", values=[1])
    assert not_integer.value.code == "unknown_field"


def test_a_missing_or_hostile_file_is_a_typed_outage(
    research: ProjectResearch, tmp_path: Path
) -> None:
    # 2^32-1 records of 24 bytes claimed by a 20-byte file.
    (tmp_path / "dbc" / "Spell.dbc").write_bytes(struct.pack("<4s4I", b"WDBC", 2**32 - 1, 6, 24, 0))
    with pytest.raises(ResearchUnavailable) as caught:
        _ask(research, table="spell", ids=[1])
    assert caught.value.details["reason"] == "client_file_truncated"
    (tmp_path / "dbc" / "Spell.dbc").unlink()
    with pytest.raises(ResearchUnavailable) as missing:
        _ask(research, table="spell", ids=[1])
    assert missing.value.details["reason"] == "client_file_missing"


def test_a_shifted_member_refuses_the_layout(tmp_path: Path) -> None:
    shifted = dict(HEADERS)
    shifted["src/DataStores/DBCfmt.h"] = HEADERS["src/DataStores/DBCfmt.h"].replace(
        '"nixsxi"', '"nixxsxi"'
    )
    config = _client_config(tmp_path)
    with pytest.raises(ResearchError) as caught:
        _ask(ProjectResearch(config, git=HeaderGit(shifted)), table="spell", ids=[1])
    assert caught.value.details["problem"] == "member_shifted"


def test_sql_positions_follow_the_loaders_counter() -> None:
    # 'p' over x does not advance the SQL column; 'a' takes none.
    assert sql_positions("ppaaap", "nixsxi") == {0: 0, 1: 1, 5: 2}
    assert sql_positions("pppp", "nxii") == {0: 0, 2: 1, 3: 2}


def test_the_check_reports_renamed_and_shifted_members() -> None:
    from viano_bug_analysis.project_research.client_layouts import (
        check_layouts,
        check_lines,
        load_client_profile,
        source_reader,
    )

    changed = dict(HEADERS)
    changed["src/DataStores/DBCStructure.h"] = (
        HEADERS["src/DataStores/DBCStructure.h"]
        .replace("char const* Name;", "char const* SpellName;")
        .replace("uint32 EffectAura;", "uint32 EffectAura;\n    uint32 Extra;")
    )
    changed["src/DataStores/DBCfmt.h"] += 'char const Unused[] = "x";\n'
    path = Path(__file__).with_name("client.toml")
    try:
        path.write_text(PROFILE, encoding="utf-8")
        profile = load_client_profile(path)
    finally:
        path.unlink()
    assert check_layouts(profile, source_reader(HeaderGit()))["ok"] is True
    report = check_layouts(profile, source_reader(HeaderGit(changed)))
    problems = {(p.get("table"), p.get("field"), p["problem"]) for p in report["problems"]}
    assert ("spell", "name", "member_missing") in problems
    assert ("spell_effect", "spell_id", "member_shifted") in problems
    assert report["ok"] is False and report["tables"]["item"]["ok"] is True
    assert any("member_missing" in line for line in check_lines(report))


ENGINE_SOURCE = os.environ.get("VBA_ENGINE_SOURCE")


@pytest.mark.skipif(ENGINE_SOURCE is None, reason="VBA_ENGINE_SOURCE names no lineage checkout")
def test_the_vcore_profile_matches_the_lineage_source() -> None:
    """Run with VBA_ENGINE_SOURCE=<a checkout of the lineage at the pinned commit>."""
    from viano_bug_analysis.project_research.client_data import bundled_profile_path
    from viano_bug_analysis.project_research.client_layouts import (
        check_layouts,
        load_client_profile,
    )

    assert ENGINE_SOURCE is not None
    root = Path(ENGINE_SOURCE)
    report = check_layouts(
        load_client_profile(bundled_profile_path()),
        lambda path: (root / path).read_text(encoding="utf-8", errors="replace"),
    )
    assert report["problems"] == []


def test_vba_profile_check_ends_with_the_client_data_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import orjson

    from viano_bug_analysis import cli
    from viano_bug_analysis.case import build_command

    (tmp_path / "dbc").mkdir()
    headers = {k: v for k, v in HEADERS.items() if k != "src/DataStores/DB2Structure.h"}
    config = _client_config(tmp_path, files=False).path

    class Research(ProjectResearch):
        def __init__(self, config: Any) -> None:
            super().__init__(config, git=HeaderGit(headers))

    monkeypatch.setattr(build_command, "ProjectResearch", Research)
    code = cli.main(["profile", "check", "--project-config", str(config), "--json"])
    report = orjson.loads(capsys.readouterr().out)
    assert code != 0 and report["ok"] is False
    assert report["client_data"]["tables"]["spell"]["ok"] is True
    assert report["client_data"]["problems"] == [
        {
            "table": "item",
            "file": "Item-sparse.db2",
            "problem": "source_file_missing",
            "path": "src/DataStores/DB2Structure.h",
        }
    ]
    cli.main(["profile", "check", "--project-config", str(config)])
    assert "  - source_file_missing: table=item" in capsys.readouterr().out


@pytest.mark.skipif(ENGINE_SOURCE is None, reason="VBA_ENGINE_SOURCE names no lineage checkout")
def test_files_written_from_the_lineage_formats_read_through_the_vcore_profile(
    tmp_path: Path,
) -> None:
    from viano_bug_analysis.project_research.client_layouts import format_strings

    assert ENGINE_SOURCE is not None
    root = Path(ENGINE_SOURCE)

    class SourceGit(HeaderGit):
        def __init__(self) -> None:
            super().__init__({})

        def read(self, *, path: str, start_line: int, end_line: int) -> dict[str, Any]:
            self.headers = {path: (root / path).read_text(encoding="utf-8", errors="replace")}
            return super().read(path=path, start_line=start_line, end_line=end_line)

    dbc = root / "src/server/game/DataStores/DBCfmt.h"
    formats = format_strings(dbc.read_text(encoding="utf-8", errors="replace"))
    spell_fmt, effect_fmt = formats["SpellEntryfmt"], formats["SpellEffectEntryfmt"]

    def row(fmt: str, **at: Any) -> list[Any]:
        cells: list[Any] = ["" if letter == "s" else 0 for letter in fmt]
        for column, value in at.items():
            cells[int(column.removeprefix("c"))] = value
        return cells

    (tmp_path / "dbc").mkdir()
    spell = row(spell_fmt, c0=66908, c21="Detect Invisibility")
    effect = row(effect_fmt, c0=1, c1=6, c3=19, c24=66908, c25=0)
    (tmp_path / "dbc" / "Spell.dbc").write_bytes(write_client_file(spell_fmt, [spell]))
    (tmp_path / "dbc" / "SpellEffect.dbc").write_bytes(write_client_file(effect_fmt, [effect]))
    config = make_config(tmp_path, SOURCE_TOML + '[client_data]\ndbc_dir = "dbc"\n')
    answer = _ask(
        ProjectResearch(config, git=SourceGit()), table="spell", name="detect invisibility"
    )
    [record] = answer["result"]["records"]
    assert record["id"] == 66908
    assert record["effects"][0]["fields"]["aura_name"] == "SPELL_AURA_MOD_INVISIBILITY_DETECT"


def test_comments_are_stripped_in_one_pass_and_strings_kept() -> None:
    from viano_bug_analysis.project_research.client_layouts import format_strings, strip_comments

    text = 'a // x\nb /* y */ c "//keep" d /* never closed "x" = "n";'
    assert strip_comments(text) == 'a \nb   c "//keep" d  '
    assert format_strings('// char const Afmt[] = "x";\nchar const Bfmt[] = "n//i";') == {
        "Bfmt": "n//i"
    }
