"""A case built with ``[client_data]``: its spells and items described by the DBC/DB2 files.

The fixture world DB and the BUG-20 sources, plus the few engine headers the
test layouts come from (tests/project_research/test_client_data.py) and a
dbc folder written from their format strings: the report's spell becomes
its name and effects, a bracketed item name resolves to the item, and an
interrupted build resumes to the same facts. Opt-in: the other fixture
builds have no ``[client_data]`` and keep their facts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.case.builder.conftest import (
    CountingResearch,
    ResearchSetup,
    build_source_repo,
    case_spec,
    write_config,
)
from tests.case.builder.test_build_lifecycle import Interrupted, builder
from tests.native.dbccraft import WDB2, write_client_file
from tests.project_research.conftest import TestDatabase
from tests.project_research.test_client_data import HEADERS, PROFILE
from viano_bug_analysis.cli import main
from viano_bug_analysis.facts.brief import fact_sections

SPELL = 90004  # the fixture's Throw Net, named by the report and the diag log
ITEM = 52069
TEXT = (
    f"I threw the net (spell {SPELL}) at a wolpertinger but my quest did not count it. "
    "I was wearing [Grandma's Good Clothes]."
)


def _dbc_folder(folder: Path) -> None:
    folder.mkdir()
    (folder / "Spell.dbc").write_bytes(
        write_client_file("nixsxi", [[SPELL, 0, 0, "Throw Net", 0, 0], [7, 0, 0, "Other", 0, 0]])
    )
    # Effect 6 (SPELL_EFFECT_APPLY_AURA) with aura 18 (SPELL_AURA_MOD_INVISIBILITY).
    (folder / "SpellEffect.dbc").write_bytes(
        write_client_file("niiixi", [[10, 6, 18, SPELL, 0, 0], [11, 2, 0, 7, 0, 5]])
    )
    (folder / "Item-sparse.db2").write_bytes(
        write_client_file(
            "nisssf", [[ITEM, 1, "Grandma's Good Clothes", "", "", 0.5]], container=WDB2
        )
    )


@pytest.fixture(scope="module")
def headers_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The BUG-20 sources with the engine headers the test layouts are read from."""
    repo = tmp_path_factory.mktemp("vcore-src-client")
    for path, text in HEADERS.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    return build_source_repo(repo)


@pytest.fixture
def client_setup(
    tmp_path: Path, mariadb: TestDatabase, headers_repo: tuple[Path, str]
) -> ResearchSetup:
    repo, commit = headers_repo
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    config = write_config(config_dir, mariadb, repo, commit)
    _dbc_folder(config_dir / "dbc")
    (config_dir / "client.toml").write_text(PROFILE, encoding="utf-8")
    with config.open("a", encoding="utf-8") as out:
        out.write('[client_data]\ndbc_dir = "dbc"\nlayouts = "client.toml"\n')
    return ResearchSetup(config, commit)


class CountingClientResearch(CountingResearch):
    """Counts the queries, and shows the configuration (its [client_data]) to the builder."""

    @property
    def config(self) -> Any:
        return self.inner.config


def _index(package: Path) -> dict[str, Any]:
    index: dict[str, Any] = orjson.loads(
        (package / "research" / "project" / "r0001" / "index.json").read_bytes()
    )
    return index


def _build(tmp_path: Path, package: Path, config: Path) -> int:
    spec = case_spec(tmp_path / "inputs", text=TEXT)
    return main(["case", "build", str(spec), str(package), "--project-config", str(config)])


def _of(index: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [f for f in index["facts"] if f["kind"] == kind]


def test_a_spell_and_a_bracketed_item_are_described_by_the_client_data(
    tmp_path: Path, client_setup: ResearchSetup, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "package"
    code = _build(tmp_path, package, client_setup.config_path)
    out, _ = capsys.readouterr()
    assert code == 0, out
    index = _index(package)
    records = {(f["entity_type"], f["entity_id"]): f for f in _of(index, "client_record")}
    spell = records[("spell", SPELL)]
    assert spell["name"] == "Throw Net"
    [effect] = spell["effects"]
    assert (effect["effect_name"], effect["aura_name"]) == (
        "SPELL_EFFECT_APPLY_AURA",
        "SPELL_AURA_MOD_INVISIBILITY",
    )
    assert spell["provenance"]["pointer"].startswith("/result/result/records/")
    # The bracketed name resolved to the item, which became an entity of the case.
    [match] = _of(index, "client_name_match")
    assert (match["phrase"], match["entity_type"], match["entity_id"]) == (
        "Grandma's Good Clothes",
        "item",
        ITEM,
    )
    assert match["followed"] and match["where"]["pointer"] == "/report/text"
    assert records[("item", ITEM)]["name"] == "Grandma's Good Clothes"
    # Each lookup was a query of the build, captured and counted.
    purposes = [q["purpose"]["kind"] for q in index["queries"]]
    assert "client_lookup" in purposes and "client_name_lookup" in purposes
    assert not any(f.get("reason") == "client_data_not_configured" for f in index["facts"])
    # The build summary, the brief and the report name the spell and its effects.
    assert any(
        f'spell {SPELL} "Throw Net": SPELL_EFFECT_APPLY_AURA' in line for line in out.split("\n")
    )
    brief = fact_sections(index, max_chars=20_000).text
    [line] = [ln for ln in brief.splitlines() if ln.startswith(f"- spell {SPELL} ")]
    assert '"Throw Net"' in line and "SPELL_AURA_MOD_INVISIBILITY" in line
    [item_line] = [ln for ln in brief.splitlines() if ln.startswith(f"- item {ITEM} ")]
    assert "named in the report" in item_line


def test_without_client_data_one_coverage_fact_says_so(
    tmp_path: Path, research_setup: ResearchSetup, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "package"
    code = _build(tmp_path, package, research_setup.config_path)
    capsys.readouterr()
    assert code == 0
    index = _index(package)
    assert not _of(index, "client_record") and not _of(index, "client_name_match")
    [note] = [f for f in index["facts"] if f.get("reason") == "client_data_not_configured"]
    assert note["entity_types"]["spell"] >= 1
    assert not any(q["purpose"]["kind"].startswith("client_") for q in index["queries"])


def test_an_interrupted_build_resumes_to_the_same_client_facts(
    tmp_path: Path, client_setup: ResearchSetup
) -> None:
    spec = case_spec(tmp_path / "inputs", text=TEXT)
    with client_setup.research() as research:
        counting = CountingClientResearch(research)
        clean = builder(spec, tmp_path / "clean", counting, client_setup).build()
        steps = [q["step"] for q in clean.queries if q["purpose"]["kind"] == "client_lookup"]
        assert steps
        point = f"step-{steps[0]}-captured"

        def hook(reached: str) -> None:
            if reached == point:
                raise Interrupted(reached)

        package = tmp_path / "interrupted"
        with pytest.raises(Interrupted):
            builder(spec, package, counting, client_setup, after_step=hook).build()
        counting.asked.clear()
        builder(spec, package, counting, client_setup).build()
    # Only the steps after the interrupted one were asked again; the facts are the same.
    assert len(counting.asked) == len(clean.queries) - steps[0]
    assert _index(package)["facts"] == _index(tmp_path / "clean")["facts"]
