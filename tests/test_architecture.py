"""The import graph keeps the layers of docs/architecture.md.

Every module belongs to one layer; an import may only go to the same layer
or a lower one, so no cycle between the top-level subpackages can form. The
graph is read from the source (``ast``), imports inside functions included:
a lazy import is still a dependency. Imports under ``if TYPE_CHECKING:`` are
left out, as they never run (an annotation may name a class of any layer).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "viano_bug_analysis"
ROOT = Path(__file__).resolve().parents[1] / "python" / PACKAGE

# Highest first. "foundation" is what every layer shares (one mechanism each).
LAYERS = (
    "command line",
    "report",
    "profiles",
    "investigation",
    "tools",
    "case",
    "enrichment",
    "facts",
    "research",
    "snapshot",
    "native",
    "foundation",
)
TOP_LEVEL = {
    "cli": "command line",
    "demo": "command line",
    "demo_case": "command line",
    "mcp_server": "command line",
    # vba triage runs import, build and investigation for many reports: it
    # wires every layer, as a command does.
    "triage": "command line",
    "report": "report",
    "profiles": "profiles",
    "investigation": "investigation",
    "tools": "tools",
    "case": "case",
    "enrichment": "enrichment",
    "facts": "facts",
    "project_research": "research",
    "snapshot": "snapshot",
    "_native": "native",
    "_validate": "native",
    "errors": "foundation",
    "jsonio": "foundation",
    "schema_errors": "foundation",
    "schemas": "foundation",
    "durable": "foundation",
    "exit_codes": "foundation",
    "vocabulary": "foundation",
    "files": "foundation",
    "config_kinds": "foundation",
}
# Names a lower layer still passes on for an import path an earlier release
# documented, imported lazily inside a function (so importing the lower layer
# does not load the upper one). Each entry says which import path it keeps.
COMPATIBILITY_REEXPORTS = {
    ("enrichment", "profiles.vcore"): "enrichment.vcore_profile (docs/case-enrichment.md)",
}
# The command of a subpackage parses arguments and wires the layers together;
# it lives beside the code it drives but is command line.
COMMAND_MODULES = {
    "investigation.commands",
    "case.build_command",
    "case.leads_command",
    "tools.references_command",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    if module in COMMAND_MODULES or module.endswith("__main__"):
        return "command line"
    return TOP_LEVEL[module.split(".")[0]]


def imports_of(path: Path, module: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, whether inside a function) for each internal import."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        if isinstance(node, ast.If) and ast.unparse(node.test) in _TYPE_CHECKING:
            for child in node.orelse:
                visit(child, lazy)
            return
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                names = [".".join([PACKAGE, *base, *([node.module] if node.module else [])])]
            else:
                names = [node.module or ""]
        else:
            names = []
        for name in names:
            parts = name.split(".")
            if parts[0] == PACKAGE and len(parts) > 1:
                found.append((".".join(parts[1:]), node.lineno, lazy))  # type: ignore[attr-defined]
        inner = lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


_TYPE_CHECKING = {"TYPE_CHECKING", "typing.TYPE_CHECKING"}


def import_graph() -> list[tuple[str, str, str]]:
    """(importing module, imported module, file:line) for every internal import."""
    edges = []
    for path in sorted(ROOT.rglob("*.py")):
        module = module_name(path)
        if not module:
            continue  # the package root only re-exports the version
        for target, line, lazy in imports_of(path, module):
            if lazy and (module.split(".")[0], target) in COMPATIBILITY_REEXPORTS:
                continue
            edges.append((module, target, f"{path.relative_to(ROOT)}:{line}"))
    return edges


def test_every_top_level_name_has_a_layer() -> None:
    names = {path.relative_to(ROOT).parts[0].split(".")[0] for path in ROOT.rglob("*.py")}
    names |= {path.name.split(".")[0] for path in ROOT.glob("*.so")}
    names.discard("__init__")
    unplaced = sorted(n for n in names if n not in TOP_LEVEL)
    assert unplaced == [], f"give these a layer in TOP_LEVEL and docs/architecture.md: {unplaced}"


def test_imports_only_go_down_the_layers() -> None:
    rank = {layer: index for index, layer in enumerate(LAYERS)}
    upward = [
        f"{where}: {source} ({layer_of(source)}) imports {target} ({layer_of(target)})"
        for source, target, where in import_graph()
        if rank[layer_of(target)] < rank[layer_of(source)]
    ]
    assert upward == []


def test_no_cycle_between_top_level_subpackages() -> None:
    graph: dict[str, set[str]] = {}
    for source, target, _where in import_graph():
        a, b = source.split(".")[0], target.split(".")[0]
        if a != b and layer_of(source) != "command line":
            graph.setdefault(a, set()).add(b)
    cycles = []
    for start in graph:
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start:
                    cycles.append(" -> ".join([*path, start]))
                elif nxt not in path:
                    stack.append((nxt, [*path, nxt]))
    assert cycles == []


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    # Guards the guard: relative and lazy imports are seen, type-only ones are not.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from ..case.package import CasePackage\n"
        "def later():\n    import viano_bug_analysis.cli\n"
        "if TYPE_CHECKING:\n    from viano_bug_analysis.tools import router\n"
    )
    found = imports_of(probe, "enrichment.probe")
    assert sorted((t, lazy) for t, _l, lazy in found) == [("case.package", False), ("cli", True)]


# Test folders that have no package folder of the same name, and why.
CROSS_CUTTING_TEST_FOLDERS = {
    "e2e": "whole-investigation runs through the command line",
    "cli": "the command line (cli.py and the exit-code table) as a user meets it",
    "native": "the Rust extension viano_bug_analysis._native",
    "fixtures": "data files (the fixture world database), no tests",
    "corpus": "tracker reports and what each names, with the corpus's own self-check",
}


def test_test_folders_mirror_the_package() -> None:
    # A test of investigation/budget.py lives in tests/investigation/, so the
    # tests of a module are found where the module is.
    tests_root = Path(__file__).parent
    package_root = tests_root.parent / "python" / "viano_bug_analysis"
    strays = []
    for folder in sorted(p for p in tests_root.rglob("*") if p.is_dir()):
        rel = folder.relative_to(tests_root)
        if rel.parts[0] in CROSS_CUTTING_TEST_FOLDERS or "__pycache__" in rel.parts:
            continue
        if not (package_root / rel).is_dir() and not (package_root / f"{rel}.py").is_file():
            strays.append(rel.as_posix())
    assert strays == []
