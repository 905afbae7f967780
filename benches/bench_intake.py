"""Reading a tracker report: `vba case import` parsing and mention extraction, hostile inputs too.

Side by side in each group, so the rows compare within one run:

* ``baseline-*``: one plain linear pass over the same text (``str.splitlines``
  and a ``\\d+`` scan) — the floor a linear reader is measured against;
* ``import-*``: ``specs_from_source`` on texts built to make a careless scanner
  quadratic (one huge token with a marker repeated, comments and fences
  opened and never closed …), at two sizes 16 times apart: a linear reader
  takes about 16 times as long for the larger, a quadratic one 256;
* ``extract-*``: the Vcore profile's mention extraction of a 1 MB report with
  100,000 numbers and names, and of the same kind of text at 1/16 the size.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

import pytest

from tests.case.intake.test_import_properties import HOSTILE
from viano_bug_analysis.case.intake import specs_from_source
from viano_bug_analysis.case.intake.source import parse_source
from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.extract import extract
from viano_bug_analysis.errors import ReportImportError


def _import(data: bytes) -> None:
    with contextlib.suppress(ReportImportError):
        specs_from_source(parse_source(data, stem="report", suffix=".md"))


@pytest.mark.parametrize("size", [2_000, 32_000])
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_import_hostile(benchmark: Any, name: str, size: int) -> None:
    benchmark.group = f"intake: import of a hostile report ({name})"
    benchmark.name = f"import-{name.replace(' ', '-')}-{size}"
    data = ("t\n" + HOSTILE[name](size)).encode()
    benchmark(_import, data)


def _hostile_report(numbers: int) -> str:
    # Every line has type words, untyped IDs, spawn GUIDs, names and a list.
    parts = []
    for n in range(numbers // 5):
        parts.append(
            f"quest {n} and npc {n}, {n + 1}; Hot Rod{n % 7} (ID: {n}) guid {n} "
            f"Keg Master Bruni talks {n}\n"
        )
    return "".join(parts)


@pytest.mark.parametrize("numbers", [6_250, 100_000])
def test_extract_hostile(benchmark: Any, numbers: int) -> None:
    benchmark.group = "intake: mention extraction of a hostile report"
    text = _hostile_report(numbers)
    benchmark.name = f"extract-{numbers}-numbers-{len(text) // 1024}KiB"
    profile = vcore_profile()
    report = {"title": "t", "text": text}
    found = benchmark(extract, profile, report, [])
    benchmark.extra_info["mentions"] = len(found.mentions)
    benchmark.extra_info["dropped"] = dict(found.dropped)


@pytest.mark.parametrize("numbers", [6_250, 100_000])
def test_baseline_linear_pass(benchmark: Any, numbers: int) -> None:
    benchmark.group = "intake: mention extraction of a hostile report"
    text = _hostile_report(numbers)
    benchmark.name = f"baseline-splitlines-digits-{numbers}-numbers"
    digits = re.compile(r"\d+")

    def scan() -> int:
        return sum(len(digits.findall(line)) for line in text.splitlines())

    benchmark(scan)
