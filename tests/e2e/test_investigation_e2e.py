"""End to end: the Wolpertinger-style fixture case investigated by a scripted
OpenAI-compatible model on loopback, against the real MariaDB (behind a proxy
that goes down mid-way) and a real git repository."""

from __future__ import annotations

import hashlib
import itertools
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.case.builder.conftest import ResearchSetup, case_spec, write_config
from tests.e2e.conftest import TcpProxy, prefix_ratios
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer, drop
from tests.investigation.package_fixtures import built_with_research, scripted_client
from tests.project_research.conftest import TestDatabase
from tests.project_research.git_fixtures import git
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.investigation.budget import BudgetManager
from viano_bug_analysis.investigation.checkpoints import CheckpointStore
from viano_bug_analysis.investigation.commands import status_document
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.evidence import EvidenceStore, resolve_reference
from viano_bug_analysis.investigation.llm import LlmError
from viano_bug_analysis.investigation.prompts import (
    CURRENT_PROJECT_VERSION,
    build_messages,
    prompt_text,
)
from viano_bug_analysis.investigation.recovery.admission import admit_repair
from viano_bug_analysis.investigation.recovery.repair import RepairBinding, build_repair_prompt
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.project_research import ProjectResearch, load_config
from viano_bug_analysis.report import build_report

SETTINGS = InvestigationSettings(
    max_steps=8, invalid_response_limit=3, response_recovery_version=1, dispatch_cost=100
)


def answer(evidence: list[dict[str, str]], next_step: dict[str, Any], **fields: Any) -> str:
    document = {
        "hypothesis_id": "H1",
        "assessment": fields.get("assessment", "undetermined"),
        "confidence": fields.get("confidence", 0.3),
        "evidence": evidence,
        "next": next_step,
    }
    return orjson.dumps(document).decode()


def rows(table: str, columns: list[str], filters: Any) -> dict[str, Any]:
    return {
        "kind": "tool",
        "operation": "project.query",
        "arguments": {
            "kind": "database.rows",
            "table": table,
            "columns": columns,
            "filters": filters,
            "offset": 0,
            "limit": 5,
        },
    }


def cite(evidence_id: str, reference: str, role: str = "supports") -> dict[str, str]:
    return {"evidence_id": evidence_id, "role": role, "reference": reference}


QUEST = ["ID", "LogTitle", "StartItem", "RequiredNpcOrGo1"]
SYMBOL_ARGS = {"kind": "source.symbol", "symbol": "npc_wild_wolpertinger", "offset": 0, "limit": 5}

SCRIPT = [
    # 1: a fenced answer.
    "```json\n"
    + answer(
        [], rows("quest_template", QUEST, [{"column": "ID", "operator": "eq", "value": 90001}])
    )
    + "\n```",
    # 2: next.arguments sent as a JSON string.
    answer(
        [cite("E1", "/rows/0/RequiredNpcOrGo1", "context")],
        {
            "kind": "tool",
            "operation": "project.query",
            "arguments": orjson.dumps(SYMBOL_ARGS).decode(),
        },
    ),
    # 3: a primitive filter list.
    answer(
        [cite("E2", "/matches/0", "context")],
        rows(
            "creature_template",
            ["entry", "name", "ScriptName"],
            [["name", "contains", "Wolpertinger"]],
        ),
    ),
    # 4, first attempt: `like` is not an operator: rejected with the operator hint.
    answer(
        [], rows("quest_template", ["ID", "LogTitle"], [["LogTitle", "like", "%Wolpertinger%"]])
    ),
    # 4, second attempt: corrected by the model (the research outage hits this dispatch).
    answer(
        [],
        rows(
            "quest_template",
            ["ID", "LogTitle"],
            [{"column": "LogTitle", "operator": "contains", "value": "Wolpertinger"}],
        ),
    ),
    # 5, first attempt: a conclusion citing a row that E1 does not have: rejected,
    # the feedback names the pointer and what exists.
    answer(
        [cite("E1", "/rows/9/RequiredNpcOrGo1"), cite("E2", "/matches/0")],
        {"kind": "conclusion", "summary": "The quest requires another creature."},
        assessment="supported",
        confidence=0.8,
    ),
    # 5, second attempt: the conclusion, citing a DB row and a git blob line.
    answer(
        [
            cite("E1", "/rows/0/RequiredNpcOrGo1"),
            cite("E2", "/matches/0"),
            cite("E3", "/rows/0/ScriptName", "context"),
        ],
        {
            "kind": "conclusion",
            "summary": "The quest requires credit creature 90005, but the net hits creature "
            "90002, whose C++ script is the only handler.",
        },
        assessment="supported",
        confidence=0.8,
    ),
]


CALL_ORDER = [(1, 1), (2, 1), (3, 1), (4, 1), (4, 2), (5, 1), (5, 2)]


def _measure_repair_prompt(log: StepLog) -> None:
    """The repair prompt against the regular call it would replace (SPEC §9):
    the step-3 call of this case, with its answer's filters sent as one flat list."""
    call = log.get("H1", 3, 1, "call")
    decision = log.get("H1", 3, 1, "decision")
    assert call is not None and decision is not None
    normal = prompt_text(build_messages(call["prompt_version"], call["context"]))
    broken = decision["response"]
    broken["next"]["arguments"]["filters"] = ["name", "contains", "Wolpertinger", "entry", "gt", 1]
    admission = admit_repair(broken)
    assert admission.admitted and admission.schema_excerpt is not None
    binding = RepairBinding(
        hypothesis_id="H1",
        hypothesis=call["context"]["hypothesis"]["statement"],
        previous_result="",
        visible_evidence_ids=("E1", "E2"),
    )
    repair = build_repair_prompt(
        orjson.dumps(broken).decode(), admission.target, admission.schema_excerpt, binding
    )
    print(
        f"\nprompt sizes: repair {len(repair)} vs normal {len(normal)} characters "
        f"(ratio {len(repair) / len(normal):.2f})"
    )
    assert len(repair) < 0.5 * len(normal)


def _measure_prefix_reuse(sent: list[list[dict[str, str]]]) -> None:
    """Within the hypothesis each prompt starts with the stable part of the one before
    (SPEC §5, prefix caching): the shared-prefix share of each step's prompt."""
    for previous, current in itertools.pairwise(sent):
        assert current[0] == previous[0]  # the system message never changes
    ratios = prefix_ratios(sent)
    print("\nshared-prefix ratio per call: " + ", ".join(f"{r:.2f}" for r in ratios))
    assert min(ratios) > 0.5


def build_case(tmp_path: Path, setup: ResearchSetup) -> Path:
    return built_with_research(case_spec(tmp_path / "inputs"), tmp_path / "package", setup)


def proxied_config(
    tmp_path: Path, db: TestDatabase, repo: tuple[Path, str], proxy: TcpProxy
) -> Path:
    directory = tmp_path / "proxied"
    directory.mkdir(exist_ok=True)
    return write_config(directory, db, repo[0], repo[1], port=proxy.port)


def controller(
    package: Path, server: ScriptedLlmServer, research: Any, **kw: Any
) -> InvestigationController:
    client = scripted_client(server, model="scripted", read_timeout=10.0)
    return InvestigationController(
        package, model=client, settings=SETTINGS, research=research, **kw
    )


def test_the_fixture_case_is_investigated_end_to_end(
    tmp_path: Path,
    research_setup: ResearchSetup,
    mariadb: TestDatabase,
    source_repo: tuple[Path, str],
    proxy: TcpProxy,
) -> None:
    package = build_case(tmp_path, research_setup)
    config = load_config(proxied_config(tmp_path, mariadb, source_repo, proxy))

    def outage(point: str) -> None:
        if point == "H1-4-2-decision":
            proxy.down()  # MariaDB becomes unreachable right before the dispatch

    with ScriptedLlmServer(SCRIPT) as server, ProjectResearch(config) as research:
        first = controller(package, server, research, after_step=outage).run()
        assert (first.state, first.code) == ("blocked", "RESEARCH_UNAVAILABLE")
        manifest = load_package(package).manifest
        assert manifest["status"]["state"] == "blocked"
        assert manifest["status"]["code"] == "RESEARCH_UNAVAILABLE"
        blocked = CheckpointStore(package).current()
        assert blocked is not None and blocked.payload_dict()["reservation"] == "H1:4:2:dispatch"
        # vba status and the case report name the provider, the typed reason and the
        # fix, from the same stored fields, and nothing of the connection itself.
        cause = status_document(package)["blocked"]["research"]
        assert cause["provider"] == "database"
        assert cause["reason"] in {"connection_refused", "server_gone", "connection_failed"}
        assert cause["fix"].startswith(
            f"research provider database unavailable ({cause['reason']})"
        )
        assert build_report(package)["state"]["blocked"]["research"] == cause
        shown = " ".join(cause.values())
        assert "127.0.0.1" not in shown and str(proxy.port) not in shown
        # Without an operator resume nothing runs.
        assert controller(package, server, research).run().state == "blocked"
        calls_before_resume = len(server.requests)

        proxy.up()  # MariaDB comes back
        resumed = subprocess.run(
            [
                sys.executable,
                "-m",
                "viano_bug_analysis.cli",
                "resume",
                str(package),
                "--operator",
                "ops",
            ],
            capture_output=True,
            text=True,
        )
        assert resumed.returncode == 0, resumed.stderr
        final = controller(package, server, research).run()
        assert final.state == "concluded"
        assert len(server.requests) == calls_before_resume + 2 == len(SCRIPT)
        assert server.unscripted == 0

    log = StepLog(package)
    # The fenced answer and the JSON-encoded arguments were normalized, not rejected.
    assert log.get("H1", 1, 1, "decision")["applied_rules"] == ["strip_outer_fence"]  # type: ignore[index]
    assert log.get("H1", 2, 1, "decision")["applied_rules"] == ["decode_encoded_next_arguments"]  # type: ignore[index]
    assert log.get("H1", 3, 1, "decision")["applied_rules"] == ["filter_from_triple"]  # type: ignore[index]
    like = log.get("H1", 4, 1, "decision")
    assert like is not None and like["status"] == "rejected"
    assert "allowed operators" in like["hint"]
    # The hint reached the model in the very next call, which corrected the filter.
    corrected_prompt = server.requests[4].messages[-1]["content"]
    assert "allowed operators: eq, ne, lt, le, gt, ge, contains, in" in corrected_prompt
    # The normalization note rode along in the next regular call (no extra call).
    assert "Format note about your previous answer" in server.requests[1].messages[-1]["content"]

    outcome = final.outcomes["H1"]
    assert outcome["assessment"] == "supported" and outcome["reason"] == "concluded"
    store = EvidenceStore(package)
    records = {r["evidence_id"]: r for r in store.records()}
    assert sorted(records) == ["E1", "E2", "E3", "E4"]

    # E1 leads back to a database row ...
    e1 = records["E1"]
    assert e1["origin"] == {
        "kind": "database",
        "database": "cata_world",
        "snapshot_id": "cata_world@fixture",
    }
    assert resolve_reference(store.payload(e1), "/rows/0/RequiredNpcOrGo1") == 90005
    capture = orjson.loads((package / e1["capture_path"]).read_bytes())
    assert (
        hashlib.sha256((package / e1["capture_path"]).read_bytes()).hexdigest()
        == e1["capture_sha256"]
    )
    assert capture["result"]["result"]["rows"][0]["ID"] == 90001
    # ... and E2 to a line of a git blob at the pinned commit.
    e2 = records["E2"]
    match = resolve_reference(store.payload(e2), "/matches/0")
    assert e2["origin"]["commit"] == source_repo[1]
    blob_text = git(source_repo[0], "cat-file", "-p", match["blob"])
    assert blob_text.splitlines()[match["line"] - 1] == match["text"]
    assert hashlib.sha256((blob_text + "\n").encode()).hexdigest() == match["sha256"]

    # Budget: every call and dispatch reserved and settled, nothing left reserved.
    account = BudgetManager(package).account("H1")
    assert account.reserved == 0 and 0 < account.spent <= account.limit
    assert account.status == "concluded"
    # Every stored prompt rebuilds byte for byte from its stored version and context.
    sent = [request.messages for request in server.requests]
    rebuilt = [
        build_messages(call["prompt_version"], call["context"])
        for call in (log.get("H1", s, a, "call") for s, a in CALL_ORDER)
        if call is not None
    ]
    assert rebuilt == sent
    assert all(m[0]["content"].count("project.query") for m in sent)
    assert log.get("H1", 1, 1, "call")["prompt_version"] == CURRENT_PROJECT_VERSION  # type: ignore[index]
    # The unresolved citation was rejected and its hint reached the corrected call.
    unresolved = log.get("H1", 5, 1, "decision")
    assert unresolved is not None and unresolved["reason"] == "citation_unresolved"
    assert (
        "/evidence/0/reference: E1: no value at this pointer: /rows/9/RequiredNpcOrGo1; "
        "the deepest existing pointer is /rows, an array with indexes 0-0"
    ) in server.requests[6].messages[-1]["content"]
    # Every stored citation carries its value hash and where the value comes from.
    e1_cite, e2_cite, _ = outcome["citations"]
    assert e1_cite["provenance"]["kind"] == "project_database"
    assert e1_cite["provenance"]["capture_sha256"] == records["E1"]["capture_sha256"]
    assert e1_cite["provenance"]["row_pointer"] == "/rows/0"
    assert e2_cite["provenance"]["kind"] == "project_git"
    assert e2_cite["provenance"]["commit"] == source_repo[1]
    assert e2_cite["provenance"]["blob"] == match["blob"]
    assert e2_cite["provenance"]["line"] == match["line"]
    assert e2_cite["provenance"]["path"] == match["path"]
    _measure_prefix_reuse(sent)
    _measure_repair_prompt(log)
    replies = [log.get("H1", s, a, "reply") for s, a in CALL_ORDER]
    tokens = sum(r["chat"]["usage"]["total_tokens"] for r in replies if r)
    dispatches = [e for e in log.events("H1") if e[3] == "dispatch"]
    print(
        f"\ntranscript: {len(CALL_ORDER)} model calls, {tokens} tokens, "
        f"{len(dispatches)} queries dispatched, {len(records)} evidence records, "
        f"budget {account.spent}/{account.limit}"
    )
    # Technical state: the outage never ended the hypothesis or touched evidence.
    kinds = [c.state for c in CheckpointStore(package).history()]
    assert kinds[-1] == "concluded" and "blocked" in kinds


def test_killed_at_every_step_resumes_without_loss_or_duplicates(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    template = build_case(tmp_path, research_setup)
    script = SCRIPT
    clean_points: list[str] = []
    with ScriptedLlmServer(script) as server, research_setup.research() as research:
        clean_pkg = tmp_path / "clean"
        shutil.copytree(template, clean_pkg)
        controller(clean_pkg, server, research, after_step=clean_points.append).run()
    clean_spent = BudgetManager(clean_pkg).account("H1").spent
    clean_evidence = [r["capture_sha256"] for r in EvidenceStore(clean_pkg).records()]

    class Killed(BaseException):
        pass

    for stop in range(len(clean_points)):
        package = tmp_path / f"k{stop}"
        shutil.copytree(template, package)
        calls = 0

        def hook(point: str, stop: int = stop) -> None:
            nonlocal calls
            calls += 1
            if calls == stop + 1:
                raise Killed(point)

        with ScriptedLlmServer(script) as server, research_setup.research() as research:
            with pytest.raises(Killed):
                controller(package, server, research, after_step=hook).run()
            final = controller(package, server, research).run()
            assert final.state == "concluded", clean_points[stop]
            # No request lost, none sent twice.
            assert len(server.requests) == len(script), clean_points[stop]
        # No double charge, no duplicate evidence.
        assert BudgetManager(package).account("H1").spent == clean_spent, clean_points[stop]
        evidence = [r["capture_sha256"] for r in EvidenceStore(package).records()]
        assert evidence == clean_evidence, clean_points[stop]


def test_the_command_line_investigates_and_reports_status(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    package = build_case(tmp_path, research_setup)
    script = [
        SCRIPT[0],
        answer(
            [cite("E1", "/rows/0/LogTitle", "context")],
            {"kind": "conclusion", "summary": "Nothing here explains the report."},
            assessment="refuted",
            confidence=0.6,
        ),
    ]
    with ScriptedLlmServer(script) as server:
        config = tmp_path / "investigate.toml"
        config.write_text(
            f"""[llm]
base_urls = ["{server.base_url}"]
model = "scripted"
max_retries = 0
context_tokens = 32768
[investigation]
response_recovery_version = 1
max_steps = 4
[research]
config = "{research_setup.config_path}"
"""
        )
        done = subprocess.run(
            [sys.executable, "-m", "viano_bug_analysis.cli", "investigate", str(package),
             "--config", str(config)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "H1: refuted (concluded) evidence: E1" in done.stdout
        assert "H1 step 1: project.query" in done.stderr and "budget left" in done.stderr
        assert len(server.requests) == 2
    status = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "status", str(package), "--json"],
        capture_output=True,
        text=True,
    )
    document = orjson.loads(status.stdout)
    assert document["state"] == "concluded" and document["evidence"] == 1
    assert document["hypotheses"] == {"H1": "refuted"}
    assert document["budget"]["H1"]["status"] == "concluded"


def test_the_model_asks_the_references_kind_and_cites_a_row_of_it(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    """``vba investigate`` answers ``project.query`` ``references`` through the
    profile's map: one evidence item whose cited row names its part capture."""
    from viano_bug_analysis.enrichment import vcore_profile
    from viano_bug_analysis.enrichment.reference_query import ReferenceResearch
    from viano_bug_analysis.investigation.evidence import CitationResolver

    package = build_case(tmp_path, research_setup)
    query = {"kind": "references", "entity_type": "quest", "id": 90001, "limit": 3}
    service = ProjectResearch(load_config(research_setup.config_path))
    with ReferenceResearch(service, vcore_profile()) as research:
        expected = research.query(query)["result"]
    entries = expected["database"]["entries"]
    e = next(i for i, entry in enumerate(entries) if entry["rows"])
    cited = f"/database/entries/{e}/rows/0/key"
    script = [
        answer([], {"kind": "tool", "operation": "project.query", "arguments": query}),
        answer(
            [cite("E1", cited)],
            {"kind": "conclusion", "summary": "The quest is referenced where the map says."},
            assessment="supported",
            confidence=0.6,
        ),
    ]
    with ScriptedLlmServer(script) as server:
        config = tmp_path / "investigate.toml"
        config.write_text(
            f"""[llm]
base_urls = ["{server.base_url}"]
model = "scripted"
max_retries = 0
context_tokens = 32768
[investigation]
response_recovery_version = 1
max_steps = 4
[research]
config = "{research_setup.config_path}"
"""
        )
        done = subprocess.run(
            [sys.executable, "-m", "viano_bug_analysis.cli", "investigate", str(package),
             "--config", str(config)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "H1: supported (concluded) evidence: E1" in done.stdout
        # The second prompt shows the references answer (its view), without its part
        # captures or any hash.
        shown = server.requests[1].messages[1]["content"]
        assert "references of quest " in shown and "database: " in shown
        assert "capture" not in shown and "sha256" not in shown
    store = EvidenceStore(package)
    record = store.get("E1")
    assert record["origin"]["kind"] == "references"
    assert "captures" not in store.payload(record)
    provenance = CitationResolver(store).resolve(cite("E1", cited)).provenance
    assert provenance["part_capture_sha256"] == entries[e]["rows"][0]["capture_sha256"]


def test_a_repair_interrupted_by_a_transport_failure_resumes_from_its_stored_plan(
    tmp_path: Path, research_setup: ResearchSetup
) -> None:
    package = build_case(tmp_path, research_setup)
    flat = ["name", "contains", "Wolpertinger", "entry", "gt", 90000]
    good = [
        {"column": "name", "operator": "contains", "value": "Wolpertinger"},
        {"column": "entry", "operator": "gt", "value": 90000},
    ]
    broken = answer([], rows("creature_template", ["entry", "name"], flat))
    with research_setup.research() as research:
        with ScriptedLlmServer([broken, drop()]) as server:
            with pytest.raises(LlmError):
                controller(package, server, research).run()
            assert len(server.requests) == 2  # the answer, then the failed repair call
        conclusion = answer(
            [cite("E1", "/rows/0/name", "context")],
            {"kind": "conclusion", "summary": "Seen."},
        )
        repaired = orjson.dumps({"replacement": good}).decode()
        with ScriptedLlmServer([repaired, conclusion]) as server:
            final = controller(package, server, research).run()
            # The stored plan was carried out: one repair call, the answer was not asked again.
            assert "investigation_format_repair_v1" in server.requests[0].messages[0]["content"]
            assert len(server.requests) == 2
    assert final.state == "concluded"
    decision = StepLog(package).get("H1", 1, 1, "decision")
    assert decision is not None and decision["status"] == "accepted"
    assert decision["response"]["next"]["arguments"]["filters"] == good
    assert decision["invalid_responses"] == 2  # the answer and the repair attempt
    record = EvidenceStore(package).records()[0]
    assert record["request"]["filters"] == good
