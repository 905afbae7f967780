"""The bundled profile, unchanged, on a world database of any name; and a build that reads nothing.

TrinityCore calls its world database ``world``; the fixture loads the same
world under that name. `vba case build` with the bundled profile and a
project config that allowlists only ``world`` finds the same rows as under
``cata_world``. A config whose allowlist refuses every table the profile
reads is not a silent success: the revision is written, the summary's first
line says nothing could be read and why, and the command exits 8.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.case.builder.conftest import case_spec, write_config
from tests.project_research.conftest import TestDatabase
from viano_bug_analysis.cli import main
from viano_bug_analysis.exit_codes import ExitCode

TEXT = "The quest 90001 cannot be completed; npc 90002 ignores the net."


def _build(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, list[str]]:
    spec = case_spec(tmp_path / "inputs", text=TEXT)
    code = main(
        ["case", "build", str(spec), str(tmp_path / "package"), "--project-config", str(config)]
    )
    out, _ = capsys.readouterr()
    return code, out.splitlines()


def test_the_bundled_profile_reads_a_database_named_world(
    tmp_path: Path,
    mariadb: TestDatabase,
    source_repo: tuple[Path, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "config").mkdir()
    config = write_config(tmp_path / "config", mariadb, *source_repo, database="world")
    code, out = _build(tmp_path, config, capsys)
    assert code == ExitCode.OK
    assert any('quest 90001 "Catch the Wolpertinger"' in line for line in out)
    assert not any("refused" in line and "table_not_allowed" in line for line in out)


def test_a_build_that_can_read_nothing_says_so_first_and_exits_8(
    tmp_path: Path,
    mariadb: TestDatabase,
    source_repo: tuple[Path, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "config").mkdir()
    config = write_config(tmp_path / "config", mariadb, *source_repo, database="world")
    # The operator's allowlist names none of the tables the profile reads.
    text = config.read_text()
    start = text.index("world = [")
    end = text.index("]", start) + 1
    config.write_text(text[:start] + 'world = ["version"]' + text[end:])
    code, out = _build(tmp_path, config, capsys)
    assert code == ExitCode.PROFILE_GAPS
    assert out[0].startswith("nothing could be read from the database: all ")
    assert "table_not_allowed" in out[0]
    assert out[1].startswith("package ") and out[1].endswith("revision 1 built")
