"""The compact build summary: one line per finding, every fact label still in it.

Relationships fold into the line of the rows they reached, the empty lookups
of one entity share a line, values meaning "no reference" are one line per
table worded as what they are. The report's revision, what could not be read
(one line per entity) and the coverage (one line per reason) come before the
findings. ``summarize_all`` keeps one line per fact.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from tests.enrichment.test_entity_links import PROFILE, ROWS, FakeResearch
from viano_bug_analysis.enrichment import parse_profile
from viano_bug_analysis.enrichment.engine import Enricher
from viano_bug_analysis.enrichment.extract import Mention
from viano_bug_analysis.enrichment.summary import (
    counts,
    summarize,
    summarize_all,
    summary_sections,
)
from viano_bug_analysis.facts.registry import coverage_line, fact_kind

# Two more quest links, whose tables the fake database leaves empty.
LINKS = b"""
[tables.creature_questender]
columns = ["id", "quest"]

[tables.gameobject_queststarter]
columns = ["id", "quest"]

[[references]]
name = "quest_ender_link"
table = "creature_questender"
column = "quest"
holds = "quest"

[[references]]
name = "quest_object_starter_link"
table = "gameobject_queststarter"
column = "quest"
holds = "quest"
"""

IGNORED = {"quest_starter": ("null", "", 0)}


def _facts(refused: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    research = FakeResearch(refused or {})
    enricher = Enricher(parse_profile(PROFILE + LINKS), research, capture_path=lambda s: s)
    mentions = [Mention("quest", 5, {"pointer": "/report/text", "offset": 0})]
    return enricher.run(mentions).facts


def _labels(line: str) -> set[str]:
    """The fact IDs a line stands for: ``[P1-P3,P7] ...`` is P1, P2, P3, P7."""
    found = re.match(r"\[([P0-9,-]+)\] ", line)
    assert found, line
    labels: set[str] = set()
    for part in found.group(1).split(","):
        first, _, last = part.partition("-")
        end = int((last or first)[1:])
        labels.update(f"P{n}" for n in range(int(first[1:]), end + 1))
    return labels


def _of(facts: Sequence[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return [f for f in facts if f["kind"] == kind]


@pytest.mark.parametrize("refused", [{}, {"quest_template": "table_not_found"}])
def test_every_fact_label_stands_in_exactly_one_line(refused: dict[str, str]) -> None:
    facts = _facts(refused)
    lines = summarize(facts, IGNORED)
    per_line = [_labels(line) for line in lines]
    assert sorted(label for labels in per_line for label in labels) == sorted(
        f["fact_id"] for f in facts
    )
    assert len(lines) < len(facts)
    assert [_labels(line) for line in summarize_all(facts)] == [{f["fact_id"]} for f in facts]


def test_a_relationship_is_folded_into_the_line_of_the_rows_it_reached() -> None:
    facts = _facts()
    rows = next(f for f in _of(facts, "project_rows") if f["table"] == "creature_queststarter")
    link = next(
        f for f in _of(facts, "project_relationship") if f["to"].get("fact") == rows["fact_id"]
    )
    # A reverse lookup is worded as the rows it asked for: the column naming the quest.
    assert (
        f"[{rows['fact_id']}-{link['fact_id']}] creature_queststarter.quest = 5 "
        "(names quest 5): 1 row"
    ) in summarize(facts)
    # The giver's own line names it, its table and the row that reached it.
    giver = next(line for line in summarize(facts) if '"Giver"' in line)
    assert giver.endswith(
        'creature 70 "Giver" (creature_template: 1 row), '
        "reached from creature_queststarter quest=5 id=70"
    )


def test_the_empty_lookups_of_one_entity_share_one_line() -> None:
    facts = _facts()
    empty = [f["fact_id"] for f in _of(facts, "project_empty_result")]
    links = [
        f["fact_id"] for f in _of(facts, "project_relationship") if f["to"].get("fact") in empty
    ]
    assert len(empty) == 3  # quest_template, creature_questender, gameobject_queststarter
    grouped = [line for line in summarize(facts) if "nothing in" in line]
    assert len(grouped) == 1
    assert grouped[0].endswith(
        "quest 5: nothing in quest_template, creature_questender, gameobject_queststarter"
    )
    assert _labels(grouped[0]) == set(empty + links)


def test_a_no_reference_value_is_worded_as_one_and_grouped_per_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two columns of one table hold a "no reference" value: one line for the table.
    monkeypatch.setitem(ROWS, "creature_queststarter", [{"id": 0, "quest": "?", "menu": 0}])
    menu = b"""
[[references]]
name = "starter_menu"
table = "creature_queststarter"
column = "menu"
holds = "creature"
"""
    research = FakeResearch({})
    with_menu = PROFILE.replace(b'columns = ["id", "quest"]', b'columns = ["id", "quest", "menu"]')
    profile = parse_profile(with_menu + LINKS + menu)
    mentions = [Mention("quest", 5, {"pointer": "/report/text", "offset": 0})]
    facts = Enricher(profile, research, capture_path=lambda s: s).run(mentions).facts
    ignored = [f["fact_id"] for f in facts if f.get("reason") == "value_not_followed"]
    assert len(ignored) == 2
    lines = [line for line in summarize(facts, IGNORED) if "no reference" in line]
    assert lines == [
        f"[{ignored[0]}-{ignored[1]}] no reference: in creature_queststarter, id (1 row), "
        "menu (1 row) are NULL/empty/0 (ignore_values), nothing to follow"
    ]
    assert not [line for line in summarize(facts, IGNORED) if "value_not_followed" in line]


def test_a_link_to_a_refused_table_says_it_was_not_read_and_why() -> None:
    facts = _facts({"creature_template": "table_not_found"})
    refusal = next(f for f in facts if f.get("reason") == "query_refused")
    (unread,) = [s for s in summary_sections(facts) if s.head == "not read:"]
    assert [line.split("] ", 1)[1] for line in unread.lines] == [
        "creature_queststarter quest=5 id=70: creature_template not read "
        f"(table_not_found, see {refusal['fact_id']})",
        "query_refused: creature_template: 1 query refused (table_not_found)",
    ]


def test_the_revision_and_what_was_not_read_come_before_the_findings() -> None:
    facts = _facts({"creature_queststarter": "table_not_allowed"})
    revision = {
        "fact_id": "P99",
        "kind": "report_revision",
        "reported": "abc1234",
        "commit": "abc1234" + "0" * 33,
        "statement": "the pinned commit is 3 commits after the report's revision",
    }
    sections = summary_sections([*facts, revision])
    assert [s.head for s in sections] == ["report revision:", "not read:", "facts:"]
    assert sections[0].lines == [
        f"[P99] report revision abc1234 = abc123400000…: {revision['statement']}"
    ]
    # The findings list nothing the blocks above already said.
    shown = [label for s in sections[:2] for line in s.lines for label in _labels(line)]
    assert not set(shown) & {label for line in sections[2].lines for label in _labels(line)}


def test_the_lookups_a_refusal_stopped_are_one_line_per_entity() -> None:
    # Every link table of the quest refused: one line for the quest, each table once.
    facts = _facts(
        {
            "creature_queststarter": "table_not_allowed",
            "creature_questender": "table_not_allowed",
            "gameobject_queststarter": "table_not_allowed",
        }
    )
    (unread,) = [s for s in summary_sections(facts) if s.head == "not read:"]
    stopped = [line for line in unread.lines if "not read" in line]
    assert len(stopped) == 1
    assert (
        stopped[0]
        .split("] ", 1)[1]
        .startswith(
            "quest 5: creature_queststarter, creature_questender, gameobject_queststarter not read "
            "(table_not_allowed, see "
        )
    )


def _coverage(fact_id: str, reason: str, **fields: Any) -> dict[str, Any]:
    return {"fact_id": fact_id, "kind": "project_context_coverage", "reason": reason, **fields}


def test_coverage_is_one_line_per_reason_with_its_count() -> None:
    depth = [
        _coverage(f"P{n}", "max_depth", relation=relation, statement="reference not followed")
        for n, relation in enumerate(["creature_addon", "creature_text_link"] * 8, start=1)
    ]
    (coverage,) = [s for s in summary_sections(depth) if s.head == "coverage:"]
    assert coverage.lines == [
        "[P1-P16] max_depth: 16 references not followed (the depth bound): "
        "creature_addon, creature_text_link"
    ]


def test_an_incomplete_history_says_what_was_skipped_never_a_blank_reason() -> None:
    changes = _coverage(
        "P1",
        "changes_incomplete",
        since="abc",
        incomplete_reasons=["files_skipped"],
        range_commits=40,
        commits_examined=40,
        files_skipped={"missing": 15, "binary": 15},
        statement="the changes since the report's revision were not all compared",
    )
    (unread,) = [s for s in summary_sections([changes]) if s.head == "not read:"]
    assert unread.lines == [
        "[P1] changes_incomplete: not every change was compared (files_skipped); files not "
        "compared: 15 missing from the clone, 15 binary; 40 of 40 commits examined"
    ]
    assert (
        fact_kind("project_context_coverage")
        .summary(changes)
        .startswith("coverage: changes_incomplete: not every change was compared")
    )
    # The prompt's wording keeps its bytes (stored prompts rebuild).
    assert coverage_line(changes) == "coverage: changes_incomplete: "


def test_a_reverse_lookup_is_worded_as_the_column_that_names_the_entity() -> None:
    link = {
        "fact_id": "P7",
        "kind": "project_relationship",
        "relation": "quest_required_creature_1",
        "direction": "reverse",
        "from": {"entity_type": "creature", "entity_id": 36440},
        "to": {
            "query_sha256": "a" * 64,
            "table": "quest_template",
            "column": "RequiredNpcOrGo1",
            "value": 36440,
            "entity_type": "quest",
        },
    }
    line = fact_kind("project_relationship").summary(link)
    assert line == (
        "quest_required_creature_1: quest_template.RequiredNpcOrGo1 = 36440 (names creature 36440)"
    )
    assert "quest 36440" not in line


def test_the_counts_line_gives_queries_facts_rows_and_refused_targets() -> None:
    facts = _facts({"quest_template": "table_not_found"})
    assert counts(facts, 4, 4) == (
        f"enrichment: 4 queries (4 asked by this run), {len(facts)} facts: "
        "2 rows found by 2 lookups, 2 found nothing, 1 refused target (quest_template)"
    )


@pytest.mark.parametrize(
    "fields",
    [
        {
            "reason": "reverse_references_limit",
            "entity_type": "creature",
            "entity_id": 7,
            "count": 2,
            "not_asked": ["a", "b"],
        },
        {"reason": "fix_changes_incomplete", "incomplete_reasons": ["files_skipped"]},
        {"reason": "rows_page_limit", "table": "conditions", "count": 3},
    ],
)
def test_no_coverage_line_has_a_blank_reason(fields: dict[str, Any]) -> None:
    one = _coverage("P1", **fields)
    for facts in ([one], [one, {**one, "fact_id": "P2"}]):
        lines = [line for s in summary_sections(facts) for line in s.lines]
        assert len(lines) == 1
        reason, _, said = lines[0].split("] ", 1)[1].partition(": ")
        assert reason == fields["reason"] and said.strip() and not said.startswith(("(", ":"))
