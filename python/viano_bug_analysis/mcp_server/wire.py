"""The server's stdin, read before the SDK parses it: repeated keys are not lost.

The SDK parses each JSON-RPC line with pydantic, which keeps the last of two
equal keys in one object, so ``{"text": "a", "text": "b"}`` in a batch would
silently become ``"b"``, where ``vba query`` refuses the request file. The
SDK gives a handler only the parsed message, so the check happens here, on
the raw line: every line goes through ``jsonio.strict_parse`` first, and a
``tools/call`` request in which any object repeats a key is handed on with a
mark in its ``params._meta`` (``DUPLICATE_KEY_META``: the offset of the first
such object in the line and a token of this process, so a client cannot set
the mark itself). The call handler answers a marked call with the refusal the
command line gives (``request_invalid`` / ``query_invalid``, reason
``duplicate_key``) and runs nothing. Every other line reaches the SDK as it
came, byte for byte.

Only the first failure of a line is known to the strict parser: when a line
breaks strict JSON earlier in another way (``NaN``, a lone surrogate), the
repeated key after it is not seen here. Such arguments are refused all the
same, as ``mcp_arguments_invalid``, because they cannot be encoded for the
audit trail; a line that breaks strict JSON only outside the arguments is
left to the SDK.

``stdio_server`` is given this stdin explicitly, so it does not claim fd 0
itself; ``claimed_stdin`` does what it would do: the wire is read from a
private descriptor and fd 0 points at the null device while serving, so a
child process reads end of input instead of the client's messages.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import secrets
import sys
from collections.abc import Iterator
from typing import IO, Any

import anyio

from viano_bug_analysis.jsonio import DUPLICATE_KEY, MAX_ENCODE_DEPTH, JsonFailure, strict_parse

DUPLICATE_KEY_META = "viano-bug-analysis/duplicate-key"


def mark_duplicate_keys(line: str, token: str) -> str:
    """``line``, or for a ``tools/call`` request with a repeated key, the same
    request as the SDK would read it, marked."""
    # The arguments' own depth limit is the router's; here only the keys matter.
    parsed = strict_parse(line, max_depth=MAX_ENCODE_DEPTH)
    if not isinstance(parsed, JsonFailure) or parsed.code != DUPLICATE_KEY:
        return line
    # Read the way the SDK reads it (the last of equal keys wins), so that
    # only the mark is added to what it would have seen.
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return line
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return line
    params = message.get("params")
    if not isinstance(params, dict):
        return line
    meta = params.get("_meta")
    mark = {"token": token, "offset": parsed.offset}
    params["_meta"] = {**(meta if isinstance(meta, dict) else {}), DUPLICATE_KEY_META: mark}
    return json.dumps(message, ensure_ascii=True) + "\n"


def duplicate_key_offset(meta: Any, token: str) -> int | None:
    """The offset ``mark_duplicate_keys`` put into a call's ``_meta``, if it did."""
    mark = meta.get(DUPLICATE_KEY_META) if isinstance(meta, dict) else None
    if isinstance(mark, dict) and mark.get("token") == token:
        offset = mark.get("offset")
        return offset if isinstance(offset, int) else 0
    return None


class CheckedLines(anyio.AsyncFile[str]):
    """An async text stdin whose lines pass ``mark_duplicate_keys``."""

    def __init__(self, fp: IO[str], token: str) -> None:
        super().__init__(fp)
        self.token = token

    async def readline(self) -> str:
        line = await super().readline()
        return mark_duplicate_keys(line, self.token) if line else line


class _Unowned(io.TextIOWrapper):
    """Text over the wire that never closes it (it may be ``sys.stdin.buffer``)."""

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.detach()


def checked_stdin(wire: IO[bytes], token: str) -> CheckedLines:
    """The SDK's reading of stdin (UTF-8, undecodable bytes replaced), checked."""
    return CheckedLines(_Unowned(wire, encoding="utf-8", errors="replace"), token)


def new_token() -> str:
    return secrets.token_hex(16)


@contextlib.contextmanager
def claimed_stdin() -> Iterator[IO[bytes]]:
    """The wire of fd 0 on a private descriptor, fd 0 on the null device meanwhile.

    When fd 0 cannot be moved (no such descriptor, a platform without
    ``dup2`` onto it), the wire is read in place, as the SDK does then.
    """
    try:
        if sys.stdin.fileno() != 0:  # stdin replaced in this process: read it as it is
            raise ValueError
        # Above 2, so the wire never takes the place of a closed stdout or stderr.
        wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except (AttributeError, OSError, ValueError):
        yield sys.stdin.buffer
        return
    moved = False
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
            moved = True
        finally:
            os.close(null)
    except OSError:
        pass
    # Never closed: a worker thread may still block reading it after the server ends.
    stream = os.fdopen(wire, "rb", closefd=False)
    try:
        yield stream
    finally:
        if moved:
            with contextlib.suppress(OSError):
                os.dup2(wire, 0)


__all__ = [
    "DUPLICATE_KEY_META",
    "CheckedLines",
    "checked_stdin",
    "claimed_stdin",
    "duplicate_key_offset",
    "mark_duplicate_keys",
    "new_token",
]
