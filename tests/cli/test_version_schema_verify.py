"""`vba --version`, `vba schema [NAME]` and `vba case verify` (issue 11 point 24)."""

from __future__ import annotations

import json
import tomllib
from importlib import metadata
from pathlib import Path

import jsonschema
import pytest

from tests.case import case_file
from tests.cli.helpers import REPO, error_of, sample_package, vba
from viano_bug_analysis.schemas import available_schemas


def test_version_is_the_distribution_version() -> None:
    done = vba("--version")
    assert done.returncode == 0
    # The one version source is Cargo.toml (pyproject.toml declares it dynamic).
    package = tomllib.loads((REPO / "Cargo.toml").read_text())["package"]
    assert done.stdout.strip() == f"vba {metadata.version('viano-bug-analysis')}"
    assert metadata.version("viano-bug-analysis") == package["version"]


def test_schema_lists_every_bundled_schema_with_the_case_spec_first() -> None:
    done = vba("schema")
    assert done.returncode == 0
    names = done.stdout.split()
    assert names[0] == "case-spec-v1"
    assert sorted(names) == available_schemas()
    assert sorted(names) == sorted(
        p.name.removesuffix(".schema.json") for p in (REPO / "schemas").glob("*.schema.json")
    )


@pytest.mark.parametrize("name", available_schemas())
def test_schema_prints_each_bundled_schema(name: str) -> None:
    done = vba("schema", name)
    assert done.returncode == 0
    printed = json.loads(done.stdout)
    jsonschema.Draft202012Validator.check_schema(printed)
    bundled = REPO / "python" / "viano_bug_analysis" / "schemas" / f"{name}.schema.json"
    assert printed == json.loads(bundled.read_text())


@pytest.mark.parametrize(
    ("alias", "name"),
    [("request", "investigation-request-v1"), ("result", "investigation-result-v1")],
)
def test_the_short_names_still_work(alias: str, name: str) -> None:
    assert vba("schema", alias).stdout == vba("schema", name).stdout


@pytest.mark.parametrize("name", ["case-spec-v2", "../schemas/case-v1", "CASE-V1", ""])
def test_an_unknown_schema_is_a_typed_error_listing_the_names(name: str) -> None:
    done = vba("schema", name)
    assert done.returncode == 2 and done.stdout == ""
    error = error_of(done)
    assert error["error"] == "schema_unknown"
    assert error["details"]["allowed"].split(", ")[0] == "case-spec-v1"
    assert set(available_schemas()) <= set(error["details"]["allowed"].split(", "))


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_verify_accepts_a_sound_package_and_changes_nothing(tmp_path: Path) -> None:
    package = sample_package(tmp_path)
    before = snapshot(package)
    listing = sorted(p.name for p in package.rglob("*"))
    done = vba("case", "verify", package, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["package_id"], summary["path"]) == ("pkg-bug-20", str(package.resolve()))
    assert snapshot(package) == before
    assert sorted(p.name for p in package.rglob("*")) == listing
    human = vba("case", "verify", package)
    assert human.returncode == 0 and "verified package pkg-bug-20" in human.stdout


@pytest.mark.parametrize(
    ("damage", "code", "exit_code"),
    [
        ("attachment_bytes", "attachment_mismatch", 5),
        ("attachment_size", "attachment_mismatch", 5),
        ("attachment_gone", "attachment_missing", 5),
        ("case_json", "case_stale", 5),
        ("manifest", "manifest_invalid", 2),
    ],
)
def test_verify_refuses_a_damaged_package_and_changes_nothing(
    tmp_path: Path, damage: str, code: str, exit_code: int
) -> None:
    package = sample_package(tmp_path)
    attachment = next((package / "attachments").rglob("*.zip"))
    if damage == "attachment_bytes":
        data = bytearray(attachment.read_bytes())
        data[len(data) // 2] ^= 0x01
        attachment.write_bytes(bytes(data))
    elif damage == "attachment_size":
        attachment.write_bytes(attachment.read_bytes() + b"\0")
    elif damage == "attachment_gone":
        attachment.unlink()
    elif damage == "case_json":
        case = case_file(package)
        case.write_bytes(case.read_bytes().replace(b"Wolpertinger", b"Wolpertingex", 1))
    else:
        (package / "manifest.json").write_text("{")
    before = snapshot(package)
    done = vba("case", "verify", package)
    assert done.returncode == exit_code and done.stdout == ""
    assert error_of(done)["error"] == code
    assert snapshot(package) == before
