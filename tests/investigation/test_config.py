"""The investigation configuration: one loader, one schema, errors that name the key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from viano_bug_analysis.errors import InvestigationConfigError
from viano_bug_analysis.investigation.config import load_investigation_config

GOOD = """\
[llm]
base_urls = ["http://127.0.0.1:8080/v1"]
model = "m"
api_key_file = "key.txt"

[investigation]
max_steps = 4

[research]
config = "project.toml"
"""
SECRET = "LEAK-CANARY"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "investigate.toml"
    path.write_text(text)
    return path


def refused(tmp_path: Path, text: str) -> InvestigationConfigError:
    with pytest.raises(InvestigationConfigError) as caught:
        load_investigation_config(write(tmp_path, text))
    assert caught.value.code == "investigation_config_invalid"
    assert SECRET not in str(caught.value) + repr(caught.value.details)
    return caught.value


def test_a_good_file_resolves_paths_against_its_directory(tmp_path: Path) -> None:
    config = load_investigation_config(write(tmp_path, GOOD))
    assert config.llm.api_key_file == str(tmp_path / "key.txt")
    assert config.research_config == tmp_path / "project.toml"
    assert config.settings.max_steps == 4


def test_a_toml_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    err = refused(tmp_path, GOOD.replace('model = "m"', f"model = {SECRET}"))
    assert err.details == {"key": "", "line": 3, "column": 9}


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (("max_steps = 4", "max_steps = 0"), "investigation.max_steps"),
        (("max_steps = 4", "max_stepz = 4"), "investigation.max_stepz"),
        (("max_steps = 4", "max_steps = 1979-05-27"), "investigation.max_steps"),
        (("max_steps = 4", "max_steps = 4\nmax_hypotheses = 0"), "investigation.max_hypotheses"),
        (("max_steps = 4", "max_steps = 4\nmax_hypotheses = 9"), "investigation.max_hypotheses"),
        (('api_key_file = "key.txt"', "api_key_file = 5"), "llm.api_key_file"),
        (('api_key_file = "key.txt"', f'"{SECRET} x" = 5'), "llm"),
        (('config = "project.toml"', "config = 5"), "research.config"),
        (('model = "m"', ""), "llm.model"),
        (('model = "m"', "model = 1979-05-27"), "llm.model"),  # not taken as a string
        (("[llm]", "[llm]\nbase_url = 5"), "llm.base_url"),
        # An unknown name that does not look like a key is not echoed: the
        # error places it at its table.
        (("[research]", f'["{SECRET} !"]'), ""),
    ],
)
def test_a_schema_error_names_the_key(tmp_path: Path, change: tuple[str, str], key: str) -> None:
    err = refused(tmp_path, GOOD.replace(*change))
    assert err.details["key"] == key
    assert set(err.details) == {"key"}


def test_llm_checks_beyond_the_schema_still_name_the_key(tmp_path: Path) -> None:
    err = refused(tmp_path, GOOD.replace("http://127.0.0.1:8080/v1", "ftp://host/v1"))
    assert err.details == {"key": "llm.base_urls"}


def test_vba_schema_prints_the_configuration_schema() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "schema", "investigation-config-v1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert '"title": "investigation-config-v1"' in done.stdout


def test_the_example_configuration_loads_and_needs_no_key() -> None:
    """config/investigate.example.toml, the file the docs tell an operator to copy."""
    example = Path(__file__).resolve().parents[2] / "config" / "investigate.example.toml"
    config = load_investigation_config(example)
    assert config.llm.base_urls == ("http://127.0.0.1:8080/v1",)
    assert config.llm.api_key_env is None and config.llm.api_key_file is None
    assert config.settings.response_recovery_version == 1
    assert config.research_config is None


def test_a_missing_file_is_said_not_to_exist(tmp_path: Path) -> None:
    with pytest.raises(InvestigationConfigError) as caught:
        load_investigation_config(tmp_path / "absent.toml")
    assert caught.value.message == "the investigation configuration does not exist"
    assert caught.value.details == {"key": "", "reason": "FileNotFoundError"}
    assert str(tmp_path) not in str(caught.value)  # no path in errors (docs/errors.md)
