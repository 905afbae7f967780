"""A call record that breaks its schema is named through the one mapper (issue 11, point 21)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.investigation.recovery.test_audit import SECRET, fields
from viano_bug_analysis.investigation.recovery import CallRecordStore
from viano_bug_analysis.investigation.recovery.errors import RECORD_INVALID, CallRecordError


def test_a_missing_record_property_is_named(tmp_path: Path) -> None:
    record = fields(SECRET)
    del record["call"]
    with pytest.raises(CallRecordError) as raised:
        CallRecordStore(tmp_path).append(record)
    err = raised.value
    assert err.code == RECORD_INVALID
    assert (err.details["path"], err.details["property"]) == ("/call", "call")
    assert "'call'" in err.message
    assert SECRET not in str(err) and SECRET not in repr(err.details)


def test_an_unknown_record_property_is_placed_but_not_named(tmp_path: Path) -> None:
    with pytest.raises(CallRecordError) as raised:
        CallRecordStore(tmp_path).append(fields(SECRET, **{SECRET: 1}))
    err = raised.value
    assert err.details["rule"] == "additionalProperties" and err.details["path"] == ""
    assert SECRET not in str(err) and SECRET not in repr(err.details)
