"""`vba case build` end to end, research outage and resume, and profile errors that name the key."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.case.builder.conftest import ResearchSetup, case_spec, write_config
from tests.project_research.conftest import TestDatabase
from viano_bug_analysis.case import load_package
from viano_bug_analysis.enrichment import parse_profile, vcore_profile
from viano_bug_analysis.errors import EnrichmentError


def vba(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", *map(str, args)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_build_shows_progress_and_a_readable_summary(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    spec = case_spec(tmp_path / "inputs")
    done = vba(
        "case", "build", spec, tmp_path / "pkg", "--project-config", research_setup.config_path
    )
    assert done.returncode == 0, done.stderr
    assert "query 1: creature 90002" in done.stderr  # progress, one line per step when piped
    assert "revision 1 built" in done.stdout
    assert 'quest 90001: "Catch the Wolpertinger"' in done.stdout
    assert "quest_start_item: quest_template ID=90001 StartItem=90003 -> item_script_names" in (
        done.stdout
    )
    assert "none in this table: smart_scripts" in done.stdout
    again = vba(
        "case", "build", spec, tmp_path / "pkg", "--project-config", research_setup.config_path
    )
    assert again.returncode == 0 and "unchanged (same inputs)" in again.stdout


def test_research_outage_stops_the_build_and_a_rerun_resumes(
    tmp_path: Path,
    research_setup: ResearchSetup,
    mariadb: TestDatabase,
    source_repo: tuple[Path, str],
) -> None:
    spec = case_spec(tmp_path / "inputs")
    down_dir = tmp_path / "down"
    down_dir.mkdir()
    repo, commit = source_repo
    down = write_config(down_dir, mariadb, repo, commit, port=closed_port())
    failed = vba("case", "build", spec, tmp_path / "pkg", "--project-config", down)
    assert failed.returncode == 3
    assert "run the same command again" in failed.stderr
    assert mariadb.password not in failed.stderr + failed.stdout
    assert not (tmp_path / "pkg" / "manifest.json").exists()
    resumed = vba(
        "case", "build", spec, tmp_path / "pkg", "--project-config", research_setup.config_path
    )
    assert resumed.returncode == 0, resumed.stderr
    assert load_package(tmp_path / "pkg").case["project_research"]


def test_the_vcore_profile_is_generic() -> None:
    profile = vcore_profile()
    text = (
        Path(__file__).parents[3] / "python/viano_bug_analysis/profiles/vcore/enrichment.toml"
    ).read_text()
    assert "9000" not in text and "Wolpertinger" not in text
    smart = next(r for r in profile.relationships if r.relation == "creature_smart_scripts")
    assert [(f.column, f.operator, f.value) for f in smart.filters] == [("source_type", "eq", 0)]
    assert {r.relation for r in profile.relationships if r.source == "source.symbol"} == {
        "areatrigger_script_name",
        "creature_script_name",
        "gameobject_script_name",
        "item_script_name",
        "spell_script_name",
    }


REL = 'relation = "r"\nfrom_table = "q"\nfrom_column = "A"\nfrom_id_column = "ID"\n'
BASE = 'format = "viano-enrichment-profile"\nformat_version = 1\nprofile = "p"\n'
ENTITY = '[entities.quest]\ntable = "q"\ncolumn = "ID"\ncolumns = ["ID", "T"]\nname_column = "T"\n'


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("format = 1\n", "format"),
        (BASE + "unknown = 1\n", "unknown"),
        (BASE + "[limits]\nmax_depth = -1\n", "limits.max_depth"),
        (BASE + "[limits]\nmax_dept = 1\n", "limits.max_dept"),
        (
            BASE + '[entities.quest]\ntable = "q`x"\ncolumn = "ID"\ncolumns = ["ID"]\n',
            "entities.quest.table",
        ),
        (
            BASE
            + ENTITY
            + '[[extract]]\nentity_type = "item"\nin = "report.text"\npattern = "(1)"\n',
            "extract[0].entity_type",
        ),
        (
            BASE
            + ENTITY
            + '[[extract]]\nentity_type = "quest"\nin = "report.text"\npattern = "x"\n',
            "extract[0].pattern",
        ),
        (
            BASE + ENTITY + "[[relationships]]\n" + REL,
            "relationships[0].table",
        ),
        (
            BASE
            + ENTITY
            + "[[relationships]]\n"
            + REL
            + 'table = "t"\ncolumn = "c"\ncolumns = ["c"]\n'
            + 'filters = [{column = "c", operator = "like", value = "%x%"}]\n',
            "relationships[0].filters[0].operator",
        ),
        (
            BASE
            + ENTITY
            + "[[relationships]]\n"
            + REL
            + 'source = "source.symbol"\nwhen_column = "X"\n',
            "relationships[0].when_value",
        ),
    ],
)
def test_profile_errors_name_the_key(text: str, key: str) -> None:
    with pytest.raises(EnrichmentError) as err:
        parse_profile(text.encode())
    assert err.value.code == "profile_invalid"
    assert err.value.details["key"] == key
