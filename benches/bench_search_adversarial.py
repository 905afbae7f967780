"""Line search on adversarial repeating text, side by side with the same work on real text.

A model chooses the patterns and a snapshot may hold any text, so search
time must be linear in the text whatever both are. The cases are the ones
from issue 11 that were quadratic (run length x pattern length) before the
search was made linear:

* two literals ``'a'*1000+'b'`` and ``'a'*1024`` over one 1 MB line of ``a``
  (2.4 s; each alone took <= 2 ms), the same as symbols, the same folded
  (``literal_ignore_case`` over a line of ``A``);
* through the router, one 8 MiB member ``0,0,0,...`` and a batch of two
  ``source.find_text`` requests ``"0,"*512`` and ``"0,"*511+"0x"`` (11 s).

Each sits next to the same queries over real source text of the same size
(the reference rows), and the 16 searches of benchmark (a) over that text.
All searches run on one thread.
"""

from __future__ import annotations

from typing import Any

import pytest

from benches.bench_search import QUERIES, _real_source_members
from tests.tools.package_factory import build_package
from viano_bug_analysis.snapshot import LineQuery, SourceText, search_lines
from viano_bug_analysis.tools import InvestigationToolRouter

GROUP = "search: adversarial repeating text vs real text, 1 MB, one thread"
ROUTER_GROUP = "router: two find_text over one 8 MiB member, adversarial vs real text"
MB = 1_000_000
MIB = 1024 * 1024

A1000B = "a" * 1000 + "b"
A1024 = "a" * 1024
TWO_LITERALS = [LineQuery("literal", A1000B), LineQuery("literal", A1024)]
TWO_SYMBOLS = [LineQuery("symbol", A1024), LineQuery("symbol", A1000B)]
TWO_FOLDED = [LineQuery("literal_ignore_case", A1000B), LineQuery("literal_ignore_case", A1024)]
ZEROS_TEXTS = ["0," * 512, "0," * 511 + "0x"]


def _real_text(size: int) -> bytes:
    members = _real_source_members(count=size // (512 * 1024) + 1, member_bytes=512 * 1024)
    data = b"".join(d for _, d in members)
    return data[: data.rfind(b"\n", 0, size) + 1]


@pytest.fixture(scope="module")
def texts() -> dict[str, SourceText]:
    return {
        "source": SourceText.decode(_real_text(MB)),
        "run_of_a": SourceText.decode(b"a" * MB),
        "run_of_A": SourceText.decode(b"A" * MB),
    }


def _search(text: SourceText, queries: list[LineQuery]) -> list[int]:
    return [page.total for page in search_lines([text], queries, threads=1)]


CASES = {
    "real_text_two_literals": ("source", TWO_LITERALS, [0, 0]),
    "real_text_16_searches_of_benchmark_a": ("source", QUERIES, None),
    "run_of_a_two_literals": ("run_of_a", TWO_LITERALS, [0, 1]),
    "run_of_a_one_literal_alone": ("run_of_a", TWO_LITERALS[1:], [1]),
    "run_of_a_two_symbols": ("run_of_a", TWO_SYMBOLS, [0, 0]),
    "run_of_A_two_folded_literals": ("run_of_A", TWO_FOLDED, [0, 1]),
}


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.parametrize("case", list(CASES))
def test_search(benchmark, texts, case: str) -> None:
    text_name, queries, expected = CASES[case]
    if case == "real_text_two_literals":
        benchmark.extra_info["role"] = "reference"
    totals = benchmark.pedantic(
        _search, args=(texts[text_name], queries), rounds=5, warmup_rounds=1
    )
    if expected is not None:
        assert totals == expected


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    built = {}
    for name, data in {
        "zeros": b"0," * (4 * MIB),
        "source": _real_text(8 * MIB),
    }.items():
        package = build_package(
            tmp_path_factory.mktemp(f"bench-{name}"), sources={"src/member.txt": data}
        )
        ref = package.refs["src/member.txt"]
        request = package.request(
            *[
                {
                    "operation": "source.find_text",
                    "arguments": {
                        "source_refs": [ref],
                        "text": text,
                        "case_sensitive": True,
                        "offset": 0,
                        "limit": 10,
                    },
                }
                for text in ZEROS_TEXTS
            ]
        )
        built[name] = (package.path, request)
    return built


@pytest.mark.benchmark(group=ROUTER_GROUP)
@pytest.mark.parametrize("member", ["source", "zeros"])
def test_router_find_text(benchmark, packages, member: str) -> None:
    path, request = packages[member]
    if member == "source":
        benchmark.extra_info["role"] = "reference"
    router = InvestigationToolRouter()
    result = benchmark.pedantic(router.query, args=(path, request), rounds=5, warmup_rounds=1)
    totals = [r["result"]["total"] for r in result["results"]]
    assert totals == ([1, 0] if member == "zeros" else [0, 0])
