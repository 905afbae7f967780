"""The fact vocabulary: every kind defined once, views per kind, a closed set."""

from __future__ import annotations

import re

import pytest

from tests.facts.sample import facts
from viano_bug_analysis.errors import UnknownFactKind
from viano_bug_analysis.facts.registry import FACT_KINDS, fact_kind, labels
from viano_bug_analysis.investigation.project_context import LABELS
from viano_bug_analysis.jsonio import canonical_bytes, sha256_hex
from viano_bug_analysis.schemas import load_schema

HASH = re.compile(r"[0-9a-f]{40,64}")
# The labels prompts of investigation_project_v1 were stored with: a stored prompt
# rebuilds byte for byte only while they stay as they are.
STORED_LABELS_SHA256 = "3e359c24de0958221b0f642039f2ed3a1be310f7dcfa310bb5dae60b2c8e5f07"


def test_project_context_takes_the_labels_of_the_vocabulary() -> None:
    assert labels(stored=True) == LABELS
    assert list(LABELS) == [name for name, kind in FACT_KINDS.items() if not kind.later]


def test_the_labels_are_the_ones_stored_prompts_were_built_with() -> None:
    # Taken from the literal LABELS dict project_context.py held before the vocabulary.
    assert sha256_hex(canonical_bytes(labels(stored=True))) == STORED_LABELS_SHA256


def test_the_index_schema_has_one_branch_per_kind() -> None:
    schema = load_schema("enrichment-index-v1")
    assert schema["$defs"]["fact"]["properties"]["kind"]["enum"] == list(FACT_KINDS)
    for name, kind in FACT_KINDS.items():
        assert kind.schema is schema["$defs"][name] or kind.schema == schema["$defs"][name]


@pytest.mark.parametrize("fact", facts(), ids=lambda f: f"{f['fact_id']}-{f['kind']}")
def test_every_kind_has_its_views(fact: dict) -> None:
    kind = fact_kind(fact["kind"])
    by_id = {f["fact_id"]: f for f in facts()}
    assert kind.summary(fact, by_id).strip()
    compact = kind.compact(fact)
    assert compact.startswith(f"{fact['fact_id']} ")
    assert not HASH.search(compact), "no hash in the model's view"
    report = kind.report(fact)
    assert report["fact_id"] == fact["fact_id"] and report["label"] == kind.label
    assert report["provenance"] == fact.get("provenance")
    assert "fact_id" not in report["fields"] and "provenance" not in report["fields"]
    # The report's table: a title and per row its cells as text (never a JSON dump).
    assert report["table"] and report["rows"]
    for row in report["rows"]:
        assert row["cells"] and all(isinstance(c, str) and c for c in row["cells"].values())
        assert not any(c.startswith(("{", "[{")) for c in row["cells"].values())


def test_rows_are_a_table_not_json() -> None:
    rows = next(f for f in facts() if f["kind"] == "project_rows")
    rows["rows"].append({"ID": 2, "LogTitle": None, "LogDescription": "x" * 200, "StartItem": 0})
    view = fact_kind("project_rows").compact(rows)
    lines = view.splitlines()
    assert lines[1].strip() == "ID | LogTitle | LogDescription | StartItem"
    assert lines[2].strip().startswith("90001 | Catch the Wolpertinger | (text P8) | 90003")
    assert "NULL" in lines[3] and lines[3].endswith("… | 0")
    assert "{" not in view


@pytest.mark.parametrize("name", ["project_secret", "", None, 3, "DROP TABLE x; --"])
def test_an_unknown_kind_is_a_typed_error(name: object) -> None:
    with pytest.raises(UnknownFactKind) as caught:
        fact_kind(name)
    assert caught.value.code == "unknown_fact_kind"
    assert caught.value.details["allowed"] == list(FACT_KINDS)
    # A name is echoed only when it looks like one.
    assert caught.value.details["kind"] == (name if name == "project_secret" else None)


def test_readers_refuse_an_unknown_kind_instead_of_guessing() -> None:
    from viano_bug_analysis.enrichment.summary import summarize_all

    odd = [{"fact_id": "P1", "kind": "project_guess"}]
    with pytest.raises(UnknownFactKind):
        summarize_all(odd)


def test_the_build_fact_log_refuses_a_kind_outside_the_vocabulary() -> None:
    from viano_bug_analysis.enrichment.fact_log import FactLog

    log = FactLog(lambda sha: f"captures/{sha}.json")
    assert log.fact("case_name_candidates", asked=0, not_found=[], not_asked=[]) == "P1"
    with pytest.raises(UnknownFactKind):
        log.fact("project_guess", table="x")
    assert len(log.facts) == 1
