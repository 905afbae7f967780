"""The package lock: one holder per lock name, refused at once, released on exit."""

from __future__ import annotations

from pathlib import Path

import pytest

from viano_bug_analysis.case.lock import BUILD_LOCK, INVESTIGATION_LOCK, package_lock
from viano_bug_analysis.errors import CaseError


def code_of(call: object) -> str:
    with pytest.raises(CaseError) as raised:
        call()  # type: ignore[operator]
    return raised.value.code


def test_a_second_holder_is_refused_at_once_and_the_lock_is_free_after_the_first(
    tmp_path: Path,
) -> None:
    def second() -> None:
        with package_lock(tmp_path, INVESTIGATION_LOCK, "investigation"):
            pass

    with package_lock(tmp_path, INVESTIGATION_LOCK, "investigation"):
        with pytest.raises(CaseError) as busy:
            second()
        assert busy.value.code == "package_busy"
        assert busy.value.details == {"lock": INVESTIGATION_LOCK}
        assert "another investigation" in busy.value.message
        # The build lock is another lock: a revision may land meanwhile.
        with package_lock(tmp_path, BUILD_LOCK, "build"):
            pass
    second()  # released when the block ended


def test_the_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), package_lock(tmp_path, BUILD_LOCK, "build"):
        raise RuntimeError("stop")
    with package_lock(tmp_path, BUILD_LOCK, "build"):
        pass


def test_a_missing_package_or_a_linked_lock_file_is_a_typed_error(tmp_path: Path) -> None:
    def take(root: Path) -> None:
        with package_lock(root, INVESTIGATION_LOCK, "investigation"):
            pass

    assert code_of(lambda: take(tmp_path / "missing")) == "manifest_invalid"
    (tmp_path / "elsewhere").write_text("")
    (tmp_path / INVESTIGATION_LOCK).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(CaseError) as refused:
        take(tmp_path)
    assert refused.value.code == "package_write_failed"
    assert refused.value.details == {"path": INVESTIGATION_LOCK, "errno": "ELOOP"}
    with pytest.raises(ValueError), package_lock(tmp_path, "../x.lock", "build"):
        pass
