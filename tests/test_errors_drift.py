"""Drift test: the error codes the code raises, the codes ``errors.py`` declares and
the codes ``docs/errors.md`` lists are one and the same set.

Codes are mostly string literals handed to a constructor, sometimes through a
helper (``_fail(code, ...)``) or a local variable. The scan below follows those
by their shape, without importing the call sites: a new helper or a new
literal is found without anyone having to remember this test. A code the scan
cannot read (an f-string, a value computed elsewhere) must be declared in
``errors.py`` by hand and its site listed in ``DYNAMIC_SITES`` with why.
"""

from __future__ import annotations

import ast
import builtins
import re
import typing
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from viano_bug_analysis import errors, exit_codes, jsonio
from viano_bug_analysis.errors import VbaError

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "viano_bug_analysis"
RUST = ROOT / "rust" / "src"
DOC = ROOT / "docs" / "errors.md"
INDEX_HEADING = "## Index of codes"

# Functions whose code is not a literal the scan can follow, by qualified name
# (stable when a module is split). Every code they can produce is declared in
# errors.py by hand.
DYNAMIC_SITES = {
    # f"{kind}_invalid" / f"{kind}_too_large" for kind in ("request", "query").
    "read_json_input",
    # read_json_input's factory for files.read_regular_file builds f"{kind}_too_large".
    "read_json_input.refused",
    # f"{prefix}_corrupt", ... for the budget journal and the checkpoint log.
    "AppendOnlyLog.corrupt",
    "AppendOnlyLog.append",
    "AppendOnlyLog._checked_directory",
    # A refusal of the case package passed on with its CaseError code.
    "_load",
    "InvestigationToolRouter._read_selection",
    # The references kind passes on check_request's code (entity_type_unknown,
    # entity_id_invalid) as a ResearchError with the query's pointer.
    "ReferenceResearch._references",
    # vba llm check re-raises the first failed endpoint's LlmError from its stored
    # finding (llm/check.py): a code an adapter site produced.
    "check_failure",
}


# Exceptions that never leave the package, so no part of the error contract:
# each is raised and caught by the modules named in its comment.
INTERNAL_EXCEPTIONS = {
    # A repair step gives up; recovery/flow.py and admission.py turn it into feedback.
    "RepairError": "investigation/recovery/repair.py",
    # A retryable HTTP failure; llm/client.py retries, then raises llm_unavailable.
    "TransientFailure": "investigation/llm/transport.py",
    # An OSError for a FIFO or device; files.read_regular_file and case/create.py
    # turn it into their caller's own code (reason not_a_regular_file).
    "NotRegularFileError": "files.py",
}


def _classes() -> dict[str, type[VbaError]]:
    found: dict[str, type[VbaError]] = {}
    pending: list[type[VbaError]] = [VbaError]
    while pending:
        cls = pending.pop()
        found[cls.__name__] = cls
        pending.extend(cls.__subclasses__())
    return found


def _string_values(node: ast.expr | None) -> set[str] | None:
    """The string constants an expression can be, or None when it is not only those."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        body, orelse = _string_values(node.body), _string_values(node.orelse)
        return None if body is None or orelse is None else body | orelse
    return None


def _callee(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _code_argument(node: ast.Call, position: int) -> ast.expr | None:
    for keyword in node.keywords:
        if keyword.arg == "code":
            return keyword.value
    return node.args[position] if len(node.args) > position else None


class _Module:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.rel = path.relative_to(PACKAGE).as_posix()
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        # function -> its qualified name (``AppendOnlyLog.corrupt``, ``read_json_input.refused``)
        self.qualnames: dict[ast.FunctionDef | ast.AsyncFunctionDef, str] = {}
        self._name(self.tree, "")
        self.functions = list(self.qualnames)

    def _name(self, node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    self.qualnames[child] = qualname
                self._name(child, qualname + ".")
            else:
                self._name(child, prefix)


def _modules() -> list[_Module]:
    return [_Module(p) for p in sorted(PACKAGE.rglob("*.py"))]


def _constants(modules: list[_Module]) -> dict[str, set[str]]:
    """Module-level ``NAME = "text"`` (or ``NAME: Final = "text"``) of every module."""
    found: dict[str, set[str]] = defaultdict(set)
    for module in modules:
        for stmt in module.tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                target, value = stmt.target, stmt.value
            else:
                continue
            if isinstance(target, ast.Name) and (values := _string_values(value)):
                found[target.id] |= values
    # ``from viano_bug_analysis.errors import LLM_UNAVAILABLE as UNAVAILABLE``
    for module in modules:
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.asname and alias.name in found:
                        found[alias.asname] |= found[alias.name]
    return found


def _calls(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.Call]:
    # Only this function's own calls: nested functions are scanned on their own.
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _local_values(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> set[str] | None:
    values: set[str] = set()
    assigned = False
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            assigned = True
            found = _string_values(node.value)
            if found is None:
                return None
            values |= found
    return values if assigned else None


def _class_parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Parameters annotated as an exception class (``error: type[VbaError]``)."""
    args = function.args
    return {
        a.arg
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]
        if a.annotation is not None and re.search(r"type\[\w*Error\]", ast.unparse(a.annotation))
    }


class _Scan:
    """Every code the package can raise, by class, and the sites it cannot read."""

    def __init__(self) -> None:
        self.modules = _modules()
        self.constants = _constants(self.modules)
        classes = _classes()
        # Constructors whose first argument is not the code: they build it themselves.
        own_code = {"ResearchUnavailable", "ResearchAuthFailed", "JsonDecodeError"}
        # sink name -> (position of the code argument, classes it raises)
        self.sinks: dict[str, tuple[int, set[str]]] = {
            name: (0, {name}) for name in classes if name not in own_code
        }
        self._find_helpers()
        self.codes: dict[str, set[str]] = defaultdict(set)
        self.dynamic: set[str] = set()
        self._collect()

    def _find_helpers(self) -> None:
        changed = True
        while changed:
            changed = False
            for module in self.modules:
                for function in module.functions:
                    params = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
                    if params[:1] in (["self"], ["cls"]):
                        params = params[1:]
                    for call in self._sink_calls(function):
                        argument = _code_argument(call, self._sink(function, call)[0])
                        if (
                            isinstance(argument, ast.Name)
                            and argument.id in params
                            and _local_values(function, argument.id) is None
                        ):
                            position = params.index(argument.id)
                            classes = self._sink(function, call)[1]
                            old = self.sinks.get(function.name)
                            if old is None or not classes <= old[1]:
                                merged = classes | (old[1] if old else set())
                                self.sinks[function.name] = (position, merged)
                                changed = True

    def _sink(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call
    ) -> tuple[int, set[str]]:
        name = _callee(call)
        assert name is not None
        return self.sinks.get(name, (0, {"VbaError"}))

    def _sink_calls(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.Call]:
        class_params = _class_parameters(function)
        for call in _calls(function):
            name = _callee(call)
            # A class passed in (``error: type[VbaError]``) or kept (``self._error``).
            generic = name in class_params or name in ("error", "_error")
            if name in self.sinks or generic:
                yield call

    def _collect(self) -> None:
        for module in self.modules:
            for function in module.functions:
                params = {a.arg for a in [*function.args.posonlyargs, *function.args.args]}
                for call in self._sink_calls(function):
                    position, classes = self._sink(function, call)
                    values = self._values(function, _code_argument(call, position), params)
                    if values is None:
                        self.dynamic.add(module.qualnames[function])
                    for code in values or ():
                        self.codes[code] |= classes

    def _values(
        self,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        argument: ast.expr | None,
        params: set[str],
    ) -> set[str] | None:
        if (literal := _string_values(argument)) is not None:
            return literal
        if isinstance(argument, ast.Name):
            if argument.id in params and function.name in self.sinks:
                return set()  # a helper passing its own code on: its callers are scanned
            local = _local_values(function, argument.id)
            if local is not None:
                return local
            return self.constants.get(argument.id)
        if isinstance(argument, ast.Attribute):
            return self.constants.get(argument.attr)
        return None


def _codes_of(cls: type[VbaError]) -> frozenset[str]:
    # A site raising through a class it was given may raise any declared code.
    return errors.declared_codes() if cls is VbaError else cls.codes


@pytest.fixture(scope="module")
def scan() -> _Scan:
    return _Scan()


def _rust_codes() -> set[str]:
    """The match arms of every ``fn code`` of the Rust sources."""
    found: set[str] = set()
    for path in RUST.rglob("*.rs"):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"fn code\(&self\)[^{]*\{", text):
            depth, end = 1, match.end()
            while depth:
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                end += 1
            found |= set(re.findall(r'=>\s*"([a-z0-9_]+)"', text[match.end() : end]))
    return found


def _documented() -> dict[str, str]:
    """The index table of docs/errors.md: code -> the classes column."""
    text = DOC.read_text(encoding="utf-8")
    assert INDEX_HEADING in text, f"docs/errors.md has no {INDEX_HEADING!r} section"
    section = text.split(INDEX_HEADING, 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and (code := re.fullmatch(r"`([a-z0-9_]+)`", cells[0])):
            assert code.group(1) not in rows, f"{code.group(1)} is listed twice"
            rows[code.group(1)] = cells[1]
    return rows


def test_every_class_lives_in_errors_py() -> None:
    hierarchy = set(_classes())
    elsewhere: dict[str, str] = {}
    for module in _modules():
        if module.rel == "errors.py":
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ClassDef) and any(
                (b.id if isinstance(b, ast.Name) else getattr(b, "attr", None)) in hierarchy
                for b in node.bases
            ):
                elsewhere[node.name] = module.rel
    assert elsewhere == {}


def test_exceptions_outside_errors_py_are_internal() -> None:
    exceptions = {
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    }
    public: dict[str, str] = {}
    for module in _modules():
        if module.rel == "errors.py":
            continue
        for node in ast.walk(module.tree):
            if (
                isinstance(node, ast.ClassDef)
                and not node.name.startswith("_")
                and any(isinstance(b, ast.Name) and b.id in exceptions for b in node.bases)
            ):
                public[node.name] = module.rel
    assert public == INTERNAL_EXCEPTIONS


def test_every_literal_code_is_declared_by_its_class(scan: _Scan) -> None:
    classes = _classes()
    undeclared = {
        code: sorted(names)
        for code, names in scan.codes.items()
        if not any(code in _codes_of(classes[name]) for name in names)
    }
    assert undeclared == {}


def test_codes_the_scan_cannot_read_are_listed(scan: _Scan) -> None:
    assert scan.dynamic == DYNAMIC_SITES


def test_rust_codes_are_declared() -> None:
    # The git core's outage codes reach Python as the reason of research_unavailable.
    known = errors.declared_codes() | errors.ResearchUnavailable.git_reasons
    known |= errors.ResearchUnavailable.client_data_reasons
    assert _rust_codes() - known == set()


def test_json_decode_codes_follow_the_failure_codes() -> None:
    # errors.py cannot import jsonio (jsonio raises its classes): the list is
    # declared twice on purpose, once as codes, once as jsonio's FailureCode type.
    expected = {f"json_{code}" for code in typing.get_args(jsonio.FailureCode)}
    assert expected == errors.JsonDecodeError.codes


def test_every_declared_code_is_raised_somewhere(scan: _Scan) -> None:
    # Declared but never raised is a dead entry; the hand-declared codes of the
    # dynamic sites and of the Rust core are raised where the scan cannot see.
    raised = set(scan.codes) | _rust_codes() | errors.DYNAMIC_CODES
    raised |= errors.JsonDecodeError.codes | errors.ResearchUnavailable.codes
    raised |= errors.ResearchAuthFailed.codes
    assert errors.declared_codes() - raised == set()


def test_docs_list_exactly_the_declared_codes() -> None:
    documented = _documented()
    declared = errors.declared_codes()
    assert {
        "undocumented": sorted(declared - set(documented)),
        "documented but not declared": sorted(set(documented) - declared),
    } == {"undocumented": [], "documented but not declared": []}


def test_docs_name_the_classes_that_raise_each_code() -> None:
    documented = _documented()
    wrong = {}
    for code, cell in documented.items():
        named = set(re.findall(r"`(\w+)`", cell))
        owners = {name for name, cls in _classes().items() if code in cls.codes}
        if named != owners:
            wrong[code] = (sorted(named), sorted(owners))
    assert wrong == {}


def test_the_exit_code_table_names_declared_codes() -> None:
    declared = errors.declared_codes()
    assert set(exit_codes.BY_CODE) - declared == set()
    unused = {s for s in exit_codes.BY_SUFFIX if not any(c.endswith(s) for c in declared)}
    assert unused == set()
