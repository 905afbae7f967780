"""The Vcore profile (TrinityCore-derived, WoW Cataclysm world database), the default.

``PROFILE`` is its ``Profile`` object: the enrichment rules of
``enrichment.toml``, the schema descriptor adapter of ``db_tools`` and the
name, as ``profiles.load_profile("vcore")`` gives them (the one loader; read
on first use, then shared). ``vcore_profile()`` is its enrichment rules, the
form ``CaseBuilder(profile=...)`` takes.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from viano_bug_analysis.enrichment.profile import EnrichmentProfile
    from viano_bug_analysis.profiles import Profile

NAME = "vcore"


@cache
def profile() -> Profile:
    """The Vcore ``Profile``, loaded once per process by ``profiles.load_profile``."""
    from viano_bug_analysis.profiles import load_profile

    return load_profile(NAME)


def vcore_profile() -> EnrichmentProfile:
    """The Vcore enrichment rules (``enrichment.toml``)."""
    rules = profile().enrichment
    assert rules is not None  # profile.toml names enrichment.toml
    return rules


def __getattr__(name: str) -> Any:
    # PROFILE is read on first use, not on import: importing db_tools (the
    # adapter, which the loader itself imports) must not load the profile.
    if name == "PROFILE":
        return profile()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["NAME", "PROFILE", "profile", "vcore_profile"]
