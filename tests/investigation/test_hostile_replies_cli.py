"""Hostile model answers through ``vba investigate``: a lone surrogate or a non-ASCII
digit is an invalid response (rejected with its reason, counted, asked again), never a
traceback, and a rerun of the stopped run does not get stuck on the stored reply."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

import orjson
import pytest

from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import (
    CONCLUDE,
    Stopped,
    answer,
    built_package,
    investigate,
    vba,
    write_config,
)

STEPS = "analysis/investigation/steps"
HOSTILE = {
    # The model writes a JSON escape of half a surrogate pair: valid grammar.
    "lone_surrogate": answer(CONCLUDE).replace('"done"', '"net \\ud83d"'),
    "non_ascii_digit": answer(CONCLUDE).replace('"confidence":0.5', '"confidence":0.\u0665'),
}
REASONS = {"lone_surrogate": "invalid_string", "non_ascii_digit": "syntax_error"}


def run(root: Path, tmp_path: Path, server: ScriptedLlmServer) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        vba("investigate", str(root), "--config", str(write_config(tmp_path, server))),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_answer_is_an_invalid_response_and_the_run_goes_on(
    tmp_path: Path, kind: str
) -> None:
    assert HOSTILE[kind] != answer(CONCLUDE)
    root = built_package(tmp_path)
    with ScriptedLlmServer([HOSTILE[kind], answer(CONCLUDE)]) as server:
        done = run(root, tmp_path, server)
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == 0, done.stderr
        assert len(server.requests) == 2  # asked again once, after the rejection
    decision = orjson.loads((root / STEPS / "H1-001-01-decision.json").read_bytes())
    assert decision["status"] == "rejected"
    assert decision["reason"] == REASONS[kind]
    assert decision["invalid_responses"] == 1
    calls = sorted((root / "analysis/llm/calls").glob("0*.json"))
    assert [orjson.loads(p.read_bytes())["outcome"]["reason"] for p in calls] == [
        REASONS[kind],
        None,
    ]


def test_a_stored_hostile_reply_does_not_stick_the_rerun(tmp_path: Path) -> None:
    # Stopped right after the reply was stored: the rerun decides from that reply.
    root = built_package(tmp_path)
    with ScriptedLlmServer([HOSTILE["lone_surrogate"]]) as server, contextlib.suppress(Stopped):
        investigate(root, server, stop_at="H1-1-1-reply")
    with ScriptedLlmServer([answer(CONCLUDE)]) as server:
        done = run(root, tmp_path, server)
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == 0, done.stderr
        assert len(server.requests) == 1  # the stored reply was not asked for again
    decision = orjson.loads((root / STEPS / "H1-001-01-decision.json").read_bytes())
    assert decision["reason"] == "invalid_string"
