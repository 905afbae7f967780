"""The corpus keeps its own promises.

tests/corpus/reports/ holds tracker reports as people write them and
tests/corpus/expected/ what a careful reader finds in each (format in
tests/corpus/README.md). These checks keep the two honest before any extractor
is measured against them: every report has an expectation and back, each
expectation has the fixed shape, what it quotes is in the report, and every
claim about the fixture world ("92105 is a creature and an item", "two quests
are titled The Ashen Tithe") is true of the test database, so a wrong score can
only come from the extractor.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pymysql

from tests.project_research.conftest import WORLD_DATABASE, TestDatabase

CORPUS = Path(__file__).resolve().parent
REPORTS = CORPUS / "reports"
EXPECTED = CORPUS / "expected"
MINIMUM_REPORTS = 40
REPORT_SUFFIXES = {".json", ".md", ".txt"}
ENTITY_TYPES = {
    "quest",
    "creature",
    "gameobject",
    "item",
    "spell",
    "area",
    "areatrigger",
    "creature_spawn",
    "gameobject_spawn",
}
NAMED_TYPES = {"quest", "creature", "gameobject"}
EXPECTED_KEYS = [
    "title",
    "url",
    "revision",
    "mentions",
    "untyped",
    "names",
    "unresolved_links",
    "not",
]
HEX_REVISION = re.compile(r"^[0-9a-f]{7,40}$")
SITE_TYPE = re.compile(r"^[a-z][a-z-]*$")
# Where an untyped ID can exist, per type: the entity table, or for items and
# spells (no world table in this lineage) their link tables.
ID_COLUMNS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "quest": (("quest_template", "ID"),),
    "creature": (("creature_template", "entry"),),
    "gameobject": (("gameobject_template", "entry"),),
    "item": (("item_template_addon", "Id"), ("item_script_names", "Id")),
    "spell": (
        ("spell_script_names", "spell_id"),
        ("spell_linked_spell", "spell_trigger"),
        ("spell_area", "spell"),
    ),
    "areatrigger": (("areatrigger_scripts", "entry"),),
    "creature_spawn": (("creature", "guid"),),
    "gameobject_spawn": (("gameobject", "guid"),),
}
NAME_COLUMNS: tuple[tuple[str, str, str, str], ...] = (
    ("quest", "quest_template", "ID", "LogTitle"),
    ("quest", "quest_template_locale", "ID", "Title"),
    ("creature", "creature_template", "entry", "name"),
    ("creature", "creature_template_locale", "entry", "Name"),
    ("gameobject", "gameobject_template", "entry", "name"),
    ("gameobject", "gameobject_template_locale", "entry", "name"),
)


def stems(folder: Path, suffixes: set[str]) -> dict[str, Path]:
    return {p.stem: p for p in sorted(folder.iterdir()) if p.suffix in suffixes}


def reports() -> dict[str, Path]:
    return stems(REPORTS, REPORT_SUFFIXES)


def expectations() -> Iterator[tuple[str, dict[str, Any]]]:
    for stem, path in stems(EXPECTED, {".json"}).items():
        yield stem, json.loads(path.read_text(encoding="utf-8"))


def report_text(path: Path) -> str:
    """Everything the report says, the way a reader sees it (JSON strings unescaped)."""
    raw = path.read_text(encoding="utf-8")
    if path.suffix != ".json":
        return raw
    strings: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads(raw))
    return "\n".join(strings)


def imported_fields(path: Path) -> tuple[str, str | None, str]:
    """(title, web url, text the build reads) of a report, by its tracker's field names."""
    if path.suffix != ".json":
        text = path.read_text(encoding="utf-8")
        first = next(line for line in text.splitlines() if line.strip())
        return first.lstrip("#").strip(), None, text
    issue = json.loads(path.read_text(encoding="utf-8"))
    if "iid" in issue:  # GitLab
        return issue["title"], issue["web_url"], f"{issue['title']}\n{issue['description'] or ''}"
    if "html_url" in issue:  # GitHub REST: `url` is the API address
        return issue["title"], issue["html_url"], f"{issue['title']}\n{issue['body'] or ''}"
    return issue["title"], issue["url"], f"{issue['title']}\n{issue['body'] or ''}"  # gh CLI


# --- the files -----------------------------------------------------------------------------


def test_every_report_has_an_expectation_and_back() -> None:
    found = reports()
    expected = stems(EXPECTED, {".json"})
    assert sorted(set(found) - set(expected)) == []
    assert sorted(set(expected) - set(found)) == []
    assert not [p.name for p in REPORTS.iterdir() if p.suffix not in REPORT_SUFFIXES]
    assert len(found) >= MINIMUM_REPORTS


def test_reports_are_in_the_trackers_forms() -> None:
    kinds: dict[str, int] = {}
    for path in reports().values():
        if path.suffix != ".json":
            kinds["text"] = kinds.get("text", 0) + 1
            continue
        issue = json.loads(path.read_text(encoding="utf-8"))
        if "iid" in issue:
            kind = "gitlab"
            assert isinstance(issue["description"], str), path.name
            assert isinstance(issue["author"]["username"], str), path.name
            assert all(isinstance(label, str) for label in issue["labels"]), path.name
        elif "html_url" in issue:
            kind = "github_rest"
            assert issue["url"].startswith("https://api.github.com/repos/"), path.name
            assert isinstance(issue["user"]["login"], str), path.name
            assert issue["body"] is None or isinstance(issue["body"], str), path.name
            assert all(isinstance(label["name"], str) for label in issue["labels"]), path.name
            assert isinstance(issue["created_at"], str), path.name
        else:
            kind = "gh_cli"
            assert issue["url"].startswith("https://github.com/"), path.name
            assert isinstance(issue["author"]["login"], str), path.name
            assert isinstance(issue["createdAt"], str), path.name
        assert isinstance(issue["number" if kind != "gitlab" else "iid"], int), path.name
        kinds[kind] = kinds.get(kind, 0) + 1
    # Every form the importer reads is represented, none by a token report.
    assert set(kinds) == {"github_rest", "gh_cli", "gitlab", "text"}
    assert min(kinds.values()) >= 5


def test_expectations_have_the_fixed_format() -> None:
    for stem, expected in expectations():
        assert list(expected) == EXPECTED_KEYS, stem
        assert isinstance(expected["title"], str) and expected["title"].strip(), stem
        assert expected["url"] is None or expected["url"].startswith("https://"), stem
        revision = expected["revision"]
        assert revision is None or HEX_REVISION.fullmatch(revision), stem
        for mention in expected["mentions"]:
            assert list(mention) == ["entity_type", "entity_id"], stem
            assert mention["entity_type"] in ENTITY_TYPES, stem
            assert isinstance(mention["entity_id"], int) and mention["entity_id"] > 0, stem
        for untyped in expected["untyped"]:
            assert list(untyped) == ["entity_id", "found_as"], stem
            assert isinstance(untyped["entity_id"], int) and untyped["entity_id"] > 0, stem
            assert set(untyped["found_as"]) <= ENTITY_TYPES, stem
            assert len(set(untyped["found_as"])) == len(untyped["found_as"]), stem
        for name in expected["names"]:
            assert list(name) == ["name", "found_as"], stem
            assert name["found_as"], f"{stem}: a name found nowhere is not listed"
            assert all(f["entity_type"] in NAMED_TYPES for f in name["found_as"]), stem
        for link in expected["unresolved_links"]:
            assert list(link) == ["site_type", "site_id"], stem
            assert SITE_TYPE.fullmatch(link["site_type"]), stem
            # A link of a type the profile has resolves: it is a mention, not unresolved.
            assert link["site_type"] not in ENTITY_TYPES | {"npc", "object", "zone"}, stem
        for trap in expected["not"]:
            assert list(trap) == ["entity_type", "entity_id"], stem
            assert trap["entity_type"] is None or trap["entity_type"] in ENTITY_TYPES, stem
        for key in ("mentions", "untyped", "names", "unresolved_links", "not"):
            keys = [json.dumps(item, sort_keys=True) for item in expected[key]]
            assert len(keys) == len(set(keys)), f"{stem}: {key} has a duplicate"


def test_no_expectation_contradicts_itself() -> None:
    for stem, expected in expectations():
        typed = {(m["entity_type"], m["entity_id"]) for m in expected["mentions"]}
        untyped = {u["entity_id"] for u in expected["untyped"]}
        for trap in expected["not"]:
            if trap["entity_type"] is None:  # no mention of that number at all
                assert trap["entity_id"] not in {n for _, n in typed} | untyped, stem
            else:
                assert (trap["entity_type"], trap["entity_id"]) not in typed, stem
        assert not untyped & {n for _, n in typed}, f"{stem}: an ID is typed and untyped"


def test_expectations_quote_what_the_report_says() -> None:
    found = reports()
    for stem, expected in expectations():
        title, url, text = imported_fields(found[stem])
        assert expected["title"] == title, stem
        assert expected["url"] == url, stem
        lowered = text.casefold()
        if expected["revision"] is not None:
            assert expected["revision"] in lowered, stem
        for name in expected["names"]:
            assert name["name"].casefold() in lowered, f"{stem}: {name['name']}"
        numbers = set(re.findall(r"\d+", text))
        for item in expected["mentions"] + expected["untyped"] + expected["unresolved_links"]:
            number = item.get("entity_id", item.get("site_id"))
            assert str(number) in numbers, f"{stem}: {number}"


# --- the claims about the fixture world -------------------------------------------------------


def connect(mariadb: TestDatabase) -> pymysql.connections.Connection[Any]:
    return pymysql.connect(
        host=mariadb.host,
        port=mariadb.port,
        user=mariadb.user,
        password=mariadb.password,
        database=WORLD_DATABASE,
        charset="utf8mb4",
    )


def where_ids_exist(mariadb: TestDatabase, ids: frozenset[int]) -> dict[int, set[str]]:
    found: dict[int, set[str]] = {n: set() for n in ids}
    connection = connect(mariadb)
    try:
        with connection.cursor() as cursor:
            marks = ", ".join(["%s"] * len(ids))
            for entity_type, places in ID_COLUMNS.items():
                for table, column in places:
                    cursor.execute(
                        f"SELECT DISTINCT `{column}` FROM `{table}` WHERE `{column}` IN ({marks})",
                        sorted(ids),
                    )
                    for (number,) in cursor.fetchall():
                        found[int(number)].add(entity_type)
    finally:
        connection.close()
    return found


def fixture_names(mariadb: TestDatabase) -> dict[str, set[tuple[str, int]]]:
    """Every name of the fixture world, folded, with the entities that carry it."""
    names: dict[str, set[tuple[str, int]]] = {}
    connection = connect(mariadb)
    try:
        with connection.cursor() as cursor:
            for entity_type, table, key, column in NAME_COLUMNS:
                cursor.execute(f"SELECT `{key}`, `{column}` FROM `{table}` WHERE `{column}` <> ''")
                for number, name in cursor.fetchall():
                    names.setdefault(name.casefold(), set()).add((entity_type, int(number)))
    finally:
        connection.close()
    return names


def test_untyped_ids_exist_exactly_where_the_expectation_says(mariadb: TestDatabase) -> None:
    claims = [(stem, u) for stem, expected in expectations() for u in expected["untyped"]]
    assert claims
    found = where_ids_exist(mariadb, frozenset(u["entity_id"] for _, u in claims))
    wrong = [
        f"{stem}: {u['entity_id']} is {sorted(found[u['entity_id']])}, not {sorted(u['found_as'])}"
        for stem, u in claims
        if found[u["entity_id"]] != set(u["found_as"])
    ]
    assert wrong == []


def test_names_resolve_exactly_where_the_expectation_says(mariadb: TestDatabase) -> None:
    names = fixture_names(mariadb)
    wrong = []
    for stem, expected in expectations():
        for name in expected["names"]:
            claimed = {(f["entity_type"], f["entity_id"]) for f in name["found_as"]}
            actual = names.get(name["name"].casefold(), set())
            if claimed != actual:
                wrong.append(f"{stem}: {name['name']} is {sorted(actual)}, not {sorted(claimed)}")
    assert wrong == []


def test_every_fixture_name_a_report_contains_is_listed(mariadb: TestDatabase) -> None:
    # The expectation is what a careful reader finds: a fixture name in the text
    # that is not listed would make an extractor that finds it look wrong. A
    # name inside a longer listed name, or the name of an entity the report
    # gives with its ID, is already accounted for.
    names = fixture_names(mariadb)
    found = reports()
    missed = []
    for stem, expected in expectations():
        text = imported_fields(found[stem])[2].casefold()
        listed = [n["name"].casefold() for n in expected["names"]]
        by_id = {(m["entity_type"], m["entity_id"]) for m in expected["mentions"]}
        by_id |= {(t, u["entity_id"]) for u in expected["untyped"] for t in u["found_as"]}
        for name, entities in names.items():
            if not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text):
                continue
            if any(name in longer for longer in listed) or entities & by_id:
                continue
            missed.append(f"{stem}: {name}")
    assert missed == []
