"""``find_references`` against plain SQL on the real-schema test DB and ``git grep -w``.

The expected rows of each map entry are counted by SQL written from the
entry's meaning (its column equals the ID, or its negative where the sign
picks the type or carries a meaning, under the entry's ``when``), not through
the functions under test; the expected lines are what ``git grep -w`` prints
at the pinned commit.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from tests.case.builder.conftest import build_source_repo, write_config
from tests.project_research.conftest import TestDatabase, mariadb
from tests.project_research.git_fixtures import GIT_ENV, git
from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.profile import Reference
from viano_bug_analysis.enrichment.reference_search import (
    Bounds,
    find_references,
    live_profile,
)
from viano_bug_analysis.enrichment.references import holders
from viano_bug_analysis.project_research import ProjectResearch, load_config
from viano_bug_analysis.schema_errors import check

__all__ = ["mariadb"]

# Whole words and near misses of one ID, and a constant used elsewhere.
USES = b"""// quest 91001 is the keg run
int a = 910011;     // a longer number
int b = x91001;     // part of an identifier
int c = -91001;     // a sign is a boundary
int d = 0x91001;    // hex digits after 0x are one word
static_assert(QUEST_KEG_RUN == 91001, "keg run");
void Start() { player->AddQuest(QUEST_KEG_RUN); }
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path, _ = build_source_repo(tmp_path_factory.mktemp("refs-src"))
    (path / "src" / "server" / "scripts" / "keg_run.cpp").write_bytes(USES)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "uses")
    return path, git(path, "rev-parse", "HEAD")


@pytest.fixture
def research(
    tmp_path: Path, mariadb: TestDatabase, repo: tuple[Path, str]
) -> Iterator[ProjectResearch]:
    config = write_config(tmp_path, mariadb, *repo)
    with ProjectResearch(load_config(config)) as opened:
        yield opened


def grep_w(repo: Path, commit: str, word: str) -> list[tuple[str, int]]:
    done = subprocess.run(
        ["git", "grep", "-w", "-n", "-I", word, commit],
        cwd=repo,
        env=GIT_ENV,
        capture_output=True,
        check=False,
    )
    assert done.returncode in (0, 1)
    found = []
    for line in done.stdout.decode().splitlines():
        _commit, path, number, _text = line.split(":", 3)
        found.append((path, int(number)))
    return found


def sql_count(db: TestDatabase, ref: Reference, entity_type: str, value: int) -> int:
    if ref.negative == entity_type and ref.holds == entity_type:
        clauses, params = [f"`{ref.column}` IN (%s, %s)"], [value, -value]
    elif ref.negative == entity_type:
        clauses, params = [f"`{ref.column}` = %s"], [-value]
    else:
        clauses, params = [f"`{ref.column}` = %s"], [value]
    for f in ref.when:
        if f.operator == "in":
            clauses.append(f"`{f.column}` IN ({', '.join(['%s'] * len(f.value))})")
            params += list(f.value)
        else:
            sql = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
            clauses.append(f"`{f.column}` {sql[f.operator]} %s")
            params.append(f.value)
    connection = pymysql.connect(
        host=db.host, port=db.port, user=db.user, password=db.password, database="cata_world"
    )
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT COUNT(*) FROM `{ref.table}` WHERE {' AND '.join(clauses)}", params
            )
            row = cursor.fetchone()
            assert row is not None
            return int(row[0])
    finally:
        connection.close()


def ids_in_database(db: TestDatabase, entity_type: str) -> set[int]:
    """Every ID the fixture's map columns hold for this type (and one nobody holds)."""
    found = {987654}
    connection = pymysql.connect(
        host=db.host, port=db.port, user=db.user, password=db.password, database="cata_world"
    )
    try:
        with connection.cursor() as cursor:
            for ref in holders(vcore_profile(), entity_type):
                try:
                    cursor.execute(f"SELECT DISTINCT `{ref.column}` FROM `{ref.table}`")
                except pymysql.err.ProgrammingError:
                    continue  # a table the fixture does not have: refused, tested below
                found |= {abs(int(v)) for (v,) in cursor.fetchall() if isinstance(v, int) and v}
    finally:
        connection.close()
    return set(sorted(found)[:6])


@pytest.mark.parametrize("entity_type", sorted(vcore_profile().entities))
def test_rows_and_counts_are_what_sql_counts(
    entity_type: str, research: ProjectResearch, mariadb: TestDatabase
) -> None:
    profile = live_profile(vcore_profile(), research.config, research.query)
    for value in sorted(ids_in_database(mariadb, entity_type)):
        document = find_references(profile, research, entity_type, value, Bounds(shown=5))
        assert check("references-v2", document) is None
        entries = {e["reference"]: e for e in document["database"]["entries"]}
        for ref in holders(profile, entity_type):
            entry = entries[ref.name]
            if "refused" in entry:
                assert entry["refused"] == "table_not_found", ref.name
                continue
            expected = sql_count(mariadb, ref, entity_type, value)
            assert (entry["count"], entry["count_exact"]) == (expected, True), (ref.name, value)
            assert len(entry["rows"]) == min(expected, 5)
            for row in entry["rows"]:
                assert abs(row["value"]) == value


def test_every_row_is_in_its_capture(research: ProjectResearch) -> None:
    document = find_references(vcore_profile().in_database("cata_world"), research, "quest", 91001)
    captures = {c["sha256"]: c["capture"] for c in document["captures"]}
    rows = [r for e in document["database"]["entries"] for r in e["rows"]]
    assert rows
    for row in rows:
        capture = captures[row["capture_sha256"]]
        index = int(row["pointer"].rsplit("/", 1)[1])
        assert capture["result"]["result"]["rows"][index] == row["row"]


def test_lines_are_what_git_grep_w_prints(
    research: ProjectResearch, repo: tuple[Path, str]
) -> None:
    document = find_references(vcore_profile(), research, "quest", 91001)
    literal = document["source"]["literal"]
    got = [(line["path"], line["line"]) for line in literal["lines"]]
    assert got == grep_w(*repo, "91001")
    assert literal["count"] == len(got) and literal["count_exact"]
    assert literal["literal_lines"] > literal["count"]  # 910011, x91001, 0x91001 hold the digits


def test_a_constant_of_the_type_s_prefix_and_where_it_is_used(
    research: ProjectResearch, repo: tuple[Path, str]
) -> None:
    document = find_references(vcore_profile(), research, "quest", 91001)
    constants = {c["name"]: c for c in document["source"]["constants"]}
    assert list(constants) == ["QUEST_KEG_RUN"]  # MAX_THINGS = 91001 has no quest prefix
    uses = constants["QUEST_KEG_RUN"]
    assert [(u["path"], u["line"]) for u in uses["lines"]] == grep_w(*repo, "QUEST_KEG_RUN")
    assert uses["count"] == len(uses["lines"]) and uses["count_exact"]


def test_many_literal_pages_are_all_read(research: ProjectResearch, repo: tuple[Path, str]) -> None:
    bounds = Bounds(page=1)  # one line per page: every page must be asked
    document = find_references(vcore_profile(), research, "quest", 91001, bounds)
    literal = document["source"]["literal"]
    assert literal["count"] == len(grep_w(*repo, "91001")) and literal["count_exact"]
    short = find_references(
        vcore_profile(), research, "quest", 91001, Bounds(page=1, source_pages=2)
    )
    assert not short["source"]["literal"]["count_exact"]
    assert short["source"]["literal"]["lines_read"] == 2


def test_a_page_shorter_than_the_rows_is_counted_past_it(research: ProjectResearch) -> None:
    document = find_references(
        vcore_profile().in_database("cata_world"), research, "quest", 91001, Bounds(shown=1)
    )
    entry = next(e for e in document["database"]["entries"] if e["count"] > 1)
    assert len(entry["rows"]) == 1 and entry["count_capture"] is not None


def test_without_a_database_section_the_group_says_not_configured(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    path, commit = repo
    config = tmp_path / "source-only.toml"
    config.write_text(
        f'[source]\nrepository = "{path}"\nurl = "https://git.example.invalid/x.git"\n'
        f'commit = "{commit}"\n'
    )
    with ProjectResearch(load_config(config)) as research:
        document: dict[str, Any] = find_references(vcore_profile(), research, "quest", 91001)
    assert document["database"] == {
        "available": False,
        "reason": "provider_not_configured",
        "provider": "database",
    }
    assert document["source"]["literal"]["count"] == len(grep_w(path, commit, "91001"))
