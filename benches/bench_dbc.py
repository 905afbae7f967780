"""Benchmark (dbc): 1,000 spell IDs looked up in a generated 100,000-record Spell.dbc.

The file is written from a 48-letter format of Spell.dbc's shape (ID, ints,
a float, two strings, skipped columns: 192-byte records, ~21 MB with the
string block); nothing of the client's data is used. Side by side with a
plain Python reader (``struct`` over the ID column into a dict, then the
name of each hit from the string block):

* cold: open the file, build the ID index, look up 1,000 IDs (a tenth of
  them absent) and read each hit's name (ours also hashes the whole file for
  the answers' provenance: the second baseline does too);
* warm: the same lookups on an opened table with its index built;
* adversarial rows: a header claiming 2^32-1 records, a DB2 claiming a
  4-billion-entry ID index, and a file whose every string offset lies past
  the string block: each refused (or failing) in time independent of the claim.

Run: ``pytest benches/bench_dbc.py --benchmark-only --benchmark-group-by=group``.
"""

from __future__ import annotations

import hashlib
import random
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benches.ratios import Ratios
from tests.native.dbccraft import WDB2, write_client_file
from viano_bug_analysis._native import ClientTable
from viano_bug_analysis.errors import ResearchUnavailable

RECORDS = 100_000
LOOKUPS = 1_000
SEED = 36
FORMAT = "n" + "i" * 15 + "f" + "i" * 4 + "ss" + "xx" + "ii" + "xx" + "i" * 21
NAME = FORMAT.index("s")
RECORD_SIZE = 4 * len(FORMAT)
COLD = "dbc cold: open + index + 1,000 IDs, 100k records"
WARM = "dbc warm: 1,000 IDs, 100k records"
HOSTILE = "dbc hostile headers"
RATIOS = Ratios()


@pytest.fixture(scope="module")
def spell_dbc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(SEED)
    ids = rng.sample(range(1, 2_000_000), RECORDS)
    rows = []
    for spell_id in ids:
        row: list[Any] = [spell_id] + [rng.randrange(1 << 16) for _ in FORMAT[1:]]
        row[NAME], row[NAME + 1] = f"Spell {spell_id}", "Rank 1"
        row[FORMAT.index("f")] = 1.5
        rows.append(row)
    path = tmp_path_factory.mktemp("dbc") / "Spell.dbc"
    path.write_bytes(write_client_file(FORMAT, rows))
    return path


@pytest.fixture(scope="module")
def wanted(spell_dbc: Path) -> list[int]:
    rng = random.Random(SEED + 1)
    present = plain_open(spell_dbc)[0]
    keys = rng.sample(sorted(present), LOOKUPS - LOOKUPS // 10)
    return keys + [2_000_000 + i for i in range(LOOKUPS // 10)]


def plain_open(path: Path) -> tuple[dict[int, int], bytes, int]:
    """The baseline reader: ID -> record offset, the bytes, the string block's start."""
    data = path.read_bytes()
    _magic, count, _fields, size, _strings = struct.unpack_from("<4s4I", data)
    index = {}
    for record in range(count):
        offset = 20 + record * size
        index[struct.unpack_from("<I", data, offset)[0]] = offset
    return index, data, 20 + count * size


def plain_lookup(opened: tuple[dict[int, int], bytes, int], ids: list[int]) -> list[str | None]:
    index, data, strings = opened
    names: list[str | None] = []
    for spell_id in ids:
        offset = index.get(spell_id)
        if offset is None:
            names.append(None)
            continue
        at = strings + struct.unpack_from("<I", data, offset + 4 * NAME)[0]
        names.append(data[at : data.index(b"\0", at)].decode("utf-8"))
    return names


def ours_lookup(table: ClientTable, ids: list[int]) -> list[str | None]:
    found = table.find_ids(ids)
    return [None if r is None else str(table.values(r, [NAME])[0]) for r in found]


@pytest.fixture(scope="module", autouse=True)
def report_ratios(request: pytest.FixtureRequest) -> Iterator[None]:
    yield from RATIOS.report(request)


@pytest.mark.benchmark(group=COLD)
def test_cold_plain_python(benchmark: Any, spell_dbc: Path, wanted: list[int]) -> None:
    names = benchmark.pedantic(
        lambda: plain_lookup(plain_open(spell_dbc), wanted), rounds=5, warmup_rounds=1
    )
    assert names.count(None) == LOOKUPS // 10
    RATIOS.record(benchmark, COLD, "plain python")


@pytest.mark.benchmark(group=COLD)
def test_cold_plain_python_with_sha256(benchmark: Any, spell_dbc: Path, wanted: list[int]) -> None:
    # Ours hashes the whole file for the answers' provenance: the like-for-like baseline.
    def run() -> list[str | None]:
        opened = plain_open(spell_dbc)
        hashlib.sha256(opened[1]).hexdigest()
        return plain_lookup(opened, wanted)

    benchmark.pedantic(run, rounds=5, warmup_rounds=1)
    RATIOS.record(benchmark, COLD, "plain python + sha256")


@pytest.mark.benchmark(group=COLD)
def test_cold_ours(benchmark: Any, spell_dbc: Path, wanted: list[int]) -> None:
    names = benchmark.pedantic(
        lambda: ours_lookup(ClientTable.open(spell_dbc, FORMAT, 1 << 30), wanted),
        rounds=10,
        warmup_rounds=1,
    )
    assert names == plain_lookup(plain_open(spell_dbc), wanted)
    RATIOS.record(benchmark, COLD, "ours")


@pytest.mark.benchmark(group=WARM)
def test_warm_plain_python(benchmark: Any, spell_dbc: Path, wanted: list[int]) -> None:
    opened = plain_open(spell_dbc)
    benchmark.pedantic(plain_lookup, args=(opened, wanted), rounds=50, warmup_rounds=2)
    RATIOS.record(benchmark, WARM, "plain python")


@pytest.mark.benchmark(group=WARM)
def test_warm_ours(benchmark: Any, spell_dbc: Path, wanted: list[int]) -> None:
    table = ClientTable.open(spell_dbc, FORMAT, 1 << 30)
    table.find_ids([1])  # builds the index
    benchmark.pedantic(ours_lookup, args=(table, wanted), rounds=50, warmup_rounds=2)
    RATIOS.record(benchmark, WARM, "ours")


def _refused(data: bytes, fmt: str) -> str:
    try:
        ClientTable.parse(data, fmt).find_string(fmt.index("s"), "x", 10)
    except ResearchUnavailable as err:
        return str(err.details["reason"])
    return "accepted"


HOSTILE_FILES = {
    "records 2^32-1": (struct.pack("<4s4I", b"WDBC", 2**32 - 1, 2, 8, 1) + b"\0", "ns"),
    "db2 index 2^32": (
        struct.pack("<4s11I", WDB2, 1, 2, 8, 1, 0, 15595, 0, 0, 2**32 - 1, 0, 0) + b"\0" * 9,
        "ns",
    ),
    "strings past block": (
        b"".join(
            [struct.pack("<4s4I", b"WDBC", 100_000, 2, 8, 1)]
            + [struct.pack("<2I", i, 0xFFFF_FFF0) for i in range(100_000)]
            + [b"\0"]
        ),
        "ns",
    ),
}


@pytest.mark.benchmark(group=HOSTILE)
@pytest.mark.parametrize("name", sorted(HOSTILE_FILES))
def test_hostile(benchmark: Any, name: str) -> None:
    data, fmt = HOSTILE_FILES[name]
    reason = benchmark.pedantic(_refused, args=(data, fmt), rounds=20, warmup_rounds=1)
    assert reason in ("client_file_truncated", "client_string_invalid")
