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
  such as ``FileNotFoundError``);
* ``not_a_regular_file``: a FIFO, directory, socket or device;
* ``too_large``: more than ``max_bytes`` (``details["limit"]``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

UNREADABLE = "unreadable"
NOT_A_REGULAR_FILE = "not_a_regular_file"
TOO_LARGE = "too_large"

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)

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
        fd = os.open(path, _FLAGS)
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
    path: str | os.PathLike[str], *, max_bytes: int, what: str, error: ErrorFactory
) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` of them.

    ``what`` names the input in the message (``"the limits file"``); every
    failure is ``error(reason, message, details)``, raised without a chained
    OS error (whose text would carry the path).
    """
    problem: tuple[str, str, dict[str, Any]]
    try:
        with open_regular_file(Path(path)) as handle:
            data = handle.read(max_bytes + 1)
    except NotRegularFileError:
        problem = (NOT_A_REGULAR_FILE, f"{what} is not a regular file", {})
    except OSError as err:
        problem = (UNREADABLE, f"{what} cannot be read", {"kind": type(err).__name__})
    else:
        if len(data) <= max_bytes:
            return data
        problem = (TOO_LARGE, f"{what} is larger than {max_bytes} bytes", {"limit": max_bytes})
    reason, message, details = problem
    raise error(reason, message, {"reason": reason, **details}) from None


__all__ = [
    "NOT_A_REGULAR_FILE",
    "TOO_LARGE",
    "UNREADABLE",
    "ErrorFactory",
    "NotRegularFileError",
    "open_regular_file",
    "read_regular_file",
]
