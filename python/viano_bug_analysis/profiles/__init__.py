"""Profiles: everything project-specific a command needs, loaded in one place.

A profile bundles what generic code must not know about one game server:
the enrichment rules (what ``vba case build`` looks up, docs/case-enrichment.md)
and the schema descriptor adapter (how ``database.describe`` reads that
project's own schema files, docs/row-snapshots.md). Every command that needs
either takes a ``Profile`` from ``load_profile`` and nothing else, so ``vba
query``, ``vba investigate``, ``vba case build`` and the demo cannot disagree.
A command that answers snapshot queries takes it from ``profile_from_args``,
which also applies ``--no-digest-cache`` to the routers the profile makes.

``load_profile(name_or_path)`` accepts:

* the name of a bundled profile (``vcore``, the default);
* a profile file, TOML::

      format = "viano-profile"
      format_version = 1
      name = "myserver"
      enrichment = "enrichment.toml"   # optional; relative to this file
      schema_adapter = "vcore"         # optional; a bundled adapter name

* a bare enrichment profile file (``format = "viano-enrichment-profile"``),
  which gives a profile with those rules and no schema adapter.

An adapter is named, never imported from a path: a profile file is data and
cannot make the command line run code. Errors are ``EnrichmentError``:
``profile_unknown`` (no bundled profile has that name; ``details["allowed"]``
lists them), ``profile_unreadable`` and ``profile_invalid`` (``details["key"]``
names the key).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from viano_bug_analysis.enrichment.profile import (
    EnrichmentProfile,
    parse_profile,
    profile_refused,
)
from viano_bug_analysis.errors import EnrichmentError
from viano_bug_analysis.files import check_config, parse_toml, read_regular_file

if TYPE_CHECKING:
    from viano_bug_analysis.tools.database_query import DatabaseQueryTool
    from viano_bug_analysis.tools.limits import ToolLimits
    from viano_bug_analysis.tools.router import InvestigationToolRouter

PROFILE_FORMAT = "viano-profile"
ENRICHMENT_FORMAT = "viano-enrichment-profile"
DEFAULT_PROFILE = "vcore"
MAX_PROFILE_BYTES = 1024 * 1024
_BUNDLED_DIR = Path(__file__).parent
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
PROFILE_SCHEMA = "profile-v1"

SchemaAdapter = Callable[[Mapping[str, Any]], dict[str, Any]]


def _vcore_adapter() -> SchemaAdapter:
    from viano_bug_analysis.profiles.vcore.db_tools import normalize_schema_descriptor

    return normalize_schema_descriptor


# Adapters are code, so they can only be chosen from this list by name.
_ADAPTERS: dict[str, Callable[[], SchemaAdapter]] = {"vcore": _vcore_adapter}


@dataclass(frozen=True, slots=True)
class Profile:
    """One project's rules, as every command receives them."""

    name: str
    enrichment: EnrichmentProfile | None
    schema_adapter_name: str | None
    schema_adapter: SchemaAdapter | None
    digest_cache: bool = True
    """Whether the routers of this profile trust verified digests per file identity
    (``case.digest_cache``); ``--no-digest-cache`` turns it off (``from_args``)."""

    def database_tool(self, limits: ToolLimits | None = None) -> DatabaseQueryTool:
        """A ``DatabaseQueryTool`` with this profile's schema adapter and the row limit."""
        from viano_bug_analysis.tools.database_query import DatabaseQueryTool
        from viano_bug_analysis.tools.limits import ToolLimits

        rows = (limits or ToolLimits()).database_rows
        return DatabaseQueryTool(self.schema_adapter, max_rows=rows)

    def router(
        self, *, limits: ToolLimits | None = None, threads: int = 0
    ) -> InvestigationToolRouter:
        """The investigation tool router every command uses for this profile."""
        from viano_bug_analysis.tools.router import InvestigationToolRouter

        return InvestigationToolRouter(
            database_tool=self.database_tool(limits),
            limits=limits,
            threads=threads,
            digest_cache=self.digest_cache,
        )


def profile_from_args(args: Any) -> Profile:
    """The profile a command names (``--profile``), with its router options
    (``--no-digest-cache``): the one way a command line makes its routers."""
    profile = load_profile(args.profile)
    if getattr(args, "no_digest_cache", False):
        profile = replace(profile, digest_cache=False)
    return profile


def bundled_profiles() -> list[str]:
    """Names of the profiles shipped with the package, sorted."""
    return sorted(
        entry.name
        for entry in _BUNDLED_DIR.iterdir()
        if _NAME.fullmatch(entry.name) and (entry / "profile.toml").is_file()
    )


def load_profile(name_or_path: str | os.PathLike[str] = DEFAULT_PROFILE) -> Profile:
    """The profile named ``name_or_path`` (bundled) or stored in that file."""
    text = os.fspath(name_or_path)
    bundled = bundled_profiles()
    # A bundled name wins over a file of that name in the current directory
    # (write ./vcore to mean the file), so `--profile vcore` means one thing.
    if text in bundled:
        return _load_file(_BUNDLED_DIR / text / "profile.toml")
    if _NAME.fullmatch(text) and not os.path.isfile(text):
        raise EnrichmentError(
            "profile_unknown",
            f"no bundled profile is named {text!r}; allowed: {', '.join(bundled)}"
            " (or give a profile file)",
            {"allowed": ", ".join(bundled)},
        )
    return _load_file(Path(text))


def _load_file(path: Path) -> Profile:
    data = _read(path)
    document = parse_toml(data, schema=None, what="the profile", refuse=profile_refused)
    kind = document.get("format")
    if kind == ENRICHMENT_FORMAT:
        enrichment = parse_profile(data)
        return Profile(enrichment.name, enrichment, None, None)
    if kind != PROFILE_FORMAT:
        # Either format is allowed here, which the profile-v1 schema alone cannot say.
        _invalid("format", f'must be "{PROFILE_FORMAT}" or "{ENRICHMENT_FORMAT}"')
    check_config(document, schema=PROFILE_SCHEMA, what="the profile", refuse=profile_refused)
    enrichment_profile = None
    if "enrichment" in document:
        enrichment_profile = parse_profile(_read(path.parent / document["enrichment"]))
    adapter_name = document.get("schema_adapter")
    # The schema's enum of adapter names is _ADAPTERS' keys (tests/profiles).
    adapter = None if adapter_name is None else _ADAPTERS[adapter_name]()
    return Profile(document["name"], enrichment_profile, adapter_name, adapter)


def _read(path: Path) -> bytes:
    return read_regular_file(
        path, max_bytes=MAX_PROFILE_BYTES, what="the profile file", refuse=profile_refused
    )


def _invalid(key: str, problem: str) -> NoReturn:
    raise EnrichmentError("profile_invalid", f"profile {key or 'file'}: {problem}", {"key": key})


__all__ = [
    "DEFAULT_PROFILE",
    "PROFILE_FORMAT",
    "Profile",
    "SchemaAdapter",
    "bundled_profiles",
    "load_profile",
    "profile_from_args",
]
