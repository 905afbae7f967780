"""The two documents of the case package format, built in one place.

``vba case create`` (``create.py``) and ``vba case build`` (``builder.py``)
both describe a package by its canonical case and its manifest. Each used to
assemble both dictionaries itself; they are built here, so a field added to
the format (or a rule such as the default package ID) cannot reach one
command and miss the other. Where the files go is ``durable.PackageLayout``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CASE_FORMAT = "viano-case"
PACKAGE_FORMAT = "viano-case-package"


@dataclass(frozen=True, slots=True)
class PlacedAttachment:
    """An attachment as stored in the package: where, its bytes, its members' digests."""

    path: str  # relative to the package, e.g. attachments/db.zip
    sha256: str
    size: int
    spec: Mapping[str, Any]  # the attachment entry of the case spec
    digests: Sequence[tuple[str, int]]  # (sha256, size) of each declared member, in order


def case_document(
    spec: Mapping[str, Any], revision: int, attachments: Sequence[PlacedAttachment]
) -> dict[str, Any]:
    """The canonical case of ``revision``: report, hypotheses, inputs and contexts."""
    inputs: list[dict[str, Any]] = []
    source_context: list[dict[str, Any]] = []
    database_context: list[dict[str, Any]] = []
    for item in attachments:
        inputs.append(
            {
                "attachment": item.path,
                "sha256": item.sha256,
                "size": item.size,
                "classification": item.spec["classification"],
            }
        )
        for member, (sha256, size) in zip(item.spec["members"], item.digests, strict=True):
            entry = {
                "source_ref": member["source_ref"],
                "role": member["role"],
                "attachment": item.path,
                "member": member["member"],
                "sha256": sha256,
                "size": size,
                "metadata": member.get("metadata", {}),
            }
            (source_context if member["role"] == "source_file" else database_context).append(entry)
    return {
        "format": CASE_FORMAT,
        "format_version": 1,
        "case_id": spec["case_id"],
        "analysis_revision": revision,
        "report": spec["report"],
        "hypotheses": spec["hypotheses"],
        "inputs": inputs,
        "source_context": source_context,
        "database_context": database_context,
    }


def default_package_id(spec: Mapping[str, Any], case_sha256: str) -> str:
    """The spec's ``package_id``, else ``pkg-<case id>-<12 hex of the first case>``."""
    given = spec.get("package_id")
    return str(given) if given else f"pkg-{spec['case_id'].lower()}-{case_sha256[:12]}"


def manifest_document(
    spec: Mapping[str, Any],
    *,
    package_id: str,
    revision: int,
    case_path: str,
    case_sha256: str,
    attachments: Sequence[PlacedAttachment],
) -> dict[str, Any]:
    """The manifest committing the package to revision ``revision`` (an active case)."""
    return {
        "format": PACKAGE_FORMAT,
        "format_version": 1,
        "package_id": package_id,
        "case_id": spec["case_id"],
        "analysis_revision": revision,
        "generation": revision,
        "phase": spec["phase"],
        "status": {"state": "active"},
        "case": {"path": case_path, "sha256": case_sha256},
        "attachments": [
            {"path": item.path, "sha256": item.sha256, "size": item.size} for item in attachments
        ],
    }


__all__ = [
    "CASE_FORMAT",
    "PACKAGE_FORMAT",
    "PlacedAttachment",
    "case_document",
    "default_package_id",
    "manifest_document",
]
