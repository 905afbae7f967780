"""Reading operator-supplied files: the one way, so that no command can block.

An operator names files on the command line or in a configuration file (a
request, a limits file, a profile, a configuration, an API key file, a
database password file, a case spec and its attachments). A plain ``open()``
of a FIFO waits for a writer, possibly forever, and a terminal or device
gives no end of file either. ``open_regular_file`` opens with ``O_NONBLOCK``
(a FIFO opens at once) and ``O_NOCTTY``, then checks the type on the handle,
which also closes the race with a path swapped after a ``stat``.
``O_NONBLOCK`` does not change how a regular file reads.

``read_regular_file`` adds the size limit and turns every failure into the
caller's own typed error, so each input keeps the error code its documentation
names (``limits_invalid``, ``profile_unreadable``, ``config_unreadable``...).
The error factory receives a ``reason`` and ``details`` that never hold the
file's path or any of its bytes:

* ``unreadable``: the OS refused (``details["kind"]`` is the error class,
  such as ``FileNotFoundError``, whose message says the file does not exist);
* ``not_a_regular_file``: a FIFO, directory, socket or device;
* ``too_large``: more than ``max_bytes`` (``details["limit"]``).

``load_toml_file`` is the one loader of the TOML configuration files (the
investigation and research configurations, profile and enrichment profile
files, a ``.toml`` limits file): the bytes as above, then UTF-8, then
``tomllib``, then the file's bundled JSON Schema through the one schema-error
mapper (``schema_errors.check``). Its extra reasons:

* ``not_utf8`` (``details["offset"]``, in bytes);
* ``toml_syntax`` (``details["line"]`` and ``["column"]``, 1-based, when
  the parser gives them; never the parser's message, which may quote the file);
* ``schema``: ``details["key"]`` is the dotted TOML key at fault (``""`` for
  the whole file; a table of an array of tables is named by its position,
  ``extract[1].key``, an item of a list of values by its list), beside the
  mapper's ``path``, ``rule``, ``property`` and ``allowed``, and its message
  as ``problem`` (for a caller that words its own).

No configuration key takes a TOML date or time, ``nan`` or ``inf``, and
JSON has none of them (the compiled validator failed on a date with
``ValueError``): one is refused with reason ``schema``, rule ``type``, at its
key, whatever the schema, so a configuration means what its JSON would.
"""

from __future__ import annotations

import datetime
import math
import os
import re
import stat
import tomllib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

UNREADABLE = "unreadable"
NOT_A_REGULAR_FILE = "not_a_regular_file"
TOO_LARGE = "too_large"

READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)

"""Flags of every open of an input whose type is then checked on the handle."""

ErrorFactory = Callable[[str, str, dict[str, Any]], BaseException]
"""``(reason, message, details) -> exception`` of the caller's own type and code."""


class NotRegularFileError(OSError):
    """The path names a FIFO, directory, socket or device, not a regular file."""


def open_regular_file(path: str | os.PathLike[str]) -> BinaryIO:
    """The file at ``path`` opened for binary reading; never waits for a writer.

    Raises ``NotRegularFileError`` for anything but a regular file (a
    directory included, whatever the platform's ``open`` would say) and the
    OS's ``OSError`` otherwise.
    """
    try:
        fd = os.open(path, READ_FLAGS)
    except IsADirectoryError:
        raise NotRegularFileError("not a regular file") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFileError("not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular_file(
    path: str | os.PathLike[str], *, max_bytes: int, what: str, refuse: ErrorFactory
) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` of them.

    ``what`` names the input in the message (``"the limits file"``); every
    failure is ``refuse(reason, message, details)``, raised without a chained
    OS error (whose text would carry the path).
    """
    problem: tuple[str, str, dict[str, Any]]
    try:
        with open_regular_file(Path(path)) as handle:
            data = handle.read(max_bytes + 1)
    except NotRegularFileError:
        problem = (NOT_A_REGULAR_FILE, f"{what} is not a regular file", {})
    except FileNotFoundError as err:
        problem = (UNREADABLE, f"{what} does not exist", {"kind": type(err).__name__})
    except OSError as err:
        problem = (UNREADABLE, f"{what} cannot be read", {"kind": type(err).__name__})
    else:
        if len(data) <= max_bytes:
            return data
        problem = (TOO_LARGE, f"{what} is larger than {max_bytes} bytes", {"limit": max_bytes})
    reason, message, details = problem
    raise refuse(reason, message, {"reason": reason, **details}) from None


def load_toml_file(
    path: str | os.PathLike[str],
    *,
    schema: str | None,
    max_bytes: int,
    what: str,
    refuse: ErrorFactory,
) -> dict[str, Any]:
    """The TOML document in the file at ``path``, checked against the bundled ``schema``."""
    data = read_regular_file(path, max_bytes=max_bytes, what=what, refuse=refuse)
    return parse_toml(data, schema=schema, what=what, refuse=refuse)


_TOML_POSITION = re.compile(r"at line (\d+), column (\d+)")


def parse_toml(
    data: bytes, *, schema: str | None, what: str, refuse: ErrorFactory
) -> dict[str, Any]:
    """``data`` parsed as TOML and checked against ``schema``; failures as in the module doc."""
    from viano_bug_analysis.schema_errors import pointer

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        details: dict[str, Any] = {"reason": "not_utf8", "offset": err.start}
        raise refuse("not_utf8", f"{what} is not UTF-8", details) from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        found = _TOML_POSITION.search(str(err))
        position = {"line": int(found[1]), "column": int(found[2])} if found else {}
        where = f" at line {found[1]}, column {found[2]}" if found else ""
        details = {"reason": "toml_syntax", **position}
        raise refuse("toml_syntax", f"{what} is not valid TOML{where}", details) from None
    if (found_at := _first_non_json(document, ())) is not None:
        where = pointer(found_at)
        details = {
            "reason": "schema",
            "key": _toml_key(found_at, document),
            "path": where,
            "rule": "type",
        }
        message = f"{what}: value at {where} is a TOML date, time, nan or inf, which no key takes"
        raise refuse("schema", message, details)
    if schema is not None:
        check_config(document, schema=schema, what=what, refuse=refuse)
    return document


def check_config(document: Any, *, schema: str, what: str, refuse: ErrorFactory) -> None:
    """Refuses (reason ``schema``, with the dotted ``key``) a document ``schema`` rejects.

    For a loader that must look at the parsed document before it knows its
    schema (a profile file may be a bare enrichment profile).
    """
    from viano_bug_analysis.schema_errors import check

    violation = check(schema, document)
    if violation is None:
        return
    parts = [
        part.replace("~1", "/").replace("~0", "~") for part in violation.pointer.split("/")[1:]
    ]
    key = _toml_key(parts, document)
    details = {"reason": "schema", "key": key, "problem": violation.message, **violation.details()}
    raise refuse("schema", f"{what}: {violation.message}", details)


def _toml_key(parts: Sequence[object], document: Any) -> str:
    """The TOML key of a place, as the operator wrote it.

    A position followed by a key is an array of tables (``[[extract]]``), whose
    tables the operator can only tell apart by it: ``extract[1].key``. A
    position at the end is an item of a list of values, named by its list
    (``database.allow.cata_world``), which is the key the operator edits.
    """
    key = ""
    node = document
    for at, part in enumerate(parts):
        if isinstance(node, list):
            index = int(str(part))
            node = node[index] if 0 <= index < len(node) else None
            if at < len(parts) - 1:
                key += f"[{index}]"
            continue
        key = f"{key}.{part}" if key else str(part)
        node = node.get(part) if isinstance(node, dict) else None
    return key


def _first_non_json(value: Any, at: tuple[object, ...]) -> tuple[object, ...] | None:
    items: Iterable[tuple[object, Any]]
    if isinstance(value, datetime.date | datetime.time):
        return at
    if isinstance(value, float) and not math.isfinite(value):
        return at
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        if (found := _first_non_json(item, (*at, key))) is not None:
            return found
    return None


__all__ = [
    "NOT_A_REGULAR_FILE",
    "READ_FLAGS",
    "TOO_LARGE",
    "UNREADABLE",
    "ErrorFactory",
    "NotRegularFileError",
    "check_config",
    "load_toml_file",
    "open_regular_file",
    "parse_toml",
    "read_regular_file",
]
