"""The template's sections, read by their headings or bold labels."""

from __future__ import annotations

from tests.case.intake.reports import FORM_BODY, LABEL_BODY
from viano_bug_analysis.case.intake.sections import parse_sections


def test_issue_form_sections_in_order_with_unanswered_fields_as_null() -> None:
    sections = parse_sections(FORM_BODY)
    assert list(sections) == [
        "Current Behaviour",
        "Expected Blizzlike Behaviour",
        "Source",
        "Steps to reproduce the problem",
        "Extra Notes",
        "FC rev. hash/commit",
        "Operating system",
        "Custom changes or Modules",
    ]
    assert sections["Source"] is None and sections["Extra Notes"] is None
    assert sections["Operating system"] == "Debian 12"
    # A "###" line inside a fenced block is part of the answer, not a new section.
    assert sections["Steps to reproduce the problem"] == (
        "1. `.quest add 91001`\n2. Talk to the brewmaster\n\n"
        "```\n### this line is a log line, not a heading\n```"
    )


def test_old_trinitycore_labels() -> None:
    sections = parse_sections(LABEL_BODY)
    assert sections == {
        "Description": "Creatures in the cave respawn far too fast.",
        "Current behaviour": "They are back after ten seconds.",
        # Only the template's comment was there: unanswered.
        "Expected behaviour": None,
        "Steps to reproduce the problem": "1. Kill one\n2. Wait",
        "Branch(es)": "3.3.5",
        "TC rev. hash/commit": "TrinityCore rev. 9F0d12ab34cd 2020-05-04 (3.3.5 branch)",
        "TDB version": "335.20041",
        "Operating system": "Ubuntu 20.04",
    }


def test_bold_text_inside_a_form_answer_is_no_label() -> None:
    body = "### Extra Notes\n\n**Note:** only at night.\n\n### Operating system\n\nLinux"
    assert parse_sections(body) == {
        "Extra Notes": "**Note:** only at night.",
        "Operating system": "Linux",
    }


def test_bold_sentences_are_not_labels() -> None:
    body = "**Important** read this\n**a*b:** no\n**Real:** yes"
    assert parse_sections(body) == {"Real": "yes"}


def test_other_heading_levels_trailing_colons_and_emphasis() -> None:
    body = "##### CURRENT BEHAVIOUR:\nbroken\n## **Expected** ##\nworks\n#no heading\n"
    assert parse_sections(body) == {"CURRENT BEHAVIOUR": "broken", "Expected": "works\n#no heading"}


def test_text_before_the_first_heading_belongs_to_no_section() -> None:
    assert parse_sections("intro text\n### A\nx") == {"A": "x"}
    assert parse_sections("no headings and no labels at all") == {}
    assert parse_sections("") == {}


def test_a_repeated_heading_is_numbered() -> None:
    body = "### Steps\none\n### Steps\ntwo\n### Steps\n"
    assert parse_sections(body) == {"Steps": "one", "Steps (2)": "two", "Steps (3)": None}


def test_tilde_fences_longer_closers_and_indented_code() -> None:
    body = (
        "### Log\n~~~~\n### inside\n~~~\nstill inside\n~~~~~\n    ### indented code\n### Next\nok"
    )
    assert parse_sections(body) == {
        "Log": "~~~~\n### inside\n~~~\nstill inside\n~~~~~\n    ### indented code",
        "Next": "ok",
    }


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert parse_sections("### A\n```\n### B\n") == {"A": "```\n### B"}


def test_comments_across_lines_and_inside_fences() -> None:
    body = "### A\nkeep <!-- drop\nstill dropped --> tail\n```\n<!-- kept in code -->\n```\n"
    assert parse_sections(body) == {"A": "keep \n tail\n```\n<!-- kept in code -->\n```"}


def test_a_very_long_heading_line_is_text() -> None:
    long_line = "### " + "x" * 300
    assert parse_sections(f"### A\n{long_line}") == {"A": long_line}
