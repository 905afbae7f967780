"""The MCP call records: append-only, numbered, hash-checked, repeats recognized."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.mcp_server.conftest import find_text, source_batch
from tests.tools.package_factory import BuiltPackage
from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import McpError
from viano_bug_analysis.mcp_server.audit import CallLog, verify_calls
from viano_bug_analysis.mcp_server.tools import McpTools
from viano_bug_analysis.profiles import load_profile


def tools_for(package: BuiltPackage) -> McpTools:
    return McpTools(package.path, load_profile("vcore").router())


def test_calls_are_numbered_and_repeats_named(package: BuiltPackage) -> None:
    tools = tools_for(package)
    batch = source_batch(package, find_text(package, "KilledMonsterCredit"))
    other = source_batch(package, find_text(package, "MAX_THINGS"))
    outcomes = [tools.call("case_query", b) for b in (batch, other, batch, batch)]
    assert [o.recorded.seq for o in outcomes if o.recorded] == [1, 2, 3, 4]
    assert [o.recorded.repeat_of for o in outcomes if o.recorded] == [None, None, 1, 1]
    # A new server on the same package continues the numbering and knows the repeats.
    again = tools_for(package).call("case_query", other)
    assert again.recorded is not None and (again.recorded.seq, again.recorded.repeat_of) == (5, 2)
    assert verify_calls(str(package.path)) == {
        "calls": 5,
        "errors": 0,
        "repeats": 3,
        "captures": 0,
    }
    # Identical results are stored once.
    assert len(PackageLayout(package.path).files.list(PackageLayout.MCP_RESULTS) or []) == 2


def test_two_logs_on_one_package_never_share_a_number(package: BuiltPackage) -> None:
    first, second = CallLog(str(package.path)), CallLog(str(package.path))
    seqs = [
        log.record("case_facts", b"{}", package=None, result={"n": n})
        for n, log in enumerate((first, second, first))
    ]
    assert [r.seq for r in seqs] == [1, 2, 3]
    assert verify_calls(str(package.path))["calls"] == 3


def _tamper(package: Path, directory: Path) -> None:
    victim = sorted((package / directory).iterdir())[0]
    victim.chmod(0o644)
    victim.write_bytes(victim.read_bytes().replace(b"1", b"2", 1))


@pytest.mark.parametrize(
    ("directory", "reason"),
    [
        (PackageLayout.MCP_RESULTS, "hash_mismatch"),
        (PackageLayout.MCP_REQUESTS, "hash_mismatch"),
    ],
)
def test_a_changed_stored_file_fails_verification(
    package: BuiltPackage, directory: Path, reason: str
) -> None:
    tools_for(package).call("case_query", source_batch(package, find_text(package, "Killed")))
    verify_calls(str(package.path))
    _tamper(package.path, directory)
    with pytest.raises(McpError) as caught:
        verify_calls(str(package.path))
    assert caught.value.code == "mcp_audit_corrupt"
    assert caught.value.details["reason"] == reason


def test_a_removed_record_is_a_gap(package: BuiltPackage) -> None:
    tools = tools_for(package)
    for _ in range(3):
        tools.call("case_facts", {})
    (package.path / PackageLayout.MCP_CALLS / "00000002.json").unlink()
    with pytest.raises(McpError) as caught:
        verify_calls(str(package.path))
    assert caught.value.details["reason"] == "numbering_gap"


def test_an_edited_record_is_corrupt(package: BuiltPackage) -> None:
    tools_for(package).call("case_facts", {})
    record = package.path / PackageLayout.MCP_CALLS / "00000001.json"
    record.write_bytes(record.read_bytes().replace(b'"outcome":"result"', b'"outcome":"error"'))
    with pytest.raises(McpError) as caught:
        verify_calls(str(package.path))
    assert caught.value.details["reason"] == "record_invalid"


def test_a_refused_call_is_recorded_without_a_result(package: BuiltPackage) -> None:
    outcome = tools_for(package).call("case_query", {"format": "nope"})
    assert outcome.is_error and outcome.structured["error"] == "request_invalid"
    assert outcome.recorded is not None and outcome.recorded.result_sha256 is None
    assert verify_calls(str(package.path))["errors"] == 1


def test_a_tool_bug_shows_only_its_class(
    package: BuiltPackage, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tools_for(package)

    def broken(*_args: object) -> None:
        raise RuntimeError("secret source text")

    monkeypatch.setattr(tools.router, "query", broken)
    outcome = tools.call("case_query", source_batch(package, find_text(package, "Killed")))
    assert outcome.is_error
    assert outcome.structured == {
        "error": "mcp_tool_failed",
        "message": "the tool failed unexpectedly; the server log names the class",
        "details": {"type": "RuntimeError"},
    }
    assert "secret" not in outcome.text


# The writes of one recorded case_query, in order: request, result, call record.
WRITES = ("write_once", "write_once", "write_new")


@pytest.mark.parametrize("failing", range(len(WRITES)))
def test_a_failed_write_at_any_point_withholds_the_answer_and_leaves_a_valid_trail(
    package: BuiltPackage, monkeypatch: pytest.MonkeyPatch, failing: int
) -> None:
    from viano_bug_analysis.durable import PackageFiles
    from viano_bug_analysis.errors import PackageFileError

    batch = source_batch(package, find_text(package, "KilledMonsterCredit"))
    tools = tools_for(package)
    seen: list[str] = []

    def failing_write(name: str) -> Any:
        original = getattr(PackageFiles, name)

        def write(self: PackageFiles, rel: Any, data: bytes) -> bool:
            seen.append(name)
            if len(seen) - 1 == failing:
                raise PackageFileError("package_write_failed", "refused", {"errno": "ENOSPC"})
            written: bool = original(self, rel, data)
            return written

        return write

    for name in set(WRITES):
        monkeypatch.setattr(PackageFiles, name, failing_write(name))
    outcome = tools.call("case_query", batch)
    assert outcome.is_error and outcome.structured["error"] == "package_write_failed"
    assert tuple(seen) == WRITES[: failing + 1]
    monkeypatch.undo()
    assert verify_calls(str(package.path))["calls"] == 0  # whatever was written is consistent
    done = tools_for(package).call("case_query", batch)
    assert done.is_error is False and done.recorded is not None and done.recorded.seq == 1
    assert verify_calls(str(package.path))["calls"] == 1


def test_no_server_appends_to_a_broken_trail(package: BuiltPackage) -> None:
    tools_for(package).call("case_facts", {})
    (package.path / PackageLayout.MCP_CALLS / "00000003.json").write_bytes(b"{}")
    with pytest.raises(McpError) as caught:
        tools_for(package)
    assert caught.value.code == "mcp_audit_corrupt"
    assert caught.value.details["reason"] == "numbering_gap"
