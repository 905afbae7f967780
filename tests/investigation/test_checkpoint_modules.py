"""The checkpoint log is three modules with one job each (issue 12 point 9).

``append_log`` knows files and nothing of checkpoints, ``checkpoint_rules``
knows the state machine and no files, ``manifest_sync`` alone touches the
manifest; ``checkpoints`` ties them together. A job creeping back into the
wrong module shows up here as an import it should not need.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

INVESTIGATION = (
    Path(__file__).resolve().parents[2] / "python" / "viano_bug_analysis" / "investigation"
)


def _imports(module: str) -> set[str]:
    tree = ast.parse((INVESTIGATION / f"{module}.py").read_text(encoding="utf-8"))
    return {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }


@pytest.mark.parametrize(
    ("module", "must_not_import"),
    [
        # the log is generic: the budget journal uses it too
        (
            "append_log",
            {
                "viano_bug_analysis.investigation.checkpoint_rules",
                "viano_bug_analysis.case.package",
                "viano_bug_analysis.schemas",
            },
        ),
        # the rules are pure: no package files, no manifest
        (
            "checkpoint_rules",
            {
                "viano_bug_analysis.durable",
                "viano_bug_analysis.case.package",
                "viano_bug_analysis.schemas",
                "os",
                "stat",
            },
        ),
        # publishing the state needs no knowledge of how the log is stored
        (
            "manifest_sync",
            {
                "viano_bug_analysis.investigation.append_log",
                "viano_bug_analysis.investigation.checkpoints",
            },
        ),
        # the store neither reads the manifest nor parses entries itself
        (
            "checkpoints",
            {"viano_bug_analysis.case.package", "viano_bug_analysis.schemas", "stat", "re"},
        ),
    ],
)
def test_each_checkpoint_module_keeps_to_its_job(module: str, must_not_import: set[str]) -> None:
    assert _imports(module) & must_not_import == set()


def test_the_budget_journal_uses_the_log_not_the_checkpoints() -> None:
    assert "viano_bug_analysis.investigation.checkpoints" not in _imports("budget")
    assert "viano_bug_analysis.investigation.append_log" in _imports("budget")
