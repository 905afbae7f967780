"""Builds small case packages for router tests through the public creation API."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from viano_bug_analysis.case.create import create_package


@dataclass(frozen=True)
class BuiltPackage:
    path: Path
    manifest: dict[str, Any]
    refs: dict[str, str]  # member name -> source_ref

    def request(self, *requests: dict[str, Any], **overrides: Any) -> dict[str, Any]:
        """A request document for this package with numbered request/action IDs."""
        items = []
        for i, item in enumerate(requests, start=1):
            items.append(
                {
                    "request_id": f"Q{i:04d}",
                    "hypothesis_id": "H1",
                    "action_id": f"query-{i:04d}",
                    **item,
                }
            )
        return {
            "format": "viano-investigation-request",
            "format_version": 1,
            "case_id": self.manifest["case_id"],
            "package_id": self.manifest["package_id"],
            "analysis_revision": self.manifest["analysis_revision"],
            "requests": items,
            **overrides,
        }


def build_package(
    root: Path,
    *,
    sources: dict[str, bytes] | None = None,
    database: dict[str, bytes] | None = None,
    phase: str = "investigation",
    hypotheses: tuple[str, ...] = ("H1", "H2"),
    name: str = "pkg",
) -> BuiltPackage:
    """Sources become `source_file` entries; database members ending in
    `.schema.json` become `schema_descriptor`, the rest `database_snapshot`."""
    sources = sources or {}
    database = database or {}
    inputs = root / f"{name}-inputs"
    refs: dict[str, str] = {}
    attachments = []
    for folder, members in (("wowsrc", sources), ("db", database)):
        if not members:
            continue
        base = inputs / folder
        member_specs = []
        for member, data in members.items():
            target = base / member
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            prefix = "src" if folder == "wowsrc" else "db"
            ref = f"{prefix}-{len(refs) + 1:03d}"
            refs[member] = ref
            if folder == "wowsrc":
                role = "source_file"
                metadata = {"server_path": f"/srv/vcore/{member}"}
            else:
                role = (
                    "schema_descriptor" if member.endswith(".schema.json") else "database_snapshot"
                )
                metadata = {}
            member_specs.append(
                {"member": member, "source_ref": ref, "role": role, "metadata": metadata}
            )
        attachments.append(
            {
                "directory": os.path.relpath(base, inputs),
                "name": f"{folder}.zip",
                "classification": "source_snapshot" if folder == "wowsrc" else "database_snapshot",
                "members": member_specs,
            }
        )
    spec = {
        "format": "viano-case-spec",
        "format_version": 1,
        "case_id": "BUG-T",
        "phase": phase,
        "report": {"title": "test report", "text": "a player report", "metadata": {}},
        "hypotheses": [{"id": h, "statement": f"hypothesis {h}"} for h in hypotheses],
        "attachments": attachments,
    }
    spec_path = inputs / "case-spec.json"
    spec_path.write_bytes(orjson.dumps(spec))
    package = create_package(spec_path, root / name)
    return BuiltPackage(package.path, dict(package.manifest), refs)


def tree_fingerprint(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every file under root: (sha256, size, mtime_ns); plus directories as entries."""
    result: dict[str, tuple[str, int, int]] = {}
    for path in sorted(root.rglob("*")):
        stat = path.lstat()
        rel = path.relative_to(root).as_posix()
        if path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            result[rel] = (digest, stat.st_size, stat.st_mtime_ns)
        else:
            result[rel] = ("dir", 0, stat.st_mtime_ns)
    return result
