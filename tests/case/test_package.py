"""load_package: every check with its stable code, on the sample package."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.case import (
    CASE_REL,
    build_sample,
    case_file,
    edit_case,
    edit_manifest,
    file_states,
    write_case_bytes,
)
from viano_bug_analysis.case import canonical_bytes, load_package, sha256_hex
from viano_bug_analysis.case.package import AttachmentRef, ContextEntry
from viano_bug_analysis.errors import CaseError, VbaError


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    return build_sample(tmp_path).path


def load_error(path: Path) -> CaseError:
    with pytest.raises(CaseError) as info:
        load_package(path)
    assert isinstance(info.value, VbaError)
    return info.value


# -- the happy path ---------------------------------------------------------------------


def test_sample_package_loads_with_its_convenience_views(pkg: Path) -> None:
    package = load_package(pkg)
    assert package.path == Path(os.path.realpath(pkg))
    assert (package.package_id, package.case_id) == ("pkg-bug-20", "BUG-20")
    assert (package.analysis_revision, package.generation) == (1, 1)
    assert package.phase == "investigation"
    assert package.status == {"state": "active"}
    assert package.hypothesis_ids == frozenset({"H1", "H2"})
    assert package.case_sha256 == sha256_hex(case_file(pkg).read_bytes())
    assert package.case == json.loads(case_file(pkg).read_bytes())
    assert list(package.context_entries) == ["src-001", "src-002", "db-001", "db-002"]
    entry = package.context_entries["src-001"]
    assert isinstance(entry, ContextEntry)
    assert entry.kind == "source"
    assert entry.role == "source_file"
    assert entry.attachment == "attachments/wowsrc.zip"
    assert entry.member == "src/server/scripts/EasternKingdoms/zone_wolpertinger_glade.cpp"
    assert entry.metadata == {"server_path": f"/srv/vcore/{entry.member}"}
    assert entry.member_ref.name == entry.member
    assert (entry.member_ref.sha256, entry.member_ref.size) == (entry.sha256, entry.size)
    assert [package.context_entries[r].role for r in ("db-001", "db-002")] == [
        "database_snapshot",
        "schema_descriptor",
    ]
    assert package.context_entries["db-002"].kind == "database"
    wowsrc = package.attachments["attachments/wowsrc.zip"]
    assert isinstance(wowsrc, AttachmentRef)
    assert wowsrc.size == (pkg / "attachments" / "wowsrc.zip").stat().st_size
    assert package.attachment_path("attachments/db.zip") == package.path / "attachments" / "db.zip"


def test_loading_changes_nothing(pkg: Path) -> None:
    before = file_states(pkg)
    listing = sorted(p.name for p in pkg.rglob("*"))
    for _ in range(2):
        load_package(pkg)
    assert file_states(pkg) == before
    assert sorted(p.name for p in pkg.rglob("*")) == listing


def test_a_blocked_case_loads_and_reports_its_status(pkg: Path) -> None:
    blocked = {"state": "blocked", "code": "RESEARCH_UNAVAILABLE", "resume_state": "investigation"}
    edit_manifest(pkg, lambda m: m.__setitem__("status", blocked))
    assert load_package(pkg).status == blocked


def test_manifest_layout_is_not_enforced(pkg: Path) -> None:
    manifest = json.loads((pkg / "manifest.json").read_bytes())
    (pkg / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    assert load_package(pkg).package_id == "pkg-bug-20"


def test_a_symlinked_package_directory_resolves(pkg: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(pkg)
    assert load_package(link).path == pkg.resolve()


# -- manifest_invalid --------------------------------------------------------------------


def test_missing_package_directory(tmp_path: Path) -> None:
    err = load_error(tmp_path / "nothing")
    assert err.code == "manifest_invalid"
    assert err.details["reason"] == "package directory not found"


def test_missing_manifest(pkg: Path) -> None:
    (pkg / "manifest.json").unlink()
    err = load_error(pkg)
    assert (err.code, err.details["reason"]) == ("manifest_invalid", "file not found")


def test_manifest_that_is_a_symlink(pkg: Path) -> None:
    (pkg / "manifest.json").rename(pkg / "real.json")
    (pkg / "manifest.json").symlink_to("real.json")
    assert load_error(pkg).code == "manifest_invalid"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"{not json", "not valid JSON"),
        (b"", "not valid JSON"),
        (b"\xff\xfe{}", "not valid UTF-8"),
        (b"[NaN]", "NaN or Infinity is not JSON"),
    ],
)
def test_manifest_that_is_not_json(pkg: Path, data: bytes, reason: str) -> None:
    (pkg / "manifest.json").write_bytes(data)
    err = load_error(pkg)
    assert (err.code, err.details["reason"]) == ("manifest_invalid", reason)


def test_manifest_with_duplicate_keys(pkg: Path) -> None:
    data = (pkg / "manifest.json").read_bytes()
    (pkg / "manifest.json").write_bytes(data[:-1] + b',"phase":"intake"}')
    err = load_error(pkg)
    assert (err.code, err.details["reason"]) == ("manifest_invalid", "duplicate object key")


def test_manifest_with_a_float(pkg: Path) -> None:
    edit = (pkg / "manifest.json").read_bytes().replace(b'"generation":1', b'"generation":1.0')
    (pkg / "manifest.json").write_bytes(edit)
    err = load_error(pkg)
    assert err.code == "manifest_invalid"
    assert err.details["pointer"] == "/generation"
    assert err.details["reason"] == "floats are not allowed"


@pytest.mark.parametrize(
    ("change", "pointer", "keyword"),
    [
        (lambda m: m.__setitem__("phase", "done"), "/phase", "enum"),
        (lambda m: m.__setitem__("format_version", 2), "/format_version", "const"),
        (lambda m: m.__setitem__("extra", 1), "/extra", "additionalProperties"),
        (lambda m: m.pop("generation"), "/generation", "required"),
        (lambda m: m["case"].__setitem__("sha256", "ABC"), "/case/sha256", "pattern"),
        (lambda m: m["attachments"][1].__setitem__("size", -1), "/attachments/1/size", "minimum"),
        (lambda m: m.__setitem__("package_id", "pkg-bug-20\n"), "/package_id", "pattern"),
        (lambda m: m.__setitem__("analysis_revision", True), "/analysis_revision", "type"),
    ],
)
def test_manifest_schema_errors_name_the_place(
    pkg: Path, change: Any, pointer: str, keyword: str
) -> None:
    edit_manifest(pkg, change)
    err = load_error(pkg)
    assert err.code == "manifest_invalid"
    assert (err.details["pointer"], err.details["keyword"]) == (pointer, keyword)


def test_missing_manifest_property_is_named(pkg: Path) -> None:
    edit_manifest(pkg, lambda m: m.pop("generation"))
    assert load_error(pkg).details["property"] == "generation"


def test_blocked_status_needs_code_and_resume_state(pkg: Path) -> None:
    edit_manifest(pkg, lambda m: m.__setitem__("status", {"state": "blocked"}))
    err = load_error(pkg)
    assert (err.code, err.details["pointer"]) == ("manifest_invalid", "/status/code")


def test_duplicate_attachment_path(pkg: Path) -> None:
    edit_manifest(pkg, lambda m: m["attachments"].append(dict(m["attachments"][0])))
    err = load_error(pkg)
    assert err.code == "manifest_invalid"
    assert (err.details["reason"], err.details["pointer"]) == (
        "duplicate attachment path",
        "/attachments/2/path",
    )


@pytest.mark.parametrize(
    ("pointer", "value"),
    [
        ("/case/path", "case.txt"),
        ("/case/path", "manifest.json"),
        ("/attachments/0/path", "wowsrc.zip"),
        ("/attachments/0/path", "attachments/sub/wowsrc.zip"),
        ("/attachments/0/path", "attachments/wowsrc.tar"),
    ],
)
def test_paths_outside_the_layout(pkg: Path, pointer: str, value: str) -> None:
    def change(m: dict[str, Any]) -> None:
        if pointer == "/case/path":
            m["case"]["path"] = value
        else:
            m["attachments"][0]["path"] = value

    edit_manifest(pkg, change)
    err = load_error(pkg)
    assert (err.code, err.details["pointer"]) == ("manifest_invalid", pointer)


# -- manifest_path_outside_package -------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("../x.json", "path contains a '..' segment"),
        ("/etc/passwd", "absolute path"),
        ("C:/case.json", "absolute path"),
        ("attachments/../case.json", "path contains a '..' segment"),
        ("attachments\\..\\case.json", "backslash or NUL in path"),
        ("./case.json", "path is not normalized"),
        ("sub//case.json", "path is not normalized"),
        ("case.json\x00", "backslash or NUL in path"),
    ],
)
def test_case_path_must_stay_inside(pkg: Path, value: str, reason: str) -> None:
    edit_manifest(pkg, lambda m: m["case"].__setitem__("path", value))
    err = load_error(pkg)
    assert err.code == "manifest_path_outside_package"
    assert err.details == {"file": "manifest.json", "pointer": "/case/path", "reason": reason}
    assert value not in err.message


def test_case_path_through_a_symlink_to_outside(pkg: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_bytes(case_file(pkg).read_bytes())
    (pkg / "evil.json").symlink_to(outside)
    edit_manifest(pkg, lambda m: m["case"].__setitem__("path", "evil.json"))
    err = load_error(pkg)
    assert err.code == "manifest_path_outside_package"
    assert err.details["reason"] == "path is or passes through a symbolic link"


def test_a_manifest_path_leaving_the_package_is_a_damaged_package_exit_5(
    pkg: Path, tmp_path: Path
) -> None:
    # As package_path_outside: the package's own record points outside it.
    import subprocess
    import sys

    outside = tmp_path / "outside.json"
    outside.write_bytes(case_file(pkg).read_bytes())
    (pkg / "evil.json").symlink_to(outside)
    edit_manifest(pkg, lambda m: m["case"].__setitem__("path", "evil.json"))
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "case", "verify", str(pkg)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 5, done.stderr
    assert '"manifest_path_outside_package"' in done.stderr


def test_case_path_that_is_a_symlink_inside_the_package(pkg: Path) -> None:
    case = case_file(pkg)
    case.rename(case.with_name("real.json"))
    case.symlink_to("real.json")
    assert load_error(pkg).code == "manifest_path_outside_package"


def test_symlinked_directory_on_the_way(pkg: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (pkg / "attachments").rename(elsewhere)
    (pkg / "attachments").symlink_to(elsewhere)
    err = load_error(pkg)
    assert (err.code, err.details["pointer"]) == (
        "manifest_path_outside_package",
        "/attachments/0/path",
    )


@pytest.mark.parametrize("value", ["../wowsrc.zip", "/tmp/wowsrc.zip", "attachments/../../w.zip"])
def test_attachment_paths_must_stay_inside(pkg: Path, value: str) -> None:
    edit_manifest(pkg, lambda m: m["attachments"][0].__setitem__("path", value))
    err = load_error(pkg)
    assert (err.code, err.details["pointer"]) == (
        "manifest_path_outside_package",
        "/attachments/0/path",
    )


# -- case.json ------------------------------------------------------------------------


def test_missing_case(pkg: Path) -> None:
    case_file(pkg).unlink()
    err = load_error(pkg)
    assert err.code == "case_missing"
    assert err.details == {"file": CASE_REL, "reason": "file not found"}


def test_case_that_is_a_directory(pkg: Path) -> None:
    case_file(pkg).unlink()
    case_file(pkg).mkdir()
    assert load_error(pkg).code == "case_missing"


def test_case_edited_by_one_byte_is_stale(pkg: Path) -> None:
    data = bytearray(case_file(pkg).read_bytes())
    index = data.index(b"Wolpertinger")
    data[index] = ord("w")
    case_file(pkg).write_bytes(bytes(data))
    err = load_error(pkg)
    assert err.code == "case_stale"
    assert err.details == {"file": CASE_REL}


def test_case_reformatted_is_stale_first(pkg: Path) -> None:
    case = json.loads(case_file(pkg).read_bytes())
    case_file(pkg).write_text(json.dumps(case, indent=1))
    assert load_error(pkg).code == "case_stale"


@pytest.mark.parametrize(
    "reformat",
    [
        lambda c: json.dumps(c, indent=1, sort_keys=True, ensure_ascii=False).encode(),
        lambda c: json.dumps(
            dict(reversed(c.items())), separators=(",", ":"), ensure_ascii=False
        ).encode(),
        lambda c: json.dumps(c, sort_keys=True, separators=(",", ":")).encode(),  # ASCII escapes
        lambda c: canonical_bytes(c) + b"\n",
        lambda c: b"\xef\xbb\xbf" + canonical_bytes(c),
    ],
    ids=["indented", "unsorted", "ascii-escaped", "trailing-newline", "bom"],
)
def test_non_canonical_case_with_a_fresh_hash(pkg: Path, reformat: Any) -> None:
    case = json.loads(case_file(pkg).read_bytes())
    case["report"]["text"] = "Ünïcode → text"
    write_case_bytes(pkg, reformat(case))
    err = load_error(pkg)
    assert err.code in {"case_not_canonical", "case_invalid"}
    if err.code == "case_invalid":  # a BOM is not JSON at all
        assert err.details["reason"] == "starts with a byte order mark"


def test_reformatted_case_is_not_canonical(pkg: Path) -> None:
    case = json.loads(case_file(pkg).read_bytes())
    write_case_bytes(pkg, json.dumps(case, indent=1, sort_keys=True).encode())
    err = load_error(pkg)
    assert err.code == "case_not_canonical"
    assert err.details["reason"] == "bytes differ from the canonical form"


def test_case_with_a_float_is_not_canonical(pkg: Path) -> None:
    data = case_file(pkg).read_bytes().replace(b'"sample":true', b'"sample":1.5')
    write_case_bytes(pkg, data)
    err = load_error(pkg)
    assert err.code == "case_not_canonical"
    assert err.details["pointer"] == "/report/metadata/sample"


def test_case_with_an_unsafe_integer_is_not_canonical(pkg: Path) -> None:
    data = case_file(pkg).read_bytes().replace(b'"sample":true', b'"sample":9007199254740993')
    write_case_bytes(pkg, data)
    assert load_error(pkg).code == "case_not_canonical"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"format":"viano-case","format":"viano-case"}', "duplicate object key"),
        (b"{", "not valid JSON"),
        (b'{"a":"\xc3"}', "not valid UTF-8"),
    ],
)
def test_case_that_is_not_json(pkg: Path, data: bytes, reason: str) -> None:
    write_case_bytes(pkg, data)
    err = load_error(pkg)
    assert (err.code, err.details["reason"]) == ("case_invalid", reason)


@pytest.mark.parametrize(
    ("change", "pointer"),
    [
        (lambda c: c["hypotheses"][0].__setitem__("id", "h1"), "/hypotheses/0/id"),
        (lambda c: c["hypotheses"][1].__setitem__("id", "H0"), "/hypotheses/1/id"),
        (lambda c: c["hypotheses"][0].__setitem__("id", "H1\n"), "/hypotheses/0/id"),
        (lambda c: c["source_context"][0].__setitem__("role", "schema_descriptor"), None),
        (lambda c: c["database_context"][0].__setitem__("role", "source_file"), None),
        (lambda c: c["source_context"][1].__setitem__("source_ref", "-bad"), None),
        (lambda c: c["report"].pop("metadata"), "/report/metadata"),
        (lambda c: c.__setitem__("format", "viano-case-package"), "/format"),
        (lambda c: c["inputs"][0].__setitem__("classification", "Source Snapshot"), None),
        (lambda c: c["source_context"][0].__setitem__("extra", 1), "/source_context/0/extra"),
    ],
)
def test_case_schema_errors(pkg: Path, change: Any, pointer: str | None) -> None:
    edit_case(pkg, change)
    err = load_error(pkg)
    assert err.code == "case_invalid"
    assert err.details["reason"] == "does not match the schema"
    if pointer is not None:
        assert err.details["pointer"] == pointer


@pytest.mark.parametrize(("field", "value"), [("case_id", "BUG-21"), ("analysis_revision", 2)])
def test_case_identity_must_match_the_manifest(pkg: Path, field: str, value: Any) -> None:
    edit_case(pkg, lambda c: c.__setitem__(field, value))
    err = load_error(pkg)
    assert err.code == "case_identity_mismatch"
    assert err.details == {"file": CASE_REL, "field": field}


def test_duplicate_hypothesis_id(pkg: Path) -> None:
    edit_case(pkg, lambda c: c["hypotheses"][1].__setitem__("id", "H1"))
    err = load_error(pkg)
    assert (err.code, err.details["pointer"]) == ("case_invalid", "/hypotheses/1/id")


def test_duplicate_source_ref_across_both_lists(pkg: Path) -> None:
    edit_case(pkg, lambda c: c["database_context"][0].__setitem__("source_ref", "src-001"))
    err = load_error(pkg)
    assert err.code == "case_invalid"
    assert err.details["pointer"] == "/database_context/0/source_ref"
    assert err.details["reason"] == "duplicate source_ref"


def test_context_attachment_not_in_inputs(pkg: Path) -> None:
    def change(case: dict[str, Any]) -> None:
        case["inputs"].pop()  # db.zip leaves the inventory ...
        case["database_context"][0]["attachment"] = "attachments/db.zip"

    edit_case(pkg, change)
    edit_manifest(pkg, lambda m: m["attachments"].pop())  # ... and the manifest
    (pkg / "attachments" / "db.zip").unlink()
    err = load_error(pkg)
    assert err.code == "case_invalid"
    assert err.details["pointer"] == "/database_context/0/attachment"


def test_context_attachment_unknown_everywhere(pkg: Path) -> None:
    edit_case(pkg, lambda c: c["source_context"][0].__setitem__("attachment", "attachments/x.zip"))
    err = load_error(pkg)
    assert (err.code, err.details["reason"]) == (
        "case_invalid",
        "attachment is not listed in inputs",
    )


def test_input_not_declared_by_the_manifest(pkg: Path) -> None:
    edit_case(pkg, lambda c: c["inputs"][1].__setitem__("attachment", "attachments/other.zip"))
    err = load_error(pkg)
    assert err.code == "case_invalid"
    assert err.details["reason"] == "input attachment is not declared by the manifest"
    assert err.details["pointer"] == "/inputs/1/attachment"


def test_manifest_attachment_missing_from_inputs(pkg: Path) -> None:
    def change(case: dict[str, Any]) -> None:
        case["inputs"].pop()
        case["database_context"].clear()

    edit_case(pkg, change)
    err = load_error(pkg)
    assert err.code == "case_invalid"
    assert err.details["reason"] == "manifest attachment missing from inputs"
    assert err.details["manifest_pointer"] == "/attachments/1"


def test_input_hash_must_agree_with_the_manifest(pkg: Path) -> None:
    edit_case(pkg, lambda c: c["inputs"][0].__setitem__("sha256", "0" * 64))
    err = load_error(pkg)
    assert (err.code, err.details["pointer"]) == ("case_invalid", "/inputs/0")


def test_input_listed_twice(pkg: Path) -> None:
    edit_case(pkg, lambda c: c["inputs"].append(dict(c["inputs"][0])))
    assert load_error(pkg).details["reason"] == "attachment listed twice in inputs"


@pytest.mark.parametrize("member", ["/abs/x.cpp", "../x.cpp", "a//b.cpp", "a\\b.cpp", "./x"])
def test_unsafe_member_names(pkg: Path, member: str) -> None:
    edit_case(pkg, lambda c: c["source_context"][0].__setitem__("member", member))
    err = load_error(pkg)
    assert (err.code, err.details["pointer"]) == ("case_invalid", "/source_context/0/member")


def test_same_member_with_two_different_hashes(pkg: Path) -> None:
    def change(case: dict[str, Any]) -> None:
        twin = dict(case["source_context"][0], source_ref="src-009", sha256="1" * 64)
        case["source_context"].append(twin)

    edit_case(pkg, change)
    err = load_error(pkg)
    assert (err.code, err.details["pointer"]) == ("case_invalid", "/source_context/2")


def test_same_member_under_two_source_refs_is_fine(pkg: Path) -> None:
    edit_case(
        pkg,
        lambda c: c["source_context"].append(dict(c["source_context"][0], source_ref="src-009")),
    )
    assert "src-009" in load_package(pkg).context_entries


def test_no_hypotheses_is_a_valid_intake_case(pkg: Path) -> None:
    edit_case(pkg, lambda c: c["hypotheses"].clear())
    edit_manifest(pkg, lambda m: m.__setitem__("phase", "intake"))
    assert load_package(pkg).hypothesis_ids == frozenset()


# -- attachments at load time ---------------------------------------------------------


def test_missing_attachment(pkg: Path) -> None:
    (pkg / "attachments" / "db.zip").unlink()
    err = load_error(pkg)
    assert err.code == "attachment_missing"
    assert err.details == {"attachment": "attachments/db.zip", "reason": "file not found"}


def test_attachment_that_is_a_directory(pkg: Path) -> None:
    (pkg / "attachments" / "db.zip").unlink()
    (pkg / "attachments" / "db.zip").mkdir()
    assert load_error(pkg).code == "attachment_missing"


def test_attachment_with_another_size(pkg: Path) -> None:
    with open(pkg / "attachments" / "db.zip", "ab") as handle:
        handle.write(b"\0")
    err = load_error(pkg)
    assert err.code == "attachment_mismatch"
    assert err.details["reason"] == "size differs from the manifest"


# -- diagnostics carry no content -------------------------------------------------------


def test_errors_do_not_quote_values(pkg: Path) -> None:
    secret = "TOPSECRET-ROW-VALUE"
    edit_case(pkg, lambda c: c["hypotheses"][0].__setitem__("id", secret))
    err = load_error(pkg)
    assert secret not in err.message
    assert secret not in repr(err.details)
    edit_manifest(pkg, lambda m: m.__setitem__("phase", secret))
    err = load_error(pkg)
    assert secret not in err.message
    assert secret not in repr(err.details)
