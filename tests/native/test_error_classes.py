"""The native extension raises the package's exception classes, resolved once.

Each class is imported on the first error of its kind and kept: an error
path pays no import and attribute lookup, and a later rebinding of the name
in ``viano_bug_analysis.errors`` does not change what the extension raises.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from viano_bug_analysis import errors
from viano_bug_analysis._native import GitRepository, SourceText
from viano_bug_analysis.errors import ResearchError, ResearchUnavailable


def test_the_class_is_resolved_once_not_looked_up_by_name_per_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(errors.TextDecodeError):
        SourceText.decode(b"a\0b")

    class Impostor(errors.VbaError):
        pass

    monkeypatch.setattr(errors, "TextDecodeError", Impostor)
    with pytest.raises(errors.VbaError) as raised:
        SourceText.decode(b"a\0b")
    assert type(raised.value).__name__ == "TextDecodeError"
    assert not isinstance(raised.value, Impostor)
    assert raised.value.code == "text_nul_byte"
    assert raised.value.details == {"offset": 1}


def test_git_errors_are_research_errors_with_their_codes(tmp_path: Path) -> None:
    with pytest.raises(ResearchUnavailable) as outage:
        GitRepository(tmp_path / "missing", cache_bytes=0)
    assert outage.value.code == "research_unavailable"
    assert outage.value.details == {
        "what": "cannot open the repository",
        "provider": "git",
        "reason": "repository_unavailable",
    }
    assert not isinstance(outage.value, errors.InvalidArgumentError)
    assert issubclass(ResearchUnavailable, ResearchError)
