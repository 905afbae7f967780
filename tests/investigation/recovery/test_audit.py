"""The append-only LLM call records: atomic, never overwritten, strictly read back."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.investigation.recovery import (
    CALLS_DIR,
    CallRecordError,
    CallRecordStore,
    canonical_json,
)
from viano_bug_analysis.investigation.recovery.errors import (
    PACKAGE_MISSING,
    RECORD_CORRUPT,
    RECORD_INVALID,
    RECORD_NOT_FOUND,
)
from viano_bug_analysis.jsonio import canonical_bytes
from viano_bug_analysis.schemas import load_schema

SECRET = "raw-model-text-8c1d"


def fields(text: str = "{}", **changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "call": "investigation",
        "prompt_id": "investigation_project_v1",
        "response_recovery_version": 1,
        "response": {
            "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
            "size_bytes": len(text.encode("utf-8", "surrogatepass")),
            "text": text,
        },
        "normalized_response": {},
        "applied_rules": [{"rule": "strip_outer_fence", "path": ""}],
        "refusals": [{"reason": "filter_unknown_operator", "path": "/next/arguments/filters/0"}],
        "repair": None,
        "outcome": {
            "status": "rejected",
            "reason": "syntax_error",
            "violations": ["syntax_error"],
            # The safe parser diagnostics are part of the record format.
            "parse_error": {"code": "syntax_error", "path": "", "offset": 7},
            "hint": None,
            "repair_plan": None,
            "rejected_repair": None,
        },
    }
    record.update(changes)
    return record


def test_records_are_numbered_and_named_by_their_hash(tmp_path: Path) -> None:
    store = CallRecordStore(tmp_path)
    first = store.append(fields("one"))
    second = store.append(fields("two ä \U0001f600"))  # non-ASCII survives, as UTF-8
    assert (first.seq, second.seq) == (1, 2)
    for record in (first, second):
        path = tmp_path / CALLS_DIR / f"{record.seq:08d}-{record.sha256}.json"
        data = path.read_bytes()
        assert hashlib.sha256(data).hexdigest() == record.sha256
        assert data == canonical_json(record.document) == canonical_bytes(record.document)
    assert "two ä \U0001f600".encode() in data
    assert second.document["response"]["text"] == "two ä \U0001f600"
    assert [r.document for r in CallRecordStore(tmp_path).list()] == [
        first.document,
        second.document,
    ]
    assert store.get(2) == second


def test_the_schema_is_bundled() -> None:
    assert load_schema("llm-call-record-v1")["title"] == "llm-call-record-v1"


def test_an_empty_package_has_no_records(tmp_path: Path) -> None:
    assert CallRecordStore(tmp_path).list() == []
    with pytest.raises(CallRecordError) as raised:
        CallRecordStore(tmp_path).get(1)
    assert raised.value.code == RECORD_NOT_FOUND


@pytest.mark.parametrize(
    "change",
    [
        {"seq": 5},
        {"format": "x"},
        {"call": "chat"},
        {"response_recovery_version": 2},
        {"applied_rules": [{"rule": "translate_like", "path": ""}]},
        {"response": {"sha256": "x", "size_bytes": 1, "text": None}},
        {"headers": {"x-request-id": "1"}},  # no HTTP headers or bodies, ever
        {"http_body": "..."},
    ],
)
def test_invalid_records_are_refused_before_writing(tmp_path: Path, change: dict[str, Any]) -> None:
    store = CallRecordStore(tmp_path)
    with pytest.raises(CallRecordError) as raised:
        store.append(fields(SECRET, **change))
    assert raised.value.code == RECORD_INVALID
    assert SECRET not in str(raised.value) and SECRET not in repr(raised.value)
    assert store.list() == []


def test_the_rejected_repair_holds_either_a_patch_or_the_text(tmp_path: Path) -> None:
    rejected = {
        "version": 1,
        "reason": "reply_not_json",
        "violations": ["reply_not_json"],
        "sha256": "a" * 64,
        "size_bytes": 3,
        "patch": {"path": "/evidence", "replacement": []},
        "original_text": "x",
    }
    record = fields()
    record["outcome"] = {**record["outcome"], "rejected_repair": rejected}
    with pytest.raises(CallRecordError):
        CallRecordStore(tmp_path).append(record)


def corrupt(store: CallRecordStore, change: Any) -> None:
    [path] = sorted(store.directory.glob("00000001-*.json"))
    change(path)


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p.write_bytes(p.read_bytes().replace(b"one", b"two")),  # hash mismatch
        lambda p: p.rename(p.with_name("00000001-" + "0" * 64 + ".json")),
        lambda p: p.unlink(),  # a gap: records 2 and 3 without 1
    ],
)
def test_tampering_is_detected_on_read(tmp_path: Path, change: Any) -> None:
    store = CallRecordStore(tmp_path)
    for text in ("one", "two", "three"):
        store.append(fields(text))
    corrupt(store, change)
    with pytest.raises(CallRecordError) as raised:
        store.list()
    assert raised.value.code == RECORD_CORRUPT


def write_raw(store: CallRecordStore, seq: int, data: bytes) -> None:
    store.directory.mkdir(parents=True, exist_ok=True)
    name = f"{seq:08d}-{hashlib.sha256(data).hexdigest()}.json"
    (store.directory / name).write_bytes(data)


@pytest.mark.parametrize(
    "data",
    [
        json.dumps({"format": "viano-llm-call-record", "format_version": 1, "seq": 1}).encode(),
        b"not json",
        json.dumps(
            {"format": "viano-llm-call-record", "format_version": 1, "seq": 1, **fields()},
            indent=1,
            sort_keys=True,
        ).encode(),  # valid but not canonical
        canonical_json(
            {"format": "viano-llm-call-record", "format_version": 1, "seq": 2, **fields()}
        ),
    ],
)
def test_records_must_be_canonical_valid_and_numbered_right(tmp_path: Path, data: bytes) -> None:
    store = CallRecordStore(tmp_path)
    write_raw(store, 1, data)
    with pytest.raises(CallRecordError) as raised:
        store.list()
    assert raised.value.code == RECORD_CORRUPT


def test_a_repair_record_must_name_an_earlier_record(tmp_path: Path) -> None:
    store = CallRecordStore(tmp_path)
    source = store.append(fields())
    repair = {
        "source_seq": 1,
        "source_sha256": "0" * 64,  # not the source's hash
        "target": "/evidence",
        "prompt_sha256": "1" * 64,
        "patch": None,
        "rebuilt_response": None,
        "rebuilt_sha256": None,
    }
    store.append(fields(call="repair", repair=repair))
    with pytest.raises(CallRecordError) as raised:
        store.list()
    assert raised.value.code == RECORD_CORRUPT
    assert source.seq == 1


def test_temporary_leftovers_are_ignored(tmp_path: Path) -> None:
    store = CallRecordStore(tmp_path)
    store.append(fields())
    (store.directory / ".00000002-abc.json.1234.tmp").write_bytes(b"partial")
    assert len(store.list()) == 1
    assert store.append(fields("another reply")).seq == 2


def test_concurrent_writers_never_share_a_number(tmp_path: Path) -> None:
    errors: list[BaseException] = []

    def write(index: int) -> None:
        try:
            CallRecordStore(tmp_path).append(fields(f"text {index}"))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [r.seq for r in CallRecordStore(tmp_path).list()] == list(range(1, 13))


def test_the_package_must_exist_and_the_directory_lie_inside(tmp_path: Path) -> None:
    with pytest.raises(CallRecordError) as raised:
        CallRecordStore(tmp_path / "missing").append(fields())
    assert raised.value.code == PACKAGE_MISSING
    outside = tmp_path / "outside"
    outside.mkdir()
    package = tmp_path / "package"
    package.mkdir()
    os.symlink(outside, package / "analysis")
    with pytest.raises(PackageFileError) as outside_raised:  # the one durable writer's check
        CallRecordStore(package).append(fields())
    assert outside_raised.value.code == "package_path_outside"
    assert list(outside.iterdir()) == []


# --- keyed, idempotent records (a rerun after a kill appends nothing) -----------------


def test_the_same_fields_give_the_same_record_and_write_nothing(tmp_path: Path) -> None:
    store = CallRecordStore(tmp_path)
    first = store.append(fields("one"))
    second = store.append(fields("two"))
    names = sorted(p.name for p in store.directory.iterdir())
    # A rerun of either decision, in a new process, finds what it stored.
    assert CallRecordStore(tmp_path).append(fields("one")) == first
    assert CallRecordStore(tmp_path).append(fields("two")) == second
    assert sorted(p.name for p in store.directory.iterdir()) == names
    assert [r.seq for r in store.list()] == [1, 2]


def test_a_call_key_keeps_identical_replies_of_two_calls_apart(tmp_path: Path) -> None:
    store = CallRecordStore(tmp_path)
    first = store.append(fields("same", call_key="H1:1:1"))
    second = store.append(fields("same", call_key="H1:1:2"))
    assert (first.seq, second.seq) == (1, 2)
    assert store.append(fields("same", call_key="H1:1:2")) == second
    with pytest.raises(CallRecordError) as raised:
        store.append(fields("same", call_key="not a key!"))
    assert raised.value.code == RECORD_INVALID


# --- strict reading: torn and garbled files are typed and named -----------------------


def _three(tmp_path: Path) -> CallRecordStore:
    store = CallRecordStore(tmp_path)
    for text in ("one", "two", "three"):
        store.append(fields(SECRET + text))
    return store


def _second(store: CallRecordStore) -> Path:
    [path] = sorted(store.directory.glob("00000002-*.json"))
    return path


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),  # torn
        lambda p: p.write_bytes(b""),  # torn to nothing
        lambda p: p.write_bytes(p.read_bytes().replace(b'"seq":2', b'"seq":9')),  # garbled
        lambda p: p.write_bytes(b"\xff\xfe" + p.read_bytes()),  # not UTF-8
    ],
    ids=["half", "empty", "garbled", "binary"],
)
def test_a_torn_or_garbled_record_names_its_file(tmp_path: Path, damage: Any) -> None:
    store = _three(tmp_path)
    path = _second(store)
    damage(path)
    relative = path.relative_to(tmp_path).as_posix()
    for attempt in (store.list, store.verify, lambda: CallRecordStore(tmp_path)):
        with pytest.raises(CallRecordError) as raised:
            attempt()
        assert raised.value.code == RECORD_CORRUPT
        assert raised.value.details["path"] == relative
        assert SECRET not in str(raised.value) + repr(raised.value.details)


@pytest.mark.parametrize(
    "name", ["00000004-abc.json", "00000004.json", "notes.txt", "00000002-" + "0" * 64 + ".json~"]
)
def test_a_foreign_file_among_the_records_is_corruption(tmp_path: Path, name: str) -> None:
    store = _three(tmp_path)
    (store.directory / name).write_bytes(b"{}")
    with pytest.raises(CallRecordError) as raised:
        CallRecordStore(tmp_path)
    assert raised.value.code == RECORD_CORRUPT
    assert raised.value.details["path"] == f"analysis/llm/calls/{name}"


def test_a_damaged_audit_is_never_appended_to(tmp_path: Path) -> None:
    store = _three(tmp_path)
    _second(store).write_bytes(b"{")
    with pytest.raises(CallRecordError) as raised:
        store.append(fields("four"))
    assert raised.value.code == RECORD_CORRUPT
    assert len(list(store.directory.glob("0000000*.json"))) == 3


def test_records_written_with_the_earlier_ascii_encoding_are_still_read(tmp_path: Path) -> None:
    document = {"format": "viano-llm-call-record", "format_version": 1, "seq": 1}
    document.update(fields("ä"))
    data = json.dumps(document, sort_keys=True, separators=(",", ":")).encode("ascii")
    store = CallRecordStore(tmp_path)
    write_raw(store, 1, data)
    [record] = CallRecordStore(tmp_path).list()
    assert record.document == document
    assert record.sha256 == hashlib.sha256(data).hexdigest()
    # Finding it again by content needs no rewrite either.
    assert store.append(fields("ä")) == record


def test_an_earlier_record_that_kept_a_lone_surrogate_is_corrupt_now(tmp_path: Path) -> None:
    document = {"format": "viano-llm-call-record", "format_version": 1, "seq": 1}
    document.update(fields("net \ud83d"))
    data = json.dumps(document, sort_keys=True, separators=(",", ":")).encode("ascii")
    package = tmp_path
    (package / CALLS_DIR).mkdir(parents=True)
    name = f"00000001-{hashlib.sha256(data).hexdigest()}.json"
    (package / CALLS_DIR / name).write_bytes(data)
    with pytest.raises(CallRecordError) as raised:
        CallRecordStore(package)
    assert raised.value.code == RECORD_CORRUPT
    assert raised.value.details["path"] == f"analysis/llm/calls/{name}"
