"""Fixtures for CaseBuilder tests: the real test MariaDB (see
tests/project_research/conftest.py for how `make test` starts it) and a real
git repository built from the BUG-20 sample sources."""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.project_research.conftest import TestDatabase, mariadb
from tests.project_research.git_fixtures import git
from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.profile_check import needs
from viano_bug_analysis.project_research import (
    Capture,
    ProjectResearch,
    load_config,
    query_sha256,
)

SAMPLE_SOURCES = Path(__file__).parents[3] / "samples" / "bug-20" / "wowsrc"
# A typed constant for quest 91001 and an unrelated constant with the same number:
# only the first may become a fact. The creature's constant has no spaces round '='.
FIXTURE_FAIR_CONSTANTS = b"""enum FixtureFair
{
    QUEST_KEG_RUN = 91001,
    MAX_THINGS = 91001,
    NPC_KEG_MASTER_BRUNI=91010,
};
"""

SPELL_SCRIPT = b"""// Throw Net (spell 90004): the quest credit is meant to happen here.
#include "ScriptMgr.h"

class spell_wolpertinger_throw_net : public SpellScript
{
    void HandleHit(SpellEffIndex /*effIndex*/) { }
};

void AddSC_wolpertinger_spells()
{
    RegisterSpellScript(spell_wolpertinger_throw_net);
}
"""
DIAG_LOG = """[2026-10-03 20:14:07] player=Brauhilde map=0 zone=5001
[2026-10-03 20:14:09] QuestID=90001 status=INCOMPLETE objectives=0/1
[2026-10-03 20:14:31] cast spell=90004 target: Creature entry=90002 guid=Creature-0-1-0-90002
[2026-10-03 20:14:31] spell hit; quest log unchanged
"""

__all__ = ["mariadb"]


@dataclass(frozen=True)
class ResearchSetup:
    config_path: Path
    commit: str

    def research(self) -> ProjectResearch:
        return ProjectResearch(load_config(self.config_path))


@pytest.fixture(scope="session")
def source_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return build_source_repo(tmp_path_factory.mktemp("vcore-src"))


def build_source_repo(repo: Path) -> tuple[Path, str]:
    """A git repository of the BUG-20 sample sources and the fixture's scripts: (path, commit)."""
    shutil.copytree(SAMPLE_SOURCES, repo, dirs_exist_ok=True)
    spells = repo / "src" / "server" / "scripts" / "Spells"
    spells.mkdir(parents=True)
    (spells / "spell_wolpertinger.cpp").write_bytes(SPELL_SCRIPT)
    (spells / "fixture_fair.h").write_bytes(FIXTURE_FAIR_CONSTANTS)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "sample sources")
    return repo, git(repo, "rev-parse", "HEAD").strip()


def write_config(
    directory: Path,
    db: TestDatabase,
    repo: Path,
    commit: str,
    *,
    port: int | None = None,
    database: str = "cata_world",
) -> Path:
    """A ProjectResearch config allowlisting every table the Vcore profile reads in ``database``."""
    password_file = directory / "reader.local.txt"
    password_file.write_text(db.password + "\n")
    tables = ", ".join(f'"{t}"' for t in needs(vcore_profile()))
    config = directory / "research.toml"
    config.write_text(
        f"""[source]
repository = "{repo}"
url = "https://git.example.invalid/vcore.git"
commit = "{commit}"
[database]
host = "127.0.0.1"
port = {port or db.port}
user = "{db.user}"
password_file = "reader.local.txt"
snapshot_id = "cata_world@fixture"
[database.allow]
{database} = [{tables}]
[limits]
connect_seconds = 2
"""
    )
    return config


@pytest.fixture
def research_setup(
    tmp_path: Path, mariadb: TestDatabase, source_repo: tuple[Path, str]
) -> ResearchSetup:
    repo, commit = source_repo
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    return ResearchSetup(write_config(config_dir, mariadb, repo, commit), commit)


def case_spec(
    directory: Path, *, metadata: Mapping[str, Any] | None = None, text: str = ""
) -> Path:
    """A Wolpertinger-style case: the report and a wowdiag log naming quest and creature."""
    diag = directory / "wowdiag"
    diag.mkdir(parents=True, exist_ok=True)
    (diag / "session.log").write_text(DIAG_LOG)
    spec = {
        "format": "viano-case-spec",
        "format_version": 1,
        "case_id": "BUG-77",
        "phase": "investigation",
        "report": {
            "title": "Brewfest wolpertinger is not counted",
            "text": text or "I threw the net at a wolpertinger but my quest did not count it.",
            "metadata": dict(metadata or {}),
        },
        "hypotheses": [{"id": "H1", "statement": "The net's spell hit gives no quest credit."}],
        "attachments": [
            {
                "directory": "wowdiag",
                "name": "wowdiag.zip",
                "classification": "report_attachment",
                "members": [
                    {"member": "session.log", "source_ref": "diag-001", "role": "source_file"}
                ],
            }
        ],
    }
    path = directory / "case-spec.json"
    path.write_bytes(orjson.dumps(spec))
    return path


class CountingResearch:
    """ProjectResearch with a count of the queries that reached it, refused ones too."""

    def __init__(self, inner: ProjectResearch) -> None:
        self.inner = inner
        self.asked: list[str] = []

    def capture(self, query: Mapping[str, Any]) -> Capture:
        self.asked.append(query_sha256(query))
        return self.inner.capture(query)


@pytest.fixture
def counting(research_setup: ResearchSetup) -> Iterator[CountingResearch]:
    with research_setup.research() as research:
        yield CountingResearch(research)


def resolve_pointer(document: Any, pointer: str) -> Any:
    value = document
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value
