"""The installed package is complete and importable from anywhere."""

from __future__ import annotations

import email.parser
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

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


# --- what a published package promises (issue 12 point 14) ---------------------------

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "viano-bug-analysis"


def toml(name: str) -> dict[str, Any]:
    with (ROOT / name).open("rb") as handle:
        return tomllib.load(handle)


def cargo_version() -> str:
    return str(toml("Cargo.toml")["package"]["version"])


def test_the_version_is_written_once_in_cargo_toml() -> None:
    project = toml("pyproject.toml")["project"]
    # maturin fills a dynamic version from Cargo.toml; a second literal would drift.
    assert "version" not in project
    assert "version" in project.get("dynamic", [])
    init = (ROOT / "python/viano_bug_analysis/__init__.py").read_text(encoding="utf-8")
    assert not re.search(r"__version__\s*=\s*['\"]", init)


def test_every_version_a_user_can_see_agrees() -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert printed == ["vba", cargo_version()]
    assert metadata.version(DISTRIBUTION) == cargo_version()
    assert _native.__version__ == viano_bug_analysis.__version__ == cargo_version()


def test_license_file_matches_the_declared_license() -> None:
    project = toml("pyproject.toml")["project"]
    assert project["license"] == "MIT"  # a PEP 639 SPDX expression, not a table
    assert project["license-files"] == ["LICENSE"]
    assert toml("Cargo.toml")["package"]["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text
    # PEP 639: a license expression excludes the old license classifiers.
    assert not [c for c in project.get("classifiers", []) if c.startswith("License ::")]


def test_source_distribution_metadata(tmp_path: Path) -> None:
    """The metadata maturin writes for a published package, from an sdist (no
    compilation): the Cargo.toml version, the license expression and file."""
    beside = Path(sys.executable).parent / "maturin"
    maturin = str(beside) if beside.exists() else shutil.which("maturin")
    if maturin is None or shutil.which("cargo") is None:
        # `make install` builds in pip's isolated environment; `make dev` installs maturin.
        pytest.skip("needs maturin (make dev installs it into .venv) and cargo")
    subprocess.run(
        [maturin, "sdist", "--manifest-path", str(ROOT / "Cargo.toml"), "-o", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    [archive] = tmp_path.glob("*.tar.gz")
    with tarfile.open(archive) as sdist:
        names = sdist.getnames()
        [pkg_info] = [name for name in names if name.count("/") == 1 and name.endswith("PKG-INFO")]
        member = sdist.extractfile(pkg_info)
        assert member is not None
        headers = email.parser.BytesHeaderParser().parsebytes(member.read())
    root = pkg_info.split("/")[0]
    assert f"{root}/LICENSE" in names
    assert headers["Version"] == cargo_version()
    assert headers["License-Expression"] == "MIT"
    assert headers.get_all("License-File") == ["LICENSE"]
    assert headers["License"] is None
    classifiers = headers.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers
    assert "Programming Language :: Rust" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers
    extras = set(headers.get_all("Provides-Extra") or [])
    assert {"test", "lint"} <= extras


def test_makefile_takes_the_dependencies_from_pyproject() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    # A version specifier in the Makefile is a second dependency list that drifts.
    assert not re.findall(r"[A-Za-z0-9_.-]+\s*(?:>=|<=|==|~=|<|>)\s*\d", makefile)
    extras = toml("pyproject.toml")["project"]["optional-dependencies"]
    install = re.search(r'^install:.*\n\t.* install [^\n]*"\.\[([a-z,-]+)\]"', makefile, re.M)
    assert install is not None, "make install installs the project with its extras"
    develop = re.search(r"^\t.*maturin develop .*--extras ([a-z,-]+)", makefile, re.M)
    assert develop is not None, "make dev installs the same extras"
    for named in (install.group(1), develop.group(1)):
        assert set(named.split(",")) == {"test", "lint"} <= set(extras)
