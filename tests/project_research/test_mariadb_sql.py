"""The SQL the MariaDB source sends, built without a server.

These are the statements ``MariaDbSource`` executes (the integration suites
in test_mariadb_rows.py / test_mariadb_security.py run them against a real
server); here they are checked as text: values travel only as ``%s``
parameters, every identifier is backtick-quoted, LIMIT/OFFSET are
parameters bounded by the page and row-window limits, and every operator of
the vocabulary has its clause.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from viano_bug_analysis.errors import ResearchError
from viano_bug_analysis.project_research import mariadb_sql
from viano_bug_analysis.project_research.mariadb_catalog import Table, table_from_rows
from viano_bug_analysis.vocabulary import FILTER_OPERATORS

# information_schema.COLUMNS rows as the catalog query returns them:
# COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, DATA_TYPE,
# COLUMN_TYPE, COLUMN_KEY, EXTRA
COLUMNS = [
    ("entry", 1, None, "NO", "int", "int(10) unsigned", "PRI", ""),
    ("name", 2, "''", "NO", "varchar", "varchar(100)", "", ""),
    ("speed", 3, "1", "YES", "float", "float", "", ""),
    ("icon", 4, None, "YES", "blob", "blob", "", ""),
]
# information_schema.STATISTICS rows: INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME
INDEXES = [("PRIMARY", 0, 1, "entry"), ("idx_name", 1, 1, "name")]


def keyed() -> Table:
    return table_from_rows("cata_world", "creature_template", COLUMNS, INDEXES)


def unkeyed() -> Table:
    return table_from_rows("cata_world", "loot", COLUMNS, [])


def f(column: str, operator: str, value: Any) -> dict[str, Any]:
    return {"column": column, "operator": operator, "value": value}


def placeholders(sql: str) -> int:
    """The number of parameters PyMySQL substitutes, proven by substituting:
    a stray ``%`` or a missing ``%s`` makes ``%`` formatting fail."""
    count = sql.count("%s")
    assert sql % tuple("?" for _ in range(count)) is not None
    return count


def code_of(call: Any, *args: Any) -> tuple[str, dict[str, Any]]:
    with pytest.raises(ResearchError) as caught:
        call(*args)
    return caught.value.code, caught.value.details


# --- operators -------------------------------------------------------------------------


SAMPLE_VALUES: dict[str, Any] = {
    "eq": 5,
    "ne": 5,
    "lt": 5,
    "le": 5,
    "gt": 5,
    "ge": 5,
    "contains": "wolf",
    "in": [1, 2, 3],
}
EXPECTED_CLAUSES = {
    "eq": ("`entry` = %s", [5]),
    "ne": ("NOT (`entry` <=> %s)", [5]),
    "lt": ("`entry` < %s", [5]),
    "le": ("`entry` <= %s", [5]),
    "gt": ("`entry` > %s", [5]),
    "ge": ("`entry` >= %s", [5]),
    "contains": ("`entry` LIKE CONCAT('%%', %s, '%%') ESCAPE '\\\\'", ["wolf"]),
    "in": ("`entry` IN (%s, %s, %s)", [1, 2, 3]),
}


def test_every_vocabulary_operator_has_a_clause() -> None:
    # A new operator in vocabulary.py that the SQL builder cannot build fails here.
    assert set(EXPECTED_CLAUSES) == set(FILTER_OPERATORS) == set(SAMPLE_VALUES)


@pytest.mark.parametrize("operator", FILTER_OPERATORS)
def test_operator_clause(operator: str) -> None:
    parsed = mariadb_sql.parse_filters([f("entry", operator, SAMPLE_VALUES[operator])])
    where, params = mariadb_sql.where(parsed)
    clause, expected_params = EXPECTED_CLAUSES[operator]
    assert where == f" WHERE {clause}"
    assert params == expected_params
    assert placeholders(where) == len(params)


@pytest.mark.parametrize(
    ("operator", "clause"), [("eq", "`name` IS NULL"), ("ne", "`name` IS NOT NULL")]
)
def test_null_needs_no_parameter(operator: str, clause: str) -> None:
    where, params = mariadb_sql.where(mariadb_sql.parse_filters([f("name", operator, None)]))
    assert (where, params) == (f" WHERE {clause}", [])


def test_filters_are_and_combined_in_request_order() -> None:
    parsed = mariadb_sql.parse_filters(
        [f("entry", "ge", 10), f("name", "contains", "a"), f("speed", "eq", None)]
    )
    where, params = mariadb_sql.where(parsed)
    assert where == (
        " WHERE `entry` >= %s AND `name` LIKE CONCAT('%%', %s, '%%') ESCAPE '\\\\'"
        " AND `speed` IS NULL"
    )
    assert params == [10, "a"]


def test_no_filters_no_where() -> None:
    assert mariadb_sql.where([]) == ("", [])


@pytest.mark.parametrize(
    ("needle", "parameter"),
    [("100%", "100\\%"), ("a_b", "a\\_b"), ("back\\slash", "back\\\\slash"), ("plain", "plain")],
)
def test_contains_escapes_like_wildcards_in_the_parameter(needle: str, parameter: str) -> None:
    _, params = mariadb_sql.where(mariadb_sql.parse_filters([f("name", "contains", needle)]))
    assert params == [parameter]


def test_escape_literal_follows_no_backslash_escapes() -> None:
    where, _ = mariadb_sql.where(mariadb_sql.parse_filters([f("name", "contains", "x")]))
    assert mariadb_sql.for_connection(where, no_backslash_escapes=False) == where
    rewritten = mariadb_sql.for_connection(where, no_backslash_escapes=True)
    assert rewritten.endswith("ESCAPE '\\'")
    assert "\\\\" not in rewritten


# --- values never in the text ----------------------------------------------------------

SCALARS = st.one_of(
    st.text(max_size=40),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)


@given(
    operator=st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]),
    value=SCALARS,
)
def test_scalar_values_are_only_parameters(operator: str, value: Any) -> None:
    parsed = mariadb_sql.parse_filters([f("name", operator, value)])
    where, params = mariadb_sql.where(parsed)
    reference, _ = mariadb_sql.where(mariadb_sql.parse_filters([f("name", operator, 0)]))
    # The text does not depend on the value at all: it cannot carry it.
    assert where == reference
    assert params == [value]


@given(values=st.lists(SCALARS, min_size=1, max_size=mariadb_sql.MAX_IN_VALUES))
def test_in_has_one_placeholder_per_value(values: list[Any]) -> None:
    where, params = mariadb_sql.where(mariadb_sql.parse_filters([f("name", "in", values)]))
    assert params == values
    assert placeholders(where) == len(values)
    assert where == " WHERE `name` IN (" + ", ".join(["%s"] * len(values)) + ")"


@given(needle=st.text(max_size=40))
def test_contains_text_is_only_a_parameter(needle: str) -> None:
    where, params = mariadb_sql.where(mariadb_sql.parse_filters([f("name", "contains", needle)]))
    assert where == " WHERE `name` LIKE CONCAT('%%', %s, '%%') ESCAPE '\\\\'"
    assert len(params) == 1
    # Unescaping gives the needle back: nothing is dropped or reinterpreted.
    assert re.sub(r"\\(.)", r"\1", params[0], flags=re.DOTALL) == needle


# --- identifiers -----------------------------------------------------------------------


def test_rows_statement_quotes_every_identifier() -> None:
    parsed = mariadb_sql.parse_filters([f("name", "eq", "Wolf")])
    statement = mariadb_sql.rows_statement(keyed(), ("entry", "name"), parsed, offset=0, limit=10)
    assert statement.sql == (
        "SELECT `entry`, `name` FROM `cata_world`.`creature_template`"
        " WHERE `name` = %s ORDER BY `entry` LIMIT %s OFFSET %s"
    )
    assert statement.params == ("Wolf", 11, 0)
    assert statement.order == ["entry"]
    assert placeholders(statement.sql) == len(statement.params)


@pytest.mark.parametrize(
    "bad",
    ["na`me", "name;", "name ", "1name", "a.b", "", "x" * 65, "name\n", "ná", None, 5],
)
def test_identifiers_that_would_need_quoting_are_refused(bad: Any) -> None:
    code, details = code_of(mariadb_sql.identifier, bad, "table")
    assert (code, details) == ("identifier_invalid", {"argument": "table"})
    code, details = code_of(mariadb_sql.parse_filters, [f(bad, "eq", 1)])
    assert (code, details) == ("identifier_invalid", {"argument": "filters", "index": 0})
    code, details = code_of(mariadb_sql.column_names, ["entry", bad])
    assert (code, details) == ("identifier_invalid", {"argument": "columns", "index": 1})


def test_identifier_allows_the_whole_plain_alphabet() -> None:
    name = "_Ab9$" + "x" * 59
    assert mariadb_sql.identifier(name, "table") == name
    assert mariadb_sql.quote(name) == f"`{name}`"


def test_count_statement() -> None:
    parsed = mariadb_sql.parse_filters([f("entry", "in", [1, 2])])
    sql, params = mariadb_sql.count_statement(keyed(), parsed)
    assert sql == "SELECT COUNT(*) FROM `cata_world`.`creature_template` WHERE `entry` IN (%s, %s)"
    assert params == (1, 2)


def test_tables_statement_takes_databases_as_parameters() -> None:
    sql, params = mariadb_sql.tables_statement(["a", "b"])
    assert sql == (
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"
        " WHERE TABLE_SCHEMA IN (%s, %s)"
    )
    assert params == ("a", "b")


# --- order -----------------------------------------------------------------------------


def test_order_without_primary_key_is_every_column_and_text_bytes() -> None:
    statement = mariadb_sql.rows_statement(
        unkeyed(), ("speed", "name", "icon"), [], offset=5, limit=3
    )
    assert statement.sql == (
        "SELECT `speed`, `name`, `icon` FROM `cata_world`.`loot`"
        " ORDER BY `speed`, `name`, CAST(`name` AS BINARY), `icon` LIMIT %s OFFSET %s"
    )
    assert statement.params == (4, 5)
    assert statement.order == "all_columns"


def test_composite_primary_key_orders_by_its_columns_in_key_order() -> None:
    table = table_from_rows(
        "cata_world", "t", COLUMNS, [("PRIMARY", 0, 1, "name"), ("PRIMARY", 0, 2, "entry")]
    )
    statement = mariadb_sql.rows_statement(table, ("speed",), [], offset=0, limit=1)
    assert " ORDER BY `name`, `entry` LIMIT %s OFFSET %s" in statement.sql
    assert statement.order == ["name", "entry"]


# --- LIMIT bounds ----------------------------------------------------------------------


def test_limit_fetches_one_more_row_to_know_about_truncation() -> None:
    for limit in (1, 50, 100):
        statement = mariadb_sql.rows_statement(keyed(), ("entry",), [], offset=7, limit=limit)
        assert statement.params[-2:] == (limit + 1, 7)


@pytest.mark.parametrize(
    ("offset", "limit", "code", "details"),
    [
        (0, 0, "request_invalid", {"argument": "limit", "what": "not_a_positive_integer"}),
        (0, True, "request_invalid", {"argument": "limit", "what": "not_a_positive_integer"}),
        (0, 1.0, "request_invalid", {"argument": "limit", "what": "not_a_positive_integer"}),
        (-1, 1, "request_invalid", {"argument": "offset", "what": "not_a_non_negative_integer"}),
        (False, 1, "request_invalid", {"argument": "offset", "what": "not_a_non_negative_integer"}),
        (0, 101, "limit_exceeded", {"argument": "limit", "limit": 100, "maximum": 100}),
        (901, 100, "limit_exceeded", {"argument": "offset", "limit": 1000, "maximum": 1000}),
    ],
)
def test_row_window_bounds(offset: Any, limit: Any, code: str, details: dict[str, Any]) -> None:
    assert code_of(mariadb_sql.row_window, offset, limit, 100, 1000) == (code, details)


def test_row_window_allows_the_last_page() -> None:
    assert mariadb_sql.row_window(900, 100, 100, 1000) == (900, 100)
    # The table listing pages without a row window.
    assert mariadb_sql.page(10_000, 100, 100) == (10_000, 100)


# --- filter validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "code", "what"),
    [
        (f("entry", "eq", True), "invalid_filter_value", "boolean_not_supported_use_0_or_1"),
        (f("entry", "eq", float("nan")), "invalid_filter_value", "float_not_finite"),
        (f("entry", "eq", [1]), "invalid_filter_value", "not_a_scalar"),
        (f("entry", "lt", None), "invalid_filter_value", "null_only_with_eq_or_ne"),
        (f("entry", "contains", 5), "invalid_filter_value", "contains_needs_a_string"),
        (f("entry", "in", []), "invalid_filter_value", "in_needs_a_non_empty_list"),
        (f("entry", "in", "ab"), "invalid_filter_value", "in_needs_a_non_empty_list"),
        (f("entry", "in", [1, None]), "invalid_filter_value", "null_in_list_use_eq_null"),
    ],
)
def test_filter_values_are_checked(item: dict[str, Any], code: str, what: str) -> None:
    got_code, details = code_of(mariadb_sql.parse_filters, [item])
    assert (got_code, details["what"], details["index"]) == (code, what, 0)


def test_filter_limits() -> None:
    many = [f("entry", "eq", 1)] * (mariadb_sql.MAX_FILTERS + 1)
    assert code_of(mariadb_sql.parse_filters, many)[0] == "limit_exceeded"
    wide = [f("entry", "in", list(range(mariadb_sql.MAX_IN_VALUES + 1)))]
    assert code_of(mariadb_sql.parse_filters, wide)[0] == "limit_exceeded"


def test_unknown_operator_lists_the_vocabulary() -> None:
    code, details = code_of(mariadb_sql.parse_filters, [f("entry", "like", "x")])
    assert (code, details) == ("operator_unknown", {"index": 0, "allowed": list(FILTER_OPERATORS)})
