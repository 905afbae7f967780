"""The "already fixed?" keys of the research configuration: ``[source.upstream]``,
``source.web_url`` and the ``limits.history_*`` bounds."""

from __future__ import annotations

from pathlib import Path

from tests.project_research.test_config import COMMIT, SOURCE, rejected, write
from viano_bug_analysis.project_research import load_config

UPSTREAM = f"""
[source.upstream]
repository = "../upstream"
url = "https://github.com/up/core.git"
commit = "{COMMIT.upper()}"
"""


def test_upstream_web_url_and_history_limits(tmp_path: Path) -> None:
    text = SOURCE + 'web_url = "https://code.example/vcore"\n' + UPSTREAM
    text += "[limits]\nhistory_commits = 50\nhistory_files = 7\nhistory_before_report = 0\n"
    config = load_config(write(tmp_path, text))
    assert config.source is not None and config.source.upstream is not None
    assert config.source.web_url == "https://code.example/vcore"
    upstream = config.source.upstream
    assert (
        upstream.repository == (tmp_path / "../upstream").resolve()
        or upstream.repository.name == "upstream"
    )
    assert upstream.commit == COMMIT  # lower-cased like the source's
    limits = config.limits
    assert (limits.history_commits, limits.history_files, limits.history_before_report) == (
        50,
        7,
        0,
    )


def test_defaults_without_them(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, SOURCE))
    assert config.source is not None and config.source.upstream is None
    assert config.source.web_url is None
    assert config.limits.history_commits == 2000


def test_mistakes_are_named(tmp_path: Path) -> None:
    error = rejected(tmp_path, SOURCE + "[limits]\nhistory_commits = 0\n")
    assert (error.code, error.details["key"]) == ("config_invalid", "limits.history_commits")
    error = rejected(tmp_path, SOURCE + UPSTREAM.replace("commit =", "comit ="))
    assert error.details["key"] == "source.upstream.comit"
    assert "allowed properties: commit, repository, url" in str(error)
    credentials = UPSTREAM.replace("https://github.com", "https://user:pw@github.com")
    error = rejected(tmp_path, SOURCE + credentials)
    assert error.details["key"] == "source.upstream.url" and "pw" not in str(error)
