"""The user's whole job through the command line (issue 14, Tests), once on the bundled
snapshot alone and once with live project research (the test MariaDB and a real git
repository, so that journey needs ``scripts/with_test_services.sh``; ``make test``
runs it):

``vba case build`` of a case with **no** hypotheses -> ``vba investigate`` runs the
CaseInterpreter (two hypotheses) and investigates them with a scripted
OpenAI-compatible model that sends one fenced answer, one answer rejected for a
``like`` misuse, and one conclusion citing a pointer that does not exist (rejected
as ``citation_unresolved``, then corrected) -> the verdict is stored -> ``vba
status`` and ``vba report`` (HTML, Markdown, JSON) -> a hypothesis added in a new
case revision is investigated by the next ``vba investigate`` and the verdict is
issued again as version 2, version 1 kept.

Every claim is checked on the stored files: the case revisions, the step log, the
outcomes, the evidence payloads (each cited value is re-resolved and re-hashed
here), the verdict versions, and the package attachments, which must be byte for
byte what the build wrote.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.case.builder.conftest import ResearchSetup, case_spec
from tests.e2e.conftest import prefix_ratios
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer, reply
from viano_bug_analysis import jsonio
from viano_bug_analysis.case.package import load_package
from viano_bug_analysis.investigation.evidence import EvidenceStore, resolve_reference
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.investigation.verdict import VerdictStore
from viano_bug_analysis.schemas import schema_validator

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "bug-20"


def vba(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def answer(
    hid: str,
    next_step: dict[str, Any],
    evidence: list[dict[str, str]] | None = None,
    *,
    assessment: str = "undetermined",
    confidence: float = 0.4,
) -> str:
    return orjson.dumps(
        {
            "hypothesis_id": hid,
            "assessment": assessment,
            "confidence": confidence,
            "evidence": evidence or [],
            "next": next_step,
        }
    ).decode()


def cite(evidence_id: str, reference: str, role: str = "supports") -> dict[str, str]:
    return {"evidence_id": evidence_id, "role": role, "reference": reference}


def tool(operation: str, **arguments: Any) -> dict[str, Any]:
    return {"kind": "tool", "operation": operation, "arguments": arguments}


def conclusion(summary: str) -> dict[str, str]:
    return {"kind": "conclusion", "summary": summary}


def proposed(statement: str, rests_on: list[str], first: dict[str, Any]) -> dict[str, Any]:
    return {
        "statement": statement,
        "refuted_if": "The evidence shows the opposite.",
        "rests_on": rests_on,
        "first_query": {k: first[k] for k in ("operation", "arguments")},
    }


@dataclass(frozen=True)
class Journey:
    """What differs between the two journeys: the case, the build, the model's script."""

    spec: Path
    build_args: tuple[str, ...]
    config_extra: str
    interpretation: str
    first_script: list[str]  # the investigation of H1 and H2, in call order
    like_hint: str  # what the feedback on the `like` answer must say
    unresolved_hint: str  # the resolver's hint on the cited pointer that does not exist
    h3_statement: str
    h3_script: list[str]
    # (hypothesis, step, attempt) of the fenced, the `like`, the unresolved answer; step 1
    # of an interpreted hypothesis is its first_query, run without asking the model
    fenced_at: tuple[str, int, int] = ("H1", 2, 2)
    like_at: tuple[str, int, int] = ("H1", 2, 1)
    unresolved_at: tuple[str, int, int] = ("H1", 3, 1)


def fenced(text: str) -> str:
    return "```json\n" + text + "\n```"


def h1_script(
    queries: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
    context: str,
    summary: str,
    unresolved: list[dict[str, str]],
    resolved: list[dict[str, str]],
) -> list[str]:
    """H1's answers in the order the journey checks them (``Journey.like_at``,
    ``fenced_at``, ``unresolved_at``), after its first query ran as step 1 (E1): the
    ``like`` query the feedback corrects, the corrected query fenced (both citing
    ``context`` of E1), a conclusion citing a pointer that does not exist, and the
    corrected conclusion."""
    _first, like, corrected = queries
    return [
        answer("H1", like, [cite("E1", context, "context")]),
        fenced(answer("H1", corrected, [cite("E1", context, "context")])),
        answer("H1", conclusion(summary), unresolved, assessment="supported", confidence=0.8),
        answer("H1", conclusion(summary), resolved, assessment="supported", confidence=0.8),
    ]


def conclude(
    hid: str, summary: str, evidence: list[dict[str, str]], *, assessment: str, confidence: float
) -> list[str]:
    """The conclusion on what the hypothesis' first query (its step 1) found."""
    return [
        answer(hid, conclusion(summary), evidence, assessment=assessment, confidence=confidence)
    ]


def query_then_conclude(
    hid: str,
    query: dict[str, Any],
    summary: str,
    evidence: list[dict[str, str]],
    *,
    assessment: str,
    confidence: float,
) -> list[str]:
    """One query, then a conclusion on what it found."""
    return [
        answer(hid, query),
        answer(hid, conclusion(summary), evidence, assessment=assessment, confidence=confidence),
    ]


# -- the journey on the bundled snapshot (samples/bug-20) ----------------------------------

SAMPLE_LOOKUP = tool(
    "database.lookup", source_ref="db-001", filters={"ID": 90001}, offset=0, limit=5
)
SAMPLE_FIND = tool(
    "source.find_text",
    source_refs=["src-001"],
    text="KilledMonsterCredit",
    case_sensitive=True,
    offset=0,
    limit=5,
)


def snapshot_journey(tmp_path: Path) -> Journey:
    inputs = tmp_path / "inputs"
    shutil.copytree(SAMPLE, inputs)
    spec_path = inputs / "case-spec.json"
    spec = orjson.loads(spec_path.read_bytes())
    spec["hypotheses"] = []
    spec_path.write_bytes(orjson.dumps(spec))
    interpretation = orjson.dumps(
        {
            "hypotheses": [
                proposed(
                    "The quest requires a different creature than the one the net catches.",
                    ["report", "db-001"],
                    SAMPLE_LOOKUP,
                ),
                proposed(
                    "The net spell's hit handler never gives quest credit.",
                    ["report", "src-001"],
                    SAMPLE_FIND,
                ),
            ]
        }
    ).decode()
    # A lookup matches exact values; the model tries an SQL pattern with `like`.
    like = tool(
        "database.lookup",
        source_ref="db-001",
        filters=[["LogTitle", "like", "%Wolpertinger%"]],
        offset=0,
        limit=5,
    )
    references = tool(
        "database.find_references",
        source_ref="db-001",
        search_columns=["LogTitle"],
        value="Catch the Wolpertinger",
        offset=0,
        limit=5,
    )
    h1_summary = "Quest 90001 asks for creature 90005, not the wild wolpertinger 90002."
    script = [
        *h1_script(
            (SAMPLE_LOOKUP, like, references),
            "/result/rows/0/row/LogTitle",
            h1_summary,
            [cite("E1", "/result/rows/3/row/RequiredNpcOrGo1"), cite("E2", "/result/rows/0/row")],
            [cite("E1", "/result/rows/0/row/RequiredNpcOrGo1"), cite("E2", "/result/total")],
        ),
        *conclude(
            "H2",
            "The SpellHit handler gives credit while the quest is incomplete.",
            [cite("E3", "L39", "contradicts"), cite("E3", "/result/matches/0/text", "contradicts")],
            assessment="refuted",
            confidence=0.7,
        ),
    ]
    h3_script = query_then_conclude(
        "H3",
        tool("source.read_context", source_ref="src-001", start_line=28, end_line=42),
        "The handler despawns the creature two seconds after the hit.",
        [cite("E4", "L41")],
        assessment="undetermined",
        confidence=0.3,
    )
    return Journey(
        spec=spec_path,
        build_args=(),
        config_extra="",
        interpretation=interpretation,
        first_script=script,
        like_hint=(
            "- /next/arguments/filters: database.lookup has no filter operators: its filters "
            'are one object of exact column values, e.g. {"ID": 90001}; for rows holding a '
            "value in some columns use database.find_references, for a text source.find_text "
            "[rule type]."
        ),
        unresolved_hint=(
            "/evidence/0/reference: E1: no value at this pointer: "
            "/result/rows/3/row/RequiredNpcOrGo1; the deepest existing pointer is "
            "/result/rows, an array with indexes 0-0"
        ),
        h3_statement="The creature despawns before the credit counts.",
        h3_script=h3_script,
    )


# -- the journey with live project research --------------------------------------------------


def rows(table: str, columns: list[str], filters: Any) -> dict[str, Any]:
    return tool(
        "project.query",
        kind="database.rows",
        table=table,
        columns=columns,
        filters=filters,
        offset=0,
        limit=5,
    )


QUEST_ROWS = rows(
    "quest_template",
    ["ID", "LogTitle", "RequiredNpcOrGo1"],
    [{"column": "ID", "operator": "eq", "value": 90001}],
)
DIAG_FIND = tool(
    "source.find_text",
    source_refs=["diag-001"],
    text="spell hit",
    case_sensitive=True,
    offset=0,
    limit=5,
)


def research_journey(tmp_path: Path, setup: ResearchSetup) -> Journey:
    spec_path = case_spec(tmp_path / "inputs")
    spec = orjson.loads(spec_path.read_bytes())
    spec["hypotheses"] = []
    spec_path.write_bytes(orjson.dumps(spec))
    interpretation = orjson.dumps(
        {
            "hypotheses": [
                proposed(
                    "The quest counts another creature than the one the net hits.",
                    ["report", "diag-001"],
                    QUEST_ROWS,
                ),
                proposed(
                    "The spell hit never reaches the quest log.",
                    ["report", "diag-001"],
                    DIAG_FIND,
                ),
            ]
        }
    ).decode()
    like = rows("creature_template", ["entry", "name"], [["name", "like", "%Wolpertinger%"]])
    contains = rows(
        "creature_template",
        ["entry", "name", "ScriptName"],
        [{"column": "name", "operator": "contains", "value": "Wolpertinger"}],
    )
    h1_summary = "The quest requires credit creature 90005; the net hits creature 90002."
    script = [
        *h1_script(
            (QUEST_ROWS, like, contains),
            "/rows/0/RequiredNpcOrGo1",
            h1_summary,
            [cite("E1", "/rows/9/RequiredNpcOrGo1"), cite("E2", "/rows/0/entry")],
            [cite("E1", "/rows/0/RequiredNpcOrGo1"), cite("E2", "/rows/0/entry")],
        ),
        *conclude(
            "H2",
            "The log shows the hit and an unchanged quest log.",
            [cite("E3", "L4"), cite("E3", "/result/matches/0/text")],
            assessment="supported",
            confidence=0.6,
        ),
    ]
    symbol = tool(
        "project.query",
        kind="source.symbol",
        symbol="spell_wolpertinger_throw_net",
        offset=0,
        limit=5,
    )
    h3_script = query_then_conclude(
        "H3",
        symbol,
        "The net's spell script has an empty hit handler.",
        [cite("E4", "/matches/0")],
        assessment="supported",
        confidence=0.7,
    )
    return Journey(
        spec=spec_path,
        build_args=("--project-config", str(setup.config_path)),
        config_extra=f'[research]\nconfig = "{setup.config_path}"\n',
        interpretation=interpretation,
        first_script=script,
        like_hint=(
            "- /next/arguments/filters/0/1: not a filter operator (property operator); "
            "allowed operators: eq, ne, lt, le, gt, ge, contains, in; write each filter as "
            '{"column": ..., "operator": ..., "value": ...} [rule operator_unknown].'
        ),
        unresolved_hint=(
            "/evidence/0/reference: E1: no value at this pointer: /rows/9/RequiredNpcOrGo1; "
            "the deepest existing pointer is /rows, an array with indexes 0-0"
        ),
        h3_statement="The net's spell script does nothing on hit.",
        h3_script=h3_script,
    )


# -- the journey itself ----------------------------------------------------------------------


def tree_digest(root: Path) -> dict[str, str]:
    """SHA-256 of every file under ``root`` by relative path."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def write_config(directory: Path, server: ScriptedLlmServer, extra: str) -> Path:
    config = directory / "investigate.toml"
    config.write_text(
        f'[llm]\nbase_urls = ["{server.base_url}"]\nmodel = "scripted"\nmax_retries = 0\n'
        "[investigation]\nresponse_recovery_version = 1\nmax_steps = 6\n" + extra
    )
    return config


def user_prompt(server: ScriptedLlmServer, index: int) -> str:
    return str(server.requests[index].messages[-1]["content"])


def measure_prefix_reuse(sent: list[list[dict[str, str]]]) -> None:
    """Within H1 each prompt starts with the stable part of the one before (prefix
    caching): the share of each call's prompt that repeats the previous one's start."""
    ratios = prefix_ratios(sent)
    print("\nshared-prefix ratio per H1 call: " + ", ".join(f"{r:.2f}" for r in ratios))
    assert min(ratios) > 0.5


def check_citations(package: Path, outcome: dict[str, Any]) -> None:
    """Every stored citation re-resolved and re-hashed here from the stored evidence."""
    store = EvidenceStore(package)
    records = {r["evidence_id"]: r for r in store.records()}
    assert outcome["citations"], outcome
    for citation in outcome["citations"]:
        record = records[citation["evidence_id"]]
        payload = store.payload(record)
        reference = citation["reference"]
        if reference.startswith("L"):
            lines = {item["line"]: item["text"] for item in _line_items(payload)}
            number = int(reference[1:])
            expected = hashlib.sha256(lines[number].encode()).hexdigest()
        else:
            value = resolve_reference(payload, reference)
            expected = hashlib.sha256(jsonio.canonical_bytes(value)).hexdigest()
        assert citation["value_sha256"] == expected, citation
        provenance = citation["provenance"]
        if record["kind"] == "project_query":
            assert provenance["capture_sha256"] == record["capture_sha256"]
            capture = package / record["capture_path"]
            assert hashlib.sha256(capture.read_bytes()).hexdigest() == record["capture_sha256"]
        else:
            assert provenance["result_sha256"] == record["result_sha256"]
            result = package / provenance["result_path"]
            assert hashlib.sha256(result.read_bytes()).hexdigest() == record["result_sha256"]


def _line_items(payload: Any) -> list[dict[str, Any]]:
    result = payload["result"]
    return list(result.get("matches") or result.get("lines") or [])


def run_journey(tmp_path: Path, journey: Journey) -> dict[str, Any]:
    package = tmp_path / "package"
    built = vba("case", "build", str(journey.spec), str(package), *journey.build_args)
    assert built.returncode == 0, built.stderr
    assert load_package(package).case["hypotheses"] == []
    attachments = tree_digest(package / "attachments")
    declared = {
        item["attachment"].removeprefix("attachments/"): item["sha256"]
        for item in load_package(package).case["inputs"]
    }
    assert attachments == declared

    # 1. vba investigate: the interpreter, then the investigation of H1 and H2.
    script = [reply(journey.interpretation, prompt_tokens=900, completion_tokens=120)]
    script += [
        reply(text, prompt_tokens=1000, completion_tokens=80) for text in journey.first_script
    ]
    with ScriptedLlmServer(script) as server:
        config = write_config(tmp_path, server, journey.config_extra)
        done = vba("investigate", str(package), "--config", str(config))
        assert done.returncode == 0, done.stderr
        assert server.unscripted == 0 and server.remaining == 0
        prompts = [user_prompt(server, i) for i in range(len(server.requests))]
        h1_calls = [r.messages for r in server.requests[1:5]]
    measure_prefix_reuse(h1_calls)
    assert "interpreted: H1, H2 (revision 2)" in done.stdout
    case = load_package(package)
    assert case.analysis_revision == 2
    assert [h["id"] for h in case.case["hypotheses"]] == ["H1", "H2"]
    assert {h["origin"]["by"] for h in case.case["hypotheses"]} == {"case_interpreter"}

    log = StepLog(package)
    # The fenced answer was taken as it stood inside the fence.
    fence = log.get(*journey.fenced_at, "decision")
    assert fence is not None and fence["status"] == "accepted"
    assert fence["applied_rules"] == ["strip_outer_fence"]
    # The `like` answer was rejected; the next prompt says where, by which rule, and
    # what is allowed instead.
    like = log.get(*journey.like_at, "decision")
    assert like is not None and like["status"] == "rejected"
    after_like = prompts[2]  # interpretation, H1-2-1 (step 1 is the first query), H1-2-2
    feedback = after_like.split("Feedback on your previous answer:", 1)[1]
    # The first feedback line after the reason names the pointer, rule and alternatives.
    assert feedback.splitlines()[2] == journey.like_hint, feedback
    assert "%Wolpertinger%" not in feedback  # no value of the answer is repeated
    # The conclusion citing a pointer that does not exist was rejected; the next
    # prompt names the pointer and the nearest valid ones; the corrected one stands.
    unresolved = log.get(*journey.unresolved_at, "decision")
    assert unresolved is not None and unresolved["status"] == "rejected"
    assert unresolved["reason"] == "citation_unresolved"
    assert journey.unresolved_hint in prompts[4]

    outcomes = {hid: log.outcome(hid) for hid in ("H1", "H2")}
    for outcome in outcomes.values():
        assert outcome is not None and outcome["reason"] == "concluded"
        check_citations(package, outcome)
    assert outcomes["H1"]["assessment"] == "supported"  # type: ignore[index]

    # 2. The verdict is stored: version 1, every hypothesis with its verified citations.
    versions = VerdictStore(package).versions()
    assert [v["version"] for v in versions] == [1]
    first_verdict_file = package / "analysis" / "investigation" / "verdicts" / "v0001.json"
    first_verdict_bytes = first_verdict_file.read_bytes()
    verdict = orjson.loads(first_verdict_bytes)
    assert schema_validator("case-verdict-v1").is_valid(verdict)
    assert verdict["complete"] and verdict["analysis_revision"] == 2
    assert "H1" in verdict["case"]["supported"]
    for entry in verdict["hypotheses"]:
        stored = outcomes[entry["id"]]
        assert stored is not None
        assert entry["citations"] == stored["citations"], entry["id"]
        assert (entry["assessment"], entry["confidence"]) == (
            stored["assessment"],
            stored["confidence"],
        )

    # 3. vba status: prompt and completion tokens apart from budget units.
    status = vba("status", str(package), "--json")
    assert status.returncode == 0, status.stderr
    document = orjson.loads(status.stdout)
    assert document["state"] == "concluded"
    assert set(document["outcomes"]) == {"H1", "H2"}
    assert document["usage"]["prompt_tokens"] == 900 + 1000 * len(journey.first_script)
    assert document["usage"]["completion_tokens"] == 120 + 80 * len(journey.first_script)

    # 4. vba report in three formats, written to files outside the package.
    reports = tmp_path / "reports"
    reports.mkdir()
    for fmt, name in (("html", "report.html"), ("md", "report.md"), ("json", "report.json")):
        made = vba("report", str(package), "--format", fmt, "-o", str(reports / name))
        assert made.returncode == 0, made.stderr
    report = orjson.loads((reports / "report.json").read_bytes())
    assert schema_validator("case-report-v3").is_valid(report)
    check_report(report, outcomes, reports)

    # 5. The operator adds H3 in a new case revision; the next vba investigate
    # investigates only H3 and the verdict is issued again, the old one kept.
    spec = orjson.loads(journey.spec.read_bytes())
    spec["hypotheses"] = [{"id": "H3", "statement": journey.h3_statement}]
    journey.spec.write_bytes(orjson.dumps(spec))
    rebuilt = vba("case", "build", str(journey.spec), str(package), *journey.build_args)
    assert rebuilt.returncode == 0, rebuilt.stderr
    revised = load_package(package)
    assert revised.analysis_revision == 3
    assert [h["id"] for h in revised.case["hypotheses"]] == ["H1", "H2", "H3"]
    with ScriptedLlmServer(journey.h3_script) as server:
        config = write_config(tmp_path, server, journey.config_extra)
        again = vba("investigate", str(package), "--config", str(config))
        assert again.returncode == 0, again.stderr
        assert server.unscripted == 0 and server.remaining == 0
        assert all("Hypothesis H3:" in user_prompt(server, i) for i in range(2))
    h3 = log.outcome("H3")
    assert h3 is not None and h3["reason"] == "concluded"
    check_citations(package, h3)
    assert log.outcome("H1") == outcomes["H1"] and log.outcome("H2") == outcomes["H2"]
    versions = VerdictStore(package).versions()
    assert [v["version"] for v in versions] == [1, 2]
    assert first_verdict_file.read_bytes() == first_verdict_bytes
    assert versions[1]["supersedes"]["version"] == 1
    assert versions[1]["supersedes"]["sha256"] == hashlib.sha256(first_verdict_bytes).hexdigest()
    latest = vba("report", str(package), "--format", "json")
    assert latest.returncode == 0, latest.stderr
    latest_report = orjson.loads(latest.stdout)
    assert latest_report["verdict"]["version"] == 2 and latest_report["verdict"]["current"]
    assert [h["id"] for h in latest_report["hypotheses"]] == ["H1", "H2", "H3"]

    # The attachments are the bytes the first build wrote, after all of it.
    assert tree_digest(package / "attachments") == attachments
    return {"package": package, "prompts": prompts, "report": report, "verdicts": versions}


def check_report(report: dict[str, Any], outcomes: dict[str, Any], reports: Path) -> None:
    """The JSON report's citations are verified, with value hash and provenance, and the
    HTML and Markdown show each of them."""
    assert report["state"]["state"] == "concluded" and report["state"]["notice"] is None
    assert report["verdict"] is not None and report["verdict"]["version"] == 1
    assert report["case"]["supported"][0] == "H1"
    html = (reports / "report.html").read_text()
    markdown = (reports / "report.md").read_text()
    assert "<script" not in html.lower()
    for hypothesis in report["hypotheses"]:
        stored = outcomes[hypothesis["id"]]["citations"]
        assert len(hypothesis["citations"]) == len(stored)
        for shown, kept in zip(hypothesis["citations"], stored, strict=True):
            assert shown["verification"] == "verified", shown
            assert shown["value_sha256"] == kept["value_sha256"] == shown["computed_sha256"]
            assert shown["provenance"] == kept["provenance"]
            assert shown["provenance"]
            assert f'id="{shown["anchor"]}"' in html and f'href="#{shown["anchor"]}"' in html
            assert shown["value_sha256"] in html and shown["value_sha256"] in markdown


def test_the_journey_on_the_bundled_snapshot(tmp_path: Path) -> None:
    journey = snapshot_journey(tmp_path)
    done = run_journey(tmp_path, journey)
    # Citations carry the member and line they came from.
    h2 = StepLog(done["package"]).outcome("H2")
    assert h2 is not None
    line = h2["citations"][0]
    assert line["reference"] == "L39" and line["provenance"]["line"] == 39
    assert line["provenance"]["member"].endswith("zone_wolpertinger_glade.cpp")


@pytest.mark.integration
def test_the_journey_with_live_research(tmp_path: Path, research_setup: ResearchSetup) -> None:
    journey = research_journey(tmp_path, research_setup)
    done = run_journey(tmp_path, journey)
    package = done["package"]
    h1 = StepLog(package).outcome("H1")
    assert h1 is not None
    row = h1["citations"][0]
    assert row["provenance"]["kind"] == "project_database"
    assert row["provenance"]["row_pointer"] == "/rows/0"
    h3 = StepLog(package).outcome("H3")
    assert h3 is not None
    blob = h3["citations"][0]["provenance"]
    assert blob["kind"] == "project_git" and blob["commit"] == research_setup.commit
    assert {"blob", "path", "line"} <= set(blob)
