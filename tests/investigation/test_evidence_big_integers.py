"""Evidence keeps integers beyond 64 bits exact (issue 11, point 16: exact everywhere).

A router answer over a ``DECIMAL``/``BIGINT UNSIGNED`` column carries such
an integer, and so does a request filtering on it; both are stored as
evidence and read back on every later step.
"""

from __future__ import annotations

import json
from pathlib import Path

from viano_bug_analysis.investigation.evidence import RESULTS_DIR, EvidenceStore

BIG = 2**70


def test_a_router_result_with_a_big_integer_is_stored_and_read_back_exactly(
    tmp_path: Path,
) -> None:
    store = EvidenceStore(tmp_path)
    request = {"operation": "database.lookup", "arguments": {"filters": {"v": BIG}}}
    result = {"rows": [{"pointer": "/rows/0", "row": {"k": 1, "v": BIG}}]}
    taken = store.take_router_result(
        request,
        result,
        hypothesis_id="H1",
        step_key="H1/s1",
        generation=1,
        current_generation=lambda: 1,
    )
    assert taken.new
    stored = tmp_path / RESULTS_DIR / f"{taken.record['result_sha256']}.json"
    assert json.loads(stored.read_bytes()) == result  # the stdlib keeps big integers
    assert b"1180591620717411303424" in stored.read_bytes()
    [record] = EvidenceStore(tmp_path).records()
    assert record["request"]["arguments"]["filters"]["v"] == BIG
    assert type(record["request"]["arguments"]["filters"]["v"]) is int
