"""Shared fixtures of the recovery-flow tests: responses, the contract, fake providers."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from viano_bug_analysis.investigation.recovery import (
    RecoveryContext,
    RecoveryLimits,
    RecoveryPolicy,
    ResponseContract,
)

FILTERS = "/next/arguments/filters"
V0 = RecoveryPolicy()
V1 = RecoveryPolicy(1)
CONTRACT = ResponseContract(
    hypothesis_id="H2",
    visible_evidence_ids=frozenset({"E3", "E5"}),
    known_columns={"Logs": ["id", "name", "LogTitle", "Created"]},
)
CONTEXT = RecoveryContext(
    prompt_id="investigation_project_v1",
    hypothesis="The import writes a log entry with the wrong title for Wolpertinger items.",
    previous_result="database.rows on Logs returned 3 rows (E3).",
)
LIMITS = RecoveryLimits(invalid_responses_left=3)

FLAT = ["name", "contains", "Wolpertinger", "id", "gt", 100]
GOOD = [
    {"column": "name", "operator": "contains", "value": "Wolpertinger"},
    {"column": "id", "operator": "gt", "value": 100},
]


def response(filters: Any = None, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "hypothesis_id": "H2",
        "assessment": "undetermined",
        "confidence": 0.35,
        "evidence": [
            {"evidence_id": "E3", "role": "supports", "reference": "/rows/0/LogTitle"},
            {"evidence_id": "E5", "role": "context", "reference": "L12-L20"},
        ],
        "next": {
            "kind": "tool",
            "operation": "project.query",
            "arguments": {
                "kind": "database.rows",
                "table": "Logs",
                "columns": ["id", "LogTitle", "Created"],
                "filters": GOOD if filters is None else filters,
                "offset": 0,
                "limit": 20,
            },
        },
    }
    base.update(changes)
    return base


def reply(replacement: Any) -> str:
    return json.dumps({"replacement": replacement})


class FakeProvider:
    """Answers repair prompts from a list and remembers every prompt."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    def __call__(self, prompt: str, _excerpt: object = None, /) -> str:
        self.prompts.append(prompt)
        if not self.replies:
            raise AssertionError("unexpected provider call")
        return self.replies.pop(0)


class TransportDown(Exception):
    """A transport failure of the fake provider."""


def failing_provider(prompt: str, _excerpt: object = None, /) -> str:
    raise TransportDown("endpoint 0 unavailable")


def typed_scalars(value: Any) -> Counter[tuple[str, str]]:
    """The multiset of (type, value) of every scalar; labels of labelled filter lists excluded."""
    found: Counter[tuple[str, str]] = Counter()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            if (
                node
                and len(node) % 6 == 0
                and all(
                    node[i : i + 6 : 2] == ["column", "operator", "value"]
                    for i in range(0, len(node), 6)
                )
            ):
                node = node[1::2]
            for child in node:
                walk(child)
        else:
            found[(type(node).__name__, json.dumps(node))] += 1

    walk(value)
    return found
