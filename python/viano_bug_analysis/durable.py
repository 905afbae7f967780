"""Durable files: written once, atomically, and never replaced (one mutable
exception, the manifest, is replaced by rename). Every append-only store of
the package builds on these few functions."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from viano_bug_analysis.errors import EnrichmentError


def write_once(path: Path, data: bytes) -> bool:
    """Writes ``data`` to ``path`` unless it exists; returns whether it was new.

    The bytes go to a temporary file first (fsynced) and are linked into
    place, so a reader sees the whole file or none. An existing file with
    other bytes is a conflict and is left alone.
    """
    make_dirs(path.parent)
    if path.exists():
        _same_or_conflict(path, data)
        return False
    temporary = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    try:
        write_synced(temporary, data)
        try:
            os.link(temporary, path)
        except FileExistsError:
            _same_or_conflict(path, data)
            return False
        fsync_directory(path.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
    return True


def replace_atomically(path: Path, data: bytes) -> None:
    """For the one mutable file (the manifest): temp + fsync + rename."""
    temporary = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    try:
        with open(temporary, "xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        fsync_directory(path.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def write_synced(path: Path, data: bytes) -> None:
    """Creates ``path`` (it must not exist), writes ``data`` and fsyncs it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path: Path) -> None:
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir()
        fsync_directory(directory.parent)


def fsync_directory(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # no directory handles on this platform
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _same_or_conflict(path: Path, data: bytes) -> None:
    if path.read_bytes() != data:
        raise EnrichmentError(
            "record_conflict",
            "an append-only record already exists with other content",
            {"file": path.name},
        )
