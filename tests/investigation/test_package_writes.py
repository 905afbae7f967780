"""Writes of a running investigation, through the one durable writer:

* a disk that fills up at any point of a run ends it with ``package_write_failed``
  (path relative to the package, errno name), never an untyped ``OSError`` or a
  traceback; when it is full from the start no model request is paid for; once
  space is back, the rerun finishes;
* with any store's directory or file symlinked out of the package, the run ends
  with a typed error and nothing is written outside.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import SCRIPT, built_package, investigate
from viano_bug_analysis.errors import VbaError
from viano_bug_analysis.investigation.evidence import EvidenceStore
from viano_bug_analysis.investigation.steps import StepLog

STEPS = "analysis/investigation/steps"


class FullDisk:
    """``os.write`` that fails with ENOSPC from call ``after + 1`` on, as a disk
    that has filled up fails every later write too; counts the calls."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, after: int) -> None:
        self.calls = 0
        self._after = after
        self._write = os.write
        monkeypatch.setattr(os, "write", self)

    def __call__(self, fd: int, data: Any) -> int:
        self.calls += 1
        if self.calls > self._after:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self._write(fd, data)


def tree(path: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(path).as_posix(): None if p.is_dir() else p.read_bytes()
        for p in sorted(path.rglob("*"))
    }


@pytest.fixture(scope="module")
def writes_of_a_run(tmp_path_factory: pytest.TempPathFactory) -> int:
    """How many ``os.write`` calls a whole uninterrupted run makes."""
    root = built_package(tmp_path_factory.mktemp("count"))
    with pytest.MonkeyPatch.context() as monkeypatch, ScriptedLlmServer(SCRIPT) as server:
        disk = FullDisk(monkeypatch, after=10**9)
        assert investigate(root, server).state == "concluded"
    assert disk.calls > 10
    return disk.calls


@pytest.mark.parametrize("fill", [0.0, 0.05, 0.25, 0.5, 0.75, 0.9, 0.99])
def test_a_disk_filling_up_at_any_point_is_package_write_failed_and_the_rerun_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writes_of_a_run: int, fill: float
) -> None:
    root = built_package(tmp_path)
    after = int(writes_of_a_run * fill)
    with ScriptedLlmServer(SCRIPT) as server:
        FullDisk(monkeypatch, after=after)
        with pytest.raises(Exception) as caught:
            investigate(root, server)
        monkeypatch.undo()
        paid = len(server.requests)
    err = caught.value
    assert isinstance(err, VbaError), repr(err)
    assert err.code == "package_write_failed"
    assert err.details["errno"] == "ENOSPC"
    assert not Path(err.details["path"]).is_absolute() and str(tmp_path) not in str(err.details)
    if after == 0:
        assert paid == 0  # the writability check runs before the first request
    # Space is back: the rerun picks up the stored steps and finishes the case.
    answered = len(list((root / STEPS).glob("*-reply.json"))) if (root / STEPS).is_dir() else 0
    with ScriptedLlmServer(SCRIPT[answered:]) as server:
        assert investigate(root, server).state == "concluded"
    assert [r["evidence_id"] for r in EvidenceStore(root).records()] == ["E1"]
    assert StepLog(root).outcome("H1") is not None


# -- containment, every store -------------------------------------------------------

STORE_DIRECTORIES = [
    "analysis",
    "analysis/investigation",
    STEPS,
    "analysis/investigation/hypotheses",
    "analysis/evidence",
    "analysis/evidence/records",
    "analysis/evidence/results",
    "analysis/evidence/captures",
    "analysis/llm/calls",
    "analysis/checkpoints",
    "analysis/budget/journal",
]


@pytest.mark.parametrize("linked", STORE_DIRECTORIES)
def test_a_symlinked_store_directory_is_refused_before_any_request(
    tmp_path: Path, linked: str
) -> None:
    root = built_package(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / linked).parent.mkdir(parents=True, exist_ok=True)
    (root / linked).symlink_to(outside)
    with ScriptedLlmServer(SCRIPT) as server:
        with pytest.raises(Exception) as caught:
            investigate(root, server)
        assert server.requests == []
    assert isinstance(caught.value, VbaError), repr(caught.value)
    assert (caught.value.code, caught.value.details["path"]) == ("package_path_outside", linked)
    assert tree(outside) == {}


# A file a store is about to write (or read), replaced by a link to a file outside.
STORE_FILES = [
    "analysis/investigation/policy.json",
    f"{STEPS}/H1-001-01-call.json",
    f"{STEPS}/H1-001-01-reply.json",
    f"{STEPS}/H1-001-01-decision.json",
    f"{STEPS}/H1-001-01-dispatch.json",
    "analysis/investigation/hypotheses/H1.json",
    "analysis/evidence/records/000001.json",
    "analysis/llm/calls/.lock",
    "analysis/checkpoints/00000001-transition.json",
    "analysis/budget/journal/00000001-open.json",
    "manifest.json",
]


@pytest.mark.parametrize("target_exists", [False, True], ids=["dangling", "existing"])
@pytest.mark.parametrize("linked", STORE_FILES)
def test_a_symlinked_store_file_is_never_written_through(
    tmp_path: Path, linked: str, target_exists: bool
) -> None:
    root = built_package(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "target.json"
    if target_exists:
        target.write_bytes((root / linked).read_bytes() if linked == "manifest.json" else b"{}")
    (root / linked).parent.mkdir(parents=True, exist_ok=True)
    if linked == "manifest.json":
        (root / linked).unlink()
    (root / linked).symlink_to(target)
    before = tree(outside)
    with ScriptedLlmServer(SCRIPT) as server, pytest.raises(Exception) as caught:
        investigate(root, server)
    assert isinstance(caught.value, VbaError), repr(caught.value)
    assert tree(outside) == before
