"""``contains_word``: the ``symbol`` boundary (git grep -w) for words a symbol may not be."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from viano_bug_analysis.snapshot.text_search import contains_word


def reference(line: str, word: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", line) is not None


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("91001", True),
        ("QUEST_X = 91001,", True),
        ("-91001", True),
        ("(91001)", True),
        ("910011", False),
        ("191001", False),
        ("x91001", False),
        ("91001_", False),
        ("0x91001", False),
        ("9100191001 91001", True),  # a rejected occurrence does not hide a later one
        ("é91001é", True),  # only ASCII letters, digits and _ join a word
    ],
)
def test_whole_words_only(line: str, expected: bool) -> None:
    assert contains_word(line, "91001") is expected


@given(
    st.text(alphabet="0123456789a_ -é", max_size=40),
    st.text(alphabet="0123456789a_", min_size=1, max_size=4),
)
def test_agrees_with_a_regular_expression(line: str, word: str) -> None:
    assert contains_word(line, word) is reference(line, word)


def test_a_word_with_other_characters_is_refused() -> None:
    with pytest.raises(ValueError):
        contains_word("a-b", "a-b")
