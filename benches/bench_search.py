"""Benchmark (a): verify + decode + 16 line searches over a 32 MiB deflate ZIP.

64 members of real C/C++ source text (the system headers under /usr/include,
which the C++ toolchain brings, then the Python standard library if more is
needed), concatenated in a fixed order into ~512 KiB members; 16 searches:
8 literal, 4 case-insensitive, 4 symbol, of the kind an investigation sends.
Side by side in one group:

* ``baseline-inflate-hash``: only inflate + CRC + SHA-256 every member with
  our own decoder (one thread, output discarded) — the floor the whole batch
  is compared with;
* ``ours-*``: verify + decode + the 16 searches through the public API, one
  thread and every core;
* ``python``: zipfile + hashlib + str methods;
* ``rg``: ripgrep on the same files extracted to a temp dir, one call per search.
"""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import subprocess
import sysconfig
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from viano_bug_analysis.snapshot import LineQuery, MemberRef, SnapshotArchive, search_lines

MEMBERS = 64
MEMBER_BYTES = 512 * 1024
MAX_BYTES = 8 * 1024 * 1024
GROUP = "a: verify+decode+16 searches, 32 MiB ZIP of 64 source files"

QUERIES = [
    LineQuery("literal", "#include <vector>"),
    LineQuery("literal", "static_assert("),
    LineQuery("literal", "std::unique_ptr"),
    LineQuery("literal", "return nullptr;"),
    LineQuery("literal", "__attribute__ ((__deprecated__"),
    LineQuery("literal", "Wolpertinger"),
    LineQuery("literal", "typedef struct"),
    LineQuery("literal", "noexcept(true)"),
    LineQuery("literal_ignore_case", "todo"),
    LineQuery("literal_ignore_case", "deprecated"),
    LineQuery("literal_ignore_case", "Thread-safe"),
    LineQuery("literal_ignore_case", "copyright"),
    LineQuery("symbol", "allocator_traits"),
    LineQuery("symbol", "memcpy"),
    LineQuery("symbol", "pthread_mutex_lock"),
    LineQuery("symbol", "SIGSEGV"),
]


def _source_files() -> list[Path]:
    headers = sorted(p for p in Path("/usr/include").rglob("*") if p.is_file())
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    python = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts)
    return headers + python


def _real_source_members(
    count: int = MEMBERS, member_bytes: int = MEMBER_BYTES
) -> list[tuple[str, bytes]]:
    """`count` members of about `member_bytes` real source text, cut at line ends."""
    members: list[tuple[str, bytes]] = []
    buffer = bytearray()
    for path in _source_files():
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if b"\0" in data:
            continue
        buffer += data
        if len(buffer) >= member_bytes:
            cut = buffer.rfind(b"\n", 0, member_bytes) + 1
            members.append((f"src/unit_{len(members):02d}.h", bytes(buffer[:cut])))
            del buffer[:cut]
            if len(members) == count:
                return members
    raise RuntimeError("not enough source text on this machine for the benchmark")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("bench-a")
    members = _real_source_members()
    zip_path = root / "sources.zip"
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name, data in members:
            zf.writestr(name, data)
    extracted = root / "extracted"
    for name, data in members:
        target = extracted / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    refs = [MemberRef(name, hashlib.sha256(data).hexdigest(), len(data)) for name, data in members]
    return zip_path, refs, extracted


def _ours(zip_path: Path, refs: list[MemberRef], threads: int):
    archive = SnapshotArchive(zip_path)
    texts = archive.read_texts(refs, max_bytes=MAX_BYTES, threads=threads)
    return [page.total for page in search_lines(texts, QUERIES, threads=threads)]


@pytest.mark.benchmark(group=GROUP)
def test_baseline_inflate_hash(benchmark, corpus) -> None:
    zip_path, refs, _ = corpus
    benchmark.extra_info["role"] = "reference"

    def run() -> None:
        archive = SnapshotArchive(zip_path)
        for ref in refs:
            archive.verify(ref, max_bytes=MAX_BYTES)

    benchmark.pedantic(run, rounds=10, warmup_rounds=1)


@pytest.mark.benchmark(group=GROUP)
def test_baseline_inflate_hash_all_cores(benchmark, corpus) -> None:
    zip_path, refs, _ = corpus
    archive = SnapshotArchive(zip_path)

    def run() -> None:
        with ThreadPoolExecutor() as pool:
            list(pool.map(lambda ref: archive.verify(ref, max_bytes=MAX_BYTES), refs))

    benchmark.pedantic(run, rounds=10, warmup_rounds=1)


@pytest.mark.benchmark(group=GROUP)
def test_ours_one_thread(benchmark, corpus) -> None:
    zip_path, refs, _ = corpus
    totals = benchmark.pedantic(_ours, args=(zip_path, refs, 1), rounds=10, warmup_rounds=1)
    assert totals == _ours(zip_path, refs, 2)


@pytest.mark.benchmark(group=GROUP)
def test_ours_all_cores(benchmark, corpus) -> None:
    zip_path, refs, _ = corpus
    benchmark.pedantic(_ours, args=(zip_path, refs, 0), rounds=10, warmup_rounds=1)


def _python(zip_path: Path, refs: list[MemberRef]) -> list[int]:
    symbol_res = {
        q.pattern: re.compile(rf"(?<![A-Za-z0-9_]){re.escape(q.pattern)}(?![A-Za-z0-9_])")
        for q in QUERIES
        if q.mode == "symbol"
    }
    totals = [0] * len(QUERIES)
    with zipfile.ZipFile(zip_path) as zf:
        for ref in refs:
            data = zf.read(ref.name)
            assert hashlib.sha256(data).hexdigest() == ref.sha256 and len(data) == ref.size
            lines = io.StringIO(data.decode("utf-8-sig"), newline=None).read().split("\n")
            lowered = [line.lower() for line in lines]
            for i, q in enumerate(QUERIES):
                if q.mode == "literal":
                    totals[i] += sum(1 for line in lines if q.pattern in line)
                elif q.mode == "literal_ignore_case":
                    needle = q.pattern.lower()
                    totals[i] += sum(1 for line in lowered if needle in line)
                else:
                    search = symbol_res[q.pattern].search
                    totals[i] += sum(1 for line in lines if search(line))
    return totals


@pytest.mark.benchmark(group=GROUP)
def test_python_zipfile_hashlib_str(benchmark, corpus) -> None:
    zip_path, refs, _ = corpus
    totals = benchmark.pedantic(_python, args=(zip_path, refs), rounds=2, warmup_rounds=0)
    assert totals == _ours(zip_path, refs, 0)


def _rg(extracted: Path) -> list[int]:
    totals = []
    for q in QUERIES:
        flags = ["-F", "--no-config", "--no-ignore", "--hidden", "-c", "--no-filename"]
        if q.mode == "literal_ignore_case":
            flags.append("-i")
        elif q.mode == "symbol":
            flags.append("-w")
        out = subprocess.run(
            ["rg", *flags, "-e", q.pattern, str(extracted)],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        totals.append(sum(int(n) for n in out.split()))
    return totals


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep missing: run `make bench`")
def test_rg_one_call_per_search(benchmark, corpus) -> None:
    _, _, extracted = corpus
    benchmark.pedantic(_rg, args=(extracted,), rounds=10, warmup_rounds=1)
