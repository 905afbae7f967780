"""Profile files through the one TOML loader and the profile-v1 schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from viano_bug_analysis.errors import EnrichmentError
from viano_bug_analysis.profiles import load_profile

HEAD = 'format = "viano-profile"\nformat_version = 1\nname = "x"\n'
SECRET = "LEAK-CANARY"


def refused(tmp_path: Path, text: str) -> EnrichmentError:
    path = tmp_path / "profile.toml"
    path.write_text(text)
    with pytest.raises(EnrichmentError) as caught:
        load_profile(path)
    assert caught.value.code == "profile_invalid"
    assert SECRET not in str(caught.value) + repr(caught.value.details)
    return caught.value


def test_a_toml_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    err = refused(tmp_path, HEAD + f"enrichment = {SECRET}\n")
    assert err.details == {"key": "", "line": 4, "column": 14}


def test_an_unknown_key_that_is_no_name_is_not_echoed(tmp_path: Path) -> None:
    err = refused(tmp_path, HEAD + f'"{SECRET} !" = 1\n')
    assert err.details == {"key": ""}


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ("enrichment = 5\n", "enrichment"),
        ("schema_adapter = 1979-05-27\n", "schema_adapter"),
        ("adaptr = 1\n", "adaptr"),
    ],
)
def test_a_schema_error_names_the_key(tmp_path: Path, extra: str, key: str) -> None:
    err = refused(tmp_path, HEAD + extra)
    assert err.details == {"key": key}
    assert "allowed" in str(err) or key != "adaptr"


def test_a_missing_name_is_named(tmp_path: Path) -> None:
    err = refused(tmp_path, 'format = "viano-profile"\nformat_version = 1\n')
    assert err.details == {"key": "name"}


def test_the_schema_lists_exactly_the_bundled_adapters() -> None:
    from viano_bug_analysis import profiles
    from viano_bug_analysis.schemas import load_schema

    listed = load_schema("profile-v1")["properties"]["schema_adapter"]["enum"]
    assert sorted(listed) == sorted(profiles._ADAPTERS)


def test_an_enrichment_profile_syntax_error_gives_line_and_column() -> None:
    from viano_bug_analysis.enrichment import parse_profile

    with pytest.raises(EnrichmentError) as caught:
        parse_profile(f'format = "viano-enrichment-profile"\nx = {SECRET}\n'.encode())
    assert caught.value.code == "profile_invalid"
    assert caught.value.details == {"key": "", "line": 2, "column": 5}
    assert SECRET not in str(caught.value)


def test_an_enrichment_profile_does_not_echo_a_strange_unknown_key() -> None:
    from viano_bug_analysis.enrichment import parse_profile

    text = 'format = "viano-enrichment-profile"\nformat_version = 1\nprofile = "x"\n'
    for extra, key in ((f'"{SECRET} !" = 1\n', ""), (f'[limits]\n"{SECRET} !" = 1\n', "limits")):
        with pytest.raises(EnrichmentError) as caught:
            parse_profile((text + extra).encode())
        assert caught.value.details == {"key": key}
        assert SECRET not in str(caught.value)
