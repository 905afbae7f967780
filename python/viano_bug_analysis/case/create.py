"""Building a new case package v1 from a ``case-spec-v1`` document.

``create_package(spec, out_dir)`` is the public way to make a package:

1. read and check the spec (schema, canonical values, unique ids and names);
2. build it in a fresh temporary directory next to ``out_dir`` with
   ``CaseBuilder`` (no project research), the one writer of the package
   format: attachments, ``revisions/r0001/inputs.json`` and ``case.json``,
   then the manifest; the builder verifies every attachment it placed;
3. rename the temporary directory to ``out_dir`` in one step.

Any failure removes the temporary directory, so ``out_dir`` either holds a
complete, checked package or does not exist. The same spec over the same
inputs gives byte-identical files (see docs/case-package-v1.md for the one
caveat: deflate output depends on the zlib build).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: no flock, so stale temporary directories are kept
    fcntl = None  # type: ignore[assignment]

from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.case.inputs import FIXED_ZIP_TIME, check_spec, read_spec
from viano_bug_analysis.case.package import CasePackage, load_package
from viano_bug_analysis.errors import CaseError


def create_package(
    spec: Mapping[str, Any] | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> CasePackage:
    """Builds the package described by ``spec`` at ``out_dir`` and returns it loaded.

    ``spec`` is a spec document or the path of a spec file. Relative paths in
    the spec resolve against the spec file's directory, or against
    ``base_dir`` (default: the current directory) for a document.
    ``out_dir`` must not exist or be an empty directory; missing parent
    directories are created.
    """
    document, base = read_spec(spec, base_dir)
    check_spec(document)
    out = Path(os.path.abspath(out_dir))
    _refuse_existing(out)
    _remove_stale_temps(out)
    temp = out.parent / f".{out.name}.tmp-{os.getpid()}-{secrets.token_hex(8)}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(temp)
    except OSError as err:
        raise _write_failed(err) from None
    held = _lock_dir(temp)
    try:
        try:
            _build(document, base, temp)
        except OSError as err:
            # Reading the inputs maps its own errors to spec_invalid; what is
            # left is writing the package (disk full, permissions).
            raise _write_failed(err) from None
        _fsync_dir(temp)
        try:
            os.rename(temp, out)
        except OSError:
            raise _package_exists() from None
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    finally:
        if held is not None:
            os.close(held)
    _fsync_dir(out.parent)
    return load_package(out)


# -- temporary directories --------------------------------------------------------------

# The name create_package gives its temporary directory after ".{OUT}":
# the builder's pid, then a random part.
_TEMP_TAIL = re.compile(r"\.tmp-([0-9]{1,10})-[0-9a-f]{16}")


def _lock_dir(path: Path) -> int | None:
    """A descriptor holding an exclusive ``flock`` on the directory, or ``None``.

    The lock lives as long as the descriptor, so the kernel drops it when the
    holder dies, even by SIGKILL: a directory whose lock can be taken has no
    live builder. ``None`` where it is held elsewhere or cannot be taken.
    """
    if fcntl is None:
        return None
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another create_package in this process (a thread)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _remove_stale_temps(out: Path) -> None:
    """Removes the temporary directories a killed ``create_package`` of ``out`` left.

    SIGKILL (or a power cut) skips every cleanup. Only names of this
    function's own pattern for this ``out`` are considered, and only when the
    pid in the name is no live process and the directory's lock is free: the
    pid covers the moment between ``mkdir`` and ``flock``, the lock a pid
    reused by an unrelated process and a builder on another host. Without
    ``flock`` (Windows) nothing is removed.
    """
    if fcntl is None:
        return
    prefix = f".{out.name}"
    try:
        names = os.listdir(out.parent)
    except OSError:
        return
    for name in names:
        found = _TEMP_TAIL.fullmatch(name, len(prefix)) if name.startswith(prefix) else None
        if found is None or _process_alive(int(found[1])):
            continue
        stale = out.parent / name
        held = _lock_dir(stale)
        if held is None:
            continue
        try:
            shutil.rmtree(stale, ignore_errors=True)
        finally:
            os.close(held)


# -- the output directory ----------------------------------------------------------------


def _refuse_existing(out: Path) -> None:
    try:
        taken = out.is_symlink() or (out.exists() and (not out.is_dir() or any(out.iterdir())))
    except OSError:
        taken = True  # cannot even look: certainly not ours to replace
    if taken:
        raise _package_exists()


def _write_failed(err: OSError) -> CaseError:
    return CaseError(
        "package_write_failed",
        "the package could not be written",
        {"reason": "operating system error", "kind": type(err).__name__},
    )


def _package_exists() -> CaseError:
    return CaseError(
        "package_exists",
        "the output directory already exists and is not empty",
        {"reason": "output directory exists and is not empty"},
    )


# -- building -------------------------------------------------------------------------


def _build(spec: dict[str, Any], base: Path, temp: Path) -> None:
    # The one writer of the package format: a new package is exactly the one
    # ``vba case build`` makes for the same spec without project research.
    CaseBuilder(spec, temp, base_dir=base).build()


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # platforms without directory handles (Windows) cannot fsync them
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["FIXED_ZIP_TIME", "create_package"]
