"""Crash safety of the investigation controller, killed right after every file commit.

The scenario has two hypotheses and every kind of durable step: a broken answer
that is repaired by a second model call, a project query (real MariaDB, real git
repo), a snapshot query through the router, conclusions. A clean run is
measured first; then for every file commit of that run the investigation is
killed right after it (``KillAtCommit``) and started again. The rerun must end
exactly as the clean run: the same model requests (none lost, none repeated, a
stored repair answer never asked again), a budget journal that charges what the
provider billed, the same step records (``new`` included), every conclusion
completed (account closed, ``hypothesis_done`` written) and a manifest in line
with the checkpoint log.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson

from tests.case.builder.conftest import ResearchSetup, case_spec
from tests.e2e.crash import (
    KillAtCommit,
    rerun_after_each_commit,
    sigkill_after_each_commit,
    sigkill_vba,
)
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import FIND, built_with_research, scripted_client
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.investigation.budget import BudgetManager
from viano_bug_analysis.investigation.checkpoints import CheckpointStore
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.evidence import EvidenceStore
from viano_bug_analysis.investigation.recovery import CallRecordStore
from viano_bug_analysis.investigation.steps import STEPS_DIR, StepLog

SETTINGS = InvestigationSettings(
    max_steps=4, invalid_response_limit=3, response_recovery_version=1, dispatch_cost=100
)
TOKENS_PER_REPLY = 11 + 7  # what the scripted server bills for every answer

FLAT = ["name", "contains", "Wolpertinger", "entry", "gt", 90000]
GOOD = [
    {"column": "name", "operator": "contains", "value": "Wolpertinger"},
    {"column": "entry", "operator": "gt", "value": 90000},
]


def answer(hid: str, next_step: dict[str, Any], evidence: list[Any] | None = None) -> str:
    return orjson.dumps(
        {
            "hypothesis_id": hid,
            "assessment": "supported" if next_step["kind"] == "conclusion" else "undetermined",
            "confidence": 0.5,
            "evidence": evidence or [],
            "next": next_step,
        }
    ).decode()


def rows(columns: list[str], filters: Any) -> dict[str, Any]:
    arguments = {
        "kind": "database.rows",
        "table": "creature_template",
        "columns": columns,
        "filters": filters,
        "offset": 0,
        "limit": 5,
    }
    return {"kind": "tool", "operation": "project.query", "arguments": arguments}


def conclusion(hid: str, evidence_id: str, reference: str) -> str:
    cite = {"evidence_id": evidence_id, "role": "supports", "reference": reference}
    return answer(hid, {"kind": "conclusion", "summary": "Seen."}, [cite])


SCRIPT = [
    answer("H1", rows(["entry", "name"], FLAT)),  # a flat filter list: repaired
    orjson.dumps({"replacement": GOOD}).decode(),  # the repair call's answer
    conclusion("H1", "E1", "/rows/0/name"),
    answer("H2", FIND),  # a snapshot query through the router
    conclusion("H2", "E2", "/result/matches/0"),  # a snapshot answer starts at /result
]


def build_two_hypothesis_case(tmp_path: Path, setup: ResearchSetup) -> Path:
    spec_path = case_spec(tmp_path / "inputs")
    spec = orjson.loads(spec_path.read_bytes())
    spec["hypotheses"].append({"id": "H2", "statement": "The diagnostics log names the quest."})
    spec_path.write_bytes(orjson.dumps(spec))
    return built_with_research(spec_path, tmp_path / "template", setup)


def controller(package: Path, server: ScriptedLlmServer, research: Any) -> InvestigationController:
    client = scripted_client(server, model="scripted", read_timeout=10.0)
    return InvestigationController(package, model=client, settings=SETTINGS, research=research)


def end_state(package: Path) -> dict[str, Any]:
    """Everything a rerun must reproduce, without times and latencies."""
    steps = {}
    for path in sorted((package / STEPS_DIR).iterdir()):
        if path.name.startswith("."):
            continue
        record = orjson.loads(path.read_bytes())
        if "chat" in record:  # reply and repair: the answer, not its latency
            record = {"content": record["chat"]["content"], "usage": record["chat"]["usage"]}
        steps[path.name] = record
    log = StepLog(package)
    budget = BudgetManager(package).snapshot()
    return {
        "steps": steps,
        "outcomes": {h: log.outcome(h) for h in ("H1", "H2")},
        "accounts": budget["accounts"],
        "reservations": budget["reservations"],
        "checkpoints": [
            (c.kind, c.state, dict(c.payload), c.blocked, c.rejection)
            for c in CheckpointStore(package).history()
        ],
        "manifest": {
            k: v for k, v in load_package(package).manifest.items() if k in ("phase", "status")
        },
        "call_records": [(r.seq, r.sha256) for r in CallRecordStore(package).list()],
        "evidence": [
            (r["evidence_id"], r["hypothesis_id"], r["step_key"], r.get("capture_sha256"))
            for r in EvidenceStore(package).records()
        ],
    }


def billed_by_journal(package: Path) -> int:
    """What the budget journal says the model calls cost (actual tokens, not capped)."""
    reservations = BudgetManager(package).snapshot()["reservations"]
    return sum(
        r["actual"] or 0
        for key, r in reservations.items()
        if key.endswith((":llm", ":repair")) and r["state"] == "settled"
    )


def test_killed_after_every_file_commit_the_rerun_ends_as_the_clean_run(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    template = build_two_hypothesis_case(tmp_path, research_setup)
    clean = tmp_path / "clean"
    shutil.copytree(template, clean)
    with ScriptedLlmServer(SCRIPT) as server, research_setup.research() as research:
        with KillAtCommit(None) as count:
            assert controller(clean, server, research).run().state == "concluded"
        assert len(server.requests) == len(SCRIPT)
    expected = end_state(clean)
    assert expected["accounts"]["H1"]["status"] == "concluded"
    assert billed_by_journal(clean) == TOKENS_PER_REPLY * len(SCRIPT)
    assert [s[2].get("event") for s in expected["checkpoints"]].count("hypothesis_done") == 2
    assert count.commits > 30  # every kind of step was committed
    print(f"\nclean run: {count.commits} file commits, each one killed after in turn")

    def run(package: Path, server: ScriptedLlmServer) -> str:
        with research_setup.research() as research:
            return controller(package, server, research).run().state

    def end(package: Path) -> tuple[int, dict[str, Any]]:
        # The journal charges exactly what the provider billed.
        return billed_by_journal(package), end_state(package)

    billed = TOKENS_PER_REPLY * len(SCRIPT)
    rerun_after_each_commit(
        template,
        tmp_path,
        SCRIPT,
        count,
        run,
        state="concluded",
        end=end,
        expected=(billed, expected),
    )


def test_vba_investigate_killed_with_sigkill_after_every_file_commit_resumes_exactly(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    template = build_two_hypothesis_case(tmp_path, research_setup)

    def vba(package: Path, server: ScriptedLlmServer, kill_after: int) -> int:
        config = tmp_path / "investigate.toml"
        config.write_text(
            f"""[llm]
base_urls = ["{server.base_url}"]
model = "scripted"
max_retries = 0
[investigation]
response_recovery_version = 1
max_steps = 4
dispatch_cost = 100
[research]
config = "{research_setup.config_path}"
"""
        )
        return sigkill_vba(kill_after, "investigate", str(package), "--config", str(config))

    def end(package: Path) -> tuple[int, dict[str, Any]]:
        return billed_by_journal(package), end_state(package)

    commits = sigkill_after_each_commit(template, tmp_path, SCRIPT, vba, end)
    # The journal charges exactly what the provider billed.
    assert billed_by_journal(tmp_path / "clean") == TOKENS_PER_REPLY * len(SCRIPT)
    assert commits >= 30
    print(f"\nvba investigate killed with SIGKILL after each of its {commits} file commits")
