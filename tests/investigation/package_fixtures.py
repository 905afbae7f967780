"""A small investigated package for the store tests: built without research, then
investigated with a scripted model (one source.find_text step, which takes
evidence E1 from a router result, then a conclusion), optionally stopped at a
controller hook point as a kill there would stop it; and the pieces the
investigation and end-to-end tests share to script one (the find query, an
answer, a client of the scripted server, a ``vba`` child process)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from tests.case.builder.conftest import ResearchSetup, case_spec
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from viano_bug_analysis.case.builder import CaseBuilder
from viano_bug_analysis.enrichment import research_origin, vcore_profile
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.controller import InvestigationController, RunOutcome
from viano_bug_analysis.investigation.llm import ChatClient, LlmConfig
from viano_bug_analysis.project_research import ProjectResearch, load_config

REPO = Path(__file__).resolve().parents[2]

# The first query of the built case's hypotheses: a ``source.find_text`` on the
# diagnostics log, as the interpreter proposes it and as a tool step.
FIND_QUERY: dict[str, Any] = {
    "operation": "source.find_text",
    "arguments": {
        "source_refs": ["diag-001"],
        "text": "QuestID",
        "case_sensitive": True,
        "offset": 0,
        "limit": 5,
    },
}
FIND: dict[str, Any] = {"kind": "tool", **FIND_QUERY}
# A live-research first query (``project.query`` rows of creature 90002), as
# proposed and as a tool step.
ROWS_QUERY: dict[str, Any] = {
    "operation": "project.query",
    "arguments": {
        "kind": "database.rows",
        "table": "creature_template",
        "columns": ["entry", "name"],
        "filters": [{"column": "entry", "operator": "eq", "value": 90002}],
        "offset": 0,
        "limit": 5,
    },
}
ROWS: dict[str, Any] = {"kind": "tool", **ROWS_QUERY}
CONCLUDE: dict[str, Any] = {"kind": "conclusion", "summary": "done"}
SETTINGS = InvestigationSettings(response_recovery_version=1)


def answer(next_step: dict[str, Any], evidence: list[Any] | None = None, *, hid: str = "H1") -> str:
    """An undetermined investigation answer of hypothesis ``hid`` that takes ``next_step``."""
    return orjson.dumps(
        {
            "hypothesis_id": hid,
            "assessment": "undetermined",
            "confidence": 0.5,
            "evidence": evidence or [],
            "next": next_step,
        }
    ).decode()


def scripted_client(server: ScriptedLlmServer, **config: Any) -> ChatClient:
    """A ChatClient that asks ``server`` once per call (no retries); ``config``
    sets further ``LlmConfig`` fields (or another model name than ``m``)."""
    settings: dict[str, Any] = {"model": "m", "max_retries": 0, **config}
    return ChatClient(LlmConfig(base_urls=(server.base_url,), **settings))


SCRIPT = [answer(FIND), answer(CONCLUDE)]


class Stopped(Exception):
    """Raised from the step hook: the run ends there, like a kill."""


def built_package(tmp_path: Path) -> Path:
    root = tmp_path / "package"
    CaseBuilder(case_spec(tmp_path / "inputs"), root).build()
    return root


def built_with_research(spec_path: Path, root: Path, setup: ResearchSetup) -> Path:
    """The case of ``spec_path`` built at ``root`` with the vcore profile and live
    research (the test MariaDB and git repository of ``setup``)."""
    config = load_config(setup.config_path)
    with ProjectResearch(config) as research:
        CaseBuilder(
            spec_path,
            root,
            profile=vcore_profile(),
            project_research=research,
            research_origin=research_origin(config),
        ).build()
    return root


def investigate(root: Path, server: ScriptedLlmServer, *, stop_at: str | None = None) -> RunOutcome:
    def hook(point: str) -> None:
        if point == stop_at:
            raise Stopped(point)

    controller = InvestigationController(
        root, model=scripted_client(server), settings=SETTINGS, after_step=hook
    )
    return controller.run()


def investigated_package(tmp_path: Path, *, stop_at: str | None = None) -> Path:
    """A package investigated to the end, or up to hook point ``stop_at``."""
    root = built_package(tmp_path)
    with ScriptedLlmServer(SCRIPT) as server, contextlib.suppress(Stopped):
        investigate(root, server, stop_at=stop_at)
    return root


def write_config(tmp_path: Path, server: ScriptedLlmServer) -> Path:
    config = tmp_path / "investigate.toml"
    config.write_text(
        f'[llm]\nbase_urls = ["{server.base_url}"]\nmodel = "m"\nmax_retries = 0\n'
        "[investigation]\nresponse_recovery_version = 1\n"
    )
    return config


def vba(*args: str) -> list[str]:
    return [sys.executable, "-m", "viano_bug_analysis.cli", *args]


def run_vba(*args: str) -> subprocess.CompletedProcess[str]:
    """``vba ARGS`` in a child process from the repository root, its output as text."""
    return subprocess.run(vba(*args), capture_output=True, text=True, cwd=REPO, check=False)
