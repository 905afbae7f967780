"""Whatever a report holds, the import answers with a checked spec or its typed error,
and its cost grows linearly with the report."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viano_bug_analysis.case.intake import specs_from_source
from viano_bug_analysis.case.intake.source import parse_source
from viano_bug_analysis.errors import ReportImportError

# The pieces every scanner reacts to, so that generated text hits their edges.
MARKUP = [
    "#",
    "### ",
    "**",
    ":",
    "`",
    "```",
    "~~~",
    "<!--",
    "-->",
    "\n",
    "\r\n",
    " ",
    "_No response_",
    "/commit/",
    "/commits/",
    "https://",
    "abcdef1",
    "0123456",
    "=",
    "-",
    "[",
    "]",
    "(",
    ")",
    "\ufeff",
]
FIELDS = [
    "title",
    "body",
    "description",
    "number",
    "iid",
    "url",
    "html_url",
    "web_url",
    "user",
    "author",
    "login",
    "username",
    "labels",
    "name",
    "comments",
    "createdAt",
    "created_at",
    "state",
    "pull_request",
    "repository_url",
]

markdown = st.lists(st.one_of(st.sampled_from(MARKUP), st.text(max_size=8)), max_size=60).map(
    "".join
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(max_size=20) | markdown,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=5), inner, max_size=6)
    ),
    max_leaves=25,
)


def import_or_refuse(data: bytes, suffix: str) -> None:
    try:
        source = parse_source(data, stem="r", suffix=suffix)
        specs_from_source(source, with_comments=True, include_pull_requests=True)
    except ReportImportError as err:
        assert err.code in ReportImportError.codes
        assert all(isinstance(v, (int, str)) for v in err.details.values())


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300), st.sampled_from(["", ".json", ".md"]))
def test_any_bytes(data: bytes, suffix: str) -> None:
    import_or_refuse(data, suffix)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(markdown, st.sampled_from(["", ".md", ".txt"]))
def test_any_markdown(text: str, suffix: str) -> None:
    import_or_refuse(text.encode("utf-8", "surrogatepass"), suffix)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_any_json_shape(value: object) -> None:
    import_or_refuse(json.dumps(value).encode("utf-8", "surrogatepass"), ".json")


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=8), markdown)
def test_any_issue_object_with_a_title(fields: dict[str, object], title: str) -> None:
    import_or_refuse(json.dumps({**fields, "title": title}).encode("utf-8", "surrogatepass"), "")


# Texts built to make a careless scanner quadratic: one huge token with a marker
# repeated, comments and fences opened and never closed, labels never closed.
HOSTILE: dict[str, Callable[[int], str]] = {
    "commit markers in one token": lambda n: "### rev\nhttps://x/" + "commit/abc" * n,
    "open comments": lambda n: "### A\n" + "<!-- " * n,
    "unclosed labels": lambda n: "**" * n + "\n" + "**a" * n,
    "fence runs": lambda n: "### A\n" + "`" * n + "\n" + "~~~\n" * n,
    "hex runs": lambda n: "### FC rev. hash/commit\n" + "abcde1 " * n,
    "many headings": lambda n: "### rev\n" * n,
    "many short lines": lambda n: "#\n*\n" * n,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_text_is_read_whole(name: str) -> None:
    # How the time grows with the input is measured side by side in
    # benches/bench_intake.py; here only that every hostile form is read to
    # its end (a typed refusal or a spec), at a size a quadratic scan would
    # not finish in the test's time.
    import_or_refuse(("t\n" + HOSTILE[name](64_000)).encode(), ".md")
