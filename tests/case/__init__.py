"""Helpers shared by the case package tests (the tests themselves are in test_*.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from viano_bug_analysis.case import canonical_bytes, sha256_hex
from viano_bug_analysis.case.create import create_package
from viano_bug_analysis.case.package import CasePackage
from viano_bug_analysis.durable import PackageLayout

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DIR = REPO / "samples" / "bug-20"
SAMPLE_SPEC = SAMPLE_DIR / "case-spec.json"
# Where a new package keeps its (first) case: create and build write revisions.
CASE_REL = PackageLayout.revision_case(1).as_posix()


def sample_spec() -> dict[str, Any]:
    """The bundled sample spec as a document (resolve paths with base_dir=SAMPLE_DIR)."""
    spec: dict[str, Any] = json.loads(SAMPLE_SPEC.read_bytes())
    return copy.deepcopy(spec)


def build_sample(root: Path, name: str = "pkg") -> CasePackage:
    return create_package(SAMPLE_SPEC, root / name)


def read_json(path: Path) -> Any:
    return json.loads(path.read_bytes())


def case_file(package: Path) -> Path:
    """The case file the package's manifest names (either layout)."""
    path: str = read_json(package / "manifest.json")["case"]["path"]
    return package / path


def edit_manifest(package: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Applies ``change`` to manifest.json and writes it back canonically."""
    manifest = read_json(package / "manifest.json")
    change(manifest)
    (package / "manifest.json").write_bytes(canonical_bytes(manifest))


def edit_case(package: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Applies ``change`` to the case file, writes it canonically and refreshes the
    manifest's hash, so that only the change itself can make loading fail."""
    write_case_bytes(package, canonical_bytes(_changed(read_json(case_file(package)), change)))


def write_case_bytes(package: Path, data: bytes) -> None:
    """Stores ``data`` as the case file and records its hash in the manifest."""
    case_file(package).write_bytes(data)
    edit_manifest(package, lambda m: m["case"].__setitem__("sha256", sha256_hex(data)))


def _changed(value: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    change(value)
    return value


def file_states(root: Path) -> dict[str, tuple[bytes, int]]:
    """Content and mtime of every file under ``root``."""
    return {
        str(path.relative_to(root)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }
