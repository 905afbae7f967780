"""config/project.example.toml stays usable as shipped (issue 34 point 2): its
allowlist names every table the bundled profile reads, so `vba profile check`
passes once the connection is filled in (it was 25 tables short: exit 8, 445 lines)."""

from __future__ import annotations

from pathlib import Path

from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.enrichment.profile_check import needs
from viano_bug_analysis.project_research import load_config

EXAMPLE = Path(__file__).resolve().parent.parent / "config" / "project.example.toml"


def test_the_example_allowlist_holds_every_table_the_bundled_profile_reads() -> None:
    config = load_config(EXAMPLE)
    assert config.database is not None
    allowed = set(config.database.allow["cata_world"])
    missing = sorted(set(needs(vcore_profile())) - allowed)
    assert missing == [], f"add to config/project.example.toml [database.allow]: {missing}"


def test_the_example_allowlist_lists_nothing_the_profile_does_not_read() -> None:
    config = load_config(EXAMPLE)
    assert config.database is not None
    assert set(config.database.allow["cata_world"]) <= set(needs(vcore_profile()))
