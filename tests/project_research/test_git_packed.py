"""Packed and delta git objects against git's own answers.

hypothesis generates a history: a few text files (nested paths, one
executable now and then) edited commit by commit with small line edits
(insert, delete, replace, add or remove a file), so that the versions of a
file are near copies of each other; an added file may end in a NUL byte or
an invalid UTF-8 byte (no text then, says the reference). The history goes
in through ``git fast-import`` (which writes a pack), then one of: left as
it is, ``repack -a -d``, ``repack -adf --window=50 --depth=50`` (long delta
chains), the same with ref-deltas instead of offset deltas
(``repack.useDeltaBaseOffset=false``) or with a reachability bitmap,
``gc --aggressive``, a multi-pack index over two packs, or a repack
followed by one more commit written as loose objects.

Reference: git itself. For every commit of the history the native listing
must equal ``git ls-tree -r -l``, every file's lines and SHA-256 must be
those of the bytes ``git cat-file --batch`` prints, and a literal search must
find exactly the lines a plain scan of those bytes finds.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.project_research.git_fixtures import GIT_ENV, URL, git
from tests.project_research.test_git_differential import reference_lines
from viano_bug_analysis._native import GitRepository
from viano_bug_analysis.project_research.git_source import GitSource

PATHS = ["a.txt", "src/b.cpp", "src/game/c.h", "src/game/d.sql", "z/e.txt"]
WORDS = ["spell", "aura", "creature", "quest", "Needle", "needle", "loot", "42", "é", "\t"]
NEEDLE = "Needle"
MODES = [
    "fast-import", "repack", "deltas", "ref-deltas", "bitmap", "gc-aggressive", "midx", "loose-tip",
]  # fmt: skip

line_strategy = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
file_strategy = st.lists(line_strategy, min_size=5, max_size=60)
edit_strategy = st.tuples(
    st.sampled_from(PATHS),
    st.sampled_from(["insert", "delete", "replace", "add", "remove"]),
    st.integers(0, 10_000),
    line_strategy,
    file_strategy,
)


@dataclass
class File:
    lines: list[str]
    executable: bool = False
    tail: bytes = b""
    """Appended after the lines: a NUL (binary) or an invalid UTF-8 byte."""

    def data(self) -> bytes:
        return "".join(line + "\n" for line in self.lines).encode() + self.tail


def apply(files: dict[str, File], edits: list[tuple[str, str, int, str, list[str]]]) -> None:
    for path, op, at, line, fresh in edits:
        file = files.get(path)
        if op == "add" or file is None:
            tail = {1: b"\0", 2: b"\xff"}.get(at % 11, b"")
            files[path] = File(fresh, executable=at % 7 == 0, tail=tail)
        elif op == "remove" and len(files) > 1:
            del files[path]
        elif op == "insert":
            file.lines.insert(at % (len(file.lines) + 1), line)
        elif op == "delete" and len(file.lines) > 1:
            del file.lines[at % len(file.lines)]
        elif op == "replace":
            file.lines[at % len(file.lines)] = line


def snapshot(files: dict[str, File]) -> dict[str, File]:
    return {p: File(list(f.lines), f.executable, f.tail) for p, f in files.items()}


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, File]]:
    """The file sets of successive commits (2 to 8 of them)."""
    initial = draw(st.dictionaries(st.sampled_from(PATHS), file_strategy, min_size=1))
    files = {path: File(lines) for path, lines in initial.items()}
    history = [snapshot(files)]
    for edits in draw(st.lists(st.lists(edit_strategy, min_size=1, max_size=4), min_size=1)):
        if len(history) == 8:
            break
        apply(files, edits)
        history.append(snapshot(files))
    return history


def fast_import_stream(history: list[dict[str, File]], ref: str) -> bytes:
    out = bytearray()
    for n, files in enumerate(history):
        message = f"commit {n}\n".encode()
        stamp = 1_700_000_000 + n
        out += f"commit {ref}\ncommitter Fixture <f@example.invalid> {stamp} +0000\n".encode()
        out += b"data %d\n%s\ndeleteall\n" % (len(message), message)
        for path, file in sorted(files.items()):
            data = file.data()
            mode = "100755" if file.executable else "100644"
            out += f"M {mode} inline {path}\ndata {len(data)}\n".encode() + data + b"\n"
        out += b"\n"
    return bytes(out)


def run_git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=GIT_ENV, input=input, capture_output=True, check=True
    )
    return done.stdout


def make_repository(root: Path, history: list[dict[str, File]], mode: str) -> list[str]:
    """A bare repository holding `history` stored as `mode` says; its commits."""
    git(root, "init", "-q", "--bare")
    git(root, "config", "gc.auto", "0")
    split = len(history) // 2 if mode == "midx" and len(history) > 1 else len(history)
    fast_import(root, fast_import_stream(history[:split], "refs/heads/main"))
    if split < len(history):
        # A second pack holding the rest of the history, then one index over both.
        parent = git(root, "rev-parse", "refs/heads/main")
        fast_import(root, _continue(fast_import_stream(history[split:], "refs/heads/main"), parent))
        git(root, "multi-pack-index", "write")
    if mode == "repack" or mode == "loose-tip":
        git(root, "repack", "-a", "-d", "-q")
    elif mode == "deltas":
        git(root, "repack", "-adf", "-q", "--window=50", "--depth=50")
    elif mode == "ref-deltas":
        no_offsets = ("-c", "repack.useDeltaBaseOffset=false")
        git(root, *no_offsets, "repack", "-adf", "-q", "--window=50", "--depth=50")
    elif mode == "bitmap":
        git(root, "repack", "-adfb", "-q", "--window=50", "--depth=50")
    elif mode == "gc-aggressive":
        git(root, "gc", "--aggressive", "--prune=now", "-q")
    commits = git(root, "rev-list", "--reverse", "refs/heads/main").split()
    if mode == "loose-tip":
        commits.append(_loose_commit(root, history[-1], commits[-1]))
    return commits


def fast_import(root: Path, stream: bytes) -> None:
    # A small import would otherwise be written as loose objects.
    run_git(root, "-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", input=stream)


def _continue(stream: bytes, parent: str) -> bytes:
    """Makes the first commit of a fast-import stream a child of `parent`."""
    head, sep, rest = stream.partition(b"deleteall\n")
    return head + f"from {parent}\n".encode() + sep + rest


def _loose_commit(root: Path, files: dict[str, File], parent: str) -> str:
    """One more commit, its objects loose: every file edited once more."""
    index = root / "loose-index"
    env = {**GIT_ENV, "GIT_INDEX_FILE": str(index)}
    for path, file in sorted(files.items()):
        blob = git(root, "hash-object", "-w", "--stdin", input=file.data() + b"loose tail\n")
        mode = "100755" if file.executable else "100644"
        subprocess.run(
            ["git", "update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}"],
            cwd=root,
            env=env,
            check=True,
        )
    tree = subprocess.run(
        ["git", "write-tree"], cwd=root, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    index.unlink()
    return git(root, "commit-tree", tree, "-p", parent, "-m", "loose")


def git_listing(root: Path, commit: str) -> list[tuple[str, str, str, int]]:
    """(path, kind, blob, size) per file, from ``git ls-tree -r -l``."""
    kinds = {"100644": "blob", "100755": "executable"}
    rows = []
    for line in git(root, "ls-tree", "-r", "-l", commit).splitlines():
        meta, path = line.split("\t", 1)
        mode, _type, blob, size = meta.split()
        rows.append((path, kinds[mode], blob, int(size)))
    return sorted(rows)


def git_blobs(root: Path, blobs: list[str]) -> dict[str, bytes]:
    """The bytes of `blobs` through one ``git cat-file --batch``."""
    out = run_git(root, "cat-file", "--batch", input="".join(b + "\n" for b in blobs).encode())
    found: dict[str, bytes] = {}
    pos = 0
    for blob in blobs:
        header_end = out.index(b"\n", pos)
        oid, kind, size = out[pos:header_end].decode().split()
        assert (oid, kind) == (blob, "blob")
        start = header_end + 1
        found[blob] = out[start : start + int(size)]
        pos = start + int(size) + 1
    return found


def check_commit(root: Path, native: GitRepository, commit: str) -> None:
    expected = git_listing(root, commit)
    tree = native.tree(commit, max_entries=1000, timeout_s=30)
    listed = sorted(
        (str(path), kind, blob, size)
        for path, kind, blob, size, _ in tree.find_paths(contains="", prefix=None)
    )
    assert listed == expected
    blobs = sorted({blob for _, _, blob, _ in expected})
    contents = git_blobs(root, blobs)
    digests = native.sha256(blobs, timeout_s=30)
    assert digests == [hashlib.sha256(contents[b]).hexdigest() for b in blobs]
    hits = []
    for path, _, blob, _ in sorted(expected, key=lambda row: row[0].encode()):
        text = tree.text(path, max_bytes=1 << 20, timeout_s=30)
        lines = reference_lines(contents[blob])
        if isinstance(lines, str) or isinstance(text, str):
            assert text == lines
            continue
        assert text.line_count == len(lines)
        got = [line for _, line, _ in text.lines(1, len(lines), 1 << 20)] if lines else []
        assert got == lines
        hits += [(path, n, line) for n, line in enumerate(lines, 1) if NEEDLE in line]
    source = GitSource(root, commit, url=URL, cache_bytes=0)
    result = source.search(text=NEEDLE, case_sensitive=True, path_prefix=None, offset=0, limit=100)
    assert result["total"] == len(hits)
    assert [(m["path"], m["line"], m["text"]) for m in result["matches"]] == hits[:100]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=histories(), mode=st.sampled_from(MODES))
def test_packed_history_matches_git(
    tmp_path_factory: pytest.TempPathFactory, history: list[dict[str, File]], mode: str
) -> None:
    root = tmp_path_factory.mktemp("packed")
    commits = make_repository(root, history, mode)
    if mode != "loose-tip":
        assert not list((root / "objects").glob("??/*")), "every object is packed"
    native = GitRepository(root, cache_bytes=0)
    for commit in commits:
        check_commit(root, native, commit)


@pytest.mark.parametrize("mode", ["deltas", "ref-deltas"])
def test_long_delta_chains_are_followed(tmp_path: Path, mode: str) -> None:
    """A fixed history that surely makes long chains (the generated ones may
    be too small for git to delta): 40 versions of one file and of a
    directory of 30 files, each version one line edit of the one before;
    git reports the chains it wrote, of blobs and of trees."""
    lines = [f"line {i} of the {NEEDLE} file with some padding text" for i in range(300)]
    small = {f"many/file_{i:02d}.txt": [f"small file {i}", NEEDLE] for i in range(30)}
    history = []
    for version in range(40):
        lines[(version * 37) % len(lines)] = f"edited in version {version} {NEEDLE}"
        small[f"many/file_{version % 30:02d}.txt"].append(f"version {version}")
        files = {path: File(list(body)) for path, body in small.items()}
        history.append({"big.txt": File(list(lines)), **files})
    commits = make_repository(tmp_path, history, mode)
    (pack,) = (tmp_path / "objects" / "pack").glob("*.idx")
    report = git(tmp_path, "verify-pack", "-v", str(pack))
    # "<id> <type> <size> <size in pack> <offset> <depth> <base>" per delta.
    depths: dict[str, int] = {}
    for row in report.splitlines():
        fields = row.split()
        if len(fields) == 7 and len(fields[0]) == 40:
            depths[fields[1]] = max(depths.get(fields[1], 0), int(fields[5]))
    assert depths.get("blob", 0) >= 10, report[-500:]
    assert depths.get("tree", 0) >= 5, report[-500:]
    native = GitRepository(tmp_path, cache_bytes=0)
    for commit in commits:
        check_commit(tmp_path, native, commit)
