"""A case package investigated to a verdict, with hostile text everywhere a reader sees.

Built without research and investigated by the scripted OpenAI-compatible
model: H1 searches the session log (E1) and concludes ``supported`` citing a
JSON Pointer and a line of E1; H2 searches again (E2) and concludes
``refuted``. The report text, a hypothesis statement, a log line and the
model's summaries carry markup, a Markdown fence and a script, which every
renderer must show as text.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from tests.case.builder.conftest import DIAG_LOG, case_spec
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.controller import InvestigationController, RunOutcome
from viano_bug_analysis.investigation.llm import ChatClient, LlmConfig

HOSTILE = (
    '<script>alert("x")</script></pre><img src=x onerror=alert(1)> ```` [a](javascript:x) &amp;'
)
HOSTILE_LINE = f"[2026-10-03 20:14:40] QuestID=90001 note={HOSTILE}"
REPORT_TEXT = f"I threw the net at a wolpertinger but my quest did not count it.\n{HOSTILE}"
H2_STATEMENT = f"The diagnostics log names another quest {HOSTILE}"
SUMMARY_H1 = f"The log shows quest 90001 incomplete after the spell hit. {HOSTILE}"
SUMMARY_H2 = "The log names only quest 90001."
SETTINGS = InvestigationSettings(response_recovery_version=1, dispatch_cost=100)


def find(text: str) -> dict[str, Any]:
    return {
        "kind": "tool",
        "operation": "source.find_text",
        "arguments": {
            "source_refs": ["diag-001"],
            "text": text,
            "case_sensitive": True,
            "offset": 0,
            "limit": 5,
        },
    }


def answer(hid: str, next_step: dict[str, Any], evidence: Sequence[Any] = (), **fields: Any) -> str:
    return orjson.dumps(
        {
            "hypothesis_id": hid,
            "assessment": fields.get("assessment", "undetermined"),
            "confidence": fields.get("confidence", 0.5),
            "evidence": list(evidence),
            "next": next_step,
        }
    ).decode()


def cite(evidence_id: str, reference: str, role: str = "supports") -> dict[str, str]:
    return {"evidence_id": evidence_id, "role": role, "reference": reference}


H1_CITATIONS = [cite("E1", "/result/matches/0/text"), cite("E1", "L5", "context")]
H2_CITATIONS = [cite("E2", "/result/matches/0/text", "contradicts")]
SCRIPT = [
    answer("H1", find("QuestID")),
    answer(
        "H1",
        {"kind": "conclusion", "summary": SUMMARY_H1},
        H1_CITATIONS,
        assessment="supported",
        confidence=0.8,
    ),
    answer("H2", find("objectives")),
    answer(
        "H2",
        {"kind": "conclusion", "summary": SUMMARY_H2},
        H2_CITATIONS,
        assessment="refuted",
        confidence=0.7,
    ),
]


def write_spec(directory: Path, hypotheses: list[dict[str, str]]) -> Path:
    path = case_spec(directory, text=REPORT_TEXT)
    (directory / "wowdiag" / "session.log").write_text(DIAG_LOG + HOSTILE_LINE + "\n")
    spec = orjson.loads(path.read_bytes())
    spec["hypotheses"] = hypotheses
    path.write_bytes(orjson.dumps(spec))
    return path


HYPOTHESES = [
    {"id": "H1", "statement": "The net's spell hit gives no quest credit."},
    {"id": "H2", "statement": H2_STATEMENT},
]


def built_package(tmp_path: Path, hypotheses: list[dict[str, str]] = HYPOTHESES) -> Path:
    root = tmp_path / "package"
    CaseBuilder(write_spec(tmp_path / "inputs", hypotheses), root).build()
    return root


def investigate(root: Path, server: ScriptedLlmServer, **kw: Any) -> RunOutcome:
    client = ChatClient(LlmConfig(base_urls=(server.base_url,), model="m", max_retries=0))
    return InvestigationController(root, model=client, settings=SETTINGS, **kw).run()


class Stopped(Exception):
    """Raised from the step hook: the run ends there, like a kill."""


def reported_package(tmp_path: Path, *, stop_at: str | None = None) -> Path:
    """The package investigated to its verdict, or up to hook point ``stop_at``."""

    def hook(point: str) -> None:
        if point == stop_at:
            raise Stopped(point)

    root = built_package(tmp_path)
    with ScriptedLlmServer(SCRIPT) as server, contextlib.suppress(Stopped):
        investigate(root, server, after_step=hook)
    return root
