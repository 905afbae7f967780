"""Writes DBC/DB2 files from engine format strings, and reads them back in plain Python.

No client data is committed: every test and benchmark writes its files with
``write_client_file`` from a format string (the engine's letters: ``n d i x``
4-byte integers, ``f`` float, ``s`` string offset, ``b X`` one byte (``X``
four bytes in WDB2, as its loader counts it), ``l`` 8 bytes in WDBC).
``plain_read`` is the few-line reference reader the Rust core is compared with.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

WDBC, WDB2 = b"WDBC", b"WDB2"


def width(letter: str, container: bytes) -> int:
    if letter == "b" or (letter == "X" and container == WDBC):
        return 1
    if letter == "l" and container == WDBC:
        return 8
    return 4


def _cell(letter: str, value: Any, size: int, strings: bytearray, offsets: dict[str, int]) -> bytes:
    if letter == "s":
        text = str(value)
        if text not in offsets:
            offsets[text] = len(strings)
            strings.extend(text.encode("utf-8") + b"\0")
        return struct.pack("<I", offsets[text])
    if letter == "f":
        return struct.pack("<f", float(value))
    return int(value).to_bytes(size, "little", signed=int(value) < 0)


def write_client_file(
    fmt: str,
    rows: Sequence[Sequence[Any]],
    *,
    container: bytes = WDBC,
    build: int = 15595,
    record_padding: int = 0,
) -> bytes:
    """A file of ``rows`` (one value per format letter) laid out as the engine's loader reads it."""
    strings = bytearray(b"\0")
    offsets = {"": 0}
    sizes = [width(letter, container) for letter in fmt]
    record_size = sum(sizes) + record_padding
    body = bytearray()
    for row in rows:
        for letter, value, size in zip(fmt, row, sizes, strict=True):
            body += _cell(letter, value, size, strings, offsets)
        body += b"\0" * record_padding
    header = struct.pack("<4s4I", container, len(rows), len(fmt), record_size, len(strings))
    index = b""
    if container == WDB2:
        ids = [int(row[fmt.index("n")]) for row in rows] if "n" in fmt and rows else []
        low, high = (min(ids), max(ids)) if ids else (0, 0)
        header += struct.pack("<3I", 0x1234, build, 0)
        if build > 12880:
            header += struct.pack("<4I", low, high, 0, 0)
            if high:
                index = b"\0" * ((high - low + 1) * 6)
    return header + index + bytes(body) + bytes(strings)


def plain_read(data: bytes, fmt: str) -> list[list[Any]]:
    """Every record of ``data`` as the engine's letters decode it (the reference reader)."""
    magic, count, _fields, record_size, string_size = struct.unpack_from("<4s4I", data)
    start = 20
    if magic == WDB2:
        build = struct.unpack_from("<I", data, 24)[0]
        start = 32
        if build > 12880:
            low, high = struct.unpack_from("<2I", data, 32)
            start = 48 + ((high - low + 1) * 6 if high else 0)
    strings = data[start + count * record_size : start + count * record_size + string_size]
    records = []
    for r in range(count):
        at, row = start + r * record_size, []
        for letter in fmt:
            size = width(letter, magic)
            raw = data[at : at + size]
            if letter == "f":
                row.append(struct.unpack("<f", raw)[0])
            elif letter == "s":
                offset = int.from_bytes(raw, "little")
                row.append(
                    strings[offset : strings.index(b"\0", offset)].decode("utf-8", "replace")
                )
            else:
                row.append(int.from_bytes(raw, "little"))
            at += size
        records.append(row)
    return records
