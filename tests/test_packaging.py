"""The installed package is complete and importable from anywhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import viano_bug_analysis
from viano_bug_analysis import _native


def test_stub_and_marker_ship_next_to_the_extension() -> None:
    package_dir = Path(viano_bug_analysis.__file__).parent
    assert (package_dir / "_native.pyi").is_file()
    assert (package_dir / "py.typed").is_file()
    assert Path(_native.__file__).parent == package_dir


def test_import_works_outside_the_repository(tmp_path: Path) -> None:
    probe = (
        "import viano_bug_analysis, viano_bug_analysis._native as n;"
        "print(viano_bug_analysis.__version__, n.__version__, n.sha256_implementation())"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out[0] == out[1] == viano_bug_analysis.__version__
    assert out[2] in {"sha-ni", "software"}


def test_native_exports_are_all_stubbed() -> None:
    stub = (Path(viano_bug_analysis.__file__).parent / "_native.pyi").read_text()
    for name in _native.__all__:
        assert f"def {name}(" in stub or f"class {name}" in stub or f"{name}:" in stub, name
