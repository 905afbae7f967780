"""Citations resolve in the stored evidence, or say what does exist.

The package is the small investigated fixture: E1 is a snapshot
``source.find_text`` result with one match, line 2 of ``session.log``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.investigation.package_fixtures import investigated_package
from viano_bug_analysis import jsonio
from viano_bug_analysis.errors import EvidenceError
from viano_bug_analysis.investigation.evidence import (
    CITATION_UNRESOLVED,
    CitationResolver,
    EvidenceStore,
    citation_hints,
    resolve_lines,
    resolve_reference,
)

MATCH = "/result/matches/0"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return investigated_package(tmp_path_factory.mktemp("cited"))


def resolver(package: Path) -> CitationResolver:
    return CitationResolver(EvidenceStore(package), {"diag-001": "session.log"})


def cite(reference: str, evidence_id: str = "E1") -> dict[str, str]:
    return {"evidence_id": evidence_id, "role": "supports", "reference": reference}


def test_a_pointer_citation_keeps_the_hash_of_its_value_and_its_origin(package: Path) -> None:
    store = EvidenceStore(package)
    cited = resolver(package).resolve(cite(MATCH + "/text")).to_mapping()
    text = store.payload(store.get("E1"))["result"]["matches"][0]["text"]
    assert cited["value_sha256"] == hashlib.sha256(jsonio.canonical_bytes(text)).hexdigest()
    provenance = cited["provenance"]
    assert provenance["kind"] == "snapshot"
    assert provenance["source_ref"] == "diag-001" and provenance["member"] == "session.log"
    assert provenance["line"] == 2
    # A reader checks it from the package alone: the stored result, at the pointer.
    document = orjson.loads((package / provenance["result_path"]).read_bytes())
    assert (
        hashlib.sha256((package / provenance["result_path"]).read_bytes()).hexdigest()
        == (provenance["result_sha256"])
    )
    value = resolve_reference(document, provenance["document_prefix"] + cited["reference"])
    assert hashlib.sha256(jsonio.canonical_bytes(value)).hexdigest() == cited["value_sha256"]


def test_the_member_hash_of_a_snapshot_citation_is_the_member_s(package: Path) -> None:
    store = EvidenceStore(package)
    match = store.payload(store.get("E1"))["result"]["matches"][0]
    provenance = resolver(package).resolve(cite(MATCH)).provenance
    assert provenance["member_sha256"] == match["sha256"]
    assert len(provenance["member_sha256"]) == 64


def test_a_line_citation_hashes_the_exact_line_text(package: Path) -> None:
    store = EvidenceStore(package)
    text = store.payload(store.get("E1"))["result"]["matches"][0]["text"]
    cited = resolver(package).resolve(cite("L2"))
    assert cited.value_sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert cited.provenance["line"] == 2 and cited.provenance["answer_pointer"] == MATCH


@pytest.mark.parametrize(
    ("reference", "hint"),
    [
        # The deepest existing prefix and what is below it.
        (
            "/result/matches/3",
            "deepest existing pointer is /result/matches, an array with indexes 0-0",
        ),
        ("/result/rows/0", "/result, an object with the keys limit, matches, next_offset"),
        ("/result/matches/0/text/x", "/result/matches/0/text, a single value"),
        ("/result/matches/00", "/result/matches, an array"),
        # Lines: the lines the answer shows.
        ("L3", "no such line: L3; the lines shown are L2"),
        ("L1-L2", "the lines shown are L2"),
    ],
)
def test_an_unresolved_citation_names_what_does_exist(
    package: Path, reference: str, hint: str
) -> None:
    problem = resolver(package).problem("E1", reference)
    assert problem is not None and hint in problem
    with pytest.raises(EvidenceError) as raised:
        resolver(package).resolve(cite(reference))
    assert raised.value.code == CITATION_UNRESOLVED


def test_an_unknown_evidence_id_does_not_resolve(package: Path) -> None:
    assert resolver(package).problem("E9", MATCH) == "E9: no evidence E9"


def test_a_line_shown_twice_is_only_citable_by_pointer() -> None:
    payload: dict[str, Any] = {
        "matches": [
            {"source_ref": "a", "line": 4, "text": "x"},
            {"source_ref": "b", "line": 4, "text": "y"},
        ]
    }
    with pytest.raises(EvidenceError) as raised:
        resolve_lines(payload, "L4")
    assert "more than once" in raised.value.details["hint"]
    assert "only be cited by JSON Pointer" in raised.value.details["hint"]


def test_an_answer_without_lines_refuses_a_line_reference() -> None:
    with pytest.raises(EvidenceError) as raised:
        resolve_lines({"rows": [{"id": 1}]}, "L1")
    assert "shows no source lines" in raised.value.details["hint"]


@pytest.mark.parametrize(
    "payload",
    [
        {"result": {"rows": [{"pointer": "/rows/1", "row": {"ID": 1, "name": "n"}}]}},
        {"result": {"lines": [{"line": 7, "text": "a"}, {"line": 8, "text": "b"}]}},
        {"rows": [], "total": 0},
        {},
        {"columns": ["ID"], "filters": [{"column": "ID"}], "rows": [{"ID": 90001}]},
    ],
)
def test_the_citing_hint_of_the_prompt_names_a_pointer_that_resolves(payload: Any) -> None:
    hint = citation_hints(payload)
    if "e.g. " in hint:
        pointer = hint.split("e.g. ")[1].split(";")[0]
        resolve_reference(payload, pointer)  # does not raise
    if payload.get("rows"):
        assert "e.g. /rows/0/ID" in hint  # the findings, not the echoed columns
    if "lines" in payload.get("result", {}):
        assert "lines L7-L8" in hint
        assert [item["line"] for _, item in resolve_lines(payload, "L7-L8")] == [7, 8]
