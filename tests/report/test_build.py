"""build_report: the case-report-v3 document, read-only, each citation checked again."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.report.package_fixture import (
    H2_STATEMENT,
    HOSTILE_LINE,
    HYPOTHESES,
    REPORT_TEXT,
    SUMMARY_H1,
    built_package,
    investigate,
    reported_package,
    write_spec,
)
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.investigation.evidence import EvidenceStore
from viano_bug_analysis.jsonio import canonical_bytes, sha256_hex
from viano_bug_analysis.report import build_report
from viano_bug_analysis.report.build import EXCERPT_CHARS, _Evidence, excerpt
from viano_bug_analysis.schemas import schema_validator


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_the_report_of_a_concluded_case(tmp_path: Path) -> None:
    root = reported_package(tmp_path)
    before = tree(root)
    report = build_report(root)
    assert tree(root) == before  # read-only: not a byte, not a file added
    assert schema_validator("case-report-v3").is_valid(report)
    assert report["state"] == {"state": "concluded", "blocked": None, "notice": None}
    assert report["report"]["text"] == REPORT_TEXT
    assert report["verdict"] is not None and report["verdict"]["current"] is True
    h1, h2 = report["hypotheses"]
    assert (h1["status"], h1["summary"], h1["confidence"]) == ("supported", SUMMARY_H1, 0.8)
    assert (h2["status"], h2["statement"]) == ("refuted", H2_STATEMENT)
    # H1: a tool step with its query and result, then the conclusion.
    assert [s["conclusion"] for s in h1["steps"]] == [False, True]
    assert h1["steps"][0]["query"]["operation"] == "source.find_text"
    assert h1["steps"][0]["result"]["evidence_id"] == "E1"
    assert h1["steps"][1]["reasoning"] == SUMMARY_H1
    pointer, line = h1["citations"]
    assert pointer["anchor"] == "cite-H1-1" and line["anchor"] == "cite-H1-2"
    assert pointer["verification"] == line["verification"] == "verified"
    assert (
        pointer["excerpt"] == "[2026-10-03 20:14:09] QuestID=90001 status=INCOMPLETE objectives=0/1"
    )
    assert pointer["value_sha256"] == sha256_hex(canonical_bytes(pointer["excerpt"]))
    # A line reference is hashed as the exact line text.
    assert line["excerpt"] == HOSTILE_LINE
    assert line["value_sha256"] == hashlib.sha256(HOSTILE_LINE.encode()).hexdigest()
    assert line["provenance"]["line"] == 5 and line["provenance"]["member"] == "session.log"
    assert report["usage"]["prompt_tokens"] == 44 and report["usage"]["budget_units_spent"] == 272


def test_a_blocked_case_says_so_at_the_top(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    with ScriptedLlmServer(["not json", "{still not", "no"]) as server:
        investigate(root, server)
    report = build_report(root)
    assert report["state"]["state"] == "blocked"
    assert report["state"]["blocked"]["code"] == "INVALID_LLM_RESPONSES"
    assert report["state"]["notice"].startswith("The investigation is BLOCKED on H1")
    assert report["case"]["blocked"] == ["H1"] and report["verdict"] is None
    assert [s["status"] for s in report["hypotheses"][0]["steps"]] == ["rejected"] * 3
    assert all(s["rejection"] for s in report["hypotheses"][0]["steps"])


def test_a_case_not_started_or_still_running_says_so(tmp_path: Path) -> None:
    root = built_package(tmp_path)
    assert build_report(root)["state"]["notice"].startswith("The investigation has not started")
    running = reported_package(tmp_path / "running", stop_at="H2-1-1-reply")
    report = build_report(running)
    assert report["state"]["state"] == "investigation"
    assert "still running" in report["state"]["notice"]
    assert report["case"]["open"] == ["H2"]
    assert report["hypotheses"][1]["steps"][0]["status"] == "pending"


@pytest.fixture
def evidence(tmp_path: Path) -> _Evidence:
    return _Evidence(EvidenceStore(reported_package(tmp_path)))


def test_only_a_matching_stored_hash_is_verified(evidence: _Evidence) -> None:
    value = "[2026-10-03 20:14:09] QuestID=90001 status=INCOMPLETE objectives=0/1"
    good = sha256_hex(canonical_bytes(value))
    base = {"evidence_id": "E1", "role": "supports", "reference": "/result/matches/0/text"}

    def check(cited: dict[str, Any], verified: bool = True) -> str:
        return str(evidence.citation("H1", 1, cited, verified=verified)["verification"])

    assert check({**base, "value_sha256": good, "provenance": {}}) == "verified"
    assert check({**base, "value_sha256": "0" * 64, "provenance": {}}) == "mismatch"
    # A reference the controller never verified stays unverified, even if it resolves.
    assert check(base, verified=False) == "unverified"
    assert check({**base, "reference": "/result/nothing"}, verified=False) == "unresolved"
    assert check({**base, "evidence_id": "E99"}, verified=False) == "unresolved"
    assert check({**base, "reference": "L99"}, verified=False) == "unresolved"


def test_an_excerpt_is_cut_and_says_so() -> None:
    text, cut = excerpt("x" * (EXCERPT_CHARS + 5))
    assert (len(text), cut) == (EXCERPT_CHARS, True)
    assert excerpt({"b": 2**70}) == ('{\n "b": 1180591620717411303424\n}', False)


def test_hypotheses_added_after_the_verdict_are_announced(tmp_path: Path) -> None:
    root = reported_package(tmp_path)
    hypotheses = [*HYPOTHESES, {"id": "H3", "statement": "The log shows the spell hit."}]
    CaseBuilder(write_spec(tmp_path / "inputs2", hypotheses), root).build()
    report = build_report(root)
    assert report["case"]["open"] == ["H3"]
    assert report["verdict"] is not None and report["verdict"]["current"] is False
    assert report["state"]["notice"] == (
        "Hypotheses were added after the verdict and are not investigated yet: H3. "
        "Run `vba investigate` to complete the verdict."
    )


def test_a_cited_empty_result_reads_no_lines_matched_with_its_query(tmp_path: Path) -> None:
    from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
    from tests.report.package_fixture import answer, built_package, cite, find, investigate

    root = built_package(tmp_path)
    script = [
        answer("H1", find("NO_SUCH_MARKER")),
        answer(
            "H1",
            {"kind": "conclusion", "summary": "The log never names the marker."},
            [cite("E1", "/result/matches", "contradicts")],
            assessment="refuted",
            confidence=0.6,
        ),
        answer("H2", find("QuestID")),
        answer(
            "H2",
            {"kind": "conclusion", "summary": "The log names the quest."},
            [cite("E2", "/result/matches/0/text")],
            assessment="supported",
            confidence=0.6,
        ),
    ]
    with ScriptedLlmServer(script) as server:
        investigate(root, server)
    report = build_report(root)
    cited = report["hypotheses"][0]["citations"][0]
    assert cited["verification"] == "verified"
    assert cited["excerpt"].startswith("no lines matched: ")
    assert '"operation": "source.find_text"' in cited["excerpt"]
    assert "NO_SUCH_MARKER" in cited["excerpt"]
