"""MariaDbSource checks that need no server: configuration and request validation
happen before any connection is opened (the port below is never contacted)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from viano_bug_analysis.errors import ResearchError, ResearchUnavailable
from viano_bug_analysis.project_research.mariadb_source import MariaDbSource
from viano_bug_analysis.vocabulary import FILTER_OPERATORS

SECRET = "SECRET-pw-do-not-print"
SETTINGS: dict[str, Any] = {
    "host": "db.internal.example",
    "port": 1,  # never contacted: every test here fails before connecting
    "user": "reader-user-name",
    "password": SECRET,
    "allow": {"cata_world": ["creature_template", "quest_template"]},
    "snapshot_id": "cata_world@2026-11-01",
}


def make(**overrides: Any) -> MariaDbSource:
    return MariaDbSource(**{**SETTINGS, **overrides})


@pytest.mark.parametrize(
    ("overrides", "key", "what"),
    [
        ({"host": ""}, "database.host", "missing"),
        ({"port": 0}, "database.port", "not_a_port"),
        ({"port": 70000}, "database.port", "not_a_port"),
        ({"port": True}, "database.port", "not_a_port"),
        ({"port": "3306"}, "database.port", "not_a_port"),
        ({"user": ""}, "database.user", "missing"),
        ({"password": None}, "database.password", "not_a_string"),
        ({"snapshot_id": " "}, "database.snapshot_id", "missing"),
        ({"allow": {}}, "database.allow", "empty"),
        ({"allow": {"cata-world": ["t"]}}, "database.allow", "database_not_an_identifier"),
        (
            {"allow": {"cata_world": "creature_template"}},
            "database.allow.cata_world",
            "not_a_list_of_tables",
        ),
        ({"allow": {"cata_world": []}}, "database.allow.cata_world", "not_a_list_of_tables"),
        (
            {"allow": {"cata_world": ["a.b"]}},
            "database.allow.cata_world",
            "table_not_an_identifier",
        ),
        ({"allow": {"cata_world": ["t`"]}}, "database.allow.cata_world", "table_not_an_identifier"),
        ({"allow": {"mysql": ["user"]}}, "database.allow.mysql", "system_schema"),
        ({"allow": {"SYS": ["x"]}}, "database.allow.SYS", "system_schema"),
        ({"max_page": 0}, "limits.max_page", "not_a_positive_integer"),
        ({"max_rows": 10, "max_page": 20}, "limits.max_rows", "smaller_than_max_page"),
        ({"statement_timeout_s": 0}, "limits.statement_timeout_s", "not_a_positive_number"),
        ({"statement_timeout_s": math.inf}, "limits.statement_timeout_s", "not_a_positive_number"),
        ({"connect_timeout_s": -1}, "limits.connect_timeout_s", "not_a_positive_number"),
    ],
)
def test_config_is_validated(overrides: dict[str, Any], key: str, what: str) -> None:
    with pytest.raises(ResearchError) as info:
        make(**overrides)
    assert info.value.code == "config_invalid"
    assert info.value.details == {"key": key, "what": what}
    assert SECRET not in str(info.value)


def test_repr_holds_no_credentials() -> None:
    text = repr(make())
    for secret in (SECRET, "db.internal.example", "reader-user-name"):
        assert secret not in text


def test_origin() -> None:
    assert make().origin("cata_world") == {
        "kind": "database",
        "database": "cata_world",
        "snapshot_id": "cata_world@2026-11-01",
    }


def test_unavailable_error_shape() -> None:
    err = ResearchUnavailable("database", "timeout")
    assert err.code == "research_unavailable" and isinstance(err, ResearchError)
    assert err.details == {"provider": "database", "reason": "timeout"}
    assert (err.provider, err.reason) == ("database", "timeout")


def call_rows(source: MariaDbSource, **request: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "database": None,
        "table": "creature_template",
        "columns": ["entry"],
        "filters": [],
        "offset": 0,
        "limit": 10,
    }
    arguments.update(request)
    return source.rows(**arguments)


def f(column: Any, operator: Any, value: Any) -> dict[str, Any]:
    return {"column": column, "operator": operator, "value": value}


@pytest.mark.parametrize(
    ("request_", "code", "details"),
    [
        ({"limit": 101}, "limit_exceeded", {"argument": "limit", "limit": 100, "maximum": 100}),
        (
            {"offset": 995, "limit": 10},
            "limit_exceeded",
            {"argument": "offset", "limit": 1000, "maximum": 1000},
        ),
        ({"limit": 0}, "request_invalid", {"argument": "limit", "what": "not_a_positive_integer"}),
        (
            {"limit": True},
            "request_invalid",
            {"argument": "limit", "what": "not_a_positive_integer"},
        ),
        (
            {"offset": -1},
            "request_invalid",
            {"argument": "offset", "what": "not_a_non_negative_integer"},
        ),
        (
            {"offset": 1.0},
            "request_invalid",
            {"argument": "offset", "what": "not_a_non_negative_integer"},
        ),
        ({"columns": []}, "request_invalid", {"argument": "columns", "what": "empty"}),
        ({"columns": "entry"}, "request_invalid", {"argument": "columns", "what": "not_a_list"}),
        (
            {"columns": ["entry", "entry"]},
            "request_invalid",
            {"argument": "columns", "what": "duplicate_column"},
        ),
        ({"columns": ["entry", 5]}, "identifier_invalid", {"argument": "columns", "index": 1}),
        (
            {"filters": {"column": "entry"}},
            "request_invalid",
            {"argument": "filters", "what": "not_a_list"},
        ),
        (
            {"filters": [f("entry", "eq", 1)] * 33},
            "limit_exceeded",
            {"argument": "filters", "limit": 32, "maximum": 32},
        ),
        (
            {"filters": [{"column": "entry", "operator": "eq"}]},
            "request_invalid",
            {"argument": "filters", "what": "needs_exactly_column_operator_value", "index": 0},
        ),
        (
            {"filters": [{**f("entry", "eq", 1), "sql": "1=1"}]},
            "request_invalid",
            {"argument": "filters", "what": "needs_exactly_column_operator_value", "index": 0},
        ),
        (
            {"filters": ["entry = 1"]},
            "request_invalid",
            {"argument": "filters", "what": "needs_exactly_column_operator_value", "index": 0},
        ),
        (
            {"filters": [f("entry; --", "eq", 1)]},
            "identifier_invalid",
            {"argument": "filters", "index": 0},
        ),
        ({"table": "creature_template`"}, "identifier_invalid", {"argument": "table"}),
        ({"database": "cata_world;"}, "identifier_invalid", {"argument": "database"}),
        ({"table": "item_template"}, "table_not_allowed", {"table": "item_template"}),
        (
            {"database": "mysql", "table": "user"},
            "table_not_allowed",
            {"database": "mysql", "table": "user"},
        ),
    ],
)
def test_requests_rejected_before_connecting(
    request_: dict[str, Any], code: str, details: dict[str, Any]
) -> None:
    with pytest.raises(ResearchError) as info:
        call_rows(make(), **request_)
    assert type(info.value) is ResearchError  # never an outage: nothing was contacted
    assert info.value.code == code
    assert info.value.details == details


def test_a_database_outside_the_allowlist_is_named_as_a_database() -> None:
    with pytest.raises(ResearchError) as info:
        make().tables(name_contains=None, database="cata_private", offset=0, limit=10)
    assert info.value.code == "table_not_allowed"
    assert info.value.details == {"database": "cata_private"}
    assert "the database is not in" in str(info.value)


@pytest.mark.parametrize("operator", ["like", "LIKE", "EQ", "=", "regexp", "between", "", None, 1])
def test_operator_unknown(operator: Any) -> None:
    with pytest.raises(ResearchError) as info:
        call_rows(make(), filters=[f("entry", "gt", 1), f("entry", operator, 1)])
    assert info.value.code == "operator_unknown"
    assert info.value.details == {"index": 1, "allowed": list(FILTER_OPERATORS)}
    assert "eq, ne, lt, le, gt, ge, contains, in" in str(info.value)


@pytest.mark.parametrize(
    ("operator", "value", "what"),
    [
        ("eq", True, "boolean_not_supported_use_0_or_1"),
        ("eq", math.nan, "float_not_finite"),
        ("gt", math.inf, "float_not_finite"),
        ("eq", {"x": 1}, "not_a_scalar"),
        ("eq", [1], "not_a_scalar"),
        ("eq", b"bytes", "not_a_scalar"),
        ("lt", None, "null_only_with_eq_or_ne"),
        ("contains", None, "null_only_with_eq_or_ne"),
        ("contains", 5, "contains_needs_a_string"),
        ("in", [], "in_needs_a_non_empty_list"),
        ("in", "abc", "in_needs_a_non_empty_list"),
        ("in", 5, "in_needs_a_non_empty_list"),
        ("in", [1, None], "null_in_list_use_eq_null"),
        ("in", [1, [2]], "not_a_scalar"),
        ("in", [False], "boolean_not_supported_use_0_or_1"),
    ],
)
def test_invalid_filter_values(operator: str, value: Any, what: str) -> None:
    with pytest.raises(ResearchError) as info:
        call_rows(make(), filters=[f("entry", operator, value)])
    assert info.value.code == "invalid_filter_value"
    assert info.value.details == {"index": 0, "operator": operator, "what": what}


def test_in_list_limit() -> None:
    with pytest.raises(ResearchError) as info:
        call_rows(make(), filters=[f("entry", "in", list(range(101)))])
    assert info.value.code == "limit_exceeded"
    assert info.value.details == {"argument": "filters", "index": 0, "limit": 100, "maximum": 100}


def test_ambiguity_is_decided_from_the_configuration() -> None:
    source = make(allow={"a": ["t"], "b": ["t", "u"]})
    with pytest.raises(ResearchError) as info:
        source.count(database=None, table="t", filters=[])
    assert info.value.code == "database_ambiguous"
    assert info.value.details == {"table": "t", "databases": ["a", "b"]}
