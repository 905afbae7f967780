"""Code that picks facts by kind names only kinds of the vocabulary.

Facts are written through the registry (an unknown kind is refused on
write), but code that selects facts to act on compares ``fact["kind"]`` with
a name: a misspelt or retired name there would select nothing, silently.
This test reads the package's source and checks every name compared with a
fact's kind against ``FACT_KINDS``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from viano_bug_analysis.facts.registry import FACT_KINDS

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "viano_bug_analysis"
# Names that hold one enrichment fact where they are compared by kind.
FACT_NAMES = frozenset({"fact", "f", "target_fact", "row_fact"})
# The interpretation's context labels its own facts (the report, each snapshot
# source by role, "project_fact" for a P-ID): another vocabulary, not the index's.
OTHER_VOCABULARY = frozenset(
    {"investigation/interpretation_prompt.py", "investigation/interpreter.py"}
)


def _literals(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Set | ast.Tuple | ast.List):
        for element in node.elts:
            yield from _literals(element)


def _is_fact_kind(node: ast.expr) -> bool:
    if isinstance(node, ast.Subscript):
        return (
            isinstance(node.value, ast.Name)
            and node.value.id in FACT_NAMES
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == "kind"
        )
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in FACT_NAMES
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == "kind"
    )


def kind_names_compared(source: str) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and _is_fact_kind(node.left):
            for comparator in node.comparators:
                for name in _literals(comparator):
                    yield node.lineno, name


def test_every_kind_a_module_selects_by_is_in_the_vocabulary() -> None:
    outside = []
    seen = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in OTHER_VOCABULARY:
            continue
        for line, name in kind_names_compared(path.read_text(encoding="utf-8")):
            seen += 1
            if name not in FACT_KINDS:
                outside.append(f"{relative}:{line}: {name!r}")
    assert outside == []
    assert seen > 10  # the scan finds the selections it is meant to check


def test_the_scan_finds_a_misspelt_kind() -> None:
    source = 'rows = [f for f in facts if f["kind"] == "project_row"]\n'
    found = list(kind_names_compared(source))
    assert found == [(1, "project_row")]
    assert "project_row" not in FACT_KINDS
