"""The manifest's summary of the checkpoint log: ``phase`` and ``status``.

The checkpoint log is the truth; the manifest is the one mutable file of a
package and says what the newest checkpoint stands for, so that readers of
the package (the router, ``vba status``) need not replay the log.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from viano_bug_analysis.case.canonical import canonical_bytes
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.investigation.checkpoint_rules import Checkpoint, argument_invalid
from viano_bug_analysis.schemas import schema_validator

MANIFEST_SCHEMA = "case-manifest-v1"


def manifest_status(checkpoint: Checkpoint) -> tuple[str, dict[str, Any]]:
    """The manifest ``phase`` and ``status`` that a checkpoint stands for.

    A blocked case keeps the phase it will resume into, with a blocked status.
    """
    if checkpoint.blocked is not None:
        return checkpoint.blocked.resume_state, {
            "state": "blocked",
            "code": checkpoint.blocked.code,
            "resume_state": checkpoint.blocked.resume_state,
        }
    return checkpoint.state, {"state": "active"}


def write_manifest_status(
    package: PackageLayout | str | os.PathLike[str], *, phase: str, status: Mapping[str, Any]
) -> bool:
    """Rewrites ``manifest.json`` with a new ``phase`` and ``status``, atomically.

    The package is loaded and checked first (``load_package``), the new
    manifest must match ``case-manifest-v1``, and it is written as canonical
    JSON to a temporary file that replaces the manifest in one ``rename``.
    Returns False when the manifest already says this (nothing is written).
    """
    layout = PackageLayout.of(package)
    manifest = dict(load_package(layout.root).manifest)
    manifest["phase"] = phase
    manifest["status"] = dict(status)
    if not schema_validator(MANIFEST_SCHEMA).is_valid(manifest):
        raise argument_invalid("the phase or status does not fit the manifest schema", "status")
    data = canonical_bytes(manifest)
    if layout.files.read(PackageLayout.MANIFEST) == data:
        return False
    # The manifest is the one file that is updated in place: replace it whole.
    layout.files.replace(PackageLayout.MANIFEST, data)
    return True


__all__ = ["MANIFEST_SCHEMA", "manifest_status", "write_manifest_status"]
