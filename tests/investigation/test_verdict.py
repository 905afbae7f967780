"""The case verdict: issued once when every hypothesis has ended, versioned when it
changes, read back strictly; built from the stored records only."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.crash import KillAtCommit, Killed
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import scripted_client
from tests.investigation.test_interpreter import GOOD, built
from tests.report.package_fixture import (
    HYPOTHESES,
    SCRIPT,
    SETTINGS,
    Stopped,
    answer,
    built_package,
    cite,
    find,
    investigate,
    reported_package,
    write_spec,
)
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.durable import PackageLayout, compact_json
from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.investigation import verdict as verdict_module
from viano_bug_analysis.investigation.interpreter import CaseInterpreter
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.investigation.verdict import VerdictStore, build_verdict
from viano_bug_analysis.jsonio import sha256_hex
from viano_bug_analysis.schemas import schema_validator

VERDICTS = PackageLayout.VERDICTS


def files_of(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted((root / VERDICTS).glob("*.json"))
    }


def test_a_concluded_case_stores_its_verdict(tmp_path: Path) -> None:
    root = reported_package(tmp_path)
    assert list(files_of(root)) == ["analysis/investigation/verdicts/v0001.json"]
    verdict = VerdictStore(root).current()
    assert verdict is not None
    assert schema_validator("case-verdict-v1").is_valid(verdict)
    assert (verdict["version"], verdict["supersedes"], verdict["complete"]) == (1, None, True)
    assert verdict["case"] == {
        "supported": ["H1"],
        "refuted": ["H2"],
        "inconclusive": [],
        "blocked": [],
        "open": [],
    }
    log = StepLog(root)
    for entry in verdict["hypotheses"]:
        outcome = log.outcome(entry["id"])
        assert outcome is not None
        assert entry["assessment"] == outcome["assessment"]
        assert entry["confidence"] == outcome["confidence"]
        assert entry["summary"] == outcome["summary"]
        # The verified citations as the controller stored them, hash and provenance kept.
        assert entry["citations"] == outcome["citations"]
        assert all(len(c["value_sha256"]) == 64 and c["provenance"] for c in entry["citations"])
        assert entry["unverified_references"] == []
    # The scripted server reports 11 prompt and 7 completion tokens per answer;
    # budget units add the dispatch cost (100) of each of the two tool calls.
    assert verdict["usage"] == {
        "prompt_tokens": 44,
        "completion_tokens": 28,
        "total_tokens": 72,
        "model_answers": 4,
        "answers_without_usage": 0,
        "budget_units_spent": 272,
        "budget_units_limit": 400000,
    }


def test_a_rerun_issues_no_second_version(tmp_path: Path) -> None:
    root = reported_package(tmp_path)
    before = files_of(root)
    with ScriptedLlmServer([]) as server:
        assert investigate(root, server).state == "concluded"
        assert server.requests == []
    assert files_of(root) == before


def test_a_kill_before_the_verdict_is_written_is_completed_by_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = built_package(tmp_path)

    def killed(self: VerdictStore, verdict: Any, **kw: Any) -> Any:
        raise Stopped("verdict")

    with monkeypatch.context() as patch:
        patch.setattr(VerdictStore, "issue", killed)
        with ScriptedLlmServer(SCRIPT) as server, contextlib.suppress(Stopped):
            investigate(root, server)
    assert files_of(root) == {}
    with ScriptedLlmServer([]) as server:
        investigate(root, server)
    assert list(files_of(root)) == ["analysis/investigation/verdicts/v0001.json"]


def test_a_blocked_case_has_no_verdict(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    with ScriptedLlmServer(["not json", "{still not", "no"]) as server:
        assert investigate(root, server).state == "blocked"
    assert VerdictStore(root).versions() == []
    entries = build_verdict(root)
    assert entries["complete"] is False
    assert entries["case"]["blocked"] == ["H1"] and entries["case"]["open"] == ["H2"]


def test_a_changed_verdict_is_a_new_version_and_the_old_one_stays(tmp_path: Path) -> None:
    root = reported_package(tmp_path)
    store = VerdictStore(root)
    first = store.current()
    assert first is not None
    first_bytes = (root / PackageLayout.verdict(1)).read_bytes()
    changed = build_verdict(root)
    changed["hypotheses"][0]["summary"] = "another summary"
    second = store.issue(changed)
    assert second["version"] == 2
    assert second["supersedes"] == {"version": 1, "sha256": sha256_hex(first_bytes)}
    assert (root / PackageLayout.verdict(1)).read_bytes() == first_bytes
    assert store.issue(changed)["version"] == 2  # the same verdict again: no new version
    assert [v["version"] for v in store.versions()] == [1, 2]


def test_a_hypothesis_added_after_the_verdict_reissues_it(tmp_path: Path) -> None:
    root = reported_package(tmp_path)
    hypotheses = [*HYPOTHESES, {"id": "H3", "statement": "The log shows the spell hit."}]
    CaseBuilder(write_spec(tmp_path / "inputs2", hypotheses), root).build()
    script = [
        answer("H3", find("spell hit")),
        answer(
            "H3",
            {"kind": "conclusion", "summary": "The hit is logged."},
            [cite("E3", "/result/matches/0/text")],
            assessment="supported",
            confidence=0.9,
        ),
    ]
    with ScriptedLlmServer(script) as server:
        assert investigate(root, server).state == "concluded"
    versions = VerdictStore(root).versions()
    assert [v["version"] for v in versions] == [1, 2]
    assert versions[1]["case"]["supported"] == ["H1", "H3"]
    assert versions[1]["analysis_revision"] == 2
    assert versions[1]["supersedes"]["sha256"] == sha256_hex(compact_json(versions[0]))


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("v0002.json", None, "a verdict version is missing"),
        ("v0001.json", b'{"format":"viano-case-verdict"', "not JSON"),
        ("v0001.json", b'{"format":"other","version":1}', "not a case verdict"),
        ("v0001.json", b'{"version": 1}', "not in its stored byte form"),
    ],
)
def test_a_damaged_verdict_is_refused_naming_its_file(
    tmp_path: Path, name: str, data: bytes | None, reason: str
) -> None:
    root = tmp_path / "package"
    (root / VERDICTS).mkdir(parents=True)
    if data is None:
        good = reported_package(tmp_path / "other")
        data = (good / PackageLayout.verdict(1)).read_bytes()
    (root / VERDICTS / name).write_bytes(data)
    with pytest.raises(PackageFileError) as caught:
        VerdictStore(root).versions()
    assert caught.value.code == "package_corrupt"
    assert caught.value.details["reason"] == reason
    assert caught.value.details["path"] == "analysis/investigation/verdicts/v0001.json"


def test_usage_counts_an_answer_without_reported_usage(tmp_path: Path) -> None:
    root = reported_package(tmp_path)
    log = StepLog(root)
    reply = log.get("H1", 1, 1, "reply")
    assert reply is not None
    reply["chat"]["usage"] = None
    log.put("H9", 1, 1, "reply", reply)
    usage = verdict_module.usage_of(root)
    assert (usage["model_answers"], usage["answers_without_usage"]) == (5, 1)
    assert usage["prompt_tokens"] == 44


def test_the_interpretation_answers_count_in_the_usage(tmp_path: Path) -> None:
    root = built(tmp_path)  # a case without hypotheses
    conclude = {"kind": "conclusion", "summary": "done"}
    with ScriptedLlmServer([GOOD, answer("H1", conclude), answer("H2", conclude)]) as server:
        client = scripted_client(server)
        CaseInterpreter(root, model=client, settings=SETTINGS).run()
        assert investigate(root, server).state == "concluded"
    verdict = VerdictStore(root).current()
    assert verdict is not None
    # One interpretation answer and two investigation answers, 11 + 7 tokens each.
    assert verdict["usage"]["model_answers"] == 3
    assert (verdict["usage"]["prompt_tokens"], verdict["usage"]["completion_tokens"]) == (33, 21)


def test_killed_after_every_file_commit_the_rerun_issues_the_clean_runs_verdict_once(
    tmp_path: Path,
) -> None:
    def body(root: Path) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in version.items() if k != "issued_at"}
            for version in VerdictStore(root).versions()
        ]

    template = built_package(tmp_path / "template")
    clean = tmp_path / "clean"
    shutil.copytree(template, clean)
    with ScriptedLlmServer(SCRIPT) as server, KillAtCommit(None) as count:
        investigate(clean, server)
    expected = body(clean)
    assert len(expected) == 1 and count.points[-1] == "link v0001.json"
    for kill_after in range(1, count.commits + 1):
        root = tmp_path / f"killed-{kill_after}"
        shutil.copytree(template, root)
        with (
            ScriptedLlmServer(SCRIPT) as server,
            KillAtCommit(kill_after),
            contextlib.suppress(Killed),
        ):
            investigate(root, server)
        answered = len(list((root / PackageLayout.STEPS).glob("*-reply.json")))
        with ScriptedLlmServer(SCRIPT[answered:]) as server:
            assert investigate(root, server).state == "concluded", kill_after
        assert body(root) == expected, kill_after
        shutil.rmtree(root)
