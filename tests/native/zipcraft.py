"""A tiny ZIP writer for tests, able to produce broken archives on purpose.

Every field the reader checks can be overridden: the central directory and
the local header can be made to disagree, sizes and CRCs can lie, entries
can overlap, and the result can be cut anywhere with plain slicing.

ZIP64 can be placed per header: `zip64` puts the extra field in both with
every 32-bit field saturated; `central_zip64` names the central fields that
are saturated (the extra then holds exactly those, in APPNOTE order) and
`local_zip64` says whether the local header carries one. A data descriptor's
sizes are 64-bit when the local header has the ZIP64 field (APPNOTE 4.3.9.2).

Only what the tests need: no timestamps, no comments per entry, no
encryption (the flag can be set, nothing is encrypted).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

STORED = 0
DEFLATED = 8

FLAG_ENCRYPTED = 0x0001
FLAG_DATA_DESCRIPTOR = 0x0008
FLAG_UTF8 = 0x0800

SIG_LOCAL = 0x04034B50
SIG_CENTRAL = 0x02014B50
SIG_EOCD = 0x06054B50
SIG_EOCD64 = 0x06064B50
SIG_EOCD64_LOCATOR = 0x07064B50
SIG_DATA_DESCRIPTOR = 0x08074B50

UNIX_VERSION_MADE_BY = (3 << 8) | 30  # host 3 = Unix, spec 3.0
REGULAR_FILE_ATTRS = 0o100644 << 16
SYMLINK_ATTRS = 0o120777 << 16
U32_MAX = 0xFFFFFFFF
ZIP64_CENTRAL_FIELDS = ("size", "compressed_size", "offset")
"""APPNOTE 4.5.3 order of the values in a central ZIP64 extra field."""


def deflate(data: bytes, level: int = 6) -> bytes:
    """Raw deflate (no zlib header), as stored in ZIP members."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


def deflate_zeros(total: int, chunk: int = 1 << 20) -> bytes:
    """Raw deflate of `total` zero bytes without ever holding them in memory."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(chunk)
    parts = []
    remaining = total
    while remaining:
        n = min(chunk, remaining)
        parts.append(compressor.compress(zeros[:n]))
        remaining -= n
    parts.append(compressor.flush())
    return b"".join(parts)


@dataclass
class Local:
    """Overrides for the local header only (None = same as central)."""

    signature: int | None = None
    name: bytes | None = None
    method: int | None = None
    flags: int | None = None
    crc32: int | None = None
    size: int | None = None
    compressed_size: int | None = None
    extra: bytes | None = None


@dataclass
class Descriptor:
    """Overrides for the data descriptor written after the data."""

    signature: bool = True
    crc32: int | None = None
    size: int | None = None
    compressed_size: int | None = None


@dataclass
class Entry:
    name: bytes | str
    data: bytes = b""
    method: int = STORED
    flags: int = 0
    zip64: bool = False
    """ZIP64 extra field in both headers, with saturated 32-bit fields."""
    central_zip64: tuple[str, ...] | None = None
    """Central fields carried in a ZIP64 extra (default: all if `zip64`, else
    no extra); `()` writes an empty ZIP64 block."""
    local_zip64: bool | None = None
    """ZIP64 extra (both sizes) in the local header (default: `zip64`)."""
    extra_prefix: bytes = b""
    """Other extra blocks written before the ZIP64 one, in both headers."""
    data_descriptor: Descriptor | None = None
    version_made_by: int = UNIX_VERSION_MADE_BY
    external_attr: int = REGULAR_FILE_ATTRS
    payload: bytes | None = None
    """Replaces the compressed bytes (default: `data`, deflated if method 8)."""
    crc32: int | None = None
    size: int | None = None
    compressed_size: int | None = None
    header_offset: int | None = None
    """Central directory's local header offset (default: where it was written)."""
    local: Local = field(default_factory=Local)

    @property
    def raw_name(self) -> bytes:
        return self.name.encode() if isinstance(self.name, str) else self.name


def symlink(name: str, target: bytes) -> Entry:
    return Entry(name, target, external_attr=SYMLINK_ATTRS)


def _zip64_extra(values: Iterable[int]) -> bytes:
    body = b"".join(struct.pack("<Q", v) for v in values)
    return struct.pack("<HH", 0x0001, len(body)) + body


def build(
    entries: Sequence[Entry],
    *,
    zip64_end: bool = False,
    comment: bytes = b"",
    prefix: bytes = b"",
    disk_number: int = 0,
    saturate_end: bool = True,
    extensible: bytes = b"",
) -> bytes:
    """Serialise `entries` (in order) into ZIP bytes.

    With `zip64_end`, the classic end record's counts, size and offset are
    saturated unless `saturate_end` is False (then they hold the real values,
    which readers must ignore in favour of the ZIP64 record). `extensible`
    is the ZIP64 end record's extensible data sector (APPNOTE 4.3.14.2).
    """
    out = bytearray(prefix)
    central = bytearray()
    for e in entries:
        if e.payload is not None:
            payload = e.payload
        elif e.method == DEFLATED:
            payload = deflate(e.data)
        else:
            payload = e.data
        crc = zlib.crc32(e.data) if e.crc32 is None else e.crc32
        size = len(e.data) if e.size is None else e.size
        comp = len(payload) if e.compressed_size is None else e.compressed_size
        offset = len(out) if e.header_offset is None else e.header_offset
        flags = e.flags | (FLAG_DATA_DESCRIPTOR if e.data_descriptor else 0)
        name = e.raw_name

        lo = e.local
        if e.data_descriptor:
            l_crc, l_size, l_comp = 0, 0, 0
        else:
            l_crc, l_size, l_comp = crc, size, comp
        l_crc = l_crc if lo.crc32 is None else lo.crc32
        l_size = l_size if lo.size is None else lo.size
        l_comp = l_comp if lo.compressed_size is None else lo.compressed_size
        local_zip64 = e.zip64 if e.local_zip64 is None else e.local_zip64
        if local_zip64:
            l_extra = e.extra_prefix + _zip64_extra([l_size, l_comp])
            l_size32 = l_comp32 = U32_MAX
        else:
            l_extra = e.extra_prefix
            l_size32, l_comp32 = l_size & U32_MAX, l_comp & U32_MAX
        if lo.extra is not None:
            l_extra = lo.extra
        l_name = name if lo.name is None else lo.name
        out += struct.pack(
            "<IHHHHHIIIHH",
            SIG_LOCAL if lo.signature is None else lo.signature,
            45,
            flags if lo.flags is None else lo.flags,
            e.method if lo.method is None else lo.method,
            0,
            0x21,
            l_crc,
            l_comp32,
            l_size32,
            len(l_name),
            len(l_extra),
        )
        out += l_name + l_extra + payload

        dd = e.data_descriptor
        if dd:
            if dd.signature:
                out += struct.pack("<I", SIG_DATA_DESCRIPTOR)
            d_crc = crc if dd.crc32 is None else dd.crc32
            d_size = size if dd.size is None else dd.size
            d_comp = comp if dd.compressed_size is None else dd.compressed_size
            out += struct.pack("<IQQ" if local_zip64 else "<III", d_crc, d_comp, d_size)

        saturated = ZIP64_CENTRAL_FIELDS if e.zip64 else None
        saturated = saturated if e.central_zip64 is None else e.central_zip64
        values = {"size": size, "compressed_size": comp, "offset": offset}
        if saturated is None:
            c_extra = e.extra_prefix
        else:
            carried = [values[f] for f in ZIP64_CENTRAL_FIELDS if f in saturated]
            c_extra = e.extra_prefix + _zip64_extra(carried)
        c_size32, c_comp32, c_off32 = (
            U32_MAX if saturated and f in saturated else values[f] & U32_MAX
            for f in ZIP64_CENTRAL_FIELDS
        )
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            SIG_CENTRAL,
            e.version_made_by,
            45,
            flags,
            e.method,
            0,
            0x21,
            crc,
            c_comp32,
            c_size32,
            len(name),
            len(c_extra),
            0,
            0,
            0,
            e.external_attr,
            c_off32,
        )
        central += name + c_extra

    cd_offset = len(out)
    out += central
    count = len(entries)
    if zip64_end:
        eocd64_offset = len(out)
        out += struct.pack(
            "<IQHHIIQQQQ",
            SIG_EOCD64,
            44 + len(extensible),
            45,
            45,
            disk_number,
            disk_number,
            count,
            count,
            len(central),
            cd_offset,
        )
        out += extensible
        out += struct.pack("<IIQI", SIG_EOCD64_LOCATOR, 0, eocd64_offset, 1)
        eocd = (0xFFFF, 0xFFFF, U32_MAX, U32_MAX)
        if not saturate_end:
            eocd = (count, count, len(central), cd_offset)
    else:
        eocd = (count, count, len(central), cd_offset)
    out += struct.pack("<IHHHHIIH", SIG_EOCD, disk_number, disk_number, *eocd, len(comment))
    out += comment
    return bytes(out)
