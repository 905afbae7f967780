"""The revision a report names: from its revision field first, else a commit URL in the text."""

from __future__ import annotations

import pytest

from tests.case.intake.reports import FORM_BODY, LABEL_BODY
from viano_bug_analysis.case.intake.revision import find_revision
from viano_bug_analysis.case.intake.sections import parse_sections


def revision(body: str) -> dict[str, str] | None:
    return find_revision(parse_sections(body), body)


def test_abbreviated_hash_from_the_issue_form_field() -> None:
    assert revision(FORM_BODY) == {"commit": "5e3a9c1", "from": "FC rev. hash/commit"}


def test_hash_inside_a_version_line_from_the_old_label_lowercased() -> None:
    assert revision(LABEL_BODY) == {"commit": "9f0d12ab34cd", "from": "TC rev. hash/commit"}


def test_full_hash_and_a_commit_url_in_the_field() -> None:
    full = "0123456789abcdef0123456789abcdef01234567"
    assert revision(f"### Commit hash\n{full}") == {"commit": full, "from": "Commit hash"}
    url = "https://github.com/o/r/commit/ABCDEF1234?diff=split"
    body = f"### AC HASH/COMMIT\n[this one]({url}).\n"
    assert revision(body) == {"commit": "abcdef1234", "from": "AC HASH/COMMIT", "url": url}


def test_a_commits_url_anywhere_in_the_body_when_the_field_gives_none() -> None:
    url = "https://github.com/o/r/commits/deadbeef42"
    body = f"### FC rev. hash/commit\n\nlatest\n\n### Extra Notes\n\nbroken since <{url}>"
    assert revision(body) == {"commit": "deadbeef42", "from": "text", "url": url}


@pytest.mark.parametrize(
    "answer",
    [
        "_No response_",
        "master",
        "abc123",  # six hex digits: too short
        "2024031",  # all digits: a date or an ID
        "0123456789abcdef0123456789abcdef012345678",  # 41: longer than SHA-1
        "abcdef12zz",  # not standing alone
        "https://github.com/o/r/commit/12345678",
        "https://github.com/o/r/tree/3.3.5",
    ],
)
def test_no_revision(answer: str) -> None:
    assert revision(f"### FC rev. hash/commit\n\n{answer}\n\n### Operating system\n\nLinux") is None


def test_a_hash_outside_the_revision_field_is_not_taken() -> None:
    # Bare hex in running text is too often something else (a GUID, a colour, a word).
    assert revision("### Current Behaviour\n\nthe item abcdef1234 is gone") is None
    assert revision("plain text mentioning deadbeef99 only") is None


def test_the_first_revision_field_with_a_hash_wins() -> None:
    body = "### Core revision\nunknown\n### DB commit\nfeedface11\n### TC hash\n1234abcd99"
    assert revision(body) == {"commit": "feedface11", "from": "DB commit"}


def test_a_field_that_only_sounds_like_revision_is_not_one() -> None:
    body = "### Steps to reproduce the problem\nabcdef12345\n### TDB version\nabcdef98765"
    assert revision(body) is None


@pytest.mark.parametrize(
    ("body", "commit"),
    [
        ("Saw it again.\n\nrev: 59e98629eb1e", "59e98629eb1e"),
        ("Core: FirelandsProject/firelands-cata@b250899d4fdf", "b250899d4fdf"),
        ("Client 4.3.4 (15595), core built 2021-05-11 from 0603d8f82e75.", "0603d8f82e75"),
    ],
)
def test_a_hash_on_a_line_that_says_what_it_is(body: str, commit: str) -> None:
    assert revision(body) == {"commit": commit, "from": "text"}


def test_a_hex_word_on_such_a_line_is_no_commit() -> None:
    assert revision("the build took a decade, the core is faced with bugs") is None
