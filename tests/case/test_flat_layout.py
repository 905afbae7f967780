"""Packages of the first, flat layout (``case.json`` at the root) are still read.

No command writes that layout any more; operators have such packages on disk.
The flat package here is assembled byte by byte in the test, as the old
``vba case create`` laid it out, not by any code path of the package.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.case import SAMPLE_SPEC, read_json
from viano_bug_analysis.case import canonical_bytes, load_package, sha256_hex, verify_package
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.case.create import create_package
from viano_bug_analysis.cli import main as vba_main


def flat_package(tmp_path: Path) -> Path:
    new = create_package(SAMPLE_SPEC, tmp_path / "new").path
    flat = tmp_path / "flat"
    flat.mkdir()
    shutil.copytree(new / "attachments", flat / "attachments")
    case_bytes = canonical_bytes(read_json(new / "revisions" / "r0001" / "case.json"))
    (flat / "case.json").write_bytes(case_bytes)
    manifest = read_json(new / "manifest.json")
    manifest["case"] = {"path": "case.json", "sha256": sha256_hex(case_bytes)}
    (flat / "manifest.json").write_bytes(canonical_bytes(manifest))
    return flat


def test_a_flat_package_loads_and_verifies(tmp_path: Path) -> None:
    flat = flat_package(tmp_path)
    package = load_package(flat)
    assert package.manifest["case"]["path"] == "case.json"
    assert package.case == load_package(tmp_path / "new").case
    verify_package(package)


def test_vba_case_verify_accepts_a_flat_package(tmp_path: Path) -> None:
    assert vba_main(["case", "verify", str(flat_package(tmp_path))]) == 0


def test_a_build_of_a_flat_package_adds_revision_2_beside_it(tmp_path: Path) -> None:
    flat = flat_package(tmp_path)
    old_case = (flat / "case.json").read_bytes()
    built = CaseBuilder(SAMPLE_SPEC, flat).build()
    assert (built.revision, built.new_revision) == (2, True)
    assert built.package.manifest["case"]["path"] == "revisions/r0002/case.json"
    assert (flat / "case.json").read_bytes() == old_case
    assert (
        built.package.manifest["attachments"]
        == load_package(tmp_path / "new").manifest["attachments"]
    )
