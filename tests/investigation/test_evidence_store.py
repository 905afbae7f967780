"""The evidence store: records and results written through the one durable writer
(never through a symlink, never outside the package) and read back strictly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis.errors import PackageFileError, VbaError
from viano_bug_analysis.investigation.evidence import EvidenceError, EvidenceStore

REQUEST = {"requests": [{"operation": "source.find_text", "arguments": {"text": "x"}}]}
RESULT = {"results": [{"matches": [{"line": 3}]}]}
RECORD = "analysis/evidence/records/000001.json"


def take(store: EvidenceStore, result: dict[str, Any] = RESULT, step: str = "H1:1:1") -> Any:
    return store.take_router_result(
        REQUEST,
        result,
        hypothesis_id="H1",
        step_key=step,
        generation=1,
        current_generation=lambda: 1,
    )


def code_and_path(action: Any) -> tuple[str, str]:
    with pytest.raises(VbaError) as info:
        action()
    return info.value.code, info.value.details.get("path", "")


@pytest.fixture
def store(tmp_path: Path) -> EvidenceStore:
    return EvidenceStore(tmp_path)


def test_a_record_and_its_result_round_trip(store: EvidenceStore) -> None:
    taken = take(store)
    assert (taken.evidence_id, taken.new) == ("E1", True)
    assert store.payload(store.get("E1")) == RESULT["results"][0]
    assert take(store).new is False  # the resumed step finds its record


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "package_corrupt"),
        (b'{"format":"viano-evidence-record"', "package_corrupt"),
        (b"\xff\xfe", "package_corrupt"),
        (b"[]", "package_corrupt"),
        (b'{"evidence_id":"E1","format":"viano-evidence-record"}', "evidence_corrupt"),
    ],
)
def test_a_damaged_record_names_its_file(
    store: EvidenceStore, tmp_path: Path, data: bytes, code: str
) -> None:
    take(store)
    (tmp_path / RECORD).write_bytes(data)
    assert code_and_path(store.records) == (code, RECORD)
    assert code_and_path(lambda: take(store, step="H1:2:1")) == (code, RECORD)


def test_a_damaged_result_names_its_file(store: EvidenceStore, tmp_path: Path) -> None:
    record = take(store).record
    rel = record["result_path"]
    (tmp_path / rel).write_bytes(b'{"results":[]}')
    assert code_and_path(lambda: store.answer(record)) == ("evidence_corrupt", rel)
    (tmp_path / rel).unlink()
    assert code_and_path(lambda: store.answer(record)) == ("evidence_corrupt", rel)


@pytest.mark.parametrize(
    "linked",
    ["analysis", "analysis/evidence", "analysis/evidence/records", "analysis/evidence/results"],
)
def test_a_symlinked_directory_takes_no_evidence_outside(
    store: EvidenceStore, tmp_path: Path, linked: str
) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / linked).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / linked).symlink_to(outside)
    with pytest.raises(PackageFileError) as info:
        take(store)
    assert (info.value.code, info.value.details["path"]) == ("package_path_outside", linked)
    assert list(outside.rglob("*")) == []


@pytest.mark.parametrize("exists", [False, True])
def test_a_symlinked_record_file_is_never_written_through(
    store: EvidenceStore, tmp_path: Path, exists: bool
) -> None:
    target = tmp_path.parent / f"{tmp_path.name}-target.json"
    if exists:
        target.write_bytes(b"{}")
    (tmp_path / RECORD).parent.mkdir(parents=True)
    (tmp_path / RECORD).symlink_to(target)
    with pytest.raises(PackageFileError) as info:
        take(store)
    assert (info.value.code, info.value.details["path"]) == ("package_path_outside", RECORD)
    assert target.exists() is exists and (not exists or target.read_bytes() == b"{}")


def test_a_gap_in_the_records_is_corrupt(store: EvidenceStore, tmp_path: Path) -> None:
    take(store)
    (tmp_path / RECORD).rename(tmp_path / "analysis/evidence/records/000002.json")
    with pytest.raises(EvidenceError) as info:
        store.records()
    assert info.value.code == "evidence_corrupt"
