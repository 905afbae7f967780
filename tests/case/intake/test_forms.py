"""Each form a report comes in becomes the same case spec shape, with the source kept."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.case.intake.reports import FORM_BODY, LABEL_BODY, gh_issue, gitlab_issue, rest_issue
from viano_bug_analysis.case.inputs import check_spec
from viano_bug_analysis.case.intake import specs_from_source
from viano_bug_analysis.case.intake.source import parse_source
from viano_bug_analysis.errors import ReportImportError


def one_spec(
    document: Any, *, stem: str | None = "issue", suffix: str = ".json", **flags: bool
) -> dict[str, Any]:
    data = document if isinstance(document, bytes) else json.dumps(document).encode()
    specs, skipped = specs_from_source(parse_source(data, stem=stem, suffix=suffix), **flags)
    assert len(specs) == 1 and skipped == []
    spec = specs[0].spec
    check_spec(spec)
    return spec


def test_rest_issue_object() -> None:
    spec = one_spec(rest_issue())
    assert spec["case_id"] == "examplecore-cata-812"
    assert spec["phase"] == "investigation"
    assert spec["hypotheses"] == [] and spec["attachments"] == []
    assert spec["report"]["title"] == "Brewmaster does not offer the keg quest"
    assert spec["report"]["text"] == FORM_BODY  # as written, CRLF and Markdown kept
    assert spec["report"]["metadata"]["source"] == {
        "tracker": "github",
        "url": "https://github.com/ExampleCore/ExampleCore-Cata/issues/812",
        "repository": "ExampleCore/ExampleCore-Cata",
        "number": 812,
        "author": "keg-tester",
        "labels": ["Quest", "Confirmed"],
        "created_at": "2024-05-01T12:00:00Z",
        "state": "open",
    }
    # The REST object only counts its comments; none are taken, even when asked.
    assert "comments" not in spec["report"]["metadata"]
    assert one_spec(rest_issue(), with_comments=True)["report"]["metadata"]["comments"] == 0


def test_rest_issue_without_web_address_takes_the_repository_from_the_api_one() -> None:
    spec = one_spec(rest_issue(html_url=None, repository_url=None))
    assert spec["report"]["metadata"]["source"]["url"] is None
    assert spec["report"]["metadata"]["source"]["repository"] == "ExampleCore/ExampleCore-Cata"
    assert spec["case_id"] == "examplecore-cata-812"


def test_null_body_is_empty_text() -> None:
    spec = one_spec(rest_issue(body=None, user=None, labels=None))
    assert spec["report"]["text"] == ""
    assert spec["report"]["metadata"]["sections"] == {}
    assert spec["report"]["metadata"]["source"]["author"] is None
    assert spec["report"]["metadata"]["source"]["labels"] == []
    assert "revision" not in spec["report"]["metadata"]


def test_gh_issue_view_output() -> None:
    spec = one_spec(gh_issue())
    assert spec["case_id"] == "examplecore-77"
    source = spec["report"]["metadata"]["source"]
    assert source["url"] == "https://github.com/ExampleCore/ExampleCore/issues/77"
    assert (source["author"], source["labels"], source["created_at"]) == (
        "cave-walker",
        ["Creature"],
        "2020-05-06T07:08:09Z",
    )
    assert source["state"] is None  # not asked of gh
    assert spec["report"]["text"] == LABEL_BODY  # comments left out by default
    assert "comments" not in spec["report"]["metadata"]


def test_comments_are_appended_under_their_own_headings_when_asked() -> None:
    spec = one_spec(gh_issue(), with_comments=True)
    text = spec["report"]["text"]
    assert text.startswith(
        LABEL_BODY + "\n\n---\n\n## Comment 1 by core-dev at 2020-05-07T10:00:00Z\n\n"
    )
    assert "The spawn group has respawn time 10 instead of 300." in text
    assert "## Comment 2 by an unknown author\n\nStill happens for me.\n" in text
    assert spec["report"]["metadata"]["comments"] == 2
    # The sections come from the body alone: a comment heading is no template field.
    assert not any(key.startswith("Comment") for key in spec["report"]["metadata"]["sections"])


def test_gh_output_with_few_fields_names_the_case_by_the_file() -> None:
    spec = one_spec({"title": "Only a title", "body": "x"}, stem="Bug 7 (cave)")
    assert spec["case_id"] == "bug-7-cave"
    assert spec["report"]["metadata"]["source"]["repository"] is None
    spec = one_spec({"title": "t", "number": 5}, stem=None)
    assert spec["case_id"] == "issue-5"


def test_gitlab_issue() -> None:
    spec = one_spec(gitlab_issue())
    assert spec["case_id"] == "core-31"
    metadata = spec["report"]["metadata"]
    assert metadata["source"] == {
        "tracker": "gitlab",
        "url": "https://gitlab.example.org/emu/core/-/issues/31",
        "repository": "emu/core",
        "number": 31,
        "author": "gnomish",
        "labels": ["trainer", "spell"],
        "created_at": "2023-01-02T03:04:05.000Z",
        "state": "opened",
    }
    assert metadata["revision"] == {
        "commit": "abcdef0123456789",
        "from": "text",
        "url": "https://gitlab.example.org/emu/core/-/commit/ABCDEF0123456789",
    }
    assert one_spec(gitlab_issue(description=None))["report"]["text"] == ""


def test_markdown_file_heading_is_the_title() -> None:
    data = "\n\n# Keg quest missing #\n\nThe brewmaster offers nothing.\n\n### Steps\n\n1. Talk\n"
    spec = one_spec(data.encode(), stem="keg-quest", suffix=".md")
    assert spec["case_id"] == "keg-quest"
    assert spec["report"]["title"] == "Keg quest missing"
    assert spec["report"]["text"] == "The brewmaster offers nothing.\n\n### Steps\n\n1. Talk\n"
    assert spec["report"]["metadata"]["sections"] == {"Steps": "1. Talk"}
    assert spec["report"]["metadata"]["source"] == {
        "tracker": "file",
        "url": None,
        "repository": None,
        "number": None,
        "author": None,
        "labels": [],
        "created_at": None,
        "state": None,
    }


def test_plain_text_first_line_is_the_title_and_a_setext_underline_goes() -> None:
    spec = one_spec(
        b"Wolves do not flee\r\n==========\r\nThey fight to death.", stem="w", suffix=".txt"
    )
    assert (spec["report"]["title"], spec["report"]["text"]) == (
        "Wolves do not flee",
        "They fight to death.",
    )
    spec = one_spec(b"Just one line", stem="w", suffix="")
    assert (spec["report"]["title"], spec["report"]["text"]) == ("Just one line", "")


def test_a_markdown_title_in_brackets_is_not_json() -> None:
    # Tracker titles often start with a tag; a .md file is text whatever it starts with.
    spec = one_spec(b"[Quest] Keg Run cannot be finished\n\nbody", stem="k", suffix=".md")
    assert spec["report"]["title"] == "[Quest] Keg Run cannot be finished"


def test_a_byte_order_mark_is_dropped() -> None:
    spec = one_spec(b"\xef\xbb\xbf" + json.dumps(gh_issue()).encode())
    assert spec["case_id"] == "examplecore-77"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("TrinityCore/TrinityCore", "trinitycore-12"),
        ("o/Äpfel.und_Birnen", "pfel.und_birnen-12"),
        ("o/--__weird  name__", "weird-name__-12"),
        ("o/" + "x" * 80, "x" * 61 + "-12"),
        ("o/!!!", "report-12"),
    ],
)
def test_case_id_fits_the_pattern_and_keeps_the_number(name: str, expected: str) -> None:
    url = f"https://github.com/{name}/issues/12"
    spec = one_spec({"title": "t", "number": 12, "url": url})
    assert spec["case_id"] == expected


def test_a_single_pull_request_needs_the_flag() -> None:
    pull = rest_issue(pull_request={"url": "https://api.github.com/repos/o/r/pulls/812"})
    with pytest.raises(ReportImportError) as info:
        one_spec(pull)
    assert info.value.code == "report_invalid"
    assert info.value.details == {"field": "/pull_request", "reason": "pull_request"}
    assert one_spec(pull, include_pull_requests=True)["case_id"] == "examplecore-cata-812"


def test_a_list_gives_one_spec_per_issue_and_skips_pull_requests() -> None:
    items = [
        rest_issue(),
        rest_issue(number=813, html_url=None, pull_request={}),
        rest_issue(
            number=814, html_url="https://github.com/ExampleCore/ExampleCore-Cata/issues/814"
        ),
    ]
    source = parse_source(json.dumps(items).encode(), stem="issues", suffix=".json")
    specs, skipped = specs_from_source(source)
    assert [(s.index, s.case_id) for s in specs] == [
        (0, "examplecore-cata-812"),
        (2, "examplecore-cata-814"),
    ]
    assert [(s.index, s.number, s.reason) for s in skipped] == [(1, 813, "pull_request")]
    specs, skipped = specs_from_source(source, include_pull_requests=True)
    assert [s.case_id for s in specs] == [
        "examplecore-cata-812",
        "examplecore-cata-813",
        "examplecore-cata-814",
    ]
    assert skipped == []


def test_list_items_without_a_number_are_named_by_position() -> None:
    items = [{"title": "a"}, {"title": "b"}]
    source = parse_source(json.dumps(items).encode(), stem="export", suffix=".json")
    assert [s.case_id for s in specs_from_source(source)[0]] == ["export-1", "export-2"]


def test_byte_offsets_count_from_the_start_of_the_file_bom_included() -> None:
    with pytest.raises(ReportImportError) as info:
        parse_source(b"\xef\xbb\xbfab\xff", suffix=".md")
    assert info.value.details == {"reason": "not_utf8", "offset": 5}
