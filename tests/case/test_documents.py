"""One package writer: ``vba case create`` and ``vba case build`` write the same
package (``CaseBuilder`` writes both), described by the two documents built in
``case/documents.py`` only."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.case import SAMPLE_SPEC
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.case.create import create_package
from viano_bug_analysis.durable import PackageLayout

PACKAGE_SOURCE = Path(__file__).resolve().parents[2] / "python" / "viano_bug_analysis"
FORMATS = {"viano-case", "viano-case-package"}


def _documents_built(source: Path) -> list[str]:
    """Dictionary displays that spell out a case or manifest document."""
    found = []
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and key.value == "format"
                    and isinstance(value, ast.Constant)
                    and value.value in FORMATS
                ):
                    found.append(f"{source.relative_to(PACKAGE_SOURCE)}:{node.lineno}")
    return found


def test_the_case_and_manifest_are_built_in_one_place() -> None:
    builders = [
        where
        for source in sorted(PACKAGE_SOURCE.rglob("*.py"))
        if source.name != "documents.py"
        for where in _documents_built(source)
    ]
    assert builders == []


def _files(root: Path) -> dict[str, bytes | None]:
    """Every entry under ``root``: its bytes, or ``None`` for a directory."""
    return {
        path.relative_to(root).as_posix(): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


def test_create_writes_exactly_the_package_build_writes(tmp_path: Path) -> None:
    created = create_package(SAMPLE_SPEC, tmp_path / "created")
    built = CaseBuilder(SAMPLE_SPEC, tmp_path / "built").build().package
    assert _files(created.path) == _files(built.path)
    assert created.manifest["case"]["path"] == PackageLayout.revision_case(1).as_posix()
    assert created.manifest == built.manifest


def test_no_new_package_is_written_flat(tmp_path: Path) -> None:
    created = create_package(SAMPLE_SPEC, tmp_path / "created")
    assert not (created.path / PackageLayout.FLAT_CASE).exists()


def test_build_after_create_with_the_same_spec_changes_nothing(tmp_path: Path) -> None:
    # The created package records its inputs like a build does, so building
    # it again from the same spec is the unchanged rebuild, not revision 2.
    created = create_package(SAMPLE_SPEC, tmp_path / "pkg")
    before = _files(created.path)
    rebuilt = CaseBuilder(SAMPLE_SPEC, created.path).build()
    assert (rebuilt.revision, rebuilt.new_revision) == (1, False)
    assert _files(created.path) == before
