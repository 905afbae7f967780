"""Result size of a search over 1,522 selected sources (issue 11, point 23).

    .venv/bin/python -m benches.result_size_sources

Builds a package of 1,522 small sources (one of them mentions the needle),
runs a ``limit: 1`` search over all of them and a batch of 16 such searches,
and prints the size of each result in canonical JSON (the form the router
measures against ``ToolLimits.result_bytes``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import orjson

from tests.tools.many_sources import build_many_sources, limits_for, search_all
from viano_bug_analysis.tools import InvestigationToolRouter, ToolError


def main() -> None:
    with tempfile.TemporaryDirectory() as root:
        package = build_many_sources(Path(root))
        router = InvestigationToolRouter(limits=limits_for(package))
        one = router.query(package.path, package.request(search_all(package, "Wolpertinger")))
        size = len(orjson.dumps(one, option=orjson.OPT_SORT_KEYS))
        print(f"sources: {len(package.refs)}")
        print(f"one limit-1 search: {size} bytes")
        batch = package.request(*(search_all(package, "Wolpertinger") for _ in range(16)))
        try:
            many = router.query(package.path, batch)
        except ToolError as err:
            print(f"16 limit-1 searches: {err.code} {err.details}")
        else:
            size = len(orjson.dumps(many, option=orjson.OPT_SORT_KEYS))
            print(f"16 limit-1 searches: {size} bytes")


if __name__ == "__main__":
    main()
