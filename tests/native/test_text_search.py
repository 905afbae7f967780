"""Decoding, the line model and line search, checked against a Python reference."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.native import reference
from viano_bug_analysis.errors import InvalidArgumentError, TextDecodeError
from viano_bug_analysis.snapshot import LineQuery, SourceText, read_lines, search_lines

# Characters whose case behaviour is interesting and stable across Unicode versions.
TRICKY = "aAzZ_09 .(){}\t;ßẞİıIiKk\u212aΣσςÄäÖöÜüÉéǅǆﬁ\u0307€😀"
LINE_BREAKS = ["\n", "\r\n", "\r"]

line_text = st.text(alphabet=TRICKY, max_size=40)
documents = st.lists(st.tuples(line_text, st.sampled_from(LINE_BREAKS)), max_size=30).map(
    lambda parts: "".join(line + brk for line, brk in parts)
)
raw_documents = st.tuples(documents, st.booleans(), st.booleans()).map(
    lambda d: ("\ufeff" if d[1] else "") + d[0] + ("tail" if d[2] else "")
)


def decode(s: str) -> SourceText:
    return SourceText.decode(s.encode("utf-8"))


def all_lines(text: SourceText) -> list[str]:
    if text.line_count == 0:
        return []
    return [hit.text for hit in read_lines(text, 1, text.line_count)]


@given(raw_documents)
@example("")
@example("\r\r\n\n")
@example("\ufeff")
def test_line_model_matches_reference(doc: str) -> None:
    raw = doc.encode("utf-8")
    text = SourceText.decode(raw)
    assert all_lines(text) == reference.split_lines(raw)
    assert text.line_count == len(reference.split_lines(raw))


@given(st.binary(max_size=64), st.booleans())
@example(b"ok\xe2\x82", False)
@example(b"a\0b\xff", False)
@example(b"\xed\xa0\x80", True)
@example(b"\xc0\xaf", False)
def test_decode_errors_match_reference(body: bytes, bom: bool) -> None:
    raw = (reference.BOM if bom else b"") + body
    expected = reference.decode_error_offset(raw)
    if expected is None:
        assert SourceText.decode(raw).line_count == len(reference.split_lines(raw))
        return
    with pytest.raises(TextDecodeError) as caught:
        SourceText.decode(raw)
    assert (caught.value.code, caught.value.details["offset"]) == expected


def test_decode_error_message_has_no_content() -> None:
    secret = "SECRET_MARKER_" * 5
    with pytest.raises(TextDecodeError) as caught:
        SourceText.decode((secret + "\0" + secret).encode())
    assert "SECRET" not in str(caught.value)
    assert "SECRET" not in repr(caught.value.details)
    assert caught.value.details == {"offset": len(secret)}


patterns = st.text(alphabet=TRICKY.replace("\t", ""), min_size=1, max_size=4)
identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,3}", fullmatch=True)
# Whole words may start with a digit (a numeric ID); few letters, so that they occur.
words = st.text(alphabet="aAkK09_", min_size=1, max_size=4)


@settings(max_examples=300)
@given(
    st.lists(documents, min_size=1, max_size=4),
    st.lists(
        st.one_of(
            st.tuples(st.just("literal"), patterns),
            st.tuples(st.just("literal_ignore_case"), patterns),
            st.tuples(st.just("symbol"), identifiers),
            st.tuples(st.just("word"), words),
            st.tuples(st.just("word_ignore_case"), words),
        ),
        min_size=1,
        max_size=6,
    ),
    st.integers(0, 12),
    st.integers(0, 12),
    st.integers(1, 50),
    st.sampled_from([1, 2]),
)
def test_search_matches_reference(docs, queries, offset, limit, max_chars, threads) -> None:
    texts = [decode(d) for d in docs]
    ref_texts = [reference.split_lines(d.encode()) for d in docs]
    pages = search_lines(
        texts,
        [LineQuery(mode, pattern, offset, limit) for mode, pattern in queries],
        max_chars=max_chars,
        threads=threads,
    )
    for (mode, pattern), page in zip(queries, pages, strict=True):
        total, found = reference.search(ref_texts, mode, pattern, offset, limit)
        assert page.total == total
        assert sum(page.per_text_totals) == total
        assert [(h.text_index, h.line_number) for h in page.hits] == [(t, n) for t, n, _ in found]
        assert [(h.text, h.text_truncated) for h in page.hits] == [
            reference.cut(line, max_chars) for _, _, line in found
        ]
        assert page.truncated == (offset + len(found) < total)


@st.composite
def long_needle_batches(draw):
    """Documents and needles longer than the core's 8-byte candidate keys,
    half of them cut from the documents' lines, so that they occur and their
    key (the needle's rarest window) sits inside them."""
    docs = draw(st.lists(documents, min_size=1, max_size=3))
    pieces = [line for doc in docs for line in reference.split_lines(doc.encode()) if line]
    batch = []
    for _ in range(draw(st.integers(1, 6))):
        mode = draw(st.sampled_from(["literal", "literal_ignore_case", "symbol"]))
        if pieces and draw(st.booleans()):
            line = draw(st.sampled_from(pieces))
            start = draw(st.integers(0, len(line) - 1))
            pattern = line[start : start + draw(st.integers(1, 24))]
        else:
            pattern = draw(st.text(alphabet=TRICKY.replace("\t", ""), min_size=9, max_size=24))
        if mode == "symbol":
            pattern = "".join(c for c in pattern if c.isascii() and (c.isalnum() or c == "_"))
            if not pattern or pattern[0].isdigit():
                pattern = "_" + pattern
        batch.append((mode, pattern))
    return docs, batch


@settings(max_examples=300)
@given(long_needle_batches(), st.sampled_from([1, 2]))
def test_long_needles_match_reference(case, threads) -> None:
    docs, batch = case
    texts = [decode(d) for d in docs]
    ref_texts = [reference.split_lines(d.encode()) for d in docs]
    big = 10**9
    pages = search_lines(
        texts, [LineQuery(m, p, 0, big) for m, p in batch], max_chars=1, threads=threads
    )
    for (mode, pattern), page in zip(batch, pages, strict=True):
        total, found = reference.search(ref_texts, mode, pattern, 0, big)
        assert page.total == total
        assert [(h.text_index, h.line_number) for h in page.hits] == [(t, n) for t, n, _ in found]


def test_overlapping_and_repeated_patterns_in_one_batch() -> None:
    text = decode("foobar\nfoo\nbar\nxfoobarx\nFOO")
    queries = [
        LineQuery("literal", "foo"),
        LineQuery("literal", "foobar"),
        LineQuery("literal", "oba"),
        LineQuery("symbol", "foo"),
        LineQuery("literal_ignore_case", "foo"),
        LineQuery("literal", "foo"),
    ]
    got = [[h.line_number for h in page.hits] for page in search_lines([text], queries)]
    assert got == [[1, 2, 4], [1, 4], [1, 4], [2], [1, 2, 4, 5], [1, 2, 4]]


def test_case_folding_rule_for_non_ascii() -> None:
    text = decode("STRASSE\nstraße\nÄRGER\n\u212aelvin\nİstanbul\nΟΔΟΣ")

    def lines(pattern: str) -> list[int]:
        page = search_lines([text], [LineQuery("literal_ignore_case", pattern)])[0]
        return [h.line_number for h in page.hits]

    assert lines("ärger") == [3]
    assert lines("strasse") == [1]  # lowercase mapping, not full case folding: ß stays ß
    assert lines("STRAßE") == [2]
    assert lines("kelvin") == [4]  # Kelvin sign lowercases to ASCII k
    assert lines("i\u0307stanbul") == [5]  # İ lowercases to i + combining dot
    assert lines("οδοσ") == [6]  # no final-sigma context rule


def test_pagination_is_stable_across_texts() -> None:
    texts = [decode("x\nx\nx"), decode(""), decode("x\nno\nx")]
    seen = []
    offset: int | None = 0
    while offset is not None:
        page = search_lines(texts, [LineQuery("literal", "x", offset, 2)])[0]
        assert page.total == 5 and page.per_text_totals == (3, 0, 2)
        seen += [(h.text_index, h.line_number) for h in page.hits]
        offset = page.next_offset
    assert seen == [(0, 1), (0, 2), (0, 3), (2, 1), (2, 3)]
    beyond = search_lines(texts, [LineQuery("literal", "x", 99, 5)])[0]
    assert beyond.total == 5 and beyond.hits == () and beyond.next_offset is None


def test_huge_line_is_cut_and_marked() -> None:
    line = "é" * 100_000 + "needle"
    page = search_lines(
        [decode(line + "\nneedle")], [LineQuery("literal", "needle")], max_chars=10
    )[0]
    assert [(h.line_number, h.text, h.text_truncated) for h in page.hits] == [
        (1, "é" * 10, True),
        (2, "needle", False),
    ]


@pytest.mark.parametrize(
    ("mode", "pattern"),
    [
        ("literal", ""),
        ("literal", "a\nb"),
        ("literal", "a\rb"),
        ("literal", "a\0b"),
        ("symbol", "9lives"),
        ("symbol", "a-b"),
        ("symbol", "a b"),
        ("symbol", "ä"),
        ("regex", "x"),
    ],
)
def test_invalid_queries_are_typed_errors(mode: str, pattern: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        search_lines([decode("x")], [LineQuery(mode, pattern)])  # type: ignore[arg-type]
    assert caught.value.code == "invalid_argument"


def test_sql_and_regex_looking_patterns_are_plain_text() -> None:
    text = decode("a.*b\nSELECT * FROM x; DROP TABLE y;--\naxxb")
    got = search_lines(
        [text], [LineQuery("literal", ".*"), LineQuery("literal", "; DROP TABLE y;--")]
    )
    assert [[h.line_number for h in p.hits] for p in got] == [[1], [2]]


@pytest.mark.parametrize(("first", "last"), [(0, 1), (2, 1), (1, 4), (-1, 1)])
def test_read_lines_rejects_bad_ranges(first: int, last: int) -> None:
    with pytest.raises(InvalidArgumentError):
        read_lines(decode("a\nb\nc"), first, last)


@pytest.mark.parametrize(
    ("mode", "pattern", "lines"),
    [
        # A numeric ID finds itself, not the longer numbers and names containing it.
        ("word", "26290", [1, 4, 6, 7, 8]),
        ("word_ignore_case", "QUEST_26290", [9]),
    ],
)
def test_whole_words_find_an_id_and_not_longer_numbers(
    mode: str, pattern: str, lines: list[int]
) -> None:
    doc = "\n".join(
        [
            "26290",
            "126290",
            "262901",
            "id = 26290;",
            "x26290 _26290 26290_",
            "1.26290",  # a decimal: '.' is a boundary, as git grep -w has it
            "26290.5",
            "(26290)",
            "Quest_26290",
        ]
    )
    text = decode(doc)
    page = search_lines([text], [LineQuery(mode, pattern, 0, 50)])[0]
    assert [h.line_number for h in page.hits] == lines


def test_a_whole_word_must_be_letters_digits_and_underscores() -> None:
    with pytest.raises(InvalidArgumentError):
        search_lines([decode("a-b")], [LineQuery("word", "a-b", 0, 10)])
