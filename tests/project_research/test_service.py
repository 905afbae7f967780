"""ProjectResearch: strict query validation, dispatch, origin, coverage, lazy providers."""

from __future__ import annotations

import copy
import hashlib
import sys
import types
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.project_research.research_fakes import (
    COMMIT,
    PASSWORD_MARKER,
    SNAPSHOT,
    URL,
    FakeDatabase,
    FakeGit,
    make_config,
    unavailable,
)
from viano_bug_analysis.project_research import (
    ProjectResearch,
    ResearchError,
    ResearchUnavailable,
    validate_query,
)
from viano_bug_analysis.project_research.config import Limits
from viano_bug_analysis.schemas import load_schema, schema_validator

EXAMPLE: dict[str, Any] = {
    "kind": "database.rows",
    "table": "creature_template",
    "columns": ["entry", "name"],
    "filters": [{"column": "name", "operator": "contains", "value": "Wolpertinger"}],
    "offset": 0,
    "limit": 10,
}

VALID: dict[str, list[dict[str, Any]]] = {
    "source.files": [
        {"kind": "source.files", "text": "wolpertinger", "offset": 0, "limit": 10},
        {"kind": "source.files", "text": ".cpp", "path_prefix": "src/", "offset": 5, "limit": 1},
    ],
    "source.search": [
        {
            "kind": "source.search",
            "text": "KilledMonsterCredit",
            "case_sensitive": True,
            "offset": 0,
            "limit": 20,
        },
        {
            "kind": "source.search",
            "text": "a\tb ' \" ` ; --",
            "case_sensitive": False,
            "path_prefix": "src/server/scripts",
            "offset": 0,
            "limit": 100,
        },
    ],
    "source.symbol": [
        {"kind": "source.symbol", "symbol": "npc_wild_wolpertinger", "offset": 0, "limit": 20},
        {"kind": "source.symbol", "symbol": "_x1", "path_prefix": "src", "offset": 0, "limit": 1},
    ],
    "source.registration": [
        {"kind": "source.registration", "symbol": "AddSC_zone_x", "offset": 0, "limit": 20},
    ],
    "source.schema": [
        {
            "kind": "source.schema",
            "text": "CREATE TABLE `creature_template`",
            "case_sensitive": False,
            "offset": 0,
            "limit": 20,
        },
    ],
    "source.read": [
        {
            "kind": "source.read",
            "path": "src/server/scripts/zone_x.cpp",
            "start_line": 1,
            "end_line": 40,
        },
        {"kind": "source.read", "path": "a.cpp", "start_line": 7, "end_line": 7},
    ],
    "source.revision": [
        {"kind": "source.revision", "revision": "0123abc"},
        {"kind": "source.revision", "revision": "0123456789abcdef0123456789abcdef01234567"},
    ],
    "source.changes": [
        {
            "kind": "source.changes",
            "since": "0123456789abcdef0123456789abcdef01234567",
            "terms": ["26290", "npc_thrall", "QUEST_KILLING_TIME"],
            "offset": 0,
            "limit": 50,
        },
        {
            "kind": "source.changes",
            "since": "0123456789abcdef0123456789abcdef01234567",
            "terms": ["x" * 256] * 32,
            "path_prefix": "sql/updates/",
            "offset": 50,
            "limit": 1,
        },
    ],
    "database.tables": [
        {"kind": "database.tables", "offset": 0, "limit": 50},
        {
            "kind": "database.tables",
            "name_contains": "quest",
            "database": "cata_world",
            "offset": 0,
            "limit": 50,
        },
    ],
    "database.schema": [
        {"kind": "database.schema", "table": "creature_template"},
        {"kind": "database.schema", "database": "cata_world", "table": "quest_template"},
    ],
    "database.rows": [
        EXAMPLE,
        {
            "kind": "database.rows",
            "database": "cata_world",
            "table": "quest_template",
            "columns": ["ID"],
            "filters": [],
            "offset": 0,
            "limit": 1,
        },
        {
            "kind": "database.rows",
            "table": "t",
            "columns": ["a", "b$"],
            "offset": 0,
            "limit": 5,
            "filters": [
                {"column": "a", "operator": "eq", "value": None},
                {"column": "a", "operator": "ne", "value": "x"},
                {"column": "a", "operator": "lt", "value": 1},
                {"column": "a", "operator": "le", "value": 1.5},
                {"column": "a", "operator": "gt", "value": "2020-01-01"},
                {"column": "a", "operator": "ge", "value": -3},
                {"column": "a", "operator": "contains", "value": "100%_\\"},
                {"column": "a", "operator": "in", "value": [1, "two", 3.5]},
                {"column": "a", "operator": "eq", "value": "multi\nline"},
            ],
        },
    ],
    "database.count": [
        {"kind": "database.count", "table": "creature_template", "filters": []},
        {
            "kind": "database.count",
            "table": "creature_template",
            "database": "cata_world",
            "filters": [{"column": "entry", "operator": "in", "value": [1, 2]}],
        },
    ],
    "references": [
        {"kind": "references", "entity_type": "quest", "id": 90001},
        {"kind": "references", "entity_type": "creature", "id": 2**63 - 1, "limit": 5},
    ],
}
VALID_CASES = [(kind, q) for kind, queries in VALID.items() for q in queries]


def test_every_kind_has_valid_examples() -> None:
    schema = load_schema("project-query-v1")
    assert set(VALID) == set(schema["properties"]["kind"]["enum"])
    assert schema["x-viano-response-recovery"] == 1


@pytest.mark.parametrize(("kind", "query"), VALID_CASES, ids=[k for k, _ in VALID_CASES])
def test_valid_queries_pass(kind: str, query: dict[str, Any]) -> None:
    assert validate_query(query, Limits(page=100)) == query
    schema_validator("project-query-v1").validate(query)


def test_the_seed_example_validates() -> None:
    assert validate_query(EXAMPLE) == EXAMPLE


def field(query: dict[str, Any], **changes: Any) -> dict[str, Any]:
    changed = copy.deepcopy(query)
    for key, value in changes.items():
        if value is ...:
            del changed[key]
        else:
            changed[key] = value
    return changed


def with_filter(**item: Any) -> dict[str, Any]:
    base = {"column": "name", "operator": "eq", "value": 1}
    base.update(item)
    return field(EXAMPLE, filters=[{k: v for k, v in base.items() if v is not ...}])


SEARCH = VALID["source.search"][0]
READ = VALID["source.read"][0]
SYMBOL = VALID["source.symbol"][0]
TABLES = VALID["database.tables"][0]
SCHEMA_Q = VALID["database.schema"][0]
COUNT = VALID["database.count"][0]
FILES = VALID["source.files"][0]
SQL = VALID["source.schema"][0]
REG = VALID["source.registration"][0]
REV = VALID["source.revision"][0]
REFS = VALID["references"][0]

INVALID: list[tuple[str, Any, str, str]] = [
    # (id, query, code, path)
    ("not an object", ["kind"], "query_invalid", ""),
    ("no kind", {"text": "x"}, "query_invalid", "/kind"),
    ("kind not a string", {"kind": 3}, "kind_unknown", "/kind"),
    ("unknown kind", {"kind": "database.sql", "sql": "SELECT 1"}, "kind_unknown", "/kind"),
    ("shell kind", {"kind": "shell"}, "kind_unknown", "/kind"),
    ("references: no type", field(REFS, entity_type=...), "query_invalid", "/entity_type"),
    ("references: not a word", field(REFS, entity_type="a b"), "query_invalid", "/entity_type"),
    ("references: id zero", field(REFS, id=0), "query_invalid", "/id"),
    ("references: id too large", field(REFS, id=2**63), "query_invalid", "/id"),
    ("references: id a string", field(REFS, id="90001"), "query_invalid", "/id"),
    ("references: extra", field(REFS, table="quest_template"), "unknown_field", "/table"),
    ("files: no text", field(FILES, text=...), "query_invalid", "/text"),
    ("files: extra", field(FILES, regex=True), "unknown_field", "/regex"),
    ("files: empty text", field(FILES, text=""), "query_invalid", "/text"),
    ("search: newline", field(SEARCH, text="a\nb"), "query_invalid", "/text"),
    ("search: CR", field(SEARCH, text="a\rb"), "query_invalid", "/text"),
    ("search: NUL", field(SEARCH, text="a\x00b"), "query_invalid", "/text"),
    ("search: trailing newline", field(SEARCH, text="abc\n"), "query_invalid", "/text"),
    ("search: no case flag", field(SEARCH, case_sensitive=...), "query_invalid", "/case_sensitive"),
    (
        "search: case flag string",
        field(SEARCH, case_sensitive="yes"),
        "query_invalid",
        "/case_sensitive",
    ),
    ("search: negative offset", field(SEARCH, offset=-1), "query_invalid", "/offset"),
    ("search: zero limit", field(SEARCH, limit=0), "query_invalid", "/limit"),
    ("search: huge limit", field(SEARCH, limit=10**6), "query_invalid", "/limit"),
    ("search: float offset", field(SEARCH, offset=1.5), "query_invalid", "/offset"),
    ("search: bool limit", field(SEARCH, limit=True), "query_invalid", "/limit"),
    ("search: prefix newline", field(SEARCH, path_prefix="a\nb"), "query_invalid", "/path_prefix"),
    ("search: repository field", field(SEARCH, repository="/etc"), "unknown_field", "/repository"),
    ("symbol: not a word", field(SYMBOL, symbol="a b"), "query_invalid", "/symbol"),
    ("symbol: leading digit", field(SYMBOL, symbol="1abc"), "query_invalid", "/symbol"),
    ("symbol: trailing newline", field(SYMBOL, symbol="abc\n"), "query_invalid", "/symbol"),
    ("registration: no symbol", field(REG, symbol=...), "query_invalid", "/symbol"),
    ("schema: path prefix", field(SQL, path_prefix="sql/"), "unknown_field", "/path_prefix"),
    ("read: no path", field(READ, path=...), "query_invalid", "/path"),
    ("read: line zero", field(READ, start_line=0), "query_invalid", "/start_line"),
    ("read: paging", field(READ, offset=0), "unknown_field", "/offset"),
    ("revision: too short", field(REV, revision="0123ab"), "query_invalid", "/revision"),
    ("revision: too long", field(REV, revision="0" * 41), "query_invalid", "/revision"),
    ("revision: upper case", field(REV, revision="0123ABC"), "query_invalid", "/revision"),
    ("revision: not hex", field(REV, revision="main~1x"), "query_invalid", "/revision"),
    ("revision: a ref", field(REV, revision="HEAD"), "query_invalid", "/revision"),
    ("revision: option", field(REV, revision="--all"), "query_invalid", "/revision"),
    ("revision: missing", field(REV, revision=...), "query_invalid", "/revision"),
    ("revision: number", field(REV, revision=1234567), "query_invalid", "/revision"),
    ("revision: paging", field(REV, offset=0), "unknown_field", "/offset"),
    ("tables: bad database", field(TABLES, database="a.b"), "query_invalid", "/database"),
    ("tables: pattern", field(TABLES, name_contains="%"), "query_invalid", "/name_contains"),
    ("schema: no table", field(SCHEMA_Q, table=...), "query_invalid", "/table"),
    ("schema: backtick", field(SCHEMA_Q, table="a`b"), "query_invalid", "/table"),
    ("schema: quote", field(SCHEMA_Q, table="a'b"), "query_invalid", "/table"),
    ("schema: dotted", field(SCHEMA_Q, table="mysql.user"), "query_invalid", "/table"),
    ("schema: comment", field(SCHEMA_Q, table="t/**/"), "query_invalid", "/table"),
    ("schema: dashes", field(SCHEMA_Q, table="t--"), "query_invalid", "/table"),
    ("schema: space", field(SCHEMA_Q, table="t x"), "query_invalid", "/table"),
    ("schema: too long", field(SCHEMA_Q, table="t" * 65), "query_invalid", "/table"),
    ("schema: trailing newline", field(SCHEMA_Q, table="t\n"), "query_invalid", "/table"),
    ("rows: no columns", field(EXAMPLE, columns=...), "query_invalid", "/columns"),
    ("rows: empty columns", field(EXAMPLE, columns=[]), "query_invalid", "/columns"),
    ("rows: star", field(EXAMPLE, columns=["*"]), "query_invalid", "/columns/0"),
    (
        "rows: expression",
        field(EXAMPLE, columns=["entry", "COUNT(*)"]),
        "query_invalid",
        "/columns/1",
    ),
    ("rows: duplicate columns", field(EXAMPLE, columns=["a", "a"]), "query_invalid", "/columns"),
    ("rows: no filters", field(EXAMPLE, filters=...), "query_invalid", "/filters"),
    ("rows: filters object", field(EXAMPLE, filters={"name": "x"}), "query_invalid", "/filters"),
    ("rows: sql field", field(EXAMPLE, where="1=1"), "unknown_field", "/where"),
    ("rows: order field", field(EXAMPLE, order_by="name"), "unknown_field", "/order_by"),
    ("filter: extra", with_filter(collate="x"), "unknown_field", "/filters/0/collate"),
    ("filter: no value", with_filter(value=...), "query_invalid", "/filters/0/value"),
    ("filter: bad column", with_filter(column="name; DROP"), "query_invalid", "/filters/0/column"),
    ("filter: bool", with_filter(value=True), "query_invalid", "/filters/0/value"),
    ("filter: object", with_filter(value={"a": 1}), "query_invalid", "/filters/0/value"),
    ("filter: list for eq", with_filter(value=[1]), "query_invalid", "/filters/0/value"),
    (
        "filter: null for lt",
        with_filter(operator="lt", value=None),
        "query_invalid",
        "/filters/0/value",
    ),
    (
        "filter: number contains",
        with_filter(operator="contains", value=5),
        "query_invalid",
        "/filters/0/value",
    ),
    (
        "filter: empty contains",
        with_filter(operator="contains", value=""),
        "query_invalid",
        "/filters/0/value",
    ),
    ("filter: scalar in", with_filter(operator="in", value=1), "query_invalid", "/filters/0/value"),
    ("filter: empty in", with_filter(operator="in", value=[]), "query_invalid", "/filters/0/value"),
    (
        "filter: null in",
        with_filter(operator="in", value=[None]),
        "query_invalid",
        "/filters/0/value/0",
    ),
    (
        "filter: long in",
        with_filter(operator="in", value=list(range(101))),
        "query_invalid",
        "/filters/0/value",
    ),
    ("filter: NUL value", with_filter(value="a\x00"), "query_invalid", "/filters/0/value"),
    ("count: paging", field(COUNT, offset=0), "unknown_field", "/offset"),
    ("count: columns", field(COUNT, columns=["a"]), "unknown_field", "/columns"),
]


@pytest.mark.parametrize(
    ("query", "code", "path"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_queries_are_refused_with_a_path(query: Any, code: str, path: str) -> None:
    with pytest.raises(ResearchError) as info:
        validate_query(query)
    assert info.value.code == code
    assert info.value.details["path"] == path
    assert not isinstance(info.value, ResearchUnavailable)


@pytest.mark.parametrize("operator", ["like", "regexp", "EQ", "=", "between", ""])
def test_unknown_operator_has_a_hint(operator: str) -> None:
    with pytest.raises(ResearchError) as info:
        validate_query(with_filter(operator=operator))
    err = info.value
    assert err.code == "operator_unknown"
    assert err.details["path"] == "/filters/0/operator"
    assert err.details["hint"] == "allowed: eq, ne, lt, le, gt, ge, contains, in"
    assert "allowed: eq, ne, lt, le, gt, ge, contains, in" in err.message


def test_unknown_field_names_only_plain_field_names() -> None:
    with pytest.raises(ResearchError) as info:
        validate_query(field(EXAMPLE, **{"x'; DROP TABLE t; --": 1}))
    assert info.value.code == "unknown_field"
    assert info.value.details["path"] == ""
    assert info.value.details["rule"] == "additionalProperties"
    assert "field" not in info.value.details and "DROP" not in info.value.message


def test_errors_never_echo_values() -> None:
    marker = "ZZ_VALUE_MARKER_ZZ"
    for query in (
        field(SEARCH, text=marker + "\n"),
        with_filter(value=[marker]),
        with_filter(operator="contains", value=marker * 1000),
        field(SCHEMA_Q, table=marker + "`"),
    ):
        with pytest.raises(ResearchError) as info:
            validate_query(query)
        assert marker not in str(info.value) and marker not in repr(info.value.details)


def test_limits_of_the_configuration() -> None:
    limits = Limits(page=10, rows=30)
    with pytest.raises(ResearchError) as info:
        validate_query(field(SEARCH, limit=11), limits)
    assert (info.value.code, info.value.details) == (
        "limit_exceeded",
        {"path": "/limit", "limit": 10, "maximum": 10},
    )
    assert "the maximum is 10" in info.value.message
    assert validate_query(field(EXAMPLE, offset=20, limit=10), limits)
    with pytest.raises(ResearchError) as info:
        validate_query(field(EXAMPLE, offset=21, limit=10), limits)
    assert (info.value.code, info.value.details["path"]) == ("limit_exceeded", "/offset")
    with pytest.raises(ResearchError) as info:
        validate_query(field(READ, start_line=5, end_line=4))
    assert info.value.code == "line_range_invalid"


def test_oversized_query() -> None:
    with pytest.raises(ResearchError) as info:
        validate_query(field(SEARCH, text="x" * 1000, path_prefix="y" * 1000, pad="z" * 70000))
    assert info.value.code == "query_too_large"


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_are_refused(number: float) -> None:
    # orjson would turn them into null, and `eq null` means IS NULL.
    with pytest.raises(ResearchError) as info:
        validate_query(with_filter(value=number))
    assert (info.value.code, info.value.details["path"]) == ("query_invalid", "/filters/0/value")
    with pytest.raises(ResearchError) as info:
        validate_query(with_filter(operator="in", value=[1, number]))
    assert info.value.details["path"] == "/filters/0/value/1"


def test_errors_come_in_document_order() -> None:
    filters = [{"column": "a", "operator": "eq", "value": 1} for _ in range(12)]
    filters[2] = {"column": "a`", "operator": "eq", "value": 1}
    filters[10] = {"column": "b`", "operator": "eq", "value": 1}
    with pytest.raises(ResearchError) as info:
        validate_query(field(EXAMPLE, filters=filters))
    assert info.value.details["path"] == "/filters/2/column"


def test_non_json_query() -> None:
    with pytest.raises(ResearchError) as info:
        validate_query({"kind": "source.files", "text": {1, 2}})
    assert info.value.code == "query_invalid"


# --- dispatch ------------------------------------------------------------------------------


@pytest.fixture
def git() -> FakeGit:
    return FakeGit()


@pytest.fixture
def db() -> FakeDatabase:
    return FakeDatabase()


@pytest.fixture
def research(tmp_path: Path, git: FakeGit, db: FakeDatabase) -> ProjectResearch:
    return ProjectResearch(make_config(tmp_path), git=git, database=db)


def check_result(result: dict[str, Any], query: dict[str, Any]) -> None:
    schema_validator("project-result-v2").validate(result)
    assert result["format"] == "viano-project-result" and result["format_version"] == 2
    assert result["query"] == query
    digest = hashlib.sha256(orjson.dumps(query, option=orjson.OPT_SORT_KEYS)).hexdigest()
    assert result["query_sha256"] == digest


PROVIDER_CASES = [(k, q) for k, q in VALID_CASES if k != "references"]


@pytest.mark.parametrize(("kind", "query"), PROVIDER_CASES, ids=[k for k, _ in PROVIDER_CASES])
def test_every_kind_is_answered(
    research: ProjectResearch, git: FakeGit, db: FakeDatabase, kind: str, query: dict[str, Any]
) -> None:
    result = research.query(query)
    check_result(result, query)
    if kind.startswith("source."):
        assert result["origin"] == {"kind": "git", "url": URL, "commit": COMMIT}
        assert git.calls and git.calls[0][0] == kind.split(".")[1] and not db.calls
    else:
        assert result["origin"]["kind"] == "database"
        assert result["origin"]["snapshot_id"] == SNAPSHOT
        assert db.calls and db.calls[0][0] == kind.split(".")[1] and not git.calls


def test_the_references_kind_needs_a_reference_map(
    research: ProjectResearch, git: FakeGit, db: FakeDatabase
) -> None:
    # The service alone has no profile: it refuses before asking any provider
    # (enrichment.reference_query answers the kind with a profile's map).
    with pytest.raises(ResearchError) as caught:
        research.query(VALID["references"][0])
    assert caught.value.code == "provider_not_configured"
    assert caught.value.details == {"provider": "reference_map", "path": "/kind"}
    assert not git.calls and not db.calls


def test_arguments_reach_the_provider_exactly(
    research: ProjectResearch, git: FakeGit, db: FakeDatabase
) -> None:
    research.query(SEARCH)
    assert git.calls[-1] == (
        "search",
        {
            "text": "KilledMonsterCredit",
            "case_sensitive": True,
            "path_prefix": None,
            "offset": 0,
            "limit": 20,
        },
    )
    research.query(VALID["source.schema"][0])
    assert git.calls[-1][1]["case_sensitive"] is False and "path_prefix" not in git.calls[-1][1]
    research.query(READ)
    assert git.calls[-1] == ("read", {"path": READ["path"], "start_line": 1, "end_line": 40})
    research.query(EXAMPLE)
    assert db.calls[-1] == (
        "rows",
        {
            "database": None,
            "table": "creature_template",
            "columns": ["entry", "name"],
            "filters": EXAMPLE["filters"],
            "offset": 0,
            "limit": 10,
        },
    )
    research.query(VALID["database.tables"][1])
    assert db.calls[-1] == (
        "tables",
        {"name_contains": "quest", "database": "cata_world", "offset": 0, "limit": 50},
    )


def test_database_origin_names_the_resolved_database(research: ProjectResearch) -> None:
    result = research.query(EXAMPLE)
    assert result["origin"] == {
        "kind": "database",
        "database": "cata_world",
        "snapshot_id": SNAPSHOT,
    }
    assert result["result"]["rows"] == [
        {"entry": 1, "name": "Wolpertinger"},
        {"entry": 2, "name": "Wild Wolpertinger"},
    ]


def test_table_listing_over_all_databases(research: ProjectResearch) -> None:
    result = research.query(TABLES)
    assert result["origin"] == {"kind": "database", "database": None, "snapshot_id": SNAPSHOT}
    named = research.query(VALID["database.tables"][1])
    assert named["origin"]["database"] == "cata_world"


def test_rows_coverage(research: ProjectResearch) -> None:
    full = research.query(EXAMPLE)["coverage"]
    assert full == {
        "complete": True,
        "complete_filtered_rows": True,
        "offset": 0,
        "limit": 10,
        "returned": 2,
        "total": None,
        "next_offset": None,
    }
    first = research.query(field(EXAMPLE, limit=1))["coverage"]
    assert first["complete_filtered_rows"] is False and first["next_offset"] == 1
    last = research.query(field(EXAMPLE, offset=1, limit=5))["coverage"]
    # The last page is not the whole predicate: rows before the offset are not in it.
    assert last["complete_filtered_rows"] is False and last["next_offset"] is None
    none = research.query(
        field(EXAMPLE, filters=[{"column": "name", "operator": "contains", "value": "Nope"}])
    )
    assert none["result"]["rows"] == [] and none["coverage"]["complete_filtered_rows"] is True
    assert none["query"]["filters"][0]["value"] == "Nope"


def test_count_and_schema_are_complete(research: ProjectResearch) -> None:
    assert research.query(COUNT)["coverage"] == {"complete": True}
    assert research.query(COUNT)["result"]["count"] == 3
    assert research.query(SCHEMA_Q)["coverage"] == {"complete": True}


def test_source_coverage(tmp_path: Path) -> None:
    config = make_config(tmp_path)

    def cover(query: dict[str, Any], **fake: Any) -> dict[str, Any]:
        coverage: dict[str, Any] = ProjectResearch(config, git=FakeGit(**fake)).query(query)[
            "coverage"
        ]
        return coverage

    assert cover(SEARCH, hits=3) == {
        "complete": True,
        "offset": 0,
        "limit": 20,
        "returned": 3,
        "total": 3,
        "next_offset": None,
        "files_searched": 10,
        "files_skipped": 0,
        "files_unsearched": 0,
        "lines_truncated": 0,
    }
    paged = cover(field(SEARCH, limit=2), hits=3)
    assert paged["complete"] is False and paged["next_offset"] == 2
    later = cover(field(SEARCH, offset=2), hits=3)
    assert later["complete"] is False and later["next_offset"] is None
    # Binary blobs, symlinks and submodules cannot hide a text hit ...
    harmless = [("a.png", "binary"), ("link", "symlink"), ("sub", "submodule")]
    empty = cover(SEARCH, hits=0, skipped=harmless)
    assert empty["complete"] is True and empty["returned"] == 0
    assert (empty["files_skipped"], empty["files_unsearched"]) == (3, 0)
    # ... a file too large, not UTF-8 or absent from a partial clone can: no
    # absence proof then.
    for reason in ("too_large", "not_utf8", "path_invalid", "missing"):
        partial = cover(SEARCH, hits=0, skipped=[("big.cpp", reason)])
        assert partial["complete"] is False and partial["files_unsearched"] == 1
    # A hit cut for display is still a hit.
    cut = cover(SEARCH, hits=2, cut=True)
    assert cut["complete"] is True and cut["lines_truncated"] == 2
    files = cover(FILES, hits=2)
    assert files["complete"] is True and files["files_searched"] is None
    assert cover(READ) == {"complete": True, "lines_truncated": 0}
    assert cover(READ, cut=True) == {"complete": False, "lines_truncated": 40}


def test_the_result_is_a_frozen_copy(research: ProjectResearch) -> None:
    query = copy.deepcopy(EXAMPLE)
    result = research.query(query)
    query["filters"][0]["value"] = "changed"
    assert result["query"]["filters"][0]["value"] == "Wolpertinger"


def test_invalid_query_reaches_no_provider(
    research: ProjectResearch, git: FakeGit, db: FakeDatabase
) -> None:
    with pytest.raises(ResearchError):
        research.query(field(EXAMPLE, where="1=1"))
    with pytest.raises(ResearchError):
        research.query(field(SEARCH, text="a\nb"))
    assert git.calls == [] and db.calls == []


@pytest.mark.parametrize("provider", ["source", "database"])
def test_unavailable_passes_through_unchanged(tmp_path: Path, provider: str) -> None:
    outage = unavailable(provider, "timeout")
    research = ProjectResearch(
        make_config(tmp_path), git=FakeGit(fail=outage), database=FakeDatabase(fail=outage)
    )
    with pytest.raises(ResearchUnavailable) as info:
        research.query(SEARCH if provider == "source" else EXAMPLE)
    assert info.value is outage


def test_provider_errors_pass_through(tmp_path: Path) -> None:
    refusal = ResearchError("unknown_column", "the table has no such column", {"index": 0})
    research = ProjectResearch(make_config(tmp_path), database=FakeDatabase(fail=refusal))
    with pytest.raises(ResearchError) as info:
        research.query(EXAMPLE)
    assert info.value is refusal


def test_provider_answer_must_be_json(tmp_path: Path) -> None:
    class Odd(FakeDatabase):
        def count(self, **kwargs: Any) -> dict[str, Any]:
            return {**super().count(**kwargs), "count": object()}

    with pytest.raises(ResearchError) as info:
        ProjectResearch(make_config(tmp_path), database=Odd()).query(COUNT)
    assert info.value.code == "provider_result_invalid"


def test_provider_answer_must_fit_the_result_schema(tmp_path: Path) -> None:
    class Odd(FakeDatabase):
        def count(self, **kwargs: Any) -> dict[str, Any]:
            return {**super().count(**kwargs), "count": -1}

    with pytest.raises(ResearchError) as info:
        ProjectResearch(make_config(tmp_path), database=Odd()).query(COUNT)
    assert info.value.code == "provider_result_invalid"
    assert info.value.details["path"] == "/result/count"


ONLY_SOURCE = """
[source]
repository = "vcore.git"
url = "https://git.example.invalid/vcore.git"
commit = "0123456789abcdef0123456789abcdef01234567"
"""
ONLY_DATABASE = """
[database]
host = "127.0.0.1"
port = 33079
user = "viano_reader"
password_env = "VBA_FAKE_DB_PASSWORD"
snapshot_id = "s1"
[database.allow]
cata_world = ["creature_template"]
"""


def test_provider_not_configured(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    only_source = ProjectResearch(make_config(tmp_path / "a", ONLY_SOURCE), git=FakeGit())
    with pytest.raises(ResearchError) as info:
        only_source.query(EXAMPLE)
    assert info.value.code == "provider_not_configured"
    assert info.value.details == {"provider": "database"}
    only_db = ProjectResearch(make_config(tmp_path / "b", ONLY_DATABASE), database=FakeDatabase())
    with pytest.raises(ResearchError) as info:
        only_db.query(SEARCH)
    assert (info.value.code, info.value.details) == (
        "provider_not_configured",
        {"provider": "source"},
    )


# --- providers built from the configuration ------------------------------------------------


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Replaces the real provider classes with fakes that record their settings."""
    made: dict[str, list[Any]] = {"git": [], "database": []}

    def fake_git(repository: Path, commit: str, **settings: Any) -> FakeGit:
        source = FakeGit()
        made["git"].append((repository, commit, settings))
        return source

    def fake_database(**settings: Any) -> FakeDatabase:
        source = FakeDatabase(**settings)
        made["database"].append(source)
        return source

    git_module = types.ModuleType("viano_bug_analysis.project_research.git_source")
    git_module.GitSource = fake_git  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "viano_bug_analysis.project_research.git_source", git_module)
    import viano_bug_analysis.project_research.mariadb_source as mariadb_source

    monkeypatch.setattr(mariadb_source, "MariaDbSource", fake_database)
    return made


def test_providers_are_built_lazily_from_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, built: dict[str, list[Any]]
) -> None:
    monkeypatch.delenv("VBA_FAKE_DB_PASSWORD", raising=False)
    config = make_config(
        tmp_path,
        ONLY_SOURCE
        + ONLY_DATABASE.replace("s1", SNAPSHOT)
        + "[limits]\npage = 7\nrows = 70\nstatement_seconds = 2\n",
    )
    research = ProjectResearch(config)  # no password needed yet
    assert built == {"git": [], "database": []}
    research.query(field(SEARCH, limit=7))
    research.query(field(SEARCH, limit=7))
    [(repository, commit, settings)] = built["git"]
    assert repository == (tmp_path / "vcore.git").resolve() and commit == COMMIT
    assert settings == {
        "url": URL,
        "max_files": 20000,
        "max_file_bytes": 8 << 20,
        "max_total_bytes": 256 << 20,
        "max_line_chars": 4096,
        "max_page": 7,
        "timeout_s": 30.0,
        "cache_bytes": 512 << 20,
        "disk_cache": None,
        "disk_cache_bytes": 2 << 30,
    }
    with pytest.raises(ResearchUnavailable) as info:
        research.query(field(EXAMPLE, limit=7))
    assert info.value.reason == "credentials_missing"
    assert built["database"] == []
    monkeypatch.setenv("VBA_FAKE_DB_PASSWORD", PASSWORD_MARKER)
    research.query(field(EXAMPLE, limit=7))
    research.query(COUNT)
    [database] = built["database"]
    assert database.settings == {
        "host": "127.0.0.1",
        "port": 33079,
        "user": "viano_reader",
        "password": PASSWORD_MARKER,
        "max_rows": 70,
        "max_page": 7,
        "statement_timeout_s": 2.0,
        "connect_timeout_s": 5.0,
    }
    assert database.allow == {"cata_world": ("creature_template",)}
    research.close()
    assert database.closed


def test_context_manager_closes(tmp_path: Path) -> None:
    db = FakeDatabase()
    with ProjectResearch(make_config(tmp_path), database=db) as research:
        research.query(COUNT)
    assert db.closed


# --- against the real database (tests/project_research/conftest.py) -----------------------


@pytest.mark.integration
def test_the_seed_example_against_the_fixture_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mariadb: Any
) -> None:
    from viano_bug_analysis.project_research import CaptureStore

    monkeypatch.setenv("VBA_IT_DB_PASSWORD", mariadb.password)
    config = make_config(
        tmp_path,
        f"""
[database]
host = "127.0.0.1"
port = {mariadb.port}
user = "{mariadb.user}"
password_env = "VBA_IT_DB_PASSWORD"
snapshot_id = "cata_world@fixture"
[database.allow]
cata_world = ["creature_template", "quest_template"]
vba_fixture_types = ["world_meta"]
""",
    )
    with ProjectResearch(config) as research:
        rows = research.query(EXAMPLE)
        check_result(rows, EXAMPLE)
        assert rows["origin"] == {
            "kind": "database",
            "database": "cata_world",
            "snapshot_id": "cata_world@fixture",
        }
        names = [row["name"] for row in rows["result"]["rows"]]
        assert "Wild Wolpertinger" in names
        assert rows["coverage"]["complete_filtered_rows"] is True
        count = research.query(
            {"kind": "database.count", "table": "creature_template", "filters": EXAMPLE["filters"]}
        )
        assert count["result"]["count"] == len(names)
        # The world schema has no DECIMAL column; the awkward-types table has.
        decimals = research.query(
            {
                "kind": "database.rows",
                "database": "vba_fixture_types",
                "table": "world_meta",
                "columns": ["id", "money"],
                "filters": [{"column": "id", "operator": "eq", "value": 1}],
                "offset": 0,
                "limit": 10,
            }
        )
        assert decimals["result"]["rows"] == [{"id": 1, "money": "19.99"}]
        for query in (
            {"kind": "database.schema", "table": "creature_template"},
            {"kind": "database.tables", "offset": 0, "limit": 10},
            {"kind": "database.tables", "database": "cata_world", "offset": 0, "limit": 1},
        ):
            check_result(research.query(query), query)
        package = tmp_path / "pkg"
        package.mkdir()
        store = CaptureStore(package)
        capture = research.capture(EXAMPLE)
        assert store.put(capture) == (capture.sha256, True)
        assert store.put(research.capture(EXAMPLE)) == (capture.sha256, False)
        assert mariadb.password.encode() not in capture.data
        with pytest.raises(ResearchError) as info:
            research.query({"kind": "database.schema", "table": "account"})
        assert info.value.code == "table_not_allowed"


# --- against a real git repository -----------------------------------------------------------


def git_repository(path: Path, extra: dict[str, bytes] | None = None) -> str:
    """A small repository with a C++ file, an SQL file, a binary blob and a symlink."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    path.mkdir()
    (path / "src").mkdir()
    (path / "sql").mkdir()
    (path / "src" / "zone_x.cpp").write_text(
        "void AddSC_zone_x()\n{\n    new npc_wild_wolpertinger();\n}\n"
    )
    (path / "sql" / "world.sql").write_text("CREATE TABLE `creature_template` (entry INT);\n")
    (path / "data.bin").write_bytes(b"GIF89a\x00\x00\x01")
    (path / "link.cpp").symlink_to("src/zone_x.cpp")
    for name, data in (extra or {}).items():
        (path / name).write_bytes(data)

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
            cwd=path,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "one")
    return git("rev-parse", "HEAD")


def test_every_source_kind_against_a_real_commit(tmp_path: Path) -> None:
    commit = git_repository(tmp_path / "repo")
    config = make_config(
        tmp_path,
        f"""
[source]
repository = "repo"
url = "{URL}"
commit = "{commit}"
""",
    )
    queries: list[dict[str, Any]] = [
        {"kind": "source.files", "text": ".cpp", "offset": 0, "limit": 10},
        {
            "kind": "source.search",
            "text": "wolpertinger",
            "case_sensitive": False,
            "path_prefix": "src/",
            "offset": 0,
            "limit": 10,
        },
        {"kind": "source.symbol", "symbol": "npc_wild_wolpertinger", "offset": 0, "limit": 10},
        {"kind": "source.registration", "symbol": "AddSC_zone_x", "offset": 0, "limit": 10},
        {
            "kind": "source.schema",
            "text": "creature_template",
            "case_sensitive": True,
            "offset": 0,
            "limit": 10,
        },
        {"kind": "source.read", "path": "src/zone_x.cpp", "start_line": 2, "end_line": 3},
        {
            "kind": "source.search",
            "text": "NoSuchText",
            "case_sensitive": True,
            "offset": 0,
            "limit": 10,
        },
    ]
    with ProjectResearch(config) as research:
        results = [research.query(query) for query in queries]
    for query, result in zip(queries, results, strict=True):
        check_result(result, query)
        assert result["origin"] == {"kind": "git", "url": URL, "commit": commit}
        assert str(tmp_path) not in orjson.dumps(result).decode()
    files, search, symbol, registration, schema, read, nothing = results
    assert [f["path"] for f in files["result"]["files"]] == ["src/zone_x.cpp"]
    assert [m["line"] for m in search["result"]["matches"]] == [3]
    assert search["coverage"]["complete"] is True
    assert (
        symbol["result"]["matches"][0]["sha256"] == registration["result"]["matches"][0]["sha256"]
    )
    assert schema["result"]["matches"][0]["path"] == "sql/world.sql"
    assert [line["text"] for line in read["result"]["lines"]] == [
        "{",
        "    new npc_wild_wolpertinger();",
    ]
    # A complete search with no hit: the binary blob and the symlink hide nothing.
    assert nothing["result"]["matches"] == []
    assert nothing["coverage"]["complete"] is True
    assert nothing["coverage"]["files_skipped"] >= 2
    assert nothing["coverage"]["files_unsearched"] == 0


def test_a_non_utf8_file_makes_an_empty_search_partial(tmp_path: Path) -> None:
    commit = git_repository(tmp_path / "repo", {"legacy.txt": b"caf\xe9 NoSuchText\n"})
    config = make_config(
        tmp_path, f'[source]\nrepository = "repo"\nurl = "{URL}"\ncommit = "{commit}"\n'
    )
    query = field(SEARCH, text="NoSuchText")
    result = ProjectResearch(config).query(query)
    # The text is in the file that could not be decoded: no absence proof.
    assert result["result"]["matches"] == []
    assert result["coverage"]["complete"] is False
    assert result["coverage"]["files_unsearched"] == 1


def test_a_missing_repository_is_unavailable(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        f'[source]\nrepository = "nowhere"\nurl = "{URL}"\ncommit = "{COMMIT}"\n',
    )
    with pytest.raises(ResearchUnavailable) as info:
        ProjectResearch(config).query(SEARCH)
    assert info.value.provider == "git"
