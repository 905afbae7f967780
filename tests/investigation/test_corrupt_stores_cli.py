"""Torn and garbled step, outcome, policy and evidence files through the command line:
``vba investigate`` and ``vba status`` end with one typed JSON error on stderr that
names the damaged file relative to the package (``package_corrupt``), never a
traceback, and ``vba investigate`` finds the damage before it pays for a request."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import (
    CONCLUDE,
    answer,
    investigated_package,
    vba,
    write_config,
)
from viano_bug_analysis.exit_codes import ExitCode

STEPS = "analysis/investigation/steps"

DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "torn": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "garbled": lambda data: data[: len(data) // 2] + b"\xff\xfe" + data[len(data) // 2 + 2 :],
    "not an object": lambda data: b"[]",
    "fields missing": lambda data: b"{}",
}

# (where the first run stopped, the file damaged afterwards): each file is one
# the rerun must read before it can go on.
INVESTIGATE_CASES = {
    "call": ("H1-1-1-call", f"{STEPS}/H1-001-01-call.json"),
    "reply": ("H1-1-1-reply", f"{STEPS}/H1-001-01-reply.json"),
    "decision": ("H1-1-1-decision", f"{STEPS}/H1-001-01-decision.json"),
    "dispatch": ("H1-1-1-dispatch", f"{STEPS}/H1-001-01-dispatch.json"),
    "evidence record": ("H1-1-1-dispatch", "analysis/evidence/records/000001.json"),
    "policy": ("H1-1-1-dispatch", "analysis/investigation/policy.json"),
    "outcome": (None, "analysis/investigation/hypotheses/H1.json"),
}
STATUS_CASES = {
    "outcome": "analysis/investigation/hypotheses/H1.json",
    "evidence record": "analysis/evidence/records/000001.json",
}
# An evidence result is content-addressed: its damage is a hash mismatch.
RESULT_DAMAGE = {k: DAMAGE[k] for k in ("torn", "garbled", "fields missing")}


def typed_error(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == ExitCode.DAMAGED, done.stderr
    error: dict[str, object] = orjson.loads(done.stderr.strip().splitlines()[-1])
    return error


def expected_code(rel: str, how: str) -> str:
    # A damaged file is package_corrupt; a readable evidence record without its
    # fields is an invalid evidence record (evidence_corrupt), named the same way.
    if how == "fields missing" and "/records/" in rel:
        return "evidence_corrupt"
    return "package_corrupt"


def damage(root: Path, rel: str, how: str) -> None:
    path = root / rel
    path.write_bytes(DAMAGE[how](path.read_bytes()))


@pytest.fixture(scope="module")
def stopped_packages(tmp_path_factory: pytest.TempPathFactory) -> dict[str | None, Path]:
    """One investigated package per stop point, copied for each test."""
    stops = {stop for stop, _ in INVESTIGATE_CASES.values()}
    return {
        stop: investigated_package(tmp_path_factory.mktemp("stopped"), stop_at=stop)
        for stop in stops
    }


def fresh_copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / "package"
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)
    return target


# An empty policy object is a valid policy (stored before its fields existed),
# so "fields missing" is no damage for that one file.
DAMAGED_FILES = [
    (case, how)
    for case in sorted(INVESTIGATE_CASES)
    for how in sorted(DAMAGE)
    if (case, how) != ("policy", "fields missing")
]


@pytest.mark.parametrize(("case", "how"), DAMAGED_FILES)
def test_vba_investigate_names_a_damaged_file_before_any_request(
    stopped_packages: dict[str | None, Path], tmp_path: Path, case: str, how: str
) -> None:
    stop, rel = INVESTIGATE_CASES[case]
    root = fresh_copy(stopped_packages[stop], tmp_path)
    damage(root, rel, how)
    with ScriptedLlmServer([answer(CONCLUDE)] * 3) as server:
        done = subprocess.run(
            vba("investigate", str(root), "--config", str(write_config(tmp_path, server))),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        error = typed_error(done)
        assert error["error"] == expected_code(rel, how)
        assert error["details"]["path"] == rel  # type: ignore[index]
        assert server.requests == []  # found before a request was paid for
    assert str(tmp_path) not in done.stderr


@pytest.mark.parametrize("how", sorted(RESULT_DAMAGE))
def test_vba_investigate_refuses_a_damaged_evidence_result(
    stopped_packages: dict[str | None, Path], tmp_path: Path, how: str
) -> None:
    root = fresh_copy(stopped_packages["H1-1-1-dispatch"], tmp_path)
    (result,) = (root / "analysis/evidence/results").iterdir()
    result.write_bytes(RESULT_DAMAGE[how](result.read_bytes()))
    with ScriptedLlmServer([answer(CONCLUDE)]) as server:
        done = subprocess.run(
            vba("investigate", str(root), "--config", str(write_config(tmp_path, server))),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        error = typed_error(done)
        assert error["error"] == "evidence_corrupt"
        assert error["details"] == {"path": f"analysis/evidence/results/{result.name}"}
        assert server.requests == []


@pytest.mark.parametrize("how", sorted(DAMAGE))
@pytest.mark.parametrize("case", sorted(STATUS_CASES))
def test_vba_status_names_a_damaged_file(
    stopped_packages: dict[str | None, Path], tmp_path: Path, case: str, how: str
) -> None:
    rel = STATUS_CASES[case]
    root = fresh_copy(stopped_packages[None], tmp_path)
    damage(root, rel, how)
    for extra in ([], ["--json"]):
        done = subprocess.run(
            vba("status", str(root), *extra), capture_output=True, text=True, timeout=120
        )
        error = typed_error(done)
        assert error["details"]["path"] == rel  # type: ignore[index]
        assert error["error"] == expected_code(rel, how)


def test_an_undamaged_package_still_reports_and_resumes(
    stopped_packages: dict[str | None, Path], tmp_path: Path
) -> None:
    root = fresh_copy(stopped_packages["H1-1-1-dispatch"], tmp_path)
    with ScriptedLlmServer([answer(CONCLUDE)]) as server:
        done = subprocess.run(
            vba("investigate", str(root), "--config", str(write_config(tmp_path, server))),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert len(server.requests) == 1
    status = subprocess.run(vba("status", str(root), "--json"), capture_output=True, text=True)
    assert orjson.loads(status.stdout)["evidence"] == 1
