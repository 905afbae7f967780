"""Writing a case spec file: whole or not at all, never over other content unasked.

Through ``durable.PackageFiles`` rooted at the file's directory (created
with its missing parents): a temporary file beside the name, fsynced, then
linked (a new file) or renamed (``force``) to it. An existing file with the
same bytes is left as it is (``unchanged``); one with other bytes is refused
(``import_output_exists``) unless ``force``, and then replaced whole. A
symbolic link or a directory at the name is refused
(``import_output_invalid``); the OS refusing a write is
``import_write_failed`` with the errno name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from viano_bug_analysis.durable import PackageFiles, create_package_root
from viano_bug_analysis.errors import PackageFileError, ReportImportError

Outcome = Literal["written", "unchanged", "replaced"]
MAX_EXISTING_BYTES = 64 * 1024 * 1024
"""An existing file larger than this is not read to compare: it differs."""


def write_spec(data: bytes, target: str | os.PathLike[str], *, force: bool) -> Outcome:
    path = Path(os.path.abspath(target))
    try:
        create_package_root(path.parent)
        files = PackageFiles(path.parent)
        existing = _existing(files, path.name)
        if existing == data:
            return "unchanged"
        if existing is None and files.write_new(path.name, data):
            return "written"
        if not force:
            raise ReportImportError(
                "import_output_exists",
                "the spec file exists with other content; --force replaces it",
                {"reason": "differs"},
            )
        files.replace(path.name, data)
        return "replaced"
    except PackageFileError as err:
        raise _translated(err) from None


def _existing(files: PackageFiles, name: str) -> bytes | None:
    """The bytes at ``name``; a file too large to compare reads as other bytes."""
    try:
        return files.read(name, limit=MAX_EXISTING_BYTES)
    except PackageFileError as err:
        if err.code == "package_corrupt" and err.details.get("reason") == "larger than the limit":
            return b""
        raise


def _translated(err: PackageFileError) -> ReportImportError:
    if err.code in ("package_write_failed", "package_read_failed"):
        return ReportImportError(
            "import_write_failed",
            "the spec file could not be written",
            {"errno": err.details.get("errno", "EIO")},
        )
    reason = {
        "package_path_outside": "symbolic_link",
        "package_missing": "not_a_directory",
    }.get(err.code, "not_a_regular_file")
    return ReportImportError(
        "import_output_invalid",
        f"the spec file cannot be written there: {reason.replace('_', ' ')}",
        {"reason": reason},
    )


__all__ = ["Outcome", "write_spec"]
