"""The compact build summary: one line per finding, every fact label still in it.

Relationships fold into the line of the rows they reached, the empty lookups
of one entity share a line, values meaning "no reference" are one line per
table worded as what they are. ``summarize_all`` keeps one line per fact.
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
from viano_bug_analysis.enrichment.summary import counts, summarize, summarize_all

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
    assert f"[{rows['fact_id']}-{link['fact_id']}] quest 5 -> creature_queststarter: 1 row" in (
        summarize(facts)
    )
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
    lines = summarize(facts)
    assert (
        "creature_queststarter quest=5 id=70 -> creature 70: creature_template not read "
        f"(table_not_found, see {refusal['fact_id']})"
    ) in [line.split("] ", 1)[1] for line in lines]
    assert f"[{refusal['fact_id']}] coverage: query_refused table_not_found: " in "\n".join(lines)


def test_the_counts_line_gives_queries_facts_rows_and_refused_targets() -> None:
    facts = _facts({"quest_template": "table_not_found"})
    assert counts(facts, 4, 4) == (
        f"enrichment: 4 queries (4 asked by this run), {len(facts)} facts: "
        "2 rows found by 2 lookups, 2 found nothing, 1 refused target (quest_template)"
    )
