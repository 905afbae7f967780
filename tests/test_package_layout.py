"""One package layout: every store takes a ``PackageLayout``, and the folder and
file names of the package format are written down in one place (durable.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from viano_bug_analysis.durable import PackageLayout
from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.investigation.budget import BudgetManager
from viano_bug_analysis.investigation.checkpoints import INVESTIGATION, CheckpointStore
from viano_bug_analysis.investigation.evidence import EvidenceStore
from viano_bug_analysis.investigation.recovery.audit import CallRecordStore
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.project_research.captures import CaptureStore

PACKAGE_SOURCE = Path(__file__).resolve().parents[1] / "python" / "viano_bug_analysis"
# The names a package path is built from. Written anywhere but durable.py, a
# second copy of the layout has begun (and may drift, or skip containment).
# ("attachments" is also a key of the manifest and the case: only its path form counts.)
LAYOUT_NAMES = frozenset(
    {"analysis", "revisions", "manifest.json", "case.json", "research/project"}
)
PATH_PREFIXES = ("analysis/", "revisions/", "attachments/", "research/")


def _path_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and (node.value in LAYOUT_NAMES or node.value.startswith(PATH_PREFIXES))
        ):
            found.append(f"{path.relative_to(PACKAGE_SOURCE)}:{node.lineno}: {node.value!r}")
    return found


def test_package_names_are_defined_only_by_the_layout() -> None:
    copies = [
        literal
        for source in sorted(PACKAGE_SOURCE.rglob("*.py"))
        if source.name != "durable.py"
        for literal in _path_literals(source)
    ]
    assert copies == []


def test_every_store_takes_the_layout(tmp_path: Path) -> None:
    layout = PackageLayout(tmp_path)
    CheckpointStore(layout).advance(INVESTIGATION, plan="p")
    BudgetManager(layout).open_account("case", 10)
    StepLog(layout).put_policy(b"{}")
    assert CaptureStore(layout).list() == []
    assert EvidenceStore(layout).records() == []
    assert CallRecordStore(layout).list() == []
    for rel in (PackageLayout.CHECKPOINTS, PackageLayout.BUDGET_JOURNAL, PackageLayout.POLICY):
        assert (tmp_path / rel).exists()


def test_a_store_given_a_path_resolves_it_through_the_layout(tmp_path: Path) -> None:
    # The public form (README: CaptureStore(package_dir)) keeps working, and
    # the containment of the layout applies to it: a linked folder is refused.
    outside = tmp_path / "outside"
    outside.mkdir()
    package = tmp_path / "package"
    (package / "analysis").mkdir(parents=True)
    (package / PackageLayout.CHECKPOINTS).symlink_to(outside)
    with pytest.raises(PackageFileError) as caught:
        CheckpointStore(package).advance(INVESTIGATION, plan="p")
    assert caught.value.code == "package_path_outside"
    assert list(outside.iterdir()) == []


def test_the_investigation_directories_are_the_layouts() -> None:
    from viano_bug_analysis.investigation.steps import investigation_directories

    assert investigation_directories() == PackageLayout.INVESTIGATION_DIRECTORIES
