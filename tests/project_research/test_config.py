"""load_config: every key checked and named, paths relative to the file, no secrets kept."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from viano_bug_analysis.enrichment.origin import research_origin
from viano_bug_analysis.project_research.config import (
    Limits,
    ResearchConfig,
    load_config,
)
from viano_bug_analysis.project_research.errors import ResearchError, ResearchUnavailable

REPO = Path(__file__).resolve().parents[2]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
SECRET = "ZZ_PASSWORD_MARKER_ZZ"

SOURCE = f"""
[source]
repository = "repo.git"
url = "https://git.example.invalid/vcore.git"
commit = "{COMMIT}"
"""
DATABASE = """
[database]
host = "127.0.0.1"
port = 33079
user = "viano_reader"
password_env = "VBA_TEST_DB_PASSWORD"
snapshot_id = "cata_world@2026-11-01"
[database.allow]
cata_world = ["creature_template", "quest_template"]
"""


def write(tmp_path: Path, text: str, name: str = "project.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def rejected(tmp_path: Path, text: str) -> ResearchError:
    with pytest.raises(ResearchError) as info:
        load_config(write(tmp_path, text))
    assert type(info.value) is ResearchError
    return info.value


def test_the_example_config_loads() -> None:
    config = load_config(REPO / "config" / "project.example.toml")
    assert config.source is not None and config.database is not None
    assert config.limits == Limits()


def test_the_example_allowlist_names_only_tables_of_the_real_world_schema() -> None:
    # An operator copies this list: a table the real TrinityCore 4.3.4 world
    # database does not have (item_template) would be refused as missing there.
    config = load_config(REPO / "config" / "project.example.toml")
    assert config.database is not None
    real = json.loads((REPO / "tests/fixtures/trinitycore-434-world-columns.json").read_text())
    allowed = set(config.database.allow["cata_world"])
    assert allowed <= set(real["tables"])
    assert {"quest_template", "game_event_creature_quest", "item_script_names"} <= allowed


def test_full_config(tmp_path: Path) -> None:
    text = SOURCE + DATABASE + "[limits]\nrows = 50\nstatement_seconds = 1.5\npage = 7\n"
    config = load_config(write(tmp_path, text))
    assert isinstance(config, ResearchConfig)
    assert config.path == (tmp_path / "project.toml").resolve()
    assert config.source is not None
    assert config.source.repository == (tmp_path / "repo.git").resolve()
    assert config.source.commit == COMMIT
    assert config.database is not None
    assert config.database.port == 33079
    assert dict(config.database.allow) == {"cata_world": ("creature_template", "quest_template")}
    assert config.limits.rows == 50 and config.limits.page == 7
    assert config.limits.statement_seconds == 1.5
    assert config.limits.files == 20000 and config.limits.git_seconds == 30.0


def test_defaults() -> None:
    limits = Limits()
    assert (limits.rows, limits.page, limits.files, limits.line_chars) == (1000, 100, 20000, 4096)
    assert (limits.file_bytes, limits.total_bytes, limits.cache_bytes) == (
        8 << 20,
        256 << 20,
        512 << 20,
    )
    assert (limits.statement_seconds, limits.git_seconds) == (5.0, 30.0)


def test_either_provider_may_be_absent(tmp_path: Path) -> None:
    only_source = load_config(write(tmp_path, SOURCE))
    assert only_source.database is None and only_source.source is not None
    only_db = load_config(write(tmp_path, DATABASE))
    assert only_db.source is None and only_db.database is not None


def test_an_empty_config_is_refused(tmp_path: Path) -> None:
    assert rejected(tmp_path, "[limits]\n").details == {"key": "source"}


def test_relative_paths_resolve_against_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "elsewhere").mkdir()
    text = SOURCE.replace('"repo.git"', '"../data/repo.git"') + DATABASE.replace(
        'password_env = "VBA_TEST_DB_PASSWORD"', 'password_file = "reader.local.txt"'
    )
    path = write(tmp_path / "conf", text)
    monkeypatch.chdir(tmp_path / "elsewhere")
    config = load_config(os.path.relpath(path))
    assert config.source is not None and config.database is not None
    assert config.source.repository == (tmp_path / "data" / "repo.git").resolve()
    assert config.database.password_file == (tmp_path / "conf" / "reader.local.txt").resolve()


def test_absolute_paths_stay(tmp_path: Path) -> None:
    target = tmp_path / "abs" / "repo.git"
    config = load_config(write(tmp_path, SOURCE.replace('"repo.git"', f'"{target}"')))
    assert config.source is not None and config.source.repository == target.resolve()


BAD_KEYS: list[tuple[str, str, str]] = [
    # (what, replacement applied to SOURCE + DATABASE, expected key)
    ("missing repository", 'repository = "repo.git"\n', "source.repository"),
    ("empty repository", 'repository = "repo.git"|repository = ""', "source.repository"),
    ("missing url", 'url = "https://git.example.invalid/vcore.git"\n', "source.url"),
    ("url with user", "https://git.example|https://me:pw@git.example", "source.url"),
    ("url with space", 'vcore.git"|vcore .git"', "source.url"),
    ("missing commit", f'commit = "{COMMIT}"\n', "source.commit"),
    ("short commit", f"{COMMIT}|{COMMIT[:12]}", "source.commit"),
    ("branch commit", f"{COMMIT}|main", "source.commit"),
    ("non-hex commit", f"{COMMIT}|{'g' * 40}", "source.commit"),
    ("commit as number", f'"{COMMIT}"|1234', "source.commit"),
    ("unknown source key", '[source]|[source]\nbranch = "main"', "source.branch"),
    ("missing host", 'host = "127.0.0.1"\n', "database.host"),
    ("bad host", "127.0.0.1|127.0.0.1; drop", "database.host"),
    ("missing port", "port = 33079\n", "database.port"),
    ("port as string", 'port = 33079|port = "33079"', "database.port"),
    ("port too big", "port = 33079|port = 70000", "database.port"),
    ("port zero", "port = 33079|port = 0", "database.port"),
    ("port bool", "port = 33079|port = true", "database.port"),
    ("missing user", 'user = "viano_reader"\n', "database.user"),
    ("user with space", "viano_reader|viano reader", "database.user"),
    ("no password source", 'password_env = "VBA_TEST_DB_PASSWORD"\n', "database.password_env"),
    (
        "both password sources",
        'password_env = "VBA_TEST_DB_PASSWORD"|password_env = "X"\npassword_file = "p.txt"',
        "database.password_env",
    ),
    ("bad env name", "VBA_TEST_DB_PASSWORD|VBA-PW", "database.password_env"),
    (
        "empty password file",
        'password_env = "VBA_TEST_DB_PASSWORD"|password_file = ""',
        "database.password_file",
    ),
    ("missing snapshot", 'snapshot_id = "cata_world@2026-11-01"\n', "database.snapshot_id"),
    ("snapshot with space", "cata_world@2026-11-01|cata world", "database.snapshot_id"),
    ("unknown database key", '[database]|[database]\nschema = "x"', "database.schema"),
    (
        "missing allow",
        '[database.allow]\ncata_world = ["creature_template", "quest_template"]\n',
        "database.allow",
    ),
    ("empty allow", 'cata_world = ["creature_template", "quest_template"]\n', "database.allow"),
    (
        "allow not a list",
        '["creature_template", "quest_template"]|"creature_template"',
        "database.allow.cata_world",
    ),
    ("allow empty list", '["creature_template", "quest_template"]|[]', "database.allow.cata_world"),
    ("bad table name", '"quest_template"]|"quest`template"]', "database.allow.cata_world"),
    ("dotted table name", '"quest_template"]|"mysql.user"]', "database.allow.cata_world"),
    ("duplicate table", '"quest_template"]|"creature_template"]', "database.allow.cata_world"),
    ("mysql database", "cata_world = [|mysql = [", "database.allow.mysql"),
    (
        "information_schema",
        "cata_world = [|INFORMATION_SCHEMA = [",
        "database.allow.INFORMATION_SCHEMA",
    ),
    (
        "performance_schema",
        "cata_world = [|performance_schema = [",
        "database.allow.performance_schema",
    ),
    ("sys database", "cata_world = [|sys = [", "database.allow.sys"),
    ("bad database name", 'cata_world = [|"cata-world" = [', "database.allow"),
    ("unknown top-level table", "[source]|[sources]\n[source]", "sources"),
]


def apply(base: str, change: str) -> str:
    if "|" in change:
        old, new = change.split("|", 1)
    else:
        old, new = change, ""
    assert old in base, old
    return base.replace(old, new, 1)


@pytest.mark.parametrize(("what", "change", "key"), BAD_KEYS, ids=[b[0] for b in BAD_KEYS])
def test_a_bad_key_is_named(tmp_path: Path, what: str, change: str, key: str) -> None:
    err = rejected(tmp_path, apply(SOURCE + DATABASE, change))
    assert err.code == "config_invalid", what
    assert err.details == {"key": key}
    assert key in err.message


BAD_LIMITS: list[tuple[str, Any]] = [
    ("rows", 0),
    ("rows", "10"),
    ("rows", 1.5),
    ("rows", True),
    ("page", -1),
    ("page", 10_001),
    ("files", 0),
    ("file_bytes", 0),
    ("total_bytes", 1.0),
    ("line_chars", 0),
    ("statement_seconds", 0),
    ("statement_seconds", "5"),
    ("statement_seconds", "nan"),
    ("git_seconds", 100000),
    ("connect_seconds", -1),
    ("cache_bytes", -1),
    ("colour", 1),
]


@pytest.mark.parametrize(("key", "value"), BAD_LIMITS)
def test_a_bad_limit_is_named(tmp_path: Path, key: str, value: Any) -> None:
    if value == "nan":
        literal = "nan"
    elif isinstance(value, bool):
        literal = str(value).lower()
    elif isinstance(value, str):
        literal = f'"{value}"'
    else:
        literal = str(value)
    err = rejected(tmp_path, SOURCE + f"[limits]\n{key} = {literal}\n")
    assert err.code == "config_invalid"
    assert err.details == {"key": f"limits.{key}"}


@pytest.mark.parametrize("text", ["source = 1\n", "database = []\n", "limits = 3\n" + SOURCE])
def test_a_section_that_is_not_a_table(tmp_path: Path, text: str) -> None:
    err = rejected(tmp_path, text)
    assert err.code == "config_invalid"
    assert err.details["key"] in {"source", "database", "limits"}


def test_page_must_fit_in_the_row_window(tmp_path: Path) -> None:
    err = rejected(tmp_path, SOURCE + "[limits]\nrows = 50\npage = 51\n")
    assert err.details == {"key": "limits.page"}
    assert load_config(write(tmp_path, SOURCE + "[limits]\nrows = 50\npage = 50\n"))


def test_a_password_in_the_file_is_refused_without_echo(tmp_path: Path) -> None:
    text = DATABASE.replace("[database]\n", f'[database]\npassword = "{SECRET}"\n')
    err = rejected(tmp_path, text)
    assert err.details == {"key": "database.password"}
    assert SECRET not in str(err) and SECRET not in repr(err) and SECRET not in str(err.details)


def test_values_are_never_echoed(tmp_path: Path) -> None:
    err = rejected(tmp_path, DATABASE.replace("127.0.0.1", f"{SECRET} x"))
    assert err.details == {"key": "database.host"}
    assert SECRET not in str(err) and SECRET not in repr(err)
    err = rejected(tmp_path, SOURCE.replace("https://git", f"https://{SECRET}:pw@git"))
    assert SECRET not in str(err)


def test_unknown_key_with_strange_name_is_not_echoed(tmp_path: Path) -> None:
    err = rejected(tmp_path, SOURCE.replace("[source]\n", f'[source]\n"{SECRET} !" = 1\n'))
    assert err.details == {"key": "source"}
    assert SECRET not in str(err)


def test_not_toml(tmp_path: Path) -> None:
    err = rejected(tmp_path, f"[source]\nrepository = {SECRET}\n")
    assert err.code == "config_invalid"
    assert err.details["key"] == "" and err.details["line"] == 2
    assert SECRET not in str(err) and SECRET not in str(err.details)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "project.toml"
    path.write_bytes(b'[source]\nurl = "\xff"\n')
    with pytest.raises(ResearchError) as info:
        load_config(path)
    assert info.value.code == "config_invalid"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ResearchError) as info:
        load_config(tmp_path / "nope.toml")
    assert info.value.code == "config_unreadable"
    assert str(tmp_path) not in str(info.value)
    assert info.value.message == "the research configuration does not exist"
    assert info.value.details == {"reason": "FileNotFoundError"}


def test_commit_is_lowercased(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, SOURCE.replace(COMMIT, COMMIT.upper())))
    assert config.source is not None and config.source.commit == COMMIT


def test_scp_style_url_is_accepted(tmp_path: Path) -> None:
    text = SOURCE.replace("https://git.example.invalid/vcore.git", "git@git.example.invalid:v.git")
    config = load_config(write(tmp_path, text))
    assert config.source is not None and config.source.url.startswith("git@")


# --- credentials ---------------------------------------------------------------------------


def test_password_from_env_is_read_lazily(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VBA_TEST_DB_PASSWORD", raising=False)
    config = load_config(write(tmp_path, DATABASE))  # loads without the password
    assert config.database is not None
    monkeypatch.setenv("VBA_TEST_DB_PASSWORD", SECRET)
    assert config.database.read_password() == SECRET
    for text in (repr(config), str(config), repr(config.database), str(config.database)):
        assert SECRET not in text
        assert "env:VBA_TEST_DB_PASSWORD" in text


def test_password_from_file(tmp_path: Path) -> None:
    text = DATABASE.replace('password_env = "VBA_TEST_DB_PASSWORD"', 'password_file = "pw.txt"')
    config = load_config(write(tmp_path, text))
    assert config.database is not None
    (tmp_path / "pw.txt").write_text(SECRET + "\n", encoding="utf-8")
    assert config.database.read_password() == SECRET
    (tmp_path / "pw.txt").write_text(SECRET, encoding="utf-8")
    assert config.database.read_password() == SECRET
    assert SECRET not in repr(config)


@pytest.mark.parametrize("setting", ["unset", "empty"])
def test_missing_env_password_is_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    if setting == "unset":
        monkeypatch.delenv("VBA_TEST_DB_PASSWORD", raising=False)
    else:
        monkeypatch.setenv("VBA_TEST_DB_PASSWORD", "")
    config = load_config(write(tmp_path, DATABASE))
    assert config.database is not None
    with pytest.raises(ResearchUnavailable) as info:
        config.database.read_password()
    assert info.value.code == "research_unavailable"
    assert info.value.reason == "credentials_missing"
    assert info.value.details["key"] == "database.password_env"
    # It names the variable to set (found by the README journey: the message
    # said only "not available from the configured source").
    assert info.value.details["variable"] == "VBA_TEST_DB_PASSWORD"
    assert "VBA_TEST_DB_PASSWORD" in str(info.value) and "password_file" in str(info.value)


@pytest.mark.parametrize("content", [None, b"", b"\n", b"\xff\xfe"])
def test_missing_password_file_is_unavailable(tmp_path: Path, content: bytes | None) -> None:
    text = DATABASE.replace('password_env = "VBA_TEST_DB_PASSWORD"', 'password_file = "pw.txt"')
    config = load_config(write(tmp_path, text))
    if content is not None:
        (tmp_path / "pw.txt").write_bytes(content)
    assert config.database is not None
    with pytest.raises(ResearchUnavailable) as info:
        config.database.read_password()
    assert info.value.reason == "credentials_missing"
    assert info.value.details == {
        "key": "database.password_file",
        "provider": "database",
        "reason": "credentials_missing",
    }
    assert str(tmp_path) not in str(info.value)


def test_config_is_frozen(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, SOURCE + DATABASE))
    with pytest.raises(AttributeError):
        config.source = None  # type: ignore[misc]
    assert config.database is not None
    with pytest.raises(TypeError):
        config.database.allow["other"] = ("t",)  # type: ignore[index]


def test_the_schema_describes_every_limit_and_is_printed_by_vba_schema() -> None:
    import dataclasses
    import subprocess
    import sys

    from viano_bug_analysis.project_research.config import Limits
    from viano_bug_analysis.schemas import load_schema

    limits = load_schema("research-config-v1")["properties"]["limits"]["properties"]
    assert set(limits) == {field.name for field in dataclasses.fields(Limits)}
    done = subprocess.run(
        [sys.executable, "-m", "viano_bug_analysis.cli", "schema", "research-config-v1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and '"title": "research-config-v1"' in done.stdout


def test_a_toml_nan_is_refused_at_its_key(tmp_path: Path) -> None:
    err = rejected(tmp_path, SOURCE + "[limits]\ngit_seconds = inf\n")
    assert err.details == {"key": "limits.git_seconds"}


# --- the world database ---------------------------------------------------------------------


def test_the_world_database_may_be_named(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, DATABASE))
    assert config.database is not None and config.database.name is None
    named = DATABASE.replace("[database.allow]", 'name = "other"\n[database.allow]\nother = ["t"]')
    config = load_config(write(tmp_path, named))
    assert config.database is not None and config.database.name == "other"
    assert research_origin(config)["database"]["name"] == "other"


def test_a_name_outside_the_allowlist_is_refused(tmp_path: Path) -> None:
    text = DATABASE.replace("[database.allow]", 'name = "world"\n[database.allow]')
    assert rejected(tmp_path, text).details["key"] == "database.name"
