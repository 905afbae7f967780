"""The ``references`` kind of ``project.query``: one capture that proves itself.

Against the real-schema test DB and a test repository: the answer is the
document ``vba references`` prints (counts as SQL counts them, lines as
``git grep -w`` prints them), one capture holds every part it was read from,
a damaged part is refused when the capture is read back, and a model citing a
row of it gets the part's SHA-256 and pointer as provenance.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.case.builder.conftest import write_config
from tests.enrichment.test_reference_search import grep_w, repo, sql_count
from tests.project_research.conftest import TestDatabase, mariadb
from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.reference_query import ReferenceResearch, with_reference_map
from viano_bug_analysis.enrichment.reference_search import Bounds, find_references, live_profile
from viano_bug_analysis.enrichment.references import holders
from viano_bug_analysis.errors import VbaError
from viano_bug_analysis.investigation.evidence import CitationResolver, EvidenceStore
from viano_bug_analysis.jsonio import canonical_bytes, sha256_hex
from viano_bug_analysis.profiles import load_profile
from viano_bug_analysis.project_research import Capture, ProjectResearch, load_config
from viano_bug_analysis.project_research.errors import ResearchError
from viano_bug_analysis.schema_errors import check

__all__ = ["mariadb", "repo"]

QUERY = {"kind": "references", "entity_type": "quest", "id": 91001, "limit": 5}


@pytest.fixture
def research(
    tmp_path: Path, mariadb: TestDatabase, repo: tuple[Path, str]
) -> Iterator[ReferenceResearch]:
    config = write_config(tmp_path, mariadb, *repo)
    with ReferenceResearch(ProjectResearch(load_config(config)), vcore_profile()) as opened:
        yield opened


def test_the_answer_is_the_vba_references_document(
    research: ReferenceResearch, mariadb: TestDatabase, repo: tuple[Path, str]
) -> None:
    result = research.query(QUERY)
    assert check("project-result-v2", result) is None
    inner = research.research
    live = live_profile(vcore_profile(), inner.config, inner.query)
    assert result["result"] == find_references(live, inner, "quest", 91001, Bounds(shown=5))
    entries = {e["reference"]: e for e in result["result"]["database"]["entries"]}
    for ref in holders(live, "quest"):
        if "refused" not in entries[ref.name]:
            assert entries[ref.name]["count"] == sql_count(mariadb, ref, "quest", 91001)
    lines = result["result"]["source"]["literal"]["lines"]
    assert [(x["path"], x["line"]) for x in lines] == grep_w(*repo, "91001")[:5]


def test_the_origin_names_both_providers_and_coverage_says_what_is_exact(
    research: ReferenceResearch, repo: tuple[Path, str]
) -> None:
    result = research.query(QUERY)
    origin = result["origin"]
    assert origin["kind"] == "references" and origin["profile"] == "vcore"
    assert origin["source"]["commit"] == repo[1]
    assert origin["database"]["kind"] == "database"
    coverage = result["coverage"]
    assert coverage["parts"] == len(result["result"]["captures"]) > 0
    refused = result["result"]["database"]["refused"]
    # The fixture database lacks some tables of the map: those entries are refused.
    assert coverage["database_complete"] is (refused == 0)
    assert coverage["complete"] is (coverage["database_complete"] and coverage["source_complete"])


def test_the_capture_reads_back_strictly_and_a_damaged_part_is_refused(
    research: ReferenceResearch,
) -> None:
    capture = research.capture(QUERY)
    assert Capture.from_bytes(capture.data, capture.sha256).document == capture.document

    def damaged(change: Any) -> Capture:
        document: dict[str, Any] = Capture.from_bytes(capture.data, capture.sha256).document  # type: ignore[assignment]
        document = {**document}
        change(document)
        data = canonical_bytes(document)
        return Capture.from_bytes(data, sha256_hex(data))

    def edit_a_part_row(document: dict[str, Any]) -> None:
        parts = document["result"]["result"]["captures"]
        part = next(p for p in parts if p["capture"]["result"]["result"].get("rows"))
        part["capture"]["result"]["result"]["rows"][0] = {"forged": 1}

    def drop_a_part(document: dict[str, Any]) -> None:
        del document["result"]["result"]["captures"][0]

    for change in (edit_a_part_row, drop_a_part):
        with pytest.raises(VbaError) as caught:
            damaged(change)
        assert caught.value.code == "capture_corrupt", change.__name__


def test_other_kinds_pass_through_unchanged(research: ReferenceResearch) -> None:
    query = {"kind": "source.symbol", "symbol": "QUEST_KEG_RUN", "offset": 0, "limit": 5}
    assert research.query(query) == research.research.query(query)


@pytest.mark.parametrize(
    ("change", "code", "path"),
    [
        ({"entity_type": "dragon"}, "entity_type_unknown", "/entity_type"),
        ({"id": 0}, "query_invalid", "/id"),
        ({"limit": 10**6}, "query_invalid", "/limit"),
    ],
)
def test_a_bad_references_query_is_refused_before_anything_is_asked(
    research: ReferenceResearch, change: dict[str, Any], code: str, path: str
) -> None:
    with pytest.raises(ResearchError) as caught:
        research.query({**QUERY, **change})
    assert (caught.value.code, caught.value.details["path"]) == (code, path)


def test_a_profile_without_a_reference_map_leaves_the_service_as_it_is(
    research: ReferenceResearch,
) -> None:
    service = research.research
    assert with_reference_map(service, object()) is service
    assert isinstance(with_reference_map(service, load_profile("vcore")), ReferenceResearch)


def test_a_model_sees_the_document_without_parts_and_a_cited_row_names_its_part(
    research: ReferenceResearch, tmp_path: Path
) -> None:
    capture = research.capture(QUERY)
    store = EvidenceStore(tmp_path / "package")
    (tmp_path / "package").mkdir()
    taken = store.take_capture(
        capture, hypothesis_id="H1", step_key="H1/1/1", generation=1, current_generation=lambda: 1
    )
    payload = store.payload(store.get(taken.evidence_id))
    assert "captures" not in payload and payload["database"] == capture.result["result"]["database"]
    entries = payload["database"]["entries"]
    e = next(i for i, entry in enumerate(entries) if entry["rows"])
    row = entries[e]["rows"][0]
    cited = CitationResolver(store).resolve(
        {
            "evidence_id": taken.evidence_id,
            "role": "supports",
            "reference": f"/database/entries/{e}/rows/0/key",
        }
    )
    provenance = cited.provenance
    assert provenance["kind"] == "project_references"
    assert provenance["part_capture_sha256"] == row["capture_sha256"]
    assert provenance["part_pointer"] == row["pointer"]
    assert provenance["commit"] == capture.origin["source"]["commit"]
    assert provenance["snapshot_id"] == capture.origin["database"]["snapshot_id"]


def test_vba_research_answers_the_kind_with_a_profile_and_refuses_it_without(
    tmp_path: Path, mariadb: TestDatabase, repo: tuple[Path, str]
) -> None:
    config = write_config(tmp_path, mariadb, *repo)
    query = tmp_path / "query.json"
    query.write_text(json.dumps(QUERY))
    command = [sys.executable, "-m", "viano_bug_analysis.cli", "research", "--project-config",
               str(config), "--query", str(query)]  # fmt: skip
    answered = subprocess.run([*command, "--profile", "vcore"], capture_output=True, check=False)
    assert answered.returncode == 0, answered.stderr
    result = json.loads(answered.stdout)
    assert result["origin"]["kind"] == "references"
    assert Capture.from_result(result).document["result"] == result
    refused = subprocess.run(command, capture_output=True, text=True, check=False)
    assert refused.returncode == 2
    error = json.loads(refused.stderr)
    assert (error["error"], error["details"]["provider"]) == (
        "provider_not_configured",
        "reference_map",
    )
