"""`vba case build` end to end, research outage and resume, and profile errors that name the key."""

from __future__ import annotations

import json
import re
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
    # progress, one line per step when piped: the report's name candidates are asked
    # first (one IN list per name column), then the mentions ("zone=5001" of log line 1)
    assert re.search(r"^query 1: \d+ candidates in quest_template\.LogTitle$", done.stderr, re.M)
    assert re.search(r"^query \d+: area 5001 as a C\+\+ constant$", done.stderr, re.MULTILINE)
    assert re.search(r"^query \d+: creature 90002$", done.stderr, re.MULTILINE)
    assert "revision 1 built" in done.stdout
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert re.fullmatch(
        r"enrichment: (\d+) queries \(\1 asked by this run\), \d+ facts: \d+ rows found by "
        r"\d+ lookups, \d+ found nothing, \d+ refused targets?( \(source\.search\))?",
        lines[2],
    )
    # The leads block, then the facts (every fact line starts with its labels).
    assert lines[3].startswith("leads: ")
    summary = [line for line in lines[3:] if line.startswith("[")]
    # The quest's own line: its name, the table and how many rows.
    assert any(
        'quest 90001 "Catch the Wolpertinger" (quest_template: 1 row)' in line for line in summary
    )
    # The blocks after the leads: what was not read, the coverage, then the findings.
    heads = [line for line in done.stdout.splitlines() if not line.startswith(" ")][3:]
    assert [head for head in heads if head.endswith(":")] == ["not read:", "coverage:", "facts:"]
    # The coverage: one line per reason with its count (not one line per reference).
    depth = [line for line in summary if "max_depth" in line]
    assert len(depth) == 1 and re.search(r"max_depth: \d+ references not followed", depth[0])
    # The giver's rows and the reverse lookup that reached them are one line, worded as
    # the column that names the quest.
    assert any(
        re.fullmatch(
            r"\[P\d+-P\d+\] creature_queststarter\.quest = 90001 \(names quest 90001\): 1 row",
            line,
        )
        for line in summary
    )
    # Nothing is said twice: the same entity's rows reached twice are one line.
    texts = [line.split("] ", 1)[1] for line in summary]
    assert len(texts) == len(set(texts))
    assert len([t for t in texts if t.startswith('quest 90000 "A Net for the Glade"')]) == 1
    # The item the quest starts with, and both references reaching it, on one line.
    assert any(
        "item 90003 (reached from quest_template ID=90001 StartItem=90003" in line
        and "): nothing in " in line
        and line.endswith("item_script_names")
        for line in summary
    )
    # creature 90005's empty link lookups: one line, no "none in this table" lines.
    assert len([line for line in summary if "creature 90005: nothing in " in line]) == 1
    assert not [line for line in summary if line.startswith("none in this table")]
    # Every fact label of the revision stands in the summary once.
    facts = json.loads(
        vba(
            "case",
            "build",
            spec,
            tmp_path / "pkg",
            "--project-config",
            research_setup.config_path,
            "--json",
        ).stdout
    )["facts"]
    assert sorted(label for line in summary for label in _labels(line)) == sorted(
        f["fact_id"] for f in facts
    )
    assert len(summary) < len(facts) // 2
    # --verbose: the listing of one line per fact (--all-facts, its older name, too).
    listing = vba(
        "case",
        "build",
        spec,
        tmp_path / "pkg",
        "--project-config",
        research_setup.config_path,
        "--verbose",
    )
    assert listing.returncode == 0 and "unchanged (same inputs)" in listing.stdout
    listing_lines = listing.stdout.splitlines()
    listed = [line.strip() for line in listing_lines[listing_lines.index("facts:") + 1 :]]
    block = [line.strip() for line in listing_lines[3 : listing_lines.index("facts:")]]
    in_block = {label for line in block[1:] for label in _labels(line)}
    assert [_labels(line) for line in listed] == [
        {f["fact_id"]} for f in facts if f["fact_id"] not in in_block
    ]
    # The leads, the leads_limit notice and the "already fixed?" facts (enrichment/fixes).
    assert in_block == {
        f["fact_id"]
        for f in facts
        if f["kind"] in {"project_lead", "project_fix_search", "project_fix_candidate"}
        or f.get("reason") == "leads_limit"
    }
    assert any(
        line.endswith("quest_start_item: quest_template ID=90001 StartItem=90003 -> item 90003")
        for line in listed
    )
    older = vba(
        "case",
        "build",
        spec,
        tmp_path / "pkg",
        "--project-config",
        research_setup.config_path,
        "--all-facts",
    )
    assert older.returncode == 0 and older.stdout == listing.stdout


def _labels(line: str) -> set[str]:
    """``[P1-P3,P7] ...`` stands for P1, P2, P3 and P7."""
    found = re.match(r"\[([P0-9,-]+)\] ", line)
    assert found, line
    labels: set[str] = set()
    for part in found.group(1).split(","):
        first, _, last = part.partition("-")
        labels.update(f"P{n}" for n in range(int(first[1:]), int((last or first)[1:]) + 1))
    return labels


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
    smart = next(r for r in profile.references if r.name == "creature_smart_scripts")
    assert [(f.column, f.operator, f.value) for f in smart.when] == [("source_type", "eq", 0)]
    assert smart.negative == "creature_spawn" and smart.part_of
    assert {r.name for r in profile.references if r.symbol} >= {
        "areatrigger_script_name",
        "creature_script_name",
        "creature_spawn_script_name",
        "gameobject_script_name",
        "gameobject_spawn_script_name",
        "item_script_name",
        "spell_script_name",
    }


REF = 'name = "r"\ntable = "q"\ncolumn = "ID"\n'
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
        (BASE + ENTITY + "[[references]]\n" + REF, "references[0].holds"),
        (
            BASE
            + ENTITY
            + "[[references]]\n"
            + REF
            + 'holds = "quest"\n'
            + 'when = [{column = "ID", operator = "like", value = "%x%"}]\n',
            "references[0].when[0].operator",
        ),
        (
            BASE + ENTITY + "[[references]]\n" + REF + 'symbol = true\nnegative = "quest"\n',
            "references[0].symbol",
        ),
    ],
)
def test_profile_errors_name_the_key(text: str, key: str) -> None:
    with pytest.raises(EnrichmentError) as err:
        parse_profile(text.encode())
    assert err.value.code == "profile_invalid"
    assert err.value.details["key"] == key
