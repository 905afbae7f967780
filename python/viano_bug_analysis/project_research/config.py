"""The operator's ProjectResearch configuration: one TOML file, read with ``tomllib``.

    [source]                      # optional: the git provider
    repository = "../service-data/research/vcore.git"
    url = "https://git.example.invalid/vcore.git"
    commit = "<40 hex>"
    cache_dir = "../service-data/research/git-cache"   # optional: persistent content cache
    [database]                    # optional: the MariaDB/MySQL provider
    host = "127.0.0.1"
    port = 33079
    user = "viano_reader"
    password_env = "VBA_DB_PASSWORD"      # or password_file = "reader.local.txt"
    snapshot_id = "cata_world@2026-11-01"
    name = "cata_world"                   # optional: the world database (one of allow)
    [database.allow]
    cata_world = ["creature_template", "quest_template"]
    [client_data]                 # optional: the DBC/DB2 files (docs/client-data.md)
    dbc_dir = "../service-data/dbc"
    [limits]                      # optional, every key has a default

Every key is checked when the file is loaded; the first problem raises
``ResearchError("config_invalid", ..., {"key": "database.port"})``. The
error names the key, never its value. Relative paths (``repository``,
``password_file``) resolve against the directory of the config file, so a
config works the same from any working directory.

The password is not part of the configuration object: only where to find
it. ``DatabaseConfig.read_password()`` reads it when a connection is opened;
a missing variable or file is an outage of the research service
(``ResearchUnavailable``, reason ``credentials_missing``), not a bad query.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, NoReturn
from urllib.parse import urlsplit

from viano_bug_analysis import vocabulary
from viano_bug_analysis.config_kinds import FLAGS, INVESTIGATION, PROJECT, misplaced
from viano_bug_analysis.files import (
    NOT_A_REGULAR_FILE,
    TOO_LARGE,
    UNREADABLE,
    check_config,
    load_toml_file,
    read_regular_file,
)
from viano_bug_analysis.project_research.errors import ResearchError, ResearchUnavailable

IDENTIFIER = vocabulary.IDENTIFIER
RESERVED_DATABASES = frozenset({"information_schema", "mysql", "performance_schema", "sys"})
_COMMIT = re.compile(r"[0-9a-fA-F]{40}")
_ENV_NAME = vocabulary.ENV_NAME
_SNAPSHOT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}")
_HOST = re.compile(r"[A-Za-z0-9._:\[\]-]{1,253}")
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_KEY_NAME = re.compile(r"[A-Za-z0-9_$-]{1,64}")

_MIB = 1 << 20
MAX_CONFIG_BYTES = _MIB
CONFIG_SCHEMA = "research-config-v1"
MAX_PASSWORD_FILE_BYTES = 64 * 1024
MAX_CLIENT_FILE_BYTES = 256 * _MIB
_KEYS = {
    "source": frozenset({"repository", "url", "commit", "cache_dir"}),
    "database": frozenset(
        {"host", "port", "user", "password_env", "password_file", "snapshot_id", "name", "allow"}
    ),
}


@dataclass(frozen=True, slots=True)
class Limits:
    """Row, byte, file and time limits; every field has a default."""

    rows: int = 1000
    page: int = 100
    files: int = 20000
    file_bytes: int = 8 * _MIB
    total_bytes: int = 256 * _MIB
    line_chars: int = 4096
    statement_seconds: float = 5.0
    connect_seconds: float = 5.0
    git_seconds: float = 30.0
    cache_bytes: int = 512 * _MIB
    disk_cache_bytes: int = 2048 * _MIB
    # "Already fixed?" (enrichment/fixes): the first-parent commits read, the
    # files listed per commit, the commits before the report's date still read.
    history_commits: int = 2000
    history_files: int = 200
    history_before_report: int = 500


# key -> (kind, smallest, largest). The upper bounds only catch typos.
_LIMIT_RULES: dict[str, tuple[str, float, float]] = {
    "rows": ("int", 1, 1_000_000),
    "page": ("int", 1, 10_000),
    "files": ("int", 1, 10_000_000),
    "file_bytes": ("int", 1, 1 << 40),
    "total_bytes": ("int", 1, 1 << 40),
    "line_chars": ("int", 1, 1 << 20),
    "statement_seconds": ("seconds", 0.001, 3600),
    "connect_seconds": ("seconds", 0.001, 3600),
    "git_seconds": ("seconds", 0.001, 3600),
    "cache_bytes": ("int", 0, 1 << 40),
    "disk_cache_bytes": ("int", 0, 1 << 40),
    "history_commits": ("int", 1, 1_000_000),
    "history_files": ("int", 1, 100_000),
    "history_before_report": ("int", 0, 1_000_000),
}


@dataclass(frozen=True, slots=True)
class SourceConfig:
    """The git provider: a local clone read at one full commit.

    ``cache_dir`` is the persistent content cache shared by every process
    (decoded blobs by blob ID; ``None``: none).
    """

    repository: Path
    url: str
    commit: str
    cache_dir: Path | None = None
    web_url: str | None = None
    upstream: UpstreamConfig | None = None


@dataclass(frozen=True, slots=True)
class UpstreamConfig:
    """``[source.upstream]``: the project the server forks from, read like the source."""

    repository: Path
    url: str
    commit: str


@dataclass(frozen=True, slots=True)
class DatabaseConfig:
    """The database provider. Holds where the password is, never the password."""

    host: str
    port: int
    user: str
    snapshot_id: str
    allow: Mapping[str, tuple[str, ...]]
    password_env: str | None = None
    password_file: Path | None = field(default=None)
    name: str | None = None  # the world database, a key of allow (enrichment.origin.query_database)

    def read_password(self) -> str:
        """The reader's password, read now from the environment or the password file.

        Raises ``ResearchUnavailable`` (reason ``credentials_missing``) when the
        variable is unset or empty, or the file is missing, unreadable or empty.
        One trailing line break of the file is not part of the password.
        """
        if self.password_env is not None:
            password = os.environ.get(self.password_env, "")
            key = "database.password_env"
        else:
            assert self.password_file is not None
            key = "database.password_file"
            try:
                password = read_regular_file(
                    self.password_file,
                    max_bytes=MAX_PASSWORD_FILE_BYTES,
                    what="the password file",
                    refuse=lambda *_: ValueError(),
                ).decode("utf-8")
            except ValueError:  # unreadable, not a regular file, too large, not UTF-8
                password = ""
            password = password.removesuffix("\n").removesuffix("\r")
        if not password and self.password_env is not None:
            # The variable's name is configuration, not a secret: naming it
            # tells the operator what to set (a stdio MCP client, for one,
            # passes only the variables its `env` names).
            raise ResearchUnavailable(
                "database",
                "credentials_missing",
                f"the database password is not available: the environment variable "
                f"{self.password_env} (database.password_env) is unset or empty; set it "
                "or name a file with database.password_file",
                {"key": key, "variable": self.password_env},
            )
        if not password:
            raise ResearchUnavailable(
                "database",
                "credentials_missing",
                "the database password is not available: the file of database.password_file "
                "is missing, unreadable or empty",
                {"key": key},
            )
        return password

    def __repr__(self) -> str:
        where = f"env:{self.password_env}" if self.password_env is not None else "password_file"
        return (
            f"DatabaseConfig(port={self.port}, snapshot_id={self.snapshot_id!r}, "
            f"databases={sorted(self.allow)!r}, password=<{where}>)"
        )

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class ClientDataConfig:
    """The client-data provider: an extracted dbc folder, and the layout profile to read it with."""

    dbc_dir: Path
    layouts: Path | None = None  # None: the bundled vcore client data profile
    max_file_bytes: int = MAX_CLIENT_FILE_BYTES


@dataclass(frozen=True, slots=True)
class ResearchConfig:
    """A loaded configuration: either provider may be absent."""

    path: Path
    source: SourceConfig | None
    database: DatabaseConfig | None
    limits: Limits = field(default_factory=Limits)
    client_data: ClientDataConfig | None = None

    def without_content_cache(self) -> ResearchConfig:
        """The same configuration without the persistent content cache (``--no-cache``)."""
        if self.source is None or self.source.cache_dir is None:
            return self
        return replace(self, source=replace(self.source, cache_dir=None))


def load_config(path: str | os.PathLike[str]) -> ResearchConfig:
    """Reads and checks the TOML file at ``path``; see the module docstring."""
    config_path = Path(path).resolve()
    data = load_toml_file(
        config_path,
        schema=None,
        max_bytes=MAX_CONFIG_BYTES,
        what="the research configuration",
        refuse=_refused,
    )
    if (wrong := misplaced(data, PROJECT)) is not None:
        raise ResearchError(
            "config_invalid", wrong, {"key": "", "belongs_to": FLAGS[INVESTIGATION]}
        )
    return parse_config(data, base_dir=config_path.parent, path=config_path)


def _refused(reason: str, message: str, details: dict[str, Any]) -> ResearchError:
    if reason in (UNREADABLE, NOT_A_REGULAR_FILE, TOO_LARGE):
        # The OS error class, not_a_regular_file (a FIFO is refused, not waited on) or
        # too_large; the message is files.py's ("does not exist" for a missing file).
        why = details.get("kind", reason)
        return ResearchError("config_unreadable", message, {"reason": why})
    key = details.get("key", "")
    kept = {"key": key}
    kept.update((name, details[name]) for name in ("line", "column") if name in details)
    if key and "problem" in details:
        message = f"configuration key {key!r}: {details['problem']}"
    return ResearchError("config_invalid", message, kept)


def parse_config(data: Mapping[str, Any], *, base_dir: Path, path: Path) -> ResearchConfig:
    """Checks an already parsed TOML document; relative paths resolve against ``base_dir``.

    Structure, types, forms and ranges are the ``research-config-v1``
    schema's; what it cannot state is checked here after it.
    """
    database = data.get("database")
    if isinstance(database, Mapping) and "password" in database:
        # Before the schema, so the message says where a password goes instead.
        _invalid(
            "database.password",
            "a password is not accepted in the config file; use password_env or password_file",
        )
    check_config(data, schema=CONFIG_SCHEMA, what="the configuration", refuse=_refused)
    source = data.get("source")
    if source is None and database is None:
        _invalid("source", "configure at least one of [source] and [database]")
    return ResearchConfig(
        path=path,
        source=None if source is None else _source(source, base_dir),
        database=None if database is None else _database(database, base_dir),
        limits=_limits(data.get("limits", {})),
        client_data=_client_data(data.get("client_data"), base_dir, source is not None),
    )


def _client_data(
    table: Mapping[str, Any] | None, base_dir: Path, has_source: bool
) -> ClientDataConfig | None:
    if table is None:
        return None
    if not has_source:
        # The layouts are read from the engine source at the pinned commit.
        _invalid("client_data", "needs [source]: the file layouts come from the engine source")
    return ClientDataConfig(
        dbc_dir=_path(table, "dbc_dir", "client_data", base_dir),
        layouts=_path(table, "layouts", "client_data", base_dir) if "layouts" in table else None,
        max_file_bytes=table.get("max_file_bytes", MAX_CLIENT_FILE_BYTES),
    )


def _source(table: Mapping[str, Any], base_dir: Path) -> SourceConfig:
    upstream = table.get("upstream")
    return SourceConfig(
        repository=_path(table, "repository", "source", base_dir),
        url=_url(table["url"], "source.url"),
        commit=table["commit"].lower(),
        cache_dir=_path(table, "cache_dir", "source", base_dir) if "cache_dir" in table else None,
        web_url=_url(table["web_url"], "source.web_url") if "web_url" in table else None,
        upstream=None
        if upstream is None
        else UpstreamConfig(
            repository=_path(upstream, "repository", "source.upstream", base_dir),
            url=_url(upstream["url"], "source.upstream.url"),
            commit=upstream["commit"].lower(),
        ),
    )


def _url(url: str, key: str) -> str:
    if _CONTROL.search(url):
        _invalid(key, "must not contain spaces or control characters")
    parts = urlsplit(url)
    if parts.scheme and ("@" in parts.netloc):
        # The URL is copied into every capture: it must not carry credentials.
        _invalid(key, "must not contain a user name or password")
    return url


def _database(table: Mapping[str, Any], base_dir: Path) -> DatabaseConfig:
    if _CONTROL.search(table["user"]):
        _invalid("database.user", "must not contain spaces or control characters")
    if ("password_env" in table) == ("password_file" in table):
        _invalid("database.password_env", "set exactly one of password_env and password_file")
    password_file = None
    if "password_file" in table:
        password_file = _path(table, "password_file", "database", base_dir)
    if "name" in table and table["name"] not in table["allow"]:
        _invalid("database.name", "must be a database of database.allow")
    return DatabaseConfig(
        host=table["host"],
        port=table["port"],
        user=table["user"],
        snapshot_id=table["snapshot_id"],
        allow=_allow(table["allow"]),
        password_env=table.get("password_env"),
        password_file=password_file,
        name=table.get("name"),
    )


def _allow(table: Mapping[str, list[str]]) -> Mapping[str, tuple[str, ...]]:
    for database, tables in table.items():
        key = f"database.allow.{database}"
        if database.lower() in RESERVED_DATABASES:
            _invalid(key, "system databases cannot be allowed")
        if len({name.lower() for name in tables}) != len(tables):
            _invalid(key, "lists a table twice")
    if len({name.lower() for name in table}) != len(table):
        _invalid("database.allow", "lists a database twice")
    return MappingProxyType({database: tuple(tables) for database, tables in table.items()})


def _limits(table: Mapping[str, Any]) -> Limits:
    seconds = {"statement_seconds", "connect_seconds", "git_seconds"}
    values: dict[str, Any] = {k: float(v) if k in seconds else v for k, v in table.items()}
    limits = Limits(**values)
    if limits.page > limits.rows:
        _invalid("limits.page", "must not be larger than limits.rows")
    return limits


def _path(table: Mapping[str, Any], key: str, prefix: str, base_dir: Path) -> Path:
    value = table[key]
    if "\x00" in value:
        _invalid(f"{prefix}.{key}", "must be a path")
    path = Path(value).expanduser()
    return (path if path.is_absolute() else base_dir / path).resolve()


def _invalid(key: str, problem: str) -> NoReturn:
    raise ResearchError("config_invalid", f"configuration key {key!r} {problem}", {"key": key})
