"""One writer per case package and kind of work: an advisory lock file in the package.

``package_lock(root, name, holder)`` takes an exclusive ``flock`` on
``root/name`` without waiting. A second holder gets ``package_busy`` at once,
before it has read or sent anything. The kernel drops the lock when the
holding process ends however it ends (``kill -9`` included), so there is no
stale lock to clean up and nothing to break by hand.

Two locks exist: ``.build.lock`` (``CaseBuilder``) and ``.investigation.lock``
(``vba investigate`` and ``vba resume``). They are separate on purpose: a new
case revision may land while an investigation runs, which the controller
detects by the case generation (``case_changed``); two investigations or two
builds of one package may not run at once.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import CaseError, PackageFileError, VbaError

BUILD_LOCK = ".build.lock"
INVESTIGATION_LOCK = ".investigation.lock"
LOCK_NAMES = frozenset({BUILD_LOCK, INVESTIGATION_LOCK})


@contextlib.contextmanager
def package_lock(root: str | os.PathLike[str], name: str, holder: str) -> Iterator[None]:
    """Holds the lock ``name`` of the package at ``root`` for the ``with`` block.

    ``holder`` names the kind of work in the ``package_busy`` message ("build",
    "investigation"). The package directory must exist (``manifest_invalid``
    otherwise, as ``load_package`` says); a lock file that cannot be created
    is ``package_write_failed`` (a symbolic link in its place included: it
    is not followed).
    """
    if name not in LOCK_NAMES:
        raise ValueError("unknown package lock")
    directory = Path(root)
    if not directory.is_dir():
        raise CaseError(
            "manifest_invalid",
            "the package directory does not exist",
            {"file": PackageLayout.MANIFEST.as_posix(), "reason": "package directory not found"},
        )
    busy = CaseError("package_busy", f"another {holder} of this package is running", {"lock": name})
    with exclusive_lock(directory / name, busy):
        yield


@contextlib.contextmanager
def exclusive_lock(path: Path, busy: VbaError) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (created, never through a symbolic link)
    for the ``with`` block, or ``busy`` raised at once when another holder has it.

    The one lock mechanism of the package locks and of ``vba triage``'s folder."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as err:
        raise PackageFileError(
            "package_write_failed",
            "the lock file could not be opened",
            {"path": path.name, "errno": errno.errorcode.get(err.errno or 0, "unknown")},
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise busy from None
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


__all__ = ["BUILD_LOCK", "INVESTIGATION_LOCK", "LOCK_NAMES", "exclusive_lock", "package_lock"]
