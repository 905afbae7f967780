"""Capture v2 and CaptureStore: content addressing, append-only atomic writes, no secrets."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.project_research.research_fakes import (
    COMMIT,
    PASSWORD_MARKER,
    SNAPSHOT,
    URL,
    FakeDatabase,
    FakeGit,
    make_config,
)
from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.project_research import (
    Capture,
    CaptureError,
    CaptureStore,
    ProjectResearch,
)
from viano_bug_analysis.schemas import schema_validator

ROWS_QUERY = {
    "kind": "database.rows",
    "table": "creature_template",
    "columns": ["entry", "name"],
    "filters": [{"column": "name", "operator": "contains", "value": "Wolpertinger"}],
    "offset": 0,
    "limit": 10,
}
EMPTY_QUERY = {**ROWS_QUERY, "filters": [{"column": "name", "operator": "eq", "value": "Nope"}]}
SEARCH_QUERY = {
    "kind": "source.search",
    "text": "KilledMonsterCredit",
    "case_sensitive": True,
    "offset": 0,
    "limit": 20,
}


@pytest.fixture
def research(tmp_path: Path) -> ProjectResearch:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    return ProjectResearch(make_config(config_dir), git=FakeGit(), database=FakeDatabase())


@pytest.fixture
def package(tmp_path: Path) -> Path:
    path = tmp_path / "pkg"
    path.mkdir()
    return path


def stored_files(package: Path) -> list[Path]:
    return sorted(p for p in package.rglob("*") if p.is_file())


def test_capture_document(research: ProjectResearch) -> None:
    capture = research.capture(ROWS_QUERY)
    document = capture.document
    assert document["format"] == "viano-project-capture"
    assert document["format_version"] == 2
    assert document["schema"] == "project-result-v2"
    assert document["request"] == ROWS_QUERY
    assert document["origin"] == {
        "kind": "database",
        "database": "cata_world",
        "snapshot_id": SNAPSHOT,
    }
    assert document["result"]["query"] == ROWS_QUERY
    schema_validator("project-capture-v2").validate(dict(document))
    schema_validator("project-result-v2").validate(document["result"])
    assert capture.data == orjson.dumps(dict(document), option=orjson.OPT_SORT_KEYS)
    assert capture.sha256 == hashlib.sha256(capture.data).hexdigest()
    assert capture.request == ROWS_QUERY and capture.origin == document["origin"]
    assert capture.result == document["result"]


def test_git_capture_origin(research: ProjectResearch) -> None:
    capture = research.capture(SEARCH_QUERY)
    assert capture.origin == {"kind": "git", "url": URL, "commit": COMMIT}
    assert capture.result["result"]["matches"][0]["sha256"]
    assert capture.result["result"]["matches"][0]["blob"]
    assert capture.result["result"]["matches"][0]["line"] == 1


def test_the_same_answer_is_the_same_capture(research: ProjectResearch) -> None:
    assert research.capture(ROWS_QUERY).sha256 == research.capture(ROWS_QUERY).sha256
    assert research.capture(ROWS_QUERY).sha256 != research.capture(EMPTY_QUERY).sha256


def test_put_writes_the_compact_bytes_under_their_hash(
    research: ProjectResearch, package: Path
) -> None:
    capture = research.capture(ROWS_QUERY)
    sha, is_new = CaptureStore(package).put(capture)
    assert (sha, is_new) == (capture.sha256, True)
    path = package / "analysis" / "evidence" / "captures" / f"{sha}.json"
    assert path.read_bytes() == capture.data
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
    assert stored_files(package) == [path]


def test_identical_capture_is_not_new(research: ProjectResearch, package: Path) -> None:
    store = CaptureStore(package)
    first = store.put(research.capture(ROWS_QUERY))
    path = store.path_of(first[0])
    before = path.stat()
    second = store.put(research.capture(ROWS_QUERY))
    assert first[1] is True and second == (first[0], False)
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert len(stored_files(package)) == 1


def test_get_and_list_read_back_and_verify(research: ProjectResearch, package: Path) -> None:
    store = CaptureStore(package)
    assert store.list() == []
    a = research.capture(ROWS_QUERY)
    b = research.capture(SEARCH_QUERY)
    store.put(a)
    store.put(b)
    assert store.get(a.sha256) == a
    assert [c.sha256 for c in store.list()] == sorted([a.sha256, b.sha256])
    assert store.list()[0].document == (a if a.sha256 < b.sha256 else b).document


def test_empty_results_keep_request_and_coverage(research: ProjectResearch, package: Path) -> None:
    capture = research.capture(EMPTY_QUERY)
    CaptureStore(package).put(capture)
    stored = CaptureStore(package).get(capture.sha256)
    assert stored.request == EMPTY_QUERY
    assert stored.result["result"]["rows"] == []
    assert stored.result["coverage"]["complete_filtered_rows"] is True
    assert stored.result["coverage"]["returned"] == 0


def test_conflict_under_the_same_name(research: ProjectResearch, package: Path) -> None:
    store = CaptureStore(package)
    capture = research.capture(ROWS_QUERY)
    path = store.path_of(capture.sha256)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"tampered")
    with pytest.raises(CaptureError) as info:
        store.put(capture)
    assert info.value.code == "capture_conflict"
    assert path.read_bytes() == b"tampered"  # never replaced
    with pytest.raises(CaptureError) as info:
        store.get(capture.sha256)
    assert info.value.code == "capture_corrupt"


def test_a_changed_file_is_detected_on_read(research: ProjectResearch, package: Path) -> None:
    store = CaptureStore(package)
    sha, _ = store.put(research.capture(ROWS_QUERY))
    path = store.path_of(sha)
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b"Wolpertinger", b"Wolpertingex"))
    with pytest.raises(CaptureError) as info:
        store.list()
    assert info.value.code == "capture_corrupt"


def test_non_compact_or_invalid_stored_bytes_are_corrupt() -> None:
    pretty = orjson.dumps({"format": "viano-project-capture"}, option=orjson.OPT_INDENT_2)
    for data in (b"not json", pretty, b"[]", orjson.dumps({"format": "x"})):
        with pytest.raises(CaptureError) as info:
            Capture.from_bytes(data, hashlib.sha256(data).hexdigest())
        assert info.value.code == "capture_corrupt"


def test_crash_between_temp_write_and_link(
    research: ProjectResearch, package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CaptureStore(package)
    capture = research.capture(ROWS_QUERY)

    class Crash(BaseException):
        pass

    def crash(*args: Any, **kwargs: Any) -> None:
        raise Crash

    monkeypatch.setattr(os, "link", crash)
    with pytest.raises(Crash):
        store.put(capture)
    monkeypatch.undo()
    assert not store.path_of(capture.sha256).exists()
    assert store.list() == []
    assert store.put(capture) == (capture.sha256, True)
    assert store.get(capture.sha256) == capture


def test_hard_crash_leftovers_are_ignored(research: ProjectResearch, package: Path) -> None:
    # What a killed process leaves behind: a half-written temporary file.
    capture = research.capture(ROWS_QUERY)
    directory = package / "analysis" / "evidence" / "captures"
    directory.mkdir(parents=True)
    leftover = directory / f".{capture.sha256}.0123456789abcdef.tmp"
    leftover.write_bytes(capture.data[:10])
    assert CaptureStore(package).list() == []
    assert CaptureStore(package).put(capture) == (capture.sha256, True)
    assert CaptureStore(package).get(capture.sha256).data == capture.data
    assert leftover.read_bytes() == capture.data[:10]  # another writer's file is not touched


def test_the_write_is_synced_and_linked(
    research: ProjectResearch, package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_fsync, real_link = os.fsync, os.link

    def fsync(fd: int) -> None:
        events.append("fsync")
        real_fsync(fd)

    def link(src: Any, dst: Any, **kwargs: Any) -> None:
        events.append("link")
        real_link(src, dst, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "link", link)
    CaptureStore(package).put(research.capture(ROWS_QUERY))
    # directories created and synced, then: file fsync, link, directory fsync
    assert events[-3:] == ["fsync", "link", "fsync"]
    assert not [p for p in package.rglob("*.tmp")]


def test_store_refuses_bad_names_and_missing_packages(tmp_path: Path) -> None:
    with pytest.raises(CaptureError) as info:
        CaptureStore(tmp_path).get("../../etc/passwd")
    assert info.value.code == "capture_name_invalid"
    with pytest.raises(CaptureError) as info:
        CaptureStore(tmp_path).get("A" * 64)
    assert info.value.code == "capture_name_invalid"
    with pytest.raises(CaptureError) as info:
        CaptureStore(tmp_path).get("a" * 64)
    assert info.value.code == "capture_not_found"
    with pytest.raises(CaptureError) as info:
        CaptureStore(tmp_path / "missing").list()
    assert info.value.code == "package_missing"


def test_store_refuses_a_symlinked_evidence_directory(
    research: ProjectResearch, package: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (package / "analysis").mkdir()
    (package / "analysis" / "evidence").symlink_to(outside)
    with pytest.raises(PackageFileError) as info:
        CaptureStore(package).put(research.capture(ROWS_QUERY))
    assert info.value.code == "package_path_outside"
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("exists", [False, True])
def test_store_never_writes_or_reads_through_a_symlinked_capture_file(
    research: ProjectResearch, package: Path, tmp_path: Path, exists: bool
) -> None:
    capture = research.capture(ROWS_QUERY)
    target = tmp_path / "outside.json"
    if exists:
        target.write_bytes(capture.data)
    link = CaptureStore(package).path_of(capture.sha256)
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    for action in (lambda: CaptureStore(package).put(capture), CaptureStore(package).list):
        with pytest.raises(PackageFileError) as info:
            action()
        assert info.value.code == "package_path_outside"
        assert info.value.details["path"] == f"analysis/evidence/captures/{capture.sha256}.json"
    assert target.exists() is exists


def test_capture_document_is_checked(research: ProjectResearch) -> None:
    good = dict(research.capture(ROWS_QUERY).document)
    for bad in (
        {**good, "extra": 1},
        {**good, "format_version": 3},
        {**good, "format_version": 1},  # a version 1 capture holds a version 1 result
        {**good, "schema": "project-result-v1"},
        {**good, "request": {**ROWS_QUERY, "limit": 11}},  # differs from the result's query
        {**good, "origin": {"kind": "git", "url": URL, "commit": COMMIT}},
        {**good, "result": {**good["result"], "coverage": {}}},
        {
            **good,
            "request": {**ROWS_QUERY, "sql": "x"},
            "result": {**good["result"], "query": {**ROWS_QUERY, "sql": "x"}},
        },
    ):
        with pytest.raises(CaptureError) as info:
            Capture.from_document(bad)
        assert info.value.code == "capture_invalid"


def test_credentials_never_reach_a_capture(
    tmp_path: Path, package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A marker password goes all the way to the (fake) provider, never to the case."""
    import viano_bug_analysis.project_research.mariadb_source as mariadb_source

    made: list[FakeDatabase] = []

    def database(**settings: Any) -> FakeDatabase:
        made.append(FakeDatabase(**settings))
        return made[-1]

    monkeypatch.setattr(mariadb_source, "MariaDbSource", database)
    monkeypatch.setenv("VBA_FAKE_DB_PASSWORD", PASSWORD_MARKER)
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    config = make_config(config_dir)
    research = ProjectResearch(config, git=FakeGit())
    store = CaptureStore(package)
    queries: list[dict[str, Any]] = [
        ROWS_QUERY,
        EMPTY_QUERY,
        {"kind": "database.count", "table": "creature_template", "filters": []},
        {"kind": "database.schema", "table": "creature_template"},
        {"kind": "database.tables", "offset": 0, "limit": 10},
        SEARCH_QUERY,
    ]
    for query in queries:
        store.put(research.capture(query))
    assert made and made[0].settings["password"] == PASSWORD_MARKER  # it was really read
    marker = PASSWORD_MARKER.encode()
    written = stored_files(package)
    assert len(written) == len(queries)
    for path in written:
        assert marker not in path.read_bytes()
    assert PASSWORD_MARKER not in repr(config) and PASSWORD_MARKER not in repr(research.config)
