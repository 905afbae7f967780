"""The strict JSON parse on hostile inputs, side by side with ``json.loads`` on the same bytes.

Every document a model or a file hands us goes through ``jsonio.strict_parse``,
so its time must stay linear in the input whatever the input is. Each group is
one input of about 2 MB: ``json.loads`` on the same text is the reference row
(it is what the strict parse is built on, so the ratio is the price of the
strict checks), and a realistic nested document is measured the same way so
that the hostile ratios can be read against a normal one.

The hostile inputs are tests/test_jsonio.py's (where their outcomes are
checked) plus deep nesting at the depth limit, many surrogate-pair escapes and
one long integer. These used to be a wall-time assertion in the test suite; a
timed assertion fails on a loaded machine and says nothing about a regression
that stays under its bound, a side-by-side benchmark does neither.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.test_jsonio import HOSTILE_INPUTS
from viano_bug_analysis.jsonio import MAX_DEPTH, JsonFailure, Parsed, strict_parse

GROUP = "jsonio strict_parse vs json.loads: {name} (~2 MB)"


def _normal_document() -> str:
    rows = [
        {
            "id": i,
            "name": f"player_{i}",
            "zone": {"map": 530, "x": i * 0.5, "flags": [1, 2, 3]},
            "note": "déjà vu\n",
        }
        for i in range(16_000)
    ]
    return json.dumps({"rows": rows, "total": len(rows)}, ensure_ascii=False)


INPUTS: dict[str, str] = {
    "normal_document": _normal_document(),
    **HOSTILE_INPUTS,
    "deep_at_the_limit": "["
    + ",".join(["[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)] * 16_000)
    + "]",
    "surrogate_escapes": '"' + "\\ud83d\\ude00" * 170_000 + '"',
    "long_integer": "[" + "7" * 4000 + "," + "1," * 1_000_000 + "1]",
}


def _json_loads(text: str) -> str:
    # The reference may refuse what the strict parse refuses too (or more: a
    # 4000-digit integer is beyond its default int limit); either way it has
    # read the whole text by then.
    try:
        json.loads(text)
    except ValueError as error:
        return type(error).__name__
    return "parsed"


def _strict(text: str) -> str:
    outcome = strict_parse(text)
    assert isinstance(outcome, (Parsed, JsonFailure))
    return type(outcome).__name__


@pytest.mark.parametrize("parser", ["json_loads", "strict_parse"])
@pytest.mark.parametrize("name", list(INPUTS))
def test_parse(benchmark: Any, name: str, parser: str) -> None:
    benchmark.group = GROUP.format(name=name)
    if parser == "json_loads":
        benchmark.extra_info["role"] = "reference"
    run = _json_loads if parser == "json_loads" else _strict
    benchmark.pedantic(run, args=(INPUTS[name],), rounds=3, warmup_rounds=1)
