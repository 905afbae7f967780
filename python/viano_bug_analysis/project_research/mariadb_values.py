"""How the MariaDB source turns the server's values into JSON values.

The table of forms is in :mod:`.mariadb_source`. Exact and temporal values
stay the server's text (cheaper than Decimal/datetime objects and exact by
construction), BIT becomes an int, and binary columns become
``{"base64": ...}`` after fetching, because PyMySQL decodes by field type
and a BLOB and a TEXT share one.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

import pymysql.converters
from pymysql.constants import FIELD_TYPE

from viano_bug_analysis.project_research.mariadb_catalog import Table

BINARY_TYPES = frozenset(
    {
        "binary",
        "varbinary",
        "tinyblob",
        "blob",
        "mediumblob",
        "longblob",
        "geometry",
        "point",
        "linestring",
        "polygon",
        "multipoint",
        "multilinestring",
        "multipolygon",
        "geometrycollection",
    }
)


def _iso_datetime(value: str) -> str:
    return value.replace(" ", "T", 1)


def _bit_to_int(value: bytes) -> int:
    return int.from_bytes(value, "big")


def _conversions() -> dict[int | type[Any], Callable[..., Any]]:
    conv: dict[int | type[Any], Callable[..., Any]] = dict(pymysql.converters.conversions)
    through = pymysql.converters.through
    for field_type in (FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL, FIELD_TYPE.DATE):
        conv[field_type] = through
    conv[FIELD_TYPE.TIME] = through
    conv[FIELD_TYPE.DATETIME] = _iso_datetime
    conv[FIELD_TYPE.TIMESTAMP] = _iso_datetime
    conv[FIELD_TYPE.BIT] = _bit_to_int
    return conv


# PyMySQL's ``conv`` argument of every reader connection.
CONVERSIONS = _conversions()


def json_rows(
    info: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> list[dict[str, Any]]:
    """The fetched rows as the ``rows`` answer holds them."""
    binary = [i for i, name in enumerate(columns) if info.by_name[name].data_type in BINARY_TYPES]
    if binary:
        rows = [_wrap_binary(row, binary) for row in rows]
    return [dict(zip(columns, row, strict=True)) for row in rows]


def _wrap_binary(row: tuple[Any, ...], positions: Sequence[int]) -> tuple[Any, ...]:
    cells = list(row)
    for position in positions:
        cell = cells[position]
        if isinstance(cell, bytes | bytearray):
            cells[position] = {"base64": base64.b64encode(cell).decode("ascii")}
    return tuple(cells)
