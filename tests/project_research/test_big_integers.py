"""Research queries and captures keep integers beyond 64 bits exact (issue 11, point 16).

A DECIMAL or BIGINT UNSIGNED column is filtered on such a value; before,
the query was refused as "not a JSON document" (orjson stops at 64 bits).
"""

from __future__ import annotations

from pathlib import Path

from tests.project_research.research_fakes import FakeDatabase, FakeGit, make_config
from tests.project_research.test_service import EXAMPLE
from viano_bug_analysis.project_research import ProjectResearch, query_sha256, validate_query
from viano_bug_analysis.project_research.captures import Capture

BIG = 2**70
QUERY = {**EXAMPLE, "filters": [{"column": "entry", "operator": "eq", "value": BIG}]}


def test_a_big_integer_filter_is_valid_and_stays_an_integer() -> None:
    document = validate_query(QUERY)
    value = document["filters"][0]["value"]
    assert value == BIG and type(value) is int


def test_the_query_hash_tells_neighbouring_big_integers_apart() -> None:
    other = {**EXAMPLE, "filters": [{"column": "entry", "operator": "eq", "value": BIG + 1}]}
    assert query_sha256(QUERY) != query_sha256(other)


def test_a_capture_with_a_big_integer_round_trips_exactly(tmp_path: Path) -> None:
    research = ProjectResearch(make_config(tmp_path), git=FakeGit(), database=FakeDatabase())
    capture = research.capture(QUERY)
    assert capture.document["request"]["filters"][0]["value"] == BIG
    again = Capture.from_bytes(capture.data, capture.sha256)
    assert type(again.document["request"]["filters"][0]["value"]) is int
    assert b"1180591620717411303424" in capture.data
