"""Differential tests: GitSource against a few lines of plain Python.

hypothesis builds commits of generated files (BOMs, CRLF/CR, NUL, invalid
UTF-8, non-ASCII case folding, identifiers next to each other) and checks
that every search kind agrees with a reference that reads the same bytes;
the path rules are checked against a reference as well.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.project_research.git_fixtures import GIT_ENV, URL, git
from viano_bug_analysis.project_research.git_paths import path_problem
from viano_bug_analysis.project_research.git_source import GitSource

PIECES = [
    "foo", "Foo", "FOO", "foo_bar", "foobar", "_foo", "foo9", "(foo)", "é foo", "x",
    " ", "\t", "ä", "Ä", "ß", "SS", "\u212a", "k", "\u0130", "i\u0307", "\u03a3", "ς",
    "\n", "\r\n", "\r", "\n\n", "\x0c", "\u2028",
]  # fmt: skip
PATTERNS = ["foo", "Foo", "oo", "foo_bar", "ä", "ß", "k", "\u0130", "σ", "x", "bar"]
NAMES = ["a.txt", "b/c.txt", "b/d.sql", "b/e/f.txt", "z.txt"]

files_strategy = st.dictionaries(
    keys=st.sampled_from(NAMES),
    values=st.tuples(
        st.lists(st.sampled_from(PIECES), max_size=30),
        st.sampled_from(["plain", "bom", "nul", "invalid"]),
    ),
    min_size=1,
)


def encode(pieces: list[str], flavour: str) -> bytes:
    data = "".join(pieces).encode("utf-8")
    if flavour == "bom":
        return b"\xef\xbb\xbf" + data
    if flavour == "nul":
        return data + b"\0"
    if flavour == "invalid":
        return b"\xff" + data
    return data


def reference_lines(data: bytes) -> list[str] | str:
    """Decoded lines per docs/text-and-search.md, or the skip reason."""
    if b"\0" in data:
        return "binary"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "not_utf8"
    text = text.removeprefix("\ufeff")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def fold(s: str) -> str:
    return "".join(c.lower() for c in s)


def is_ident(c: str) -> bool:
    return c == "_" or (c.isascii() and c.isalnum())


def matches(mode: str, pattern: str, line: str) -> bool:
    if mode == "literal":
        return pattern in line
    if mode == "literal_ignore_case":
        return fold(pattern) in fold(line)
    start = line.find(pattern)
    while start >= 0:
        end = start + len(pattern)
        if (start == 0 or not is_ident(line[start - 1])) and (
            end == len(line) or not is_ident(line[end])
        ):
            return True
        start = line.find(pattern, start + 1)
    return False


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("differential")
    git(path, "init", "-q", "--bare")
    return path


def commit(repo: Path, files: dict[str, bytes]) -> str:
    index = repo / "tmp-index"
    env = {**GIT_ENV, "GIT_INDEX_FILE": str(index)}
    index.unlink(missing_ok=True)
    for name, data in files.items():
        blob = git(repo, "hash-object", "-w", "--stdin", input=data)
        subprocess.run(
            ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}"],
            cwd=repo,
            env=env,
            check=True,
        )
    tree = subprocess.run(
        ["git", "write-tree"], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    os.unlink(index)
    return git(repo, "commit-tree", tree, "-m", "generated")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    generated=files_strategy,
    pattern=st.sampled_from(PATTERNS),
    mode=st.sampled_from(["literal", "literal_ignore_case", "symbol"]),
)
def test_search_agrees_with_reference(
    repo: Path, generated: dict[str, tuple[list[str], str]], pattern: str, mode: str
) -> None:
    files = {name: encode(*spec) for name, spec in generated.items()}
    source = GitSource(repo, commit(repo, files), url=URL, cache_bytes=0)
    if mode == "symbol" and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", pattern):
        return
    expected_hits: list[tuple[str, int, str]] = []
    expected_skips: list[dict[str, str]] = []
    for name in sorted(files, key=str.encode):
        lines = reference_lines(files[name])
        if isinstance(lines, str):
            expected_skips.append({"path": name, "reason": lines})
            continue
        expected_hits += [
            (name, n, line) for n, line in enumerate(lines, 1) if matches(mode, pattern, line)
        ]
    result: dict[str, Any]
    if mode == "symbol":
        result = source.symbol(symbol=pattern, path_prefix=None, offset=0, limit=100)
    else:
        result = source.search(
            text=pattern,
            case_sensitive=mode == "literal",
            path_prefix=None,
            offset=0,
            limit=100,
        )
    assert [(m["path"], m["line"], m["text"]) for m in result["matches"]] == expected_hits
    assert result["total"] == len(expected_hits)
    assert result["skipped"]["paths"] == expected_skips
    sql = source.schema(text=pattern, case_sensitive=True, offset=0, limit=100)
    expected_sql = []
    for name in sorted(files, key=str.encode):
        lines = reference_lines(files[name])
        if name.endswith(".sql") and not isinstance(lines, str):
            expected_sql += [(name, n) for n, line in enumerate(lines, 1) if pattern in line]
    assert [(m["path"], m["line"]) for m in sql["matches"]] == expected_sql


def reference_path_problem(path: str, allow_trailing_slash: bool) -> bool:
    """True when the path breaks a rule (docs of git_paths)."""
    if not path or len(path) > 1024 or path.startswith("/"):
        return True
    if any(c in path for c in "\\\0\r\n"):
        return True
    body = path[:-1] if allow_trailing_slash and path.endswith("/") else path
    return any(c in ("", ".", "..") or c.lower() == ".git" for c in body.split("/"))


@settings(max_examples=500, deadline=None)
@given(
    path=st.lists(
        st.sampled_from(["a", "b", ".", "..", ".git", ".GIT", ".Git", "", "é", "\\", "\0", "x y"]),
        max_size=5,
    ).map("/".join),
    trailing=st.booleans(),
)
def test_path_rules_agree_with_reference(path: str, trailing: bool) -> None:
    problem = path_problem(path, allow_trailing_slash=trailing)
    assert (problem is not None) == reference_path_problem(path, trailing)
