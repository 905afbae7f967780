"""One Profile object per profile: the Vcore package exports it, enrichment only receives it."""

from __future__ import annotations

import re
from pathlib import Path

from viano_bug_analysis.enrichment import vcore_profile
from viano_bug_analysis.profiles import Profile, load_profile

ENRICHMENT = Path(__file__).parents[2] / "python" / "viano_bug_analysis" / "enrichment"


def test_the_vcore_package_exports_its_profile() -> None:
    from viano_bug_analysis.profiles.vcore import PROFILE

    assert isinstance(PROFILE, Profile)
    assert PROFILE.name == "vcore" and PROFILE.schema_adapter_name == "vcore"
    assert PROFILE.enrichment is not None and PROFILE.schema_adapter is not None
    # The one loader made it: the bundled name gives the same rules.
    loaded = load_profile("vcore")
    assert loaded.enrichment is not None
    assert loaded.enrichment.sha256 == PROFILE.enrichment.sha256


def test_vcore_profile_is_the_enrichment_of_that_object() -> None:
    from viano_bug_analysis.profiles.vcore import PROFILE

    assert PROFILE.enrichment is not None
    assert vcore_profile().sha256 == PROFILE.enrichment.sha256


def test_enrichment_code_does_not_reach_into_a_profile_folder() -> None:
    # Rules reach the enrichment code as an EnrichmentProfile, never as a path.
    for source in sorted(ENRICHMENT.glob("*.py")):
        code = "\n".join(
            line for line in source.read_text().splitlines() if not line.lstrip().startswith("#")
        )
        assert not re.search(r"[\"']profiles[\"']|parent\s*/\s*[\"']profiles", code), source.name
        assert 'enrichment.toml")' not in code, source.name
