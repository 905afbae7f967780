"""The typed C++ constant search: an ID counts only where a constant of its type's prefix
is assigned it, however the assignment is spaced.

ProjectResearch searches literal text, so the fake below answers like it: a
line is returned only when it contains the query text. A search for ``= 91001``
would never see ``QUEST_KEG_RUN=91001``; the ID's digits see every spacing,
and the prefix and the assignment are checked on each returned line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import orjson

from viano_bug_analysis.enrichment import parse_profile
from viano_bug_analysis.enrichment.engine import Enricher
from viano_bug_analysis.enrichment.extract import Mention
from viano_bug_analysis.enrichment.journal import StepOutcome

PROFILE = b"""
format = "viano-enrichment-profile"
format_version = 1
profile = "p"

[entities.quest]
constant_prefixes = ["QUEST_"]
constant_path_prefix = "src/"
"""

LINES = [
    "    QUEST_KEG_RUN=91001,",
    "    QUEST_KEG_RUN_DAILY =\\t91001,",
    "    QUEST_KEG_RUN_WEEKLY=   91001",
    "#define QUEST_KEG_RUN_OLD 91001",
    "    MAX_THINGS = 91001,",
    "    QUEST_OTHER = 910012,",
    "    QUEST_OTHER_TOO = 191001,",
    "    NOTQUEST_X = 91001,",
    "    uint32 quest = 91001; // QUEST_KEG_RUN",
]


class LiteralSearch:
    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    def __call__(self, query: Mapping[str, Any]) -> StepOutcome:
        self.asked.append(dict(query))
        digest = hashlib.sha256(orjson.dumps(query, option=orjson.OPT_SORT_KEYS)).hexdigest()
        text = query["text"]
        matches = [
            {"path": "src/fair.h", "line": n, "blob": "b", "sha256": "s", "text": t}
            for n, t in enumerate((line.replace("\\t", "\t") for line in LINES), 1)
            if text in t
        ]
        capture = SimpleNamespace(
            sha256=digest,
            result={
                "format_version": 2,
                "coverage": {"complete": True},
                "result": {"matches": matches, "files_unsearched": 0, "truncated": False},
            },
            origin={"provider": "fake"},
        )
        return StepOutcome(len(self.asked), digest, capture, None, False)  # type: ignore[arg-type]


def test_every_spacing_of_a_typed_assignment_counts_and_nothing_else() -> None:
    research = LiteralSearch()
    mention = Mention("quest", 91001, {"pointer": "/report/text", "offset": 0})
    facts = (
        Enricher(parse_profile(PROFILE), research, capture_path=lambda s: s).run([mention]).facts
    )
    constants = [f["constant"] for f in facts if f["kind"] == "project_source_constant"]
    assert constants == [
        "QUEST_KEG_RUN",
        "QUEST_KEG_RUN_DAILY",
        "QUEST_KEG_RUN_WEEKLY",
        "QUEST_KEG_RUN_OLD",
    ]
    assert [(q["kind"], q.get("path_prefix")) for q in research.asked] == [
        ("source.search", "src/")
    ]
