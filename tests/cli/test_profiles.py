"""One profile object for every command (issue 11 point 19): the bundled Vcore profile
is the default, `--profile` selects another, and an unknown one is a typed error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import (
    CONCLUDE,
    DESCRIBE,
    SPEC,
    answer,
    error_of,
    investigate_config,
    request_file,
    sample_package,
    vba,
)
from tests.investigation.llm.scripted_llm_server import ScriptedLlmServer
from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.errors import EnrichmentError
from viano_bug_analysis.investigation.steps import StepLog
from viano_bug_analysis.profiles import bundled_profiles, load_profile
from viano_bug_analysis.profiles.vcore.db_tools import normalize_schema_descriptor

ENRICHMENT = Path(__file__).resolve().parents[2] / (
    "python/viano_bug_analysis/profiles/vcore/enrichment.toml"
)


def test_query_describes_the_sample_schema_descriptor_with_the_default_profile(
    tmp_path: Path,
) -> None:
    package = sample_package(tmp_path)
    done = vba("query", package, request_file(tmp_path, [DESCRIBE]))
    assert done.returncode == 0, done.stderr
    described = json.loads(done.stdout)["results"][0]["result"]
    assert described["source_ref"] == "db-002"
    assert "ID" in json.dumps(described)


def test_investigate_answers_describe_instead_of_a_technical_rejection(tmp_path: Path) -> None:
    package = sample_package(tmp_path)
    describe = {
        "kind": "tool",
        "operation": "database.describe",
        "arguments": DESCRIBE["arguments"],
    }
    script = [answer("H1", describe), answer("H1", CONCLUDE), answer("H2", CONCLUDE)]
    with ScriptedLlmServer(script) as server:
        config = investigate_config(tmp_path, server.base_url, response_recovery_version=1)
        done = vba("investigate", package, "--config", config)
        assert done.returncode == 0, done.stderr
        assert server.unscripted == 0
    dispatch = StepLog(package).get("H1", 1, 1, "dispatch")
    assert dispatch is not None and "rejected" not in dispatch, dispatch


def test_the_bundled_profile_carries_the_enrichment_rules_and_the_adapter() -> None:
    profile = load_profile()
    assert profile.name == "vcore" and bundled_profiles() == ["vcore"]
    assert profile.schema_adapter is normalize_schema_descriptor
    assert profile.enrichment is not None
    assert profile.enrichment.sha256 == vcore_profile().sha256


@pytest.mark.parametrize(
    "command",
    [
        ["query", "PKG", "REQ"],
        ["investigate", "PKG", "--config", "CFG"],
        ["case", "build", str(SPEC), "PKG"],
    ],
)
def test_an_unknown_profile_is_a_typed_error_in_every_command(
    tmp_path: Path, command: list[str]
) -> None:
    config = investigate_config(tmp_path, "http://127.0.0.1:9/v1")
    package = sample_package(tmp_path)
    request = request_file(tmp_path, [DESCRIBE])
    args = [
        {"PKG": str(package), "REQ": str(request), "CFG": str(config)}.get(a, a) for a in command
    ]
    done = vba(*args, "--profile", "nosuchprofile")
    assert done.returncode == 2 and done.stdout == ""
    error = error_of(done)
    assert error["error"] == "profile_unknown"
    assert error["details"]["allowed"] == "vcore"


def test_a_profile_file_selects_the_adapter_by_name(tmp_path: Path) -> None:
    package = sample_package(tmp_path)
    request = request_file(tmp_path, [DESCRIBE])
    plain = tmp_path / "plain.toml"
    plain.write_text('format = "viano-profile"\nformat_version = 1\nname = "plain"\n')
    done = vba("query", package, request, "--profile", plain)
    assert done.returncode == 2 and error_of(done)["error"] == "adapter_missing"
    with_adapter = tmp_path / "mine.toml"
    with_adapter.write_text(
        'format = "viano-profile"\nformat_version = 1\nname = "mine"\n'
        f'enrichment = "{ENRICHMENT}"\nschema_adapter = "vcore"\n'
    )
    done = vba("query", package, request, "--profile", with_adapter)
    assert done.returncode == 0, done.stderr


def test_a_bare_enrichment_profile_file_is_a_profile_without_adapter() -> None:
    profile = load_profile(ENRICHMENT)
    assert profile.enrichment is not None and profile.enrichment.name == "vcore"
    assert profile.schema_adapter is None


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (
            'format = "viano-profile"\nformat_version = 1\nname = "x"\nadapter = "vcore"\n',
            "adapter",
        ),
        (
            'format = "viano-profile"\nformat_version = 1\nname = "x"\n'
            'schema_adapter = "os.system"\n',
            "schema_adapter",
        ),
        ('format = "viano-profile"\nformat_version = 2\nname = "x"\n', "format_version"),
        ('format = "something"\n', "format"),
        ('format = "viano-profile"\nformat_version = 1\nname = "X Y"\n', "name"),
        ("not toml [", ""),
    ],
)
def test_profile_file_errors_name_the_key(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "profile.toml"
    path.write_text(text)
    with pytest.raises(EnrichmentError) as err:
        load_profile(path)
    assert (err.value.code, err.value.details["key"]) == ("profile_invalid", key)


def test_a_missing_profile_file_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(EnrichmentError) as err:
        load_profile(tmp_path / "missing.toml")
    assert err.value.code == "profile_unreadable"
    assert str(tmp_path) not in str(err.value) + str(err.value.details)


def test_a_bundled_name_wins_over_a_file_of_that_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("vcore").write_text('format = "viano-profile"\nformat_version = 1\nname = "local"\n')
    assert load_profile("vcore").name == "vcore"
    assert load_profile("./vcore").name == "local"
