"""schemas/ is the source of truth; the package ships byte-identical copies."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from viano_bug_analysis.schemas import available_schemas, load_schema

REPO = Path(__file__).resolve().parents[1]
SOURCE_DIR = REPO / "schemas"
PACKAGE_DIR = REPO / "python" / "viano_bug_analysis" / "schemas"
SOURCES = sorted(SOURCE_DIR.glob("*.schema.json"))


def test_there_are_schemas() -> None:
    assert SOURCES


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_packaged_copy_is_byte_identical(source: Path) -> None:
    copy = PACKAGE_DIR / source.name
    assert copy.is_file(), f"missing packaged copy; run scripts/sync_schemas.py ({source.name})"
    assert copy.read_bytes() == source.read_bytes(), f"run scripts/sync_schemas.py ({source.name})"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_schema_is_valid_draft_2020_12(source: Path) -> None:
    schema = json.loads(source.read_bytes())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_no_stale_packaged_copies() -> None:
    assert {p.name for p in PACKAGE_DIR.glob("*.schema.json")} == {p.name for p in SOURCES}


def test_the_installed_package_sees_every_schema() -> None:
    names = [p.name.removesuffix(".schema.json") for p in SOURCES]
    assert available_schemas() == sorted(names)
    for name in names:
        assert load_schema(name) == json.loads((SOURCE_DIR / f"{name}.schema.json").read_bytes())


def test_sync_script_check_mode_passes() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "sync_schemas.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_sync_script_reports_drift(tmp_path: Path) -> None:
    loader_spec = importlib.util.spec_from_file_location(
        "sync_schemas", REPO / "scripts" / "sync_schemas.py"
    )
    assert loader_spec is not None and loader_spec.loader is not None
    sync_schemas = importlib.util.module_from_spec(loader_spec)
    loader_spec.loader.exec_module(sync_schemas)
    source, package = tmp_path / "schemas", tmp_path / "package"
    source.mkdir()
    package.mkdir()
    (source / "a.schema.json").write_text("{}")
    (source / "b.schema.json").write_text("{}")
    (package / "b.schema.json").write_text("{ }")
    (package / "c.schema.json").write_text("{}")
    assert sync_schemas.drift(source, package) == [
        "missing copy: a.schema.json",
        "copy differs: b.schema.json",
        "stale copy without a source: c.schema.json",
    ]
    sync_schemas.sync(source, package)
    assert sync_schemas.drift(source, package) == []
    assert sorted(p.name for p in package.iterdir()) == ["a.schema.json", "b.schema.json"]
