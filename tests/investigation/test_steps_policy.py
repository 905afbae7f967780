"""policy.json is checked against the one stored byte form (jsonio.canonical_bytes).

The controller writes the policy with canonical_bytes (UTF-8); the reader used
to compare it with an ASCII-escaping json.dumps of its own, so any non-ASCII
text in a policy made a sound package "damaged".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from viano_bug_analysis.errors import PackageFileError
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.jsonio import canonical_bytes

POLICY = {"response_recovery_version": 1, "note": "réglage", "ratio": 1e-07}


def test_a_policy_in_the_canonical_form_reads_back(tmp_path: Path) -> None:
    log = StepLog(tmp_path)
    log.put_policy(canonical_bytes(POLICY))
    assert log.policy() == canonical_bytes(POLICY)


@pytest.mark.parametrize(
    "data",
    [
        b'{"note":"r\\u00e9glage","ratio":1e-07,"response_recovery_version":1}',
        b'{"response_recovery_version": 1}',
    ],
    ids=["ascii_escaped", "with_spaces"],
)
def test_a_policy_in_another_form_is_damaged(tmp_path: Path, data: bytes) -> None:
    log = StepLog(tmp_path)
    log.put_policy(data)
    with pytest.raises(PackageFileError) as caught:
        log.policy()
    assert caught.value.code == "package_corrupt"
    assert caught.value.details["reason"] == "not in its stored byte form"
