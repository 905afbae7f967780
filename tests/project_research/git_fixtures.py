"""Git repositories for the git source tests, built with the git CLI in temp dirs.

``build_fixture_repo`` makes a small project with everything the provider
must handle: two commits on ``main`` and a ``feature`` branch (the work tree
ends up on ``feature``, so it matches no commit under test), a symlink, a
submodule entry (a gitlink added with ``update-index --cacheinfo``), a binary
file, CRLF, CR and BOM files, a Latin-1 file, a file of several MiB, SQL files
(one with an upper-case suffix), nested directories, paths with spaces and
non-ASCII letters, an executable, an empty file and a very long line.

``build_hostile_repo`` makes a commit whose trees git itself would refuse to
check out: entries named ``..``, ``.git`` and ``.GIT``, a backslash, a
non-UTF-8 name and a path listed twice.

git runs with a fixed environment (no system or global config, no prompt,
fixed identities and dates), so the object IDs are the same on every machine.
No network.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/nonexistent",
    "LANG": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_AUTHOR_NAME": "Fixture",
    "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "Fixture",
    "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+00:00",
}

URL = "https://git.example.invalid/fixture.git"
NEEDLE = "Wolpertinger"
BIG_FILE_BYTES = 3 << 20
MANY_FILES = 25
SUBMODULE_COMMIT = "5" * 40


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    """Runs git in ``repo`` with the fixed environment; returns stdout (stripped)."""
    done = subprocess.run(
        ["git", "-c", "core.quotePath=false", *args],
        cwd=repo,
        env=GIT_ENV,
        input=input,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode("utf-8", "surrogateescape").strip()


def git_bytes(repo: Path, *args: str) -> bytes:
    done = subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, capture_output=True, check=True)
    return done.stdout


def _big_file() -> bytes:
    line = b"filler line of the big file, nothing to see here ........................\n"
    body = line * (BIG_FILE_BYTES // len(line))
    return body + f"needle {NEEDLE} at the very end\n".encode()


def fixture_files() -> dict[str, bytes]:
    """The regular files of the first commit, by path."""
    files: dict[str, bytes] = {
        "README.md": f"# Fixture\n{NEEDLE} appears here once.\n".encode(),
        "src/game/Spell.cpp": (
            "// Spell handling\n"
            '#include "Spell.h"\n'
            f"void Handle{NEEDLE}() {{}}\n"
            f"void Handle{NEEDLE}Aura() {{}}\n"
            f"int count = Handle{NEEDLE}_count;\n"
            f"RegisterSpellScript(spell_{NEEDLE.lower()}_bite);\n"
            f"    Handle{NEEDLE}(); // call\n"
        ).encode(),
        "src/game/Spell.h": f"void Handle{NEEDLE}();\n".encode(),
        "src/game/Spells/Aura.cpp": (
            f"RegisterSpellScript(spell_{NEEDLE.lower()}_bite); // registered twice?\n"
        ).encode(),
        f"src/scripts/dir with space/ünïcode {NEEDLE}.txt": (
            f"Grüße vom {NEEDLE}\nSTRASSE\nÄrger\n"
        ).encode(),
        "docs/crlf.txt": f"first line\r\nsecond {NEEDLE}\r\nthird\r\n".encode(),
        "docs/cr.txt": f"one\rtwo {NEEDLE}\rthree".encode(),
        "docs/bom.txt": f"\ufeffbom {NEEDLE}\nline two\n".encode(),
        "docs/empty.txt": b"",
        "data/binary.bin": f"\x00\x01{NEEDLE}\x00 binary".encode(),
        "data/latin1.txt": f"{NEEDLE} Grüße\n".encode("latin-1"),
        "data/big.txt": _big_file(),
        "long_line.txt": ("x" * 5000 + f" {NEEDLE}\n").encode(),
        "sql/world.sql": (
            "CREATE TABLE creature_template (entry INT, name VARCHAR(100));\n"
            f"-- {NEEDLE} lives in creature_template\n"
        ).encode(),
        "sql/updates/2024_01_01.SQL": (
            f"UPDATE creature_template SET name='{NEEDLE}' WHERE entry=1;\n"
        ).encode(),
        "src/tools/not_sql.sqlx": f"{NEEDLE} in a file that is no SQL\n".encode(),
        "tools/run.sh": f"#!/bin/sh\necho {NEEDLE}\n".encode(),
        "src/config/secret-config.txt": b"nothing here\n",
    }
    for i in range(MANY_FILES):
        files[f"many/file_{i:03d}.txt"] = f"hit {NEEDLE} number {i}\nno hit\n".encode()
    return files


SYMLINKS = {"link-to-spell": "src/game/Spell.cpp", f"src/game/{NEEDLE}.link": "Spell.cpp"}
SUBMODULE_PATH = f"deps/{NEEDLE.lower()}-lib"
EXECUTABLES = frozenset({"tools/run.sh"})


@dataclass
class FixtureRepo:
    path: Path
    first: str
    """The commit under test: main~1."""
    second: str
    """main: the first commit plus a change on top."""
    feature: str
    """The tip of branch ``feature`` (checked out at the end)."""
    files: Mapping[str, bytes] = field(default_factory=dict)
    """Regular files at ``first``."""

    def blob_id(self, commit: str, path: str) -> str:
        return git(self.path, "rev-parse", f"{commit}:{path}")

    def blob_bytes(self, blob: str) -> bytes:
        return git_bytes(self.path, "cat-file", "blob", blob)


def _write(root: Path, files: Mapping[str, bytes]) -> None:
    for name, data in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def build_fixture_repo(root: Path, *, bare_copy: bool = False) -> FixtureRepo:
    """Builds the fixture project in ``root`` (created); see the module docstring."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "gc.auto", "0")
    files = fixture_files()
    _write(root, files)
    for name in EXECUTABLES:
        (root / name).chmod(0o755)
    for name, target in SYMLINKS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / name)
    git(root, "add", "-A")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{SUBMODULE_COMMIT},{SUBMODULE_PATH}")
    git(root, "commit", "-q", "-m", "first")
    first = git(root, "rev-parse", "HEAD")

    # main moves on: an edit, a deletion and a new file.
    with (root / "src/game/Spell.cpp").open("ab") as handle:
        handle.write(f"// {NEEDLE} v2 was added later\n".encode())
    (root / "README.md").unlink()
    _write(root, {"src/new.cpp": f"int {NEEDLE}New = 1;\n".encode()})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "second")
    second = git(root, "rev-parse", "HEAD")

    # A branch from the first commit, checked out last: the work tree matches
    # neither commit under test.
    git(root, "checkout", "-q", "-b", "feature", first)
    _write(root, {"docs/crlf.txt": b"rewritten on the feature branch\n"})
    (root / "many").joinpath("file_000.txt").unlink()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "feature")
    feature = git(root, "rev-parse", "HEAD")
    return FixtureRepo(root, first, second, feature, files)


def build_hostile_repo(root: Path) -> tuple[Path, str]:
    """A repository whose only commit has trees git would refuse to check out.

    Returns the repository path and the commit. The tree holds a plain file
    ``ok.txt`` and, each with the needle inside: ``..`` and ``.git``
    directories, ``.GIT/config``, ``back\\slash.txt``, a non-UTF-8 name and
    ``dup.txt`` listed twice.
    """
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "--bare")
    text = f"{NEEDLE} in a hostile place\n".encode()
    blob = git(root, "hash-object", "-w", "--stdin", input=text)
    ok = git(root, "hash-object", "-w", "--stdin", input=f"{NEEDLE} ok\n".encode())

    def tree(entries: list[tuple[str, bytes, str]]) -> str:
        # Raw tree objects: "<mode> <name>\0<20-byte id>" in git's order, written
        # --literally so that git's own name checks do not refuse them.
        body = b"".join(
            mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries
        )
        return git(root, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", input=body)

    inner = tree([("100644", b"config", blob)])
    top = tree(
        [
            ("100644", b"back\\slash.txt", blob),
            ("100644", b"caf\xe9.txt", blob),
            ("100644", b"dup.txt", blob),
            ("100644", b"dup.txt", blob),
            ("40000", b".GIT", inner),
            ("40000", b"..", inner),
            ("40000", b".git", inner),
            ("100644", b"ok.txt", ok),
        ]
    )
    commit = git(root, "commit-tree", top, "-m", "hostile")
    return root, commit
