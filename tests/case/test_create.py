"""create_package: deterministic, atomic, and strict about its spec."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.case import CASE_REL, SAMPLE_DIR, SAMPLE_SPEC, file_states, sample_spec
from viano_bug_analysis.case import create_package, load_package, sha256_hex, verify_package
from viano_bug_analysis.case.__main__ import main
from viano_bug_analysis.case.create import FIXED_ZIP_TIME
from viano_bug_analysis.errors import CaseError


def create_error(spec: Any, out: Path, **kwargs: Any) -> CaseError:
    with pytest.raises(CaseError) as info:
        create_package(spec, out, **kwargs)
    return info.value


def contents(root: Path) -> dict[str, bytes]:
    return {name: data for name, (data, _) in file_states(root).items()}


def assert_nothing_left(parent: Path, *expected: str) -> None:
    """Only ``expected`` names remain in ``parent``: no package, no temp dir."""
    assert sorted(p.name for p in parent.iterdir()) == sorted(expected)


# -- the result ------------------------------------------------------------------------


def test_sample_package_layout(tmp_path: Path) -> None:
    package = create_package(SAMPLE_SPEC, tmp_path / "out")
    assert sorted(contents(tmp_path / "out")) == [
        ".build.lock",
        "attachments/db.zip",
        "attachments/wowsrc.zip",
        "manifest.json",
        "revisions/r0001/case.json",
        "revisions/r0001/inputs.json",
    ]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_bytes())
    assert manifest["package_id"] == "pkg-bug-20"
    assert manifest["analysis_revision"] == manifest["generation"] == 1
    assert manifest["status"] == {"state": "active"}
    assert manifest["phase"] == "investigation"
    assert manifest["case"] == {"path": CASE_REL, "sha256": package.case_sha256}
    for item in manifest["attachments"]:
        data = (tmp_path / "out" / item["path"]).read_bytes()
        assert (item["sha256"], item["size"]) == (sha256_hex(data), len(data))
    case = package.case
    assert [h["id"] for h in case["hypotheses"]] == ["H1", "H2"]
    assert [i["classification"] for i in case["inputs"]] == ["source_snapshot", "database_snapshot"]
    verify_package(package)


def test_member_hashes_are_those_of_the_original_files(tmp_path: Path) -> None:
    package = create_package(SAMPLE_SPEC, tmp_path / "out")
    for entry in package.context_entries.values():
        folder = "wowsrc" if entry.kind == "source" else "db"
        data = (SAMPLE_DIR / folder / entry.member).read_bytes()
        assert (entry.sha256, entry.size) == (sha256_hex(data), len(data))


def test_directory_zips_are_normalized(tmp_path: Path) -> None:
    create_package(SAMPLE_SPEC, tmp_path / "out")
    with zipfile.ZipFile(tmp_path / "out" / "attachments" / "wowsrc.zip") as zf:
        infos = zf.infolist()
    names = [info.filename for info in infos]
    assert names == sorted(names)
    for info in infos:
        assert info.date_time == FIXED_ZIP_TIME
        assert info.compress_type == zipfile.ZIP_DEFLATED
        assert (info.create_system, info.external_attr >> 16) == (3, 0o100644)


def test_two_creations_are_byte_identical(tmp_path: Path) -> None:
    create_package(SAMPLE_SPEC, tmp_path / "a")
    create_package(SAMPLE_SPEC, tmp_path / "b" / "nested")
    assert contents(tmp_path / "a") == contents(tmp_path / "b" / "nested")


def test_default_package_id_is_derived_from_case_id_and_case_hash(tmp_path: Path) -> None:
    spec = sample_spec()
    del spec["package_id"]
    first = create_package(spec, tmp_path / "a", base_dir=SAMPLE_DIR)
    assert first.package_id == f"pkg-bug-20-{first.case_sha256[:12]}"
    spec["hypotheses"][0]["statement"] = "Another wording."
    second = create_package(spec, tmp_path / "b", base_dir=SAMPLE_DIR)
    assert second.package_id != first.package_id
    assert re.fullmatch(r"pkg-bug-20-[0-9a-f]{12}", second.package_id)


def test_existing_zip_is_copied_byte_for_byte(tmp_path: Path) -> None:
    source = create_package(SAMPLE_SPEC, tmp_path / "first")
    spec = sample_spec()
    spec["attachments"][1].pop("directory")
    spec["attachments"][1]["zip"] = str(source.path / "attachments" / "db.zip")
    copy = create_package(spec, tmp_path / "second", base_dir=SAMPLE_DIR)
    assert (copy.path / "attachments" / "db.zip").read_bytes() == (
        source.path / "attachments" / "db.zip"
    ).read_bytes()
    assert copy.case_sha256 == source.case_sha256


def test_spec_document_paths_resolve_against_base_dir(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    assert create_error(sample_spec(), tmp_path / "x").details["reason"] == "directory not found"
    monkeypatch.chdir(SAMPLE_DIR)
    from_document = create_package(sample_spec(), tmp_path / "y")
    from_file = create_package(SAMPLE_SPEC, tmp_path / "z")
    assert from_document.case_sha256 == from_file.case_sha256


def test_members_without_metadata_get_an_empty_object(tmp_path: Path) -> None:
    spec = sample_spec()
    del spec["attachments"][1]["members"][0]["metadata"]
    package = create_package(spec, tmp_path / "out", base_dir=SAMPLE_DIR)
    assert package.context_entries["db-001"].metadata == {}


def test_an_empty_output_directory_is_used(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    assert create_package(SAMPLE_SPEC, tmp_path / "out").path == (tmp_path / "out").resolve()


# -- refusing to overwrite ---------------------------------------------------------------


def test_a_non_empty_output_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    assert create_error(SAMPLE_SPEC, tmp_path / "out").code == "package_exists"
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"
    assert_nothing_left(tmp_path, "out")


def test_an_existing_package_is_refused(tmp_path: Path) -> None:
    package = create_package(SAMPLE_SPEC, tmp_path / "out")
    before = file_states(package.path)
    assert create_error(SAMPLE_SPEC, tmp_path / "out").code == "package_exists"
    assert file_states(package.path) == before


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_file_or_symlink_at_the_output_path_is_refused(tmp_path: Path, kind: str) -> None:
    if kind == "file":
        (tmp_path / "out").write_text("x")
    else:
        (tmp_path / "target").mkdir()
        (tmp_path / "out").symlink_to(tmp_path / "target")
    assert create_error(SAMPLE_SPEC, tmp_path / "out").code == "package_exists"


# -- atomicity ------------------------------------------------------------------------


def test_a_missing_member_leaves_nothing_behind(tmp_path: Path) -> None:
    spec = sample_spec()
    spec["attachments"][1]["members"][1]["member"] = "quest_template.missing.json"
    err = create_error(spec, tmp_path / "out", base_dir=SAMPLE_DIR)
    assert err.code == "spec_invalid"
    assert err.details == {
        "reason": "member not found in the attachment",
        "pointer": "/attachments/1/members/1/member",
        "attachment_index": 1,
        "member_index": 1,
    }
    assert_nothing_left(tmp_path)


def test_a_failure_in_the_second_attachment_leaves_nothing(tmp_path: Path) -> None:
    spec = sample_spec()
    spec["attachments"][1]["directory"] = "no-such-folder"
    err = create_error(spec, tmp_path / "deep" / "out", base_dir=SAMPLE_DIR)
    assert (err.code, err.details["attachment_index"]) == ("spec_invalid", 1)
    assert_nothing_left(tmp_path / "deep")


def test_an_empty_output_directory_survives_a_failure(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    spec = sample_spec()
    spec["attachments"][0]["members"][0]["member"] = "src/none.cpp"
    create_error(spec, tmp_path / "out", base_dir=SAMPLE_DIR)
    assert_nothing_left(tmp_path, "out")
    assert list((tmp_path / "out").iterdir()) == []


# -- spec_invalid ------------------------------------------------------------------------


def bad_spec(tmp_path: Path, change: Any) -> CaseError:
    spec = sample_spec()
    change(spec)
    err = create_error(spec, tmp_path / "out", base_dir=SAMPLE_DIR)
    assert err.code == "spec_invalid"
    assert_nothing_left(tmp_path)
    return err


@pytest.mark.parametrize(
    ("change", "pointer"),
    [
        (lambda s: s.__setitem__("format", "viano-case"), "/format"),
        (lambda s: s.pop("phase"), "/phase"),
        (lambda s: s.__setitem__("case_id", "BUG 20"), "/case_id"),
        (lambda s: s.__setitem__("package_id", "bug-20"), "/package_id"),
        (lambda s: s["hypotheses"][0].__setitem__("id", "H01"), "/hypotheses/0/id"),
        (lambda s: s["attachments"][0].__setitem__("name", "../wowsrc.zip"), "/attachments/0/name"),
        (lambda s: s["attachments"][0].__setitem__("zip", "x.zip"), "/attachments/0"),
        (lambda s: s["attachments"][0].pop("directory"), "/attachments/0"),
        (
            lambda s: s["attachments"][0]["members"][0].__setitem__("role", "binary"),
            "/attachments/0/members/0/role",
        ),
        (lambda s: s["report"].__setitem__("title", ""), "/report/title"),
    ],
)
def test_schema_errors(tmp_path: Path, change: Any, pointer: str) -> None:
    err = bad_spec(tmp_path, change)
    assert err.details["reason"] == "does not match the schema"
    assert err.details["pointer"] == pointer


def test_floats_in_the_spec(tmp_path: Path) -> None:
    err = bad_spec(tmp_path, lambda s: s["report"]["metadata"].__setitem__("score", 0.5))
    assert err.details == {"reason": "floats are not allowed", "pointer": "/report/metadata/score"}


def test_duplicate_hypothesis_ids(tmp_path: Path) -> None:
    err = bad_spec(tmp_path, lambda s: s["hypotheses"][1].__setitem__("id", "H1"))
    assert err.details["pointer"] == "/hypotheses/1/id"


def test_duplicate_attachment_names(tmp_path: Path) -> None:
    err = bad_spec(tmp_path, lambda s: s["attachments"][1].__setitem__("name", "wowsrc.zip"))
    assert err.details["reason"] == "duplicate attachment name"


def test_duplicate_source_refs(tmp_path: Path) -> None:
    err = bad_spec(
        tmp_path, lambda s: s["attachments"][1]["members"][0].__setitem__("source_ref", "src-002")
    )
    assert err.details["reason"] == "duplicate source_ref"
    assert (err.details["attachment_index"], err.details["member_index"]) == (1, 0)


@pytest.mark.parametrize("member", ["/etc/passwd", "../x", "a//b", "src\\x.cpp"])
def test_unsafe_member_names(tmp_path: Path, member: str) -> None:
    err = bad_spec(
        tmp_path, lambda s: s["attachments"][0]["members"][0].__setitem__("member", member)
    )
    assert err.details["reason"] == "not a safe member name"


def test_a_directory_entry_is_not_a_member(tmp_path: Path) -> None:
    archive = tmp_path / "inputs" / "dirs.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("src/", b"")
        zf.writestr("src/a.cpp", b"int a;\n")
    spec = sample_spec()
    spec["attachments"] = [
        {
            "zip": str(archive),
            "name": "dirs.zip",
            "classification": "source_snapshot",
            "members": [{"member": "src", "source_ref": "s1", "role": "source_file"}],
        }
    ]
    err = create_error(spec, tmp_path / "out", base_dir=SAMPLE_DIR)
    assert err.details["reason"] == "member not found in the attachment"
    spec["attachments"][0]["members"][0]["member"] = "src/"
    err = create_error(spec, tmp_path / "out", base_dir=SAMPLE_DIR)
    assert err.details["reason"] in {"not a safe member name", "member is not a readable file"}
    spec["attachments"][0]["members"][0]["member"] = "src/a.cpp"
    assert "s1" in create_package(spec, tmp_path / "out").context_entries


def test_a_duplicate_zip_member_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "dup.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("a.txt", b"one")
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("a.txt", b"two")
    spec = sample_spec()
    spec["attachments"] = [
        {
            "zip": str(archive),
            "name": "dup.zip",
            "classification": "source_snapshot",
            "members": [{"member": "a.txt", "source_ref": "s1", "role": "source_file"}],
        }
    ]
    err = create_error(spec, tmp_path / "out")
    assert err.details["reason"] == "member is not a readable file"
    assert err.details["member_kind"] == "duplicate"


def test_a_file_that_is_not_a_zip(tmp_path: Path) -> None:
    (tmp_path / "fake.zip").write_bytes(b"not a zip at all")
    spec = sample_spec()
    spec["attachments"][0].pop("directory")
    spec["attachments"][0]["zip"] = str(tmp_path / "fake.zip")
    err = create_error(spec, tmp_path / "out")
    assert err.details["reason"] == "attachment is not a readable ZIP archive"
    assert err.details["cause"] == "zip_corrupt"
    assert_nothing_left(tmp_path, "fake.zip")


def test_a_missing_zip(tmp_path: Path) -> None:
    spec = sample_spec()
    spec["attachments"][0].pop("directory")
    spec["attachments"][0]["zip"] = "nowhere.zip"
    err = create_error(spec, tmp_path / "out", base_dir=tmp_path)
    assert (err.details["reason"], err.details["pointer"]) == (
        "zip file not found",
        "/attachments/0/zip",
    )


def test_a_directory_with_a_symlink_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "inputs"
    folder.mkdir()
    (folder / "a.cpp").write_text("int a;\n")
    (folder / "b.cpp").symlink_to("/etc/hostname")
    spec = sample_spec()
    spec["attachments"] = [
        {
            "directory": str(folder),
            "name": "src.zip",
            "classification": "source_snapshot",
            "members": [{"member": "a.cpp", "source_ref": "s1", "role": "source_file"}],
        }
    ]
    err = create_error(spec, tmp_path / "out")
    assert err.details["reason"] == "directory contains a symbolic link"
    assert_nothing_left(tmp_path, "inputs")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"format":"viano-case-spec","format":"viano-case-spec"}', "duplicate object key"),
        (b"[1, 2]", "spec must be a JSON object"),
        (b"{", "not valid JSON"),
    ],
)
def test_spec_files_are_parsed_strictly(tmp_path: Path, data: bytes, reason: str) -> None:
    (tmp_path / "spec.json").write_bytes(data)
    err = create_error(tmp_path / "spec.json", tmp_path / "out")
    assert (err.code, err.details["reason"]) == ("spec_invalid", reason)


def test_a_missing_spec_file(tmp_path: Path) -> None:
    err = create_error(tmp_path / "spec.json", tmp_path / "out")
    assert (err.code, err.details["reason"]) == ("spec_invalid", "spec file not found")


# -- the command line ----------------------------------------------------------------------


def test_cli_create_and_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pkg"
    assert main(["create", str(SAMPLE_SPEC), str(out)]) == 0
    printed = capsys.readouterr().out
    assert "pkg-bug-20" in printed
    assert str(out.resolve()) in printed
    assert main(["verify", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["package_id"] == "pkg-bug-20"
    assert summary["case_sha256"] == load_package(out).case_sha256


def test_cli_reports_the_error_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "x").write_text("x")
    # The exit code and the one JSON error line on stderr are those of `vba`.
    assert main(["create", str(SAMPLE_SPEC), str(tmp_path / "pkg")]) == 2
    assert json.loads(capsys.readouterr().err)["error"] == "package_exists"
    assert main(["verify", str(tmp_path / "pkg"), "--json"]) == 2
    assert json.loads(capsys.readouterr().err)["error"] == "manifest_invalid"


def test_cli_runs_as_a_module(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "viano_bug_analysis.case",
            "create",
            "--json",
            str(SAMPLE_SPEC),
            "p",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads(result.stdout)
    assert summary["path"] == str((tmp_path / "p").resolve())


def test_an_unwritable_destination_is_a_write_failure(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    err = create_error(SAMPLE_SPEC, tmp_path / "file" / "pkg")
    assert err.code == "package_write_failed"
    assert err.details["reason"] == "operating system error"
    assert_nothing_left(tmp_path, "file")
