"""The Rust DBC/DB2 reader against the plain Python reader, and on hostile files."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.native.dbccraft import WDB2, WDBC, plain_read, write_client_file
from viano_bug_analysis._native import ClientTable
from viano_bug_analysis.errors import InvalidArgumentError, ResearchUnavailable

LETTERS = "nixfsbXd"
NAMES = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\0"), max_size=12)


def _value(letter: str) -> st.SearchStrategy[object]:
    if letter == "s":
        return NAMES
    if letter == "f":
        return st.floats(width=32, allow_nan=False)
    if letter in "bX":
        return st.integers(0, 255)
    return st.integers(0, 2**32 - 1)


@st.composite
def client_files(draw: st.DrawFn) -> tuple[bytes, str, bytes]:
    container = draw(st.sampled_from([WDBC, WDB2]))
    fmt = "n" + draw(
        st.text(st.sampled_from(LETTERS.replace("n", "").replace("d", "")), max_size=8)
    )
    count = draw(st.integers(0, 12))
    ids = draw(st.lists(st.integers(0, 5000), min_size=count, max_size=count))
    rows = [[i] + [draw(_value(letter)) for letter in fmt[1:]] for i in ids]
    padding = draw(st.integers(0, 3))
    return write_client_file(fmt, rows, container=container, record_padding=padding), fmt, container


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isinf(a) and math.isinf(b))
    return a == b


@settings(max_examples=150, deadline=None)
@given(client_files())
def test_records_match_the_plain_reader(case: tuple[bytes, str, bytes]) -> None:
    data, fmt, container = case
    table = ClientTable.parse(data, fmt)
    expected = plain_read(data, fmt)
    assert table.container == container.decode()
    assert table.record_count == len(expected)
    for index, row in enumerate(expected):
        assert all(_same(a, b) for a, b in zip(table.record(index), row, strict=True))
    # The last record of an ID wins, as in the engine's index table.
    last = {row[0]: index for index, row in enumerate(expected)}
    ids = [*sorted(last), 5001]
    assert table.find_ids(ids) == [last.get(i) for i in ids]


@settings(max_examples=100, deadline=None)
@given(client_files(), st.data())
def test_name_and_field_lookups_match_a_linear_scan(
    case: tuple[bytes, str, bytes], data: st.DataObject
) -> None:
    raw, fmt, _ = case
    table = ClientTable.parse(raw, fmt)
    rows = plain_read(raw, fmt)
    if "s" in fmt and rows:
        column = fmt.index("s")
        name = data.draw(st.sampled_from([r[column] for r in rows]).filter(bool) | NAMES)
        if name:
            found = table.find_string(column, name.upper(), 100)
            assert found == [i for i, r in enumerate(rows) if r[column].lower() == name.lower()]
    wanted = [r[0] for r in rows[:3]]
    assert table.find_uint(0, wanted, 100) == [i for i, r in enumerate(rows) if r[0] in wanted]


def _words(data: bytes) -> list[int]:
    return list(struct.unpack_from("<5I", data))


GOOD = write_client_file("nis", [[1, 2, "Fireball"], [3, 4, "Frost Nova"]])


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda d: d[:7], "client_file_truncated"),
        (lambda d: b"WDBX" + d[4:], "client_file_invalid"),
        (lambda d: d[:4] + struct.pack("<I", 2**32 - 1) + d[8:], "client_file_truncated"),
        (lambda d: d[:12] + struct.pack("<I", 2**32 - 1) + d[16:], "client_file_truncated"),
        (lambda d: d[:12] + struct.pack("<I", 4) + d[16:], "client_file_invalid"),
        (lambda d: d[:8] + struct.pack("<I", 9) + d[12:], "client_file_invalid"),
        (lambda d: d[:16] + struct.pack("<I", 2**32 - 1) + d[20:], "client_file_truncated"),
        (lambda d: d[:-1], "client_file_truncated"),
    ],
    ids=["short", "magic", "records", "record_size", "small_record", "fields", "strings", "cut"],
)
def test_hostile_headers_are_typed_outages(change, reason) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ResearchUnavailable) as caught:
        ClientTable.parse(change(GOOD), "nis")
    assert caught.value.details["reason"] == reason
    assert caught.value.details["provider"] == "client_data"


def test_strings_past_the_block_or_unterminated_are_typed() -> None:
    past = bytearray(GOOD)
    struct.pack_into("<I", past, 20 + 8, 10_000)
    table = ClientTable.parse(bytes(past), "nis")
    with pytest.raises(ResearchUnavailable) as caught:
        table.record(0)
    assert caught.value.details["reason"] == "client_string_invalid"
    unterminated = bytearray(GOOD)
    unterminated[-1] = ord("!")
    with pytest.raises(ResearchUnavailable):
        ClientTable.parse(bytes(unterminated), "nis").find_string(2, "frost nova", 5)


def test_a_lying_db2_id_range_is_refused_before_any_allocation() -> None:
    data = bytearray(write_client_file("ns", [[7, "a"]], container=WDB2))
    struct.pack_into("<2I", data, 32, 0, 2**32 - 1)  # min 0, max 2^32-1: 25 GiB of index
    with pytest.raises(ResearchUnavailable) as caught:
        ClientTable.parse(bytes(data), "ns")
    assert caught.value.details["reason"] == "client_file_truncated"


def test_bad_arguments_are_invalid_argument_errors() -> None:
    table = ClientTable.parse(GOOD, "nis")
    with pytest.raises(InvalidArgumentError):
        table.record(2)
    with pytest.raises(InvalidArgumentError):
        table.find_string(1, "x", 1)
    with pytest.raises(InvalidArgumentError):
        ClientTable.parse(GOOD, "niq")


def test_open_reads_a_file_and_names_its_sha256(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import hashlib

    path = tmp_path / "Spell.dbc"
    path.write_bytes(GOOD)
    table = ClientTable.open(path, "nis", 1 << 20)
    assert table.sha256 == hashlib.sha256(GOOD).hexdigest()
    assert table.values(1, [2, 0]) == ["Frost Nova", 3]
    with pytest.raises(Exception) as caught:
        ClientTable.open(path, "nis", 10)
    assert getattr(caught.value, "code", None) == "byte_limit_exceeded"
