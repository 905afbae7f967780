"""``vba references`` as a user meets it: text, JSON, the case's snapshots, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.case.builder.conftest import build_source_repo, write_config
from tests.cli.helpers import error_of, vba
from tests.project_research.conftest import TestDatabase, mariadb
from tests.tools.package_factory import build_package
from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.references import holders
from viano_bug_analysis.schema_errors import check

__all__ = ["mariadb"]

SNAPSHOT_SOURCE = b"// the keg run\nconst uint32 QUEST_KEG = 91001;\nint other = 910011;\n"
# A table snapshot of creature_queststarter: one row names the quest, one another.
STARTERS = json.dumps(
    {
        "format": "viano-database-snapshot",
        "format_version": 1,
        "table": "creature_queststarter",
        "columns": [{"name": "id", "type": "int"}, {"name": "quest", "type": "int"}],
        "coverage": "partial",
        "rows": [{"id": 91010, "quest": 91001}, {"id": 91010, "quest": 91002}],
    }
).encode()


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory, mariadb: TestDatabase) -> Path:
    root = tmp_path_factory.mktemp("refs-cli")
    repo, commit = build_source_repo(root / "repo")
    (root / "cfg").mkdir()
    return write_config(root / "cfg", mariadb, repo, commit)


def test_text_output_is_grouped_with_counts_first(config: Path) -> None:
    done = vba("references", "--project-config", config, "--type", "quest", "--id", "91001")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "references to quest 91001 (profile vcore)"
    assert lines[1].startswith("database: ") and "row(s) in" in lines[1]
    assert any(line.startswith("source at ") and "2 line(s)" in line for line in lines)
    assert "  QUEST_KEG_RUN: 1 line(s) name it" in lines


def test_json_is_one_references_v1_document(config: Path) -> None:
    done = vba(
        "references", "--project-config", config, "--type", "quest", "--id", "91001", "--json"
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert check("references-v2", document) is None
    assert document["snapshots"] is None
    assert document["database"]["total"] > 0


def test_the_case_s_snapshots_are_searched_and_left_unchanged(config: Path, tmp_path: Path) -> None:
    built = build_package(
        tmp_path,
        sources={"src/keg.cpp": SNAPSHOT_SOURCE},
        database={"db/creature_queststarter.json": STARTERS},
    )
    before = _package_files(built.path)
    done = vba(
        "references", "--project-config", config, "--type", "quest", "--id", "91001",
        "--package", built.path, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    snapshots = json.loads(done.stdout)["snapshots"]
    assert [(s["count"], [h["line"] for h in s["lines"]]) for s in snapshots["sources"]] == [
        (1, [2])
    ]
    starter = next(
        r.name
        for r in holders(vcore_profile(), "quest")
        if (r.table, r.column) == ("creature_queststarter", "quest")
    )
    assert [(t["reference"], t["count"]) for t in snapshots["tables"]] == [(starter, 1)]
    assert _package_files(built.path) == before


def _package_files(root: Path) -> dict[Path, bytes]:
    """Every file of the package but its digest cache: a writable package may learn
    the digests of files more than 2 s old (docs/case-package-v1.md, "The digest
    cache"), which a slow machine reaches between the build and the command."""
    cache = root / "analysis" / "cache"
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and cache not in p.parents}


def test_an_unknown_type_is_refused_naming_the_allowed_ones(config: Path) -> None:
    # npc is an operator's word for creature (issue 34): an unknown word here.
    done = vba("references", "--project-config", config, "--type", "monster", "--id", "1")
    assert done.returncode == 2
    error = error_of(done)
    assert error["error"] == "entity_type_unknown"
    assert "quest" in error["details"]["allowed"] and "quest" in error["message"]


@pytest.mark.parametrize("value", ["0", "-3", "9223372036854775808"])
def test_an_id_outside_the_range_is_refused(config: Path, value: str) -> None:
    done = vba("references", "--project-config", config, "--type", "quest", "--id", value)
    assert done.returncode == 2
    assert error_of(done)["error"] == "entity_id_invalid"


def test_research_unavailable_is_exit_3(tmp_path: Path, mariadb: TestDatabase) -> None:
    repo, commit = build_source_repo(tmp_path / "repo")
    (tmp_path / "cfg").mkdir()
    dead = write_config(tmp_path / "cfg", mariadb, repo, commit, port=1)
    done = vba("references", "--project-config", dead, "--type", "quest", "--id", "91001")
    assert done.returncode == 3
    assert error_of(done)["error"] == "research_unavailable"
