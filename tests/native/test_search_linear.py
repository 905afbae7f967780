"""Line search on repeating, overlapping text: same answers as the reference.

A model chooses the patterns and the snapshot may hold any text, so a batch
of overlapping needles over a long run of repeating text must cost time in
proportion to the text, not to text length x pattern length. That the work
is linear is checked deterministically in the core (`cargo test`: a counter
of the bytes read, `core::line_search::tests`); the time is measured by
`benches/bench_search_adversarial.py`, never asserted here.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.native import reference
from viano_bug_analysis.snapshot import LineQuery, SourceText, search_lines

# Repeating units: runs of them overlap every needle built from the same units.
UNITS = ["a", "aa", "ab", "ba", "0,", "_", " ", "A", "Ä", "ä", "\n"]
NEEDLE_UNITS = ["a", "ab", "ba", "0,", "_", "A", "ä"]
MODES = ["literal", "literal_ignore_case", "symbol"]

runs = st.tuples(st.sampled_from(UNITS), st.integers(1, 40)).map(lambda r: r[0] * r[1])
documents = st.lists(runs, max_size=12).map("".join)
needles = st.tuples(
    st.lists(st.sampled_from(NEEDLE_UNITS), min_size=1, max_size=4), st.integers(1, 8)
)


def _needle(mode: str, parts: tuple[list[str], int]) -> str:
    units, repeat = parts
    pattern = "".join(units) * repeat
    if mode == "symbol":
        # Identifier characters only; the boundary rule does the rest.
        pattern = "".join(c for c in pattern if c.isascii() and (c.isalnum() or c == "_")) or "a"
        if pattern[0].isdigit():
            pattern = "_" + pattern
    return pattern


queries = st.lists(
    st.tuples(st.sampled_from(MODES), needles).map(lambda q: (q[0], _needle(*q))),
    min_size=1,
    max_size=6,
)


def _lines(pages: list) -> list[list[tuple[int, int]]]:
    return [[(h.text_index, h.line_number) for h in page.hits] for page in pages]


@settings(max_examples=400, deadline=None)
@given(st.lists(documents, min_size=1, max_size=3), queries, st.sampled_from([1, 2]))
@example(["a" * 200], [("literal", "a" * 20 + "b"), ("literal", "a" * 24)], 1)
@example(["aaa aa\nfoofoo foo"], [("symbol", "aa"), ("symbol", "foo"), ("literal", "oof")], 1)
@example(["0," * 300], [("literal", "0," * 64), ("literal", "0," * 63 + "0x")], 1)
@example(["A" * 100 + "\n" + "a" * 99], [("literal_ignore_case", "a" * 99 + "b")], 1)
# Lines longer than 4 KiB take the pattern-by-pattern path of the core.
@example(
    ["ab_" * 3000 + " ab " + "a" * 5000 + "\n" + "0," * 3000],
    [("symbol", "ab"), ("symbol", "a" * 7), ("literal", "ab_ab"), ("literal", "0,0x")],
    1,
)
def test_repeating_text_matches_reference(docs: list[str], batch: list, threads: int) -> None:
    texts = [SourceText.decode(d.encode()) for d in docs]
    ref_texts = [reference.split_lines(d.encode()) for d in docs]
    big = 10**9
    pages = search_lines(
        texts, [LineQuery(m, p, 0, big) for m, p in batch], max_chars=1, threads=threads
    )
    for (mode, pattern), page in zip(batch, pages, strict=True):
        total, found = reference.search(ref_texts, mode, pattern, 0, big)
        assert page.total == total
        assert [(h.text_index, h.line_number) for h in page.hits] == [(t, n) for t, n, _ in found]


# Each case took seconds before the search was made linear (the first 2.4 s,
# the last 11 s): the answers on them, through the public API.
ADVERSARIAL = {
    "two literals over a 1 MB run of a": (
        "a" * 1_000_000,
        [("literal", "a" * 1000 + "b"), ("literal", "a" * 1024)],
        [0, 1],
    ),
    "symbols over a 1 MB run of a": (
        "a" * 1_000_000,
        [("symbol", "a" * 1024), ("symbol", "a" * 1000 + "b")],
        [0, 0],
    ),
    "one symbol over a 1 MB run of a": ("a" * 1_000_000, [("symbol", "a" * 1024)], [0]),
    "ignore case over a 1 MB run of A": (
        "A" * 1_000_000,
        [("literal_ignore_case", "a" * 1000 + "b"), ("literal_ignore_case", "a" * 1024)],
        [0, 1],
    ),
    "two literals over an 8 MiB line of 0,": (
        "0," * (4 * 1024 * 1024),
        [("literal", "0," * 512), ("literal", "0," * 511 + "0x")],
        [1, 0],
    ),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_batches_find_the_right_lines(name: str) -> None:
    doc, batch, expected = ADVERSARIAL[name]
    text = SourceText.decode(doc.encode())
    for threads in (1, 2):
        pages = search_lines([text], [LineQuery(m, p) for m, p in batch], threads=threads)
        assert [page.total for page in pages] == expected
        assert [[h.line_number for h in page.hits] for page in pages] == [[1] * n for n in expected]


def test_a_batch_of_long_repeating_patterns_finds_them() -> None:
    # 16 requests at the router's 1024-character limit, each a run of one
    # letter (a DFA over them cost length x length to build).
    patterns = [chr(ord("a") + i) * 1023 + "b" for i in range(16)]
    doc = "ab\n" + "\n".join(patterns[::2]) + "\n"
    pages = search_lines(
        [SourceText.decode(doc.encode())], [LineQuery("literal", p) for p in patterns], threads=1
    )
    assert [page.total for page in pages] == [1 - i % 2 for i in range(16)]
    assert [h.line_number for h in pages[2].hits] == [3]
