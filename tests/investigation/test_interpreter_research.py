"""The CaseInterpreter on a case built with research (real MariaDB, real git repository).

The prompt shows the revision's enrichment facts by fact ID and offers
``project.query``; a first query of that kind is checked against
project-query-v1 and nothing live is asked; an unknown fact ID is rejected
with feedback. Needs the test services (``scripts/with_test_services.sh``;
``make test`` runs them).
"""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.case.builder.conftest import (  # noqa: F401 (fixtures)
    ResearchSetup,
    case_spec,
    mariadb,
    research_setup,
    source_repo,
)
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from tests.investigation.package_fixtures import (
    CONCLUDE,
    FIND_QUERY,
    ROWS_QUERY,
    built_with_research,
    scripted_client,
)
from tests.investigation.package_fixtures import answer as step_answer
from tests.investigation.test_interpreter import answer, hypothesis, interpreter
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.investigation.config import InvestigationSettings
from viano_bug_analysis.investigation.controller import InvestigationController
from viano_bug_analysis.investigation.evidence import EvidenceStore
from viano_bug_analysis.investigation.project_context import project_prompt_context
from viano_bug_analysis.investigation.steps import StepLog


def built_for_interpretation(tmp_path: Path, setup: ResearchSetup) -> Path:
    spec_path = case_spec(tmp_path / "inputs")
    spec = orjson.loads(spec_path.read_bytes())
    spec["hypotheses"] = []
    spec_path.write_bytes(orjson.dumps(spec))
    return built_with_research(spec_path, tmp_path / "package", setup)


def test_enrichment_facts_are_labels_and_project_queries_first_steps(
    tmp_path: Path,
    research_setup: ResearchSetup,  # noqa: F811 (the imported fixture)
) -> None:
    root = built_for_interpretation(tmp_path, research_setup)
    context = project_prompt_context(load_package(root))
    assert context is not None
    fact_ids = [fact["fact_id"] for fact in context["facts"]]
    assert fact_ids  # the enrichment found something to show
    unknown = answer(hypothesis("A.", ROWS_QUERY, ["report", "P9999"]))
    no_limit = {
        **ROWS_QUERY,
        "arguments": {k: v for k, v in ROWS_QUERY["arguments"].items() if k != "limit"},
    }
    incomplete = answer(hypothesis("B.", no_limit, ["report"]))
    good = answer(
        hypothesis(
            "The creature is not the quest's credit target.", ROWS_QUERY, ["report", fact_ids[0]]
        ),
        hypothesis("The log names the quest.", FIND_QUERY),
    )
    with ScriptedLlmServer([unknown, incomplete, good]) as server:
        outcome = interpreter(root, server, research_enabled=True).run()
        system = server.requests[0].messages[0]["content"]
        first, second, third = (r.messages[-1]["content"] for r in server.requests)
    assert outcome.state == "interpreted"
    assert f"- {fact_ids[0]} " in first  # shown in the brief, by its P-ID
    assert '{"kind": "database.rows"' in system
    assert "/hypotheses/0/rests_on: 1 label(s) were not shown" in second
    assert "missing required property 'limit' at /hypotheses/0/first_query/arguments" in third
    hypotheses = load_package(root).case["hypotheses"]
    assert hypotheses[0]["origin"]["first_query"] == ROWS_QUERY
    assert hypotheses[0]["origin"]["rests_on"] == ["report", fact_ids[0]]
    # The case keeps its enrichment index: the new revision shows the same facts.
    assert project_prompt_context(load_package(root)) == context

    # The investigation takes the proposed hypotheses over, with research: H1's
    # proposed first query runs as its step 1 (a project.query), H2's as a snapshot
    # query, neither asked of the model again; the model's first answer is step 2.
    script = [step_answer(CONCLUDE), step_answer(CONCLUDE, hid="H2")]
    with ScriptedLlmServer(script) as server, research_setup.research() as research:
        client = scripted_client(server)
        settings = InvestigationSettings(response_recovery_version=1)
        run = InvestigationController(root, model=client, settings=settings, research=research)
        assert run.run().state == "concluded"
        assert len(server.requests) == len(script)
        assert "E1 (H1) project.query database.rows" in server.requests[0].messages[-1]["content"]
    log = StepLog(root)
    for hid in ("H1", "H2"):
        step_one = log.get(hid, 1, 1, "decision")
        assert step_one is not None and log.get(hid, 1, 1, "call") is None
        assert step_one["from_interpretation"] == hypotheses[0]["origin"]["call_record_sha256"]
    kinds = [(r["hypothesis_id"], r["kind"]) for r in EvidenceStore(root).records()]
    assert kinds == [("H1", "project_query"), ("H2", "snapshot_query")]
